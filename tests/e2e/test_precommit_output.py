"""What a push shows through the real pre-commit framework, configured as the README says
(no ``verbose`` of the project's own): pre-commit hides a passing hook's output unless the
hook declares ``verbose: true``, which agentgate's push hook does in .pre-commit-hooks.yaml,
so a passing push shows its three lines and a failing one its failures first (issue 13).
And every line agentgate prints in the e2e and demo scenarios fits 100 columns."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]  # pre-commit's own dependency

from tests.support.e2e_project import CODE, FILES, Outcome, populate, push, set_up_remote
from tests.support.git_repo import GitRepo, git_env
from tests.support.hook_drivers import HOOK_IDS, install

pytestmark = pytest.mark.e2e
DRIVERS = ("pre-commit",)
WIDTH = 100


def _readme_config(hook_repo: tuple[Path, str]) -> str:
    """The README's snippet pointed at the snapshot: the hook ids and nothing else."""
    path, sha = hook_repo
    hooks = "".join(f"      - id: {hook_id}\n" for hook_id in HOOK_IDS)
    return ("default_install_hook_types: [pre-commit, prepare-commit-msg, commit-msg, pre-push]\n"
            f"repos:\n  - repo: {json.dumps(str(path))}\n    rev: {sha}\n    hooks:\n" + hooks)


@pytest.fixture
def readme_project(tmp_path: Path, hook_repo: tuple[Path, str]) -> GitRepo:
    repo = GitRepo.init(tmp_path / "shop")
    populate(repo)
    repo.write(".pre-commit-config.yaml", _readme_config(hook_repo))
    repo.commit("initial")
    install(repo)
    set_up_remote(repo, git_env())
    return repo


def _push_report(outcome: Outcome) -> list[str]:
    """The push hook's own lines, as printed, from pre-commit's block for it."""
    lines = outcome.raw.splitlines()
    start = lines.index("- hook id: agentgate-push") + 1
    report = []
    for line in lines[start:]:
        if re.match(r"(To |\S.*\.{3,}(Passed|Failed|Skipped)$|error: failed to push)", line):
            break
        if line and not line.startswith("- "):
            report.append(line)
    return report


def test_the_push_hook_declares_verbose(hook_repo: tuple[Path, str]) -> None:
    declared = yaml.safe_load((hook_repo[0] / ".pre-commit-hooks.yaml").read_text("utf-8"))
    assert [h["id"] for h in declared if h.get("verbose")] == ["agentgate-push"]


def test_a_passing_push_shows_its_verdict_and_summary(readme_project: GitRepo) -> None:
    readme_project.write(CODE, '"""Tax."""\n\n' + FILES[CODE])
    assert readme_project.commit("tax: a docstring")
    outcome = push(readme_project, git_env(), "origin", "main")
    assert outcome.code == 0, outcome.raw
    report = _push_report(outcome)
    assert len(report) <= 3, report
    # Named by the pushed branch (PRE_COMMIT_LOCAL_BRANCH), as the plain hook names it.
    assert report[0] == "agentgate hook pre-push refs/heads/main: scoped (exit 0)"
    assert re.fullmatch(r"  ran 1 test from 1 of the suite's 1 test file in [0-9.]+ s: "
                        "all passed", report[-1]), report


def test_a_failing_push_shows_its_failures_before_the_summary(readme_project: GitRepo) -> None:
    readme_project.write(CODE, FILES[CODE].replace("RATE = 0.2", "RATE = 0.3"))
    readme_project.commit("tax: a new rate")
    outcome = push(readme_project, git_env(), "origin", "main")
    assert outcome.code != 0, outcome.raw
    report = _push_report(outcome)
    failed = next(i for i, line in enumerate(report)
                  if line.startswith("    FAILED tests/test_tax.py::test_tax"))
    assert report[2].startswith("  failed: tests-failed tests/test_tax.py: ")
    assert failed == 3 and report[-1].endswith(": 1 failed"), report
    assert not any(" -> " in line for line in report)  # no import chains without -v
    assert _too_long(report) == []


def test_the_demo_fits_100_columns() -> None:
    """The demo plays every gate: commit hooks, a blocked push range, a band that runs."""
    done = subprocess.run([sys.executable, "-m", "agentgate", "demo"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _too_long(done.stdout.splitlines()) == []
    assert "scope-escape: scope-escape" not in done.stdout
    assert "  scope-escape app/checkout/session.py: outside the declared scope" in done.stdout


def _too_long(lines: list[str]) -> list[str]:
    """Lines past 100 columns, but for one that holds an unbreakable word (a long path:
    paths are never split) on a continuation line of its own."""
    return [line for line in lines
            if len(line) > WIDTH and max(len(word) for word in line.split()) < WIDTH // 2]
