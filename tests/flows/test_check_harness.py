"""A band that runs selected files loads every conftest the whole suite's run loads.

Red-team round 6: ``tests/integration/conftest.py`` put the app in "exact" mode for the
session (an environment variable set in ``pytest_configure``, or at its import); in the
whole suite the unit tests ran in that mode. The agent broke exact mode. The band (the unit
tests alone: the integration tests never import the changed module) named its files, so
pytest never loaded that folder's conftest, and the band passed in the default mode. The
band now walks such folders for their conftests alone, collecting none of their files.
"""

from __future__ import annotations

import json

import pytest

from agentgate.run import band, outcomes
from tests.support.git_repo import GitRepo, run_agentgate

CALC = ("import os\n\n\ndef mul(a, b):\n    if os.environ.get('CALC_MODE') == 'exact':\n"
        "        return a * b\n    return float(a) * float(b)\n")
BROKEN = CALC.replace("        return a * b\n", "        return a * b + 1\n")
SETS_MODE = {
    "configure": "import os\n\n\ndef pytest_configure(config):\n"
                 "    os.environ['CALC_MODE'] = 'exact'\n",
    "import": "import os\n\nos.environ['CALC_MODE'] = 'exact'\n",
}
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "app/__init__.py": "",
    "app/calc.py": CALC,
    "app/other.py": "def shout(s):\n    return s.upper()\n",
    "tests/__init__.py": "",
    "tests/unit/__init__.py": "",
    "tests/unit/test_calc.py": "from app.calc import mul\n\n\ndef test_mul():\n"
                               "    assert mul(2, 3) == 6\n",
    "tests/integration/__init__.py": "",
    "tests/integration/test_other.py": "from app.other import shout\n\n\n"
                                       "def test_shout():\n    assert shout('a') == 'A'\n",
}


def _check(repo: GitRepo, base: str) -> tuple[int, dict[str, object]]:
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("how", sorted(SETS_MODE))
def test_a_sibling_folders_conftest_acts_on_the_band_as_on_the_whole_suite(
    repo: GitRepo, how: str,
) -> None:
    repo.files({**FILES, "tests/integration/conftest.py": SETS_MODE[how]})
    base = repo.commit("initial")
    repo.write("app/calc.py", BROKEN)
    repo.commit("break exact mode")
    code, data = _check(repo, base)
    assert code == 1, data["reasons"]
    results = data["results"]
    assert isinstance(results, dict)
    assert results["failed_ids"] == ["tests/unit/test_calc.py::test_mul"]
    # The integration folder was walked for its conftest, not run.
    assert results["passed"] == 0


def test_a_sibling_conftest_of_fixtures_runs_nothing_more(repo: GitRepo) -> None:
    """The twin: the folder's conftest loads, none of its tests run, the band passes."""
    repo.files({**FILES, "tests/integration/conftest.py": "import pytest\n\n\n"
                "@pytest.fixture\ndef word():\n    return 'a'\n"})
    base = repo.commit("initial")
    repo.write("app/calc.py", CALC + "\n\nTIMES = 2\n")
    repo.commit("a constant")
    code, data = _check(repo, base)
    assert code == 0, data["reasons"]
    results = data["results"]
    assert isinstance(results, dict)
    assert (results["passed"], results["failed"]) == (1, 0)


def test_a_collect_ignore_the_patch_writes_turns_the_walk_off_nowhere(repo: GitRepo) -> None:
    """Whether the project steers pytest's walk itself (``collect_ignore``, which switches
    the conftest walk off) is the base's to say: an agent's conftest naming it with the
    breaking change is still caught."""
    repo.files({**FILES, "tests/integration/conftest.py": SETS_MODE["configure"]})
    base = repo.commit("initial")
    repo.write("app/calc.py", BROKEN)
    repo.write("tests/unit/conftest.py", "collect_ignore: list[str] = []\n")
    repo.commit("break exact mode\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    code, data = _check(repo, base)
    assert code != 0, data["reasons"]
    results = data["results"]
    assert isinstance(results, dict)
    assert "tests/unit/test_calc.py::test_mul" in results["failed_ids"]


def test_the_band_names_the_option_the_outcome_plugin_defines() -> None:
    assert band.HARNESS_OPTION == outcomes.HARNESS_OPTION  # a copy: the plugin imports pytest
    assert band.SELECT_OPTION == outcomes.SELECT_OPTION


# Red-team round 7: the folder's conftest comes after the selected file in pytest's walk, and
# the code reads the mode once, at import. The whole suite imports app.calc (collecting
# tests/unit) before it loads tests/web's conftest: the default mode is what the unit test
# checks. A band that loaded that conftest at start-up tested the exact mode instead.
AT_IMPORT = ("import os\n\nEXACT = os.environ.get('CALC_MODE') == 'exact'\n\n\n"
             "def mul(a, b):\n    if EXACT:\n        return a * b\n"
             "    return int(float(a) * float(b))\n")
LATER = {**{k: v for k, v in FILES.items() if not k.startswith("tests/integration/")},
         "app/calc.py": AT_IMPORT, "tests/web/__init__.py": "",
         "tests/web/conftest.py": SETS_MODE["import"],
         "tests/web/test_other.py": FILES["tests/integration/test_other.py"]}


# The later folder's test also reaches the change: it is selected, so an argument itself.
SELECTED_TOO = "from app.calc import mul\n\n\ndef test_exact():\n    assert mul(3, 3) == 9\n"


@pytest.mark.parametrize("later", ["walked-alone", "selected"])
@pytest.mark.parametrize(("calc", "code"), [
    (AT_IMPORT.replace("int(float(a) * float(b))", "int(float(a) + float(b))"), 1),
    (AT_IMPORT.replace("int(float(a) * float(b))", "int(float(b) * float(a))"), 0),
], ids=["broken-default-mode", "harmless"])
def test_a_sibling_conftest_loads_where_the_whole_suites_walk_loads_it(
    repo: GitRepo, calc: str, code: int, later: str,
) -> None:
    repo.files({**LATER, **({"tests/web/test_exact.py": SELECTED_TOO}
                            if later == "selected" else {})})
    base = repo.commit("initial")
    repo.write("app/calc.py", calc)
    repo.commit("rework mul\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    found, data = _check(repo, base)
    assert found == code, data["reasons"]
    results = data["results"]
    assert isinstance(results, dict)
    # As the whole suite fails them: the later folder's test checks the default mode too.
    failing = ["tests/unit/test_calc.py::test_mul"] + (
        ["tests/web/test_exact.py::test_exact"] if later == "selected" else [])
    assert results["failed_ids"] == (failing if code else [])


def test_a_conftest_in_a_fixture_folder_loads_as_the_whole_suite_loads_it(
    repo: GitRepo,
) -> None:
    """Red-team round 7: ``tests/fixtures`` is agentgate's data folder, not pytest's: the
    whole suite's walk loads a conftest there, and it set the mode the unit test ran in."""
    repo.files({**FILES, "tests/fixtures/conftest.py": SETS_MODE["configure"]})
    recorded = run_agentgate("fixtures", "record", cwd=repo.path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    base = repo.commit("initial")
    repo.write("app/calc.py", BROKEN)
    repo.commit("break exact mode\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    code, data = _check(repo, base)
    assert code == 1, data["reasons"]
    results = data["results"]
    assert isinstance(results, dict)
    assert results["failed_ids"] == ["tests/unit/test_calc.py::test_mul"]
