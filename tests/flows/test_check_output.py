"""What check prints (issue 13): the headline, failures first, the one-line summary at the
end with the band's real counts, details only on -v; markdown that stays valid with a
witness; "scoped" only from the gate's commands. Real runs on real temporary repositories."""

from __future__ import annotations

import json
import re
from typing import Any

from markdown_it import MarkdownIt  # rich's own dependency

from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.text import unwrap

BROKEN_RATES = "RATE = 0.5\n"  # total(10) == 15: test_session and test_report fail
SECONDS = r"[0-9]+\.[0-9] s"
WITNESSED = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 100\n",
    "app/__init__.py": "",
    "app/core.py": "def lookup():\n    return 1\n\n\ndef other():\n    return 2\n",
    "tests/test_core.py": "from app.core import lookup, other\n\n\n"
    "def test_lookup():\n    assert lookup() == 1\n\n\n"
    "def test_other():\n    assert other() == 2\n",
    "tests/test_more.py": "def test_alone():\n    assert True\n",
}


def _check(repo: GitRepo, *args: str) -> tuple[int, list[str]]:
    proc = run_agentgate("check", "--base", "base", *args, cwd=repo.path)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, unwrap(proc.stdout).splitlines()


def _json(repo: GitRepo, base: str = "base") -> dict[str, Any]:
    proc = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_a_failing_check_puts_failures_first_and_ends_with_the_summary(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    code, lines = _check(chain)
    assert code == 1
    assert lines[0] == "agentgate check: failed (exit 1)"
    assert lines[2].startswith("  failed: tests-failed tests/test_report.py: 2 test(s) failed "
                               "in the band: ")
    # Each with why it ran: the changed file its import chain reaches (new-user trial: the
    # reason was -v's alone); the chain itself stays -v's.
    assert lines[3:5] == ["    FAILED tests/test_report.py::test_render  (reaches "
                          "app/pricing/rates.py)",
                          "    FAILED tests/test_session.py::test_total  (reaches "
                          "app/pricing/rates.py)"]
    assert re.fullmatch(rf"  ran 2 tests from 2 of the suite's 3 test files in {SECONDS}: "
                        "2 failed", lines[-1]), lines[-1]
    # The details are -v's: no chain, no per-run line, no "ran in" before or after.
    assert not any(" -> " in line or line.startswith("  band: ") for line in lines)
    code, verbose = _check(chain, "-v")
    assert code == 1 and re.sub(SECONDS, "", verbose[-1]) == re.sub(SECONDS, "", lines[-1])
    assert verbose[:5] == lines[:5]  # still failures first
    assert "  band: 0 passed, 2 failed, 0 errors, 0 skipped" in " ".join(verbose)
    assert any(line.startswith("    tests/test_session.py: tests/test_session.py -> ")
               for line in verbose)
    results = _json(chain)["results"]
    assert (results["selected"], results["failed"]) == (2, 2)  # the summary's counts


def test_a_passing_check_is_headline_range_and_summary(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": "RATE = 0.2  # same\n"})
    code, lines = _check(chain)
    assert code == 0
    assert len(lines) == 3, lines
    assert lines[0] == "agentgate check: scoped (exit 0)"
    assert re.fullmatch(rf"  ran 2 tests from 2 of the suite's 3 test files in {SECONDS}: "
                        "all passed", lines[2]), lines
    _, verbose = _check(chain, "--verbose")
    assert "  note: no witness recorded (agentgate witness record); import-closure band" in verbose


def test_a_promoted_check_says_it_ran_the_full_suite(chain: GitRepo) -> None:
    commit(chain, {"conftest.py": "# the root conftest: every test may depend on it\n"})
    code, lines = _check(chain)
    assert code == 0, lines
    assert re.fullmatch(rf"  ran all 3 tests \(full suite\) in {SECONDS}: all passed",
                        lines[-1]), lines


def test_nothing_impacted_says_so_in_the_summary(chain: GitRepo) -> None:
    commit(chain, {"README.md": "more\n"})
    code, lines = _check(chain)
    assert code == 0
    assert lines[-1] == "  ran no tests: none of the suite's 3 test files impacted"


def _witnessed(repo: GitRepo) -> str:
    repo.files(WITNESSED)
    base = repo.commit("initial")
    recorded = run_agentgate("witness", "record", cwd=repo.path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert recorded.stdout.startswith("agentgate witness record: ok (exit 0)"), recorded.stdout
    repo.write("app/core.py", WITNESSED["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch other()")
    return base


def test_with_a_witness_the_summary_counts_each_reason(repo: GitRepo) -> None:
    """shadow_percent = 100: every witnessed skip runs as the audit; the parts add up to what
    the outcome plugin saw run, and the suite is the witness's node ids."""
    base = _witnessed(repo)
    proc = run_agentgate("check", "--base", base, cwd=repo.path)
    assert proc.returncode == 0, proc.stdout
    lines = unwrap(proc.stdout).splitlines()
    assert re.fullmatch(rf"  ran 3 of 3 tests \(1 impacted, 2 audit\) in {SECONDS}: all passed",
                        lines[-1]), lines
    assert not any(line.startswith("    run:") or "skip:" in line for line in lines)
    verbose = run_agentgate("check", "--base", base, "-v", cwd=repo.path).stdout
    assert "run:impacted tests/test_core.py::test_other" in verbose
    data = _json(repo, base)
    assert data["witness"]["counts"]["impacted"] == 1 and len(data["witness"]["shadowed"]) == 2


def test_with_a_witness_the_markdown_summary_is_one_list(repo: GitRepo) -> None:
    """The witness's paragraph and table used to sit inside the list, which broke it: band,
    results, summary and time are one bullet list, the table a table (issue 13)."""
    base = _witnessed(repo)
    proc = run_agentgate("check", "--base", base, "--format", "markdown", cwd=repo.path)
    tokens = MarkdownIt("commonmark").enable("table").parse(proc.stdout)
    lists = [t for t in tokens if t.type == "bullet_list_open"]
    assert len(lists) == 1, proc.stdout
    start = tokens.index(lists[0])
    end = next(i for i, t in enumerate(tokens) if i > start and t.type == "bullet_list_close")
    items = [t.content for t in tokens[start:end] if t.type == "inline"]
    assert [i.split(":")[0] for i in items[-4:]] == [
        "band", "results", items[-2].split(":")[0], "time"], items
    assert items[-2].startswith("ran 3 of 3 tests (1 impacted, 2 audit) in ")
    assert any(t.type == "table_open" for t in tokens[end:])
    assert proc.stdout.startswith("### agentgate check: `scoped` (exit 0)")


def test_only_the_gate_commands_say_scoped(app_repo: GitRepo) -> None:
    """init and ledger list succeed with "ok": "scoped" is a verdict on a patch."""
    for args in (("init",), ("ledger", "list"), ("ledger", "check")):
        proc = run_agentgate(*args, cwd=app_repo.path)
        assert proc.returncode == 0, proc.stderr
        name = " ".join(args)
        assert proc.stdout.startswith(f"agentgate {name}: ok (exit 0)\n"), proc.stdout
        assert "scoped" not in proc.stdout
    assert run_agentgate("plan", "--base", "HEAD", cwd=app_repo.path).stdout.startswith(
        "agentgate plan: scoped (exit 0)")


def test_a_long_list_of_failures_is_bounded_in_the_text(repo: GitRepo) -> None:
    """New-user trial round 7: 1,296 FAILED lines pushed the summary 4,935 lines down. The
    text names twenty a run, and says how many more; JSON lists them all."""
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/core.py": "def one():\n    return 1\n",
                "tests/test_core.py": "import pytest\n\nfrom app.core import one\n\n\n"
                                      "@pytest.mark.parametrize('i', range(25))\n"
                                      "def test_one(i):\n    assert one() == 1\n"})
    repo.commit("initial")
    repo.git("tag", "base")
    repo.write("app/core.py", "def one():\n    return 2\n")
    repo.commit("break one")
    code, lines = _check(repo)
    assert code == 1
    failed = [line for line in lines if line.startswith("    FAILED ")]
    assert len(failed) == 20, lines
    assert "    ... and 5 more failed in this run (--format json lists them all)" in lines
    assert len(_json(repo)["results"]["failed_ids"]) == 25
