"""A parametrized test's cases the witness vouches for are deselected; every other case of
it runs (issue 12 item 5: parso's ``test_python_exception_matches`` has hundreds of cases,
and one changed branch ran all of them). Its ids are made at collection: when what made them
may have changed -- its file, code that ran while collecting, a name a module-level change
rebound -- no case is deselected, since a known id may now name another case. A case the
witness does not know (new, or an id that differs from run to run) always runs. The band
is run for real."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentgate.witness.select import IMPACTED, WitnessPlan
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import patch, plan, recorded_repo

CORE = ("def kind(n):\n    if n == 1:\n        return one()\n    return two()\n\n\n"
        "def one():\n    return 'one'\n\n\ndef two():\n    return 'two'\n\n\n"
        "def cases():\n    return [1, 2]\n")
TWO_CHANGED = {"app/core.py": CORE.replace("'two'", "'tw' + 'o'")}
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/core.py": CORE,
    "app/limits.py": "LIMIT = 3\n",
    "tests/test_kinds.py": "import pytest\n\nfrom app.core import kind\n\n\n"
    "@pytest.mark.parametrize('n', [1, 2])\n"
    "def test_kind(n):\n    assert kind(n) in ('one', 'two')\n",
    # A case whose id differs in every process (a random value, a pid): never known.
    "tests/test_pid.py": "import os\n\nimport pytest\n\nfrom app.core import kind\n\n\n"
    "@pytest.mark.parametrize('n', [1, 2, os.getpid()])\n"
    "def test_pid(n):\n    assert kind(n) in ('one', 'two')\n",
    "tests/test_made.py": "from app.core import cases, kind\n\n\n"
    "def pytest_generate_tests(metafunc):\n"
    "    if 'n' in metafunc.fixturenames:\n        metafunc.parametrize('n', cases())\n\n\n"
    "def test_made(n):\n    assert kind(n) in ('one', 'two')\n",
    "tests/test_limit.py": "import pytest\n\nfrom app.core import kind\nfrom app.limits import "
    "LIMIT\n\n\n@pytest.mark.parametrize('n', [1, LIMIT])\n"
    "def test_limit(n):\n    assert kind(n) in ('one', 'two')\n",
    # Ids holding "::" (sqlparse's SQL casts, 'x::int'): --deselect matches them as text.
    "app/cast.py": "def cast(s):\n    return s.split('::')[1]\n\n\ndef plain(s):\n    return s\n",
    "tests/test_cast.py": "import pytest\n\nfrom app.cast import cast, plain\n\n\n"
    "@pytest.mark.parametrize('given', ['x::int', 'y'])\n"
    "def test_cast(given):\n"
    "    assert (cast(given) if '::' in given else plain(given)) in ('int', 'y')\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def _plan(recorded: tuple[GitRepo, str], name: str, files: dict[str, str]) -> WitnessPlan:
    repo, w = recorded
    patch(repo, w, name, files)
    return plan(repo, w)


def _of(ids: tuple[str, ...], function: str) -> list[str]:
    return [n for n in ids if n.startswith(function + "[")]


def test_a_changed_branch_deselects_the_cases_that_did_not_run_it(
    recorded: tuple[GitRepo, str],
) -> None:
    found = _plan(recorded, "two", TWO_CHANGED)
    assert "tests/test_kinds.py::test_kind" in found.run_args
    assert _of(found.deselect, "tests/test_kinds.py::test_kind") == [
        "tests/test_kinds.py::test_kind[1]"]
    # The case of test_pid the recording saw with its pid is known, and ran two(): it runs.
    assert "tests/test_pid.py::test_pid" in found.run_args
    assert _of(found.deselect, "tests/test_pid.py::test_pid") == [
        "tests/test_pid.py::test_pid[1]"]


def _check(recorded: tuple[GitRepo, str], name: str, files: dict[str, str]) -> Any:
    repo, w = recorded
    patch(repo, w, name, files)
    done = run_agentgate("check", "--base", w, "--format", "json", cwd=repo.path)
    return done, json.loads(done.stdout)


def test_the_band_runs_what_the_witness_does_not_vouch_for_and_fails_on_it(
    recorded: tuple[GitRepo, str],
) -> None:
    done, data = _check(recorded, "broken",
                        {"app/core.py": CORE.replace("return 'two'", "return 'three'")})
    assert done.returncode == 1, done.stdout + done.stderr
    failed = data["results"]["failed_ids"]
    # test_pid's pid case has a new id in the band's process: not known, so it runs (and
    # fails); passed as an id of its own, it would be "not collected".
    pid = [n for n in failed if n.startswith("tests/test_pid.py::test_pid[")
           and n != "tests/test_pid.py::test_pid[2]"]
    assert len(pid) == 1
    assert set(failed) == {
        "tests/test_kinds.py::test_kind[2]", "tests/test_limit.py::test_limit[3]",
        "tests/test_made.py::test_made[2]", "tests/test_pid.py::test_pid[2]", *pid}
    assert not [r for r in data["reasons"] if r["code"] in ("not-collected", "deselected")]
    # The cases that only ran one() (test_kind[1], test_pid[1], ...) did not run.
    assert data["results"]["passed"] == 0
    assert "tests/test_kinds.py::test_kind[1]" in data["witness"]["deselected"]


def test_a_harness_deselecting_a_case_the_witness_runs_still_fails(
    recorded: tuple[GitRepo, str],
) -> None:
    # The attack next to the band's own --deselect: accounting tells the two apart.
    hide = ("def pytest_collection_modifyitems(config, items):\n"
            "    dropped = [i for i in items if i.nodeid.endswith('test_kind[2]')]\n"
            "    config.hook.pytest_deselected(items=dropped)\n"
            "    items[:] = [i for i in items if i not in dropped]\n")
    done, data = _check(recorded, "hide", {**TWO_CHANGED, "tests/conftest.py": hide})
    assert done.returncode in (1, 4), done.stdout + done.stderr
    deselected = [r for r in data["reasons"] if r["code"] == "deselected"]
    assert deselected and "tests/test_kinds.py::test_kind" in deselected[0]["detail"]


def test_ids_made_by_changed_code_at_collection_deselect_nothing(
    recorded: tuple[GitRepo, str],
) -> None:
    # cases() gains a case: head collects test_made[3], which no witness names. It ran
    # while collecting (pytest_generate_tests), which every test depends on.
    files = {"app/core.py": TWO_CHANGED["app/core.py"].replace("return [1, 2]",
                                                               "return [1, 2, 3]")}
    found = _plan(recorded, "cases", files)
    assert {d.label for d in found.decisions} == {IMPACTED}
    assert "tests/test_made.py::test_made" in found.run_args
    assert found.deselect == ()


def test_ids_from_a_rebound_name_deselect_nothing(recorded: tuple[GitRepo, str]) -> None:
    # LIMIT = 1: head's test_limit[1] is two cases, and neither is the witness's test_limit[1].
    found = _plan(recorded, "limit", {"app/limits.py": "LIMIT = 1\n", **TWO_CHANGED})
    assert "tests/test_limit.py::test_limit" in found.run_args
    assert found.deselect == ()


def test_a_changed_test_file_runs_whole(recorded: tuple[GitRepo, str]) -> None:
    files = {"tests/test_kinds.py": FILES["tests/test_kinds.py"].replace("[1, 2]", "[1, 2, 4]"),
             **TWO_CHANGED}
    found = _plan(recorded, "file", files)
    assert "tests/test_kinds.py" in found.run_args
    assert not [a for a in found.run_args if a.startswith("tests/test_kinds.py::")]
    assert not _of(found.deselect, "tests/test_kinds.py::test_kind")


def test_a_sampled_case_whose_id_differs_in_every_process_runs_through_its_function(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The audit samples skips by node id: test_pid's pid case, passed to pytest alone, is
    not found in the band's process, and pytest then runs nothing at all."""
    files = {**FILES, "pyproject.toml": "[tool.agentgate]\nshadow_percent = 100\n"}
    for recorded in recorded_repo(tmp_path_factory, files):
        repo, w = recorded
        found = _plan(recorded, "audit", {"app/limits.py": "LIMIT = 3  # same\n"})
        assert "tests/test_pid.py::test_pid" in found.run_args
        assert not _of(found.run_args, "tests/test_pid.py::test_pid")
        assert _of(found.shadow, "tests/test_pid.py::test_pid")
        done = run_agentgate("check", "--base", w, "--format", "json", cwd=repo.path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["results"]["failed"] == 0


@pytest.mark.parametrize(("changed", "runs", "deselected"), [
    ("return s.split('::')[-1]", "x::int", "y"),
    ("return s + ''", "y", "x::int"),
], ids=["the-colon-case-runs", "the-colon-case-is-deselected"])
def test_a_case_whose_id_holds_colons_is_deselected_like_any_other(
    recorded: tuple[GitRepo, str], changed: str, runs: str, deselected: str,
) -> None:
    """sqlparse: every impacted case of a function whose ids hold "::" ran the whole
    function (50 tests audited as 10). The function runs and pytest's --deselect, a text
    prefix, takes such an id like any other; the running case still runs and counts."""
    old = "return s.split('::')[1]" if "::" in runs else "return s\n"
    code = FILES["app/cast.py"].replace(old, changed + ("\n" if old.endswith("\n") else ""))
    done, data = _check(recorded, "cast-" + runs.replace(":", "-"), {"app/cast.py": code})
    assert done.returncode == 0, done.stdout + done.stderr
    assert data["tests"] == ["tests/test_cast.py::test_cast"]
    assert data["witness"]["deselected"] == [f"tests/test_cast.py::test_cast[{deselected}]"]
    assert (data["results"]["passed"], data["results"]["failed"]) == (1, 0)
    assert not [r for r in data["reasons"] if r["code"] in ("not-collected", "deselected")]
