"""``agentgate demo``: an agent's patch played against an example repository.

Everything happens in a temporary folder with real git, and the folder is removed at the
end, on error and on Ctrl-C alike. Each step prints the verdict agentgate reached; the demo
exits 1 if any verdict differs from the expected one, so it doubles as a smoke test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentgate.core.config import load
from agentgate.core.model import Result, Verdict
from agentgate.flows import demo_files
from agentgate.gate import checks as gate
from agentgate.gate import manifest
from agentgate.git import gitio
from agentgate.git.scratch import scratch_dir
from agentgate.report.render import Format, emit
from agentgate.run import interp

AGENT_ENV = {"CLAUDECODE": "1"}


@dataclass(frozen=True)
class Step:
    title: str
    expected: Verdict
    play: Callable[[Path], Result]


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> None:
    full = {**gitio.no_git_env(), "GIT_CONFIG_NOSYSTEM": "1", **(env or {})}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=full)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build(root: Path) -> None:
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", "Demo Human")
    _git(root, "config", "user.email", "human@example.com")
    _git(root, "config", "commit.gpgsign", "false")
    _write(root, demo_files.BASE)
    manifest.record(root, load(root))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "shop: base")


def _stage(root: Path, files: dict[str, str]) -> None:
    _write(root, files)
    _git(root, "add", "-A")


def _reset(root: Path) -> None:
    _git(root, "reset", "-q", "--hard", "HEAD")


def _commit_check(files: dict[str, str]) -> Callable[[Path], Result]:
    def play(root: Path) -> Result:
        _stage(root, files)
        result = gate.check_staged(root, {**os.environ, **AGENT_ENV})
        _reset(root)
        return result

    return play


def _pushed_fixture(root: Path) -> Result:
    """Some agents commit with --no-verify; the push-time check sees the commit anyway."""
    base = gitio.resolve(root, "HEAD")
    _stage(root, demo_files.FIXTURE_EDIT)
    _git(root, "commit", "-q", "--no-verify", "-m", "fix flaky tax test", env=AGENT_ENV)
    checked = gate.check_range(root, base, "HEAD")
    _git(root, "reset", "-q", "--hard", base)
    return Result(
        "pre-push (range)",
        reasons=list(checked.reasons),
        notes=list(checked.notes),
        base=checked.merge_base,
        head=checked.head,
        changed=checked.changes,
    )


def _planned_push(root: Path) -> Result:
    """The point of it all: the agent ran its own new test; the plan finds the rest."""
    from agentgate.flows import check as checkrun

    base = gitio.resolve(root, "HEAD")
    _stage(root, demo_files.IN_SCOPE)
    _git(root, "commit", "-q", "-m", "zero-rated tax, tested", env=AGENT_ENV)
    if _has_pytest(root):
        result = checkrun.check(root, base, "HEAD")
    else:
        result = checkrun.plan(root, base, "HEAD")
        result.notes.append("pytest is not installed for this interpreter: planned, not run")
    _git(root, "reset", "-q", "--hard", base)
    found = result.to_json()
    selected = found.get("tests", [])
    if "tests/test_session.py" not in selected or set(selected) & set(demo_files.UNREACHED_TESTS):
        # The demo's own expectations: the chain is found, and the band narrows.
        result.forced = Verdict.FAILED
    ran = found.get("results", {})
    if ran.get("ran"):
        count = sum(ran[k] for k in ("passed", "failed", "errors", "skipped"))
        result.notes.append(f"ran {count} of the suite's {demo_files.suite_size()} tests; "
                            f"{' and '.join(demo_files.UNREACHED_TESTS)} skipped")
    return result


def _has_pytest(root: Path) -> bool:
    python = interp.project_python(root, load(root))
    probe = subprocess.run([python, "-c", "import pytest"], capture_output=True)
    return probe.returncode == 0


STEPS = (
    Step(
        "1. The agent widens its own scope and edits checkout code in the same commit",
        Verdict.BLOCKED,
        _commit_check(demo_files.WIDEN_SCOPE),
    ),
    Step(
        "2. The agent edits app/checkout/session.py, outside its declared scope",
        Verdict.SCOPE_ESCAPE,
        _commit_check(demo_files.OUT_OF_SCOPE),
    ),
    Step(
        "3. The agent edits a fixture so its test passes, without touching the test",
        Verdict.BLOCKED,
        _commit_check(demo_files.FIXTURE_EDIT),
    ),
    Step(
        "4. ...and commits it with --no-verify; the pushed range is checked anyway",
        Verdict.BLOCKED,
        _pushed_fixture,
    ),
    Step(
        "5. The agent edits app/pricing/tax.py and adds tests/test_tax_case_7.py (in scope)",
        Verdict.SCOPED,
        _commit_check(demo_files.IN_SCOPE),
    ),
    Step(
        "6. ...pushed: the band adds tests/test_session.py (checkout imports pricing), skips "
        "the rest",
        Verdict.SCOPED,
        _planned_push,
    ),
)


def run(*, keep: bool = False, fmt: Format = Format.TEXT) -> int:
    if keep:
        root = Path(tempfile.mkdtemp(prefix="agentgate-demo-")) / "shop"
        root.mkdir()
        build(root)
        code = _play_all(root, fmt)
        sys.stdout.write(f"example repository kept at {root}\n")
        return code
    with scratch_dir("agentgate-demo") as tmp:
        root = tmp / "shop"
        root.mkdir()
        build(root)
        return _play_all(root, fmt)


def _play_all(root: Path, fmt: Format) -> int:
    text = fmt is Format.TEXT
    surprises = 0
    if text:
        sys.stdout.write(
            "agentgate demo: an agent's patch against a tiny shop. app/pricing/tax.py is\n"
            "imported by app/checkout/session.py; app/catalog and app/inventory import neither.\n"
            "The agent's declared scope: app/pricing, tests.\n\n"
        )
    for step in STEPS:
        result = step.play(root)
        ok = result.verdict is step.expected
        surprises += not ok
        if text:
            sys.stdout.write(f"{step.title}\n")
        emit(result, fmt, verbose=True)  # the demo is there to show why each test runs
        if text:
            mark = "as expected" if ok else f"UNEXPECTED (expected {step.expected})"
            sys.stdout.write(f"  -> {result.verdict}, exit {result.exit_code}: {mark}\n\n")
    return 1 if surprises else 0
