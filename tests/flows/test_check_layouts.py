"""Where a project keeps its tests, read as pytest reads it (new-user trial, tabulate: its
tests live in ``test/`` and no ``testpaths`` says so; with ``tests`` for the only test root,
a skip marker on the failing test, added with the bug, passed the gate and the push)."""

from __future__ import annotations

from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo

UTIL = "def shout(s):\n    return s.upper()\n"
BROKEN = "def shout(s):\n    return s.lower()\n"
TEST = ("import pytest\n\nfrom app.util import shout\n\n\n"
        "def test_shout():\n    assert shout('a') == 'A'\n")


def check_json(repo: GitRepo) -> dict[str, Any]:
    return checkrun.check(repo.path, "base", "HEAD").to_json()


@pytest.fixture(params=["test/test_util.py", "testing/test_util.py", "app/test_util.py"])
def laid_out(repo: GitRepo, request: pytest.FixtureRequest) -> tuple[GitRepo, str]:
    test = str(request.param)
    repo.files({"app/__init__.py": "", "app/util.py": UTIL, test: TEST})
    repo.commit("initial")
    repo.git("tag", "base")
    return repo, test


def test_a_skip_marker_added_with_the_bug_is_blocked_wherever_the_tests_live(
    laid_out: tuple[GitRepo, str],
) -> None:
    repo, test = laid_out
    commit(repo, {"app/util.py": BROKEN,
                  test: TEST.replace("def test_shout", "@pytest.mark.skip\ndef test_shout")})
    data = check_json(repo)
    assert data["exit_code"] == 4, data["reasons"]
    assert "suppressed-failure" in [r["code"] for r in data["reasons"]], data["reasons"]


def test_a_new_test_beside_them_passes(laid_out: tuple[GitRepo, str]) -> None:
    repo, test = laid_out
    commit(repo, {"app/util.py": UTIL + "\n\ndef whisper(s):\n    return s.lower()\n",
                  test: TEST + "\n\ndef test_whisper():\n    from app.util import whisper\n"
                  "    assert whisper('A') == 'a'\n"})
    data = check_json(repo)
    assert data["exit_code"] == 0, data["reasons"]


@pytest.mark.parametrize("testpaths", [False, True], ids=["collected-from-the-root", "testpaths"])
def test_a_test_module_outside_the_roots_runs_when_pytest_collects_it(
    repo: GitRepo, testpaths: bool,
) -> None:
    """New-user trial (dateutil, a src layout): pytest, with no ``testpaths``, collected a
    ``docs/`` example its ``python_files`` names; no plan reached it, and a patch that broke
    it passed. Under ``testpaths`` pytest never collects it, and neither does the band."""
    example = ("from app.util import shout\n\n\n"
               "def test_example():\n    assert shout('a') == 'A'\n")
    repo.files({"src/app/__init__.py": "", "src/app/util.py": UTIL,
                "tests/test_other.py": "def test_other():\n    assert True\n",
                "docs/examples/check_example.py": example,
                "pytest.ini": "[pytest]\npython_files = test_*.py check_*.py\npythonpath = src\n"
                + ("testpaths = tests\n" if testpaths else "")})
    repo.commit("initial")
    repo.git("tag", "base")
    commit(repo, {"src/app/util.py": BROKEN})
    data = check_json(repo)
    assert data["exit_code"] == (0 if testpaths else 1), data["reasons"]
    if not testpaths:
        assert "docs/examples/check_example.py" in data["tests"]
