"""Test files outside agentgate's test roots that pytest collects (no ``testpaths``: pytest
collects the whole tree) are tests the band selects from. pyflakes keeps its tests in
``pyflakes/test/``: with ``tests`` for the only root a plan found no test for any patch and
passed, running nothing. Where ``testpaths`` are set, pytest collects there only, and so
does the band. Real repositories, the real CLI."""

from __future__ import annotations

import json

from tests.support.git_repo import GitRepo, run_agentgate

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def one():\n    return 1\n",
    "pkg/other.py": "def two():\n    return 2\n",
    "pkg/test/__init__.py": "",
    "pkg/test/test_core.py": "from pkg.core import one\n\n\ndef test_one():\n"
    "    assert one() == 1\n",
}


def _plan(repo: GitRepo, files: dict[str, str], change: dict[str, str]
          ) -> tuple[int, list[str], list[str]]:
    repo.files(files)
    base = repo.commit("base")
    repo.files(change)
    repo.commit("change")
    done = run_agentgate("plan", "--base", base, "--format", "json", cwd=repo.path)
    out = json.loads(done.stdout)
    return done.returncode, [r["code"] for r in out["reasons"]], out["tests"]


def test_tests_outside_the_roots_are_the_tests_pytest_collects(repo: GitRepo) -> None:
    assert _plan(repo, FILES, {"pkg/core.py": "def one():\n    return 1 + 0\n"}) == (
        0, [], ["pkg/test/test_core.py"])
    repo.git("checkout", "-q", "-B", "other", "HEAD~1")
    assert _plan(repo, {}, {"pkg/other.py": "def two():\n    return 3\n"}) == (0, [], [])


def test_testpaths_say_where_pytest_collects(repo: GitRepo) -> None:
    files = {**FILES, "pytest.ini": "[pytest]\ntestpaths = tests\n",
             "tests/test_other.py": "from pkg.other import two\n\n\ndef test_two():\n"
             "    assert two() == 2\n"}
    # pytest run without arguments never collects pkg/test: neither does the band.
    assert _plan(repo, files, {"pkg/core.py": "def one():\n    return 1 + 0\n"}) == (0, [], [])


def test_beside_a_tests_folder(repo: GitRepo) -> None:
    files = {**FILES, "tests/test_other.py": "from pkg.other import two\n\n\ndef test_two():\n"
             "    assert two() == 2\n"}
    assert _plan(repo, files, {"pkg/core.py": "def one():\n    return 1 + 0\n"}) == (
        0, [], ["pkg/test/test_core.py"])
