"""A freeze of a parametrized function excuses only its cases that fail at the base too.

Red-team rt4, finding 13: the base froze ``test_mul`` for its one failing case; a patch that
broke every other case was excused by that record, exit 0. A case excused only through its
function's record now runs on the base (``flows.freeze_cases``), and counts as a failure
unless the base fails it too. A record naming the case itself excuses it as before.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.ledger import write_freeze

FUNCTION = "tests/test_calc.py::test_mul"
BAD_CASE = f"{FUNCTION}[1-1-3]"  # a wrong expectation at the base: the pre-existing failure
CASES = (f"{FUNCTION}[2-3-6]", f"{FUNCTION}[4-5-20]")  # pass at the base
CALC = {
    "app/__init__.py": "",
    "app/calc.py": "def mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": "import pytest\n\nfrom app.calc import mul\n\n\n"
    "@pytest.mark.parametrize('a,b,want', [(2, 3, 6), (4, 5, 20), (1, 1, 3)])\n"
    "def test_mul(a, b, want):\n    assert mul(a, b) == want\n",
    "README.md": "calc\n",
}
BREAKS_MUL = {"app/calc.py": "def mul(a, b):\n    return a * b + 1\n"}
REFACTORS_MUL = {"app/calc.py": "def mul(a, b):\n    \"\"\"The product.\"\"\"\n    return b * a\n"}
EXCUSED = "frozen test failed (excused by its freeze): "
COVERS = f"the freeze of {FUNCTION} covers only its cases that fail at the base too"


@pytest.fixture
def calc(repo: GitRepo) -> GitRepo:
    """The calc app committed once; each test freezes what it needs and tags ``base``."""
    commit(repo, CALC, "initial")
    return repo


def _freeze_at_base(repo: GitRepo, test: str) -> None:
    write_freeze(repo, test)
    repo.commit(f"freeze {test}")  # alone, by a human
    repo.git("tag", "base")


def _cli_check(repo: GitRepo, *base: str) -> tuple[int, dict[str, Any]]:
    proc = run_agentgate("check", *base, "--format", "json", cwd=repo.path)
    return proc.returncode, json.loads(proc.stdout)


def _base_runs(repo: GitRepo) -> list[str]:
    """The cached runs of the base's own tests (``oracle.outcomes_at_base``)."""
    folder = repo.path / ".git" / "agentgate" / "inventory"
    return sorted(p.name for p in folder.glob("at-base-*.json"))


def test_a_function_freeze_does_not_excuse_cases_that_pass_at_the_base(calc: GitRepo) -> None:
    """The attack: the record was made for [1-1-3]; the patch breaks every case of mul."""
    _freeze_at_base(calc, FUNCTION)
    commit(calc, BREAKS_MUL)
    code, data = _cli_check(calc, "--base", "base")
    assert (code, data["verdict"]) == (1, "failed")
    assert data["results"]["failed_ids"] == list(CASES)
    assert data["results"]["frozen_failed_ids"] == [BAD_CASE]  # fails at the base too
    assert [r["code"] for r in data["reasons"]] == [
        "tests-failed", "frozen-case-not-failing-at-base"]
    assert data["reasons"][1]["detail"] == (
        f"2 cases of {FUNCTION} failed that do not fail at the base ({CASES[0]} passes, "
        f"{CASES[1]} passes); {COVERS}")
    assert f"{EXCUSED}{BAD_CASE}" in data["notes"]
    assert not any(n.startswith(EXCUSED) and BAD_CASE not in n for n in data["notes"])


def test_a_case_the_patch_adds_is_not_excused_by_its_function_freeze(calc: GitRepo) -> None:
    """Fail closed: the base cannot run a case it does not have, so it cannot vouch for it."""
    _freeze_at_base(calc, FUNCTION)
    test = CALC["tests/test_calc.py"].replace("(1, 1, 3)]", "(1, 1, 3), (5, 5, 0)]")
    commit(calc, {"tests/test_calc.py": test})
    code, data = _cli_check(calc, "--base", "base")
    assert (code, data["results"]["failed_ids"]) == (1, [f"{FUNCTION}[5-5-0]"])
    assert data["results"]["frozen_failed_ids"] == [BAD_CASE]
    assert data["reasons"][-1] == {
        "code": "frozen-case-not-failing-at-base", "verdict": "failed",
        "path": "tests/test_calc.py",
        "detail": f"{FUNCTION}[5-5-0] failed and is not collected at the base; {COVERS}"}


def test_a_function_freeze_still_excuses_a_case_that_fails_at_the_base(calc: GitRepo) -> None:
    """The legitimate change: mul is rewritten, every case does what it did at the base."""
    _freeze_at_base(calc, FUNCTION)
    commit(calc, REFACTORS_MUL)
    code, data = _cli_check(calc, "--base", "base")
    assert (code, data["verdict"]) == (0, "scoped")
    assert (data["results"]["failed_ids"], data["results"]["frozen_failed_ids"]) == (
        [], [BAD_CASE])
    assert f"{EXCUSED}{BAD_CASE}" in data["notes"]
    assert len(_base_runs(calc)) == 1  # the base was asked about [1-1-3]


def test_a_frozen_case_id_is_excused_without_a_base_run(calc: GitRepo) -> None:
    """A record naming the case itself is the human's word on that case: as before, and the
    base is not run for it."""
    _freeze_at_base(calc, BAD_CASE)
    commit(calc, REFACTORS_MUL)
    code, data = _cli_check(calc, "--base", "base")
    assert (code, data["results"]["frozen_failed_ids"]) == (0, [BAD_CASE])
    assert f"{EXCUSED}{BAD_CASE}" in data["notes"]
    assert _base_runs(calc) == []


def test_a_frozen_case_id_excuses_only_that_case(calc: GitRepo) -> None:
    """The counterpart of the attack with the case frozen exactly: its siblings fail."""
    _freeze_at_base(calc, BAD_CASE)
    commit(calc, BREAKS_MUL)
    code, data = _cli_check(calc, "--base", "base")
    assert (code, data["results"]["failed_ids"]) == (1, list(CASES))
    assert [r["code"] for r in data["reasons"]] == ["tests-failed"]
    assert _base_runs(calc) == []


def test_without_a_base_nothing_runs_at_the_base(calc: GitRepo) -> None:
    """No merge-base: the ledger that excuses is the empty tree's, so no record excuses a
    failure and no case is asked about (as before this rule)."""
    _freeze_at_base(calc, FUNCTION)
    commit(calc, BREAKS_MUL)
    data = checkrun.check(calc.path, None, "HEAD").to_json()
    assert (data["exit_code"], data["results"]["failed_ids"]) == (1, [BAD_CASE, *CASES])
    assert "frozen-case-not-failing-at-base" not in [r["code"] for r in data["reasons"]]
    assert _base_runs(calc) == []
