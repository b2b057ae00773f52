"""An impacted parametrized test runs alone when its node id cannot have changed (issue 12
item 5: parso's ``test_python_exception_matches`` has hundreds of parameters, and one
changed branch ran all of them). Its ids are made at collection: when what made them may
have changed -- its file, code that ran while collecting, a name a module-level change
rebound -- every parameter of the function runs, so that a new or renamed case is not
missed; the band is run for real on both sides."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import patch, plan, recorded_repo

CORE = ("def kind(n):\n    if n == 1:\n        return one()\n    return two()\n\n\n"
        "def one():\n    return 'one'\n\n\ndef two():\n    return 'two'\n\n\n"
        "def cases():\n    return [1, 2]\n")
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/core.py": CORE,
    "app/limits.py": "LIMIT = 3\n",
    "tests/test_kinds.py": "import pytest\n\nfrom app.core import kind\n\n\n"
    "@pytest.mark.parametrize('n', [1, 2])\n"
    "def test_kind(n):\n    assert kind(n) in ('one', 'two')\n",
    "tests/test_made.py": "from app.core import cases, kind\n\n\n"
    "def pytest_generate_tests(metafunc):\n"
    "    if 'n' in metafunc.fixturenames:\n        metafunc.parametrize('n', cases())\n\n\n"
    "def test_made(n):\n    assert kind(n) in ('one', 'two')\n",
    "tests/test_colons.py": "import pytest\n\nfrom app.core import kind\n\n\n"
    "@pytest.mark.parametrize('s', ['a::b'])\n"
    "def test_colons(s):\n    assert kind(2) in ('one', 'two')\n",
    "tests/test_limit.py": "import pytest\n\nfrom app.core import kind\nfrom app.limits import "
    "LIMIT\n\n\n@pytest.mark.parametrize('n', [1, LIMIT])\n"
    "def test_limit(n):\n    assert kind(n) in ('one', 'two')\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def _band(recorded: tuple[GitRepo, str], name: str, files: dict[str, str]) -> tuple[str, ...]:
    repo, w = recorded
    patch(repo, w, name, files)
    return plan(repo, w).run_args


def test_a_changed_branch_runs_only_the_parameters_that_ran_it(
    recorded: tuple[GitRepo, str],
) -> None:
    band = _band(recorded, "two", {"app/core.py": CORE.replace("'two'", "'tw' + 'o'")})
    assert "tests/test_kinds.py::test_kind[2]" in band
    assert "tests/test_kinds.py::test_kind[1]" not in band
    assert "tests/test_kinds.py::test_kind" not in band
    # An id pytest would split at its "::" runs as the whole function.
    assert "tests/test_colons.py::test_colons" in band


def test_the_band_runs_an_exact_parameter_and_fails_on_it(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    patch(repo, w, "broken", {"app/core.py": CORE.replace("return 'two'", "return 'three'")})
    done = run_agentgate("check", "--base", w, "--format", "json", cwd=repo.path)
    assert done.returncode == 1, done.stdout + done.stderr
    results = json.loads(done.stdout)["results"]
    assert (results["selected"], results["failed"]) == (4, 4)
    assert results["failed_ids"] == ["tests/test_colons.py::test_colons[a::b]",
                                     "tests/test_kinds.py::test_kind[2]",
                                     "tests/test_limit.py::test_limit[3]",
                                     "tests/test_made.py::test_made[2]"]


def test_ids_made_by_changed_code_at_collection_run_every_parameter(
    recorded: tuple[GitRepo, str],
) -> None:
    # cases() gains a case: head collects test_made[3], which no witness names. It ran
    # while collecting (pytest_generate_tests), which every test depends on.
    files = {"app/core.py": CORE.replace("return [1, 2]", "return [1, 2, 3]")
             .replace("'two'", "'tw' + 'o'")}
    repo, w = recorded
    patch(repo, w, "cases", files)
    found = plan(repo, w)
    assert "tests/test_made.py::test_made" in found.run_args
    assert not [a for a in found.run_args if a.startswith("tests/test_made.py::test_made[")]
    assert {d.label for d in found.decisions} == {IMPACTED}
    assert "tests/test_kinds.py::test_kind" in found.run_args


def test_ids_from_a_rebound_name_run_every_parameter(recorded: tuple[GitRepo, str]) -> None:
    # LIMIT = 2: head's test_limit[2] is the witness's test_limit[3].
    band = _band(recorded, "limit", {"app/limits.py": "LIMIT = 2\n",
                                     "app/core.py": CORE.replace("'two'", "'tw' + 'o'")})
    assert "tests/test_limit.py::test_limit" in band
    assert not [a for a in band if a.startswith("tests/test_limit.py::test_limit[")]


def test_a_changed_test_file_runs_every_parameter(recorded: tuple[GitRepo, str]) -> None:
    files = {"tests/test_kinds.py": FILES["tests/test_kinds.py"].replace("[1, 2]", "[1, 2, 4]"),
             "app/core.py": CORE.replace("'two'", "'tw' + 'o'")}
    band = _band(recorded, "file", files)
    assert "tests/test_kinds.py" in band
    assert not [a for a in band if a.startswith("tests/test_kinds.py::")]
