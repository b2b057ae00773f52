"""Local uncertainty that every test reaches, narrowed by a witness (issue 12 items 1, 3).

A package ``__init__`` that imports a module with a computed import (Markdown's
``markdown/core.py``): every test reaches the escalation, every test file runs without a
witness, and a complete, fresh witness skips the tests that ran nothing changed.

A root conftest that puts a computed folder on sys.path: a local uncertainty,
not a global promotion. Every test is under the root conftest, so every test file runs
without a witness; a witness narrows that to the tests that ran the change. The root
conftest changing still promotes; importing changed code, every test runs without a witness,
and a witness narrows it to the tests that ran the change, every test where the conftest
ran it at start-up, in a hook or an autouse fixture. The same for a root conftest
that imports a module by a computed name: what it loaded at the base is in every test's
witness, so a witness narrows it only where the loaded code did not change."""

from __future__ import annotations

from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.git_repo import GitRepo, run_agentgate

COMPUTED = "import os\nimport sys\n\nsys.path.insert(0, os.environ.get('EXTRA', 'lib'))\n"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "conftest.py": COMPUTED,
    "app/__init__.py": "",
    "app/core.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n",
    "tests/test_one.py": "from app.core import one\n\n\ndef test_one():\n    assert one() == 1\n",
    "tests/test_two.py": "from app.core import two\n\n\ndef test_two():\n    assert two() == 2\n",
    "tests/test_plain.py": "def test_plain():\n    assert True\n",
}
EVERY = ["tests/test_one.py", "tests/test_plain.py", "tests/test_two.py"]
ONE_CHANGED = {"app/core.py": FILES["app/core.py"].replace("return 1", "return 3 - 2")}


def _plan(repo: GitRepo, change: dict[str, str], files: dict[str, str] = FILES,
          *, witness: bool = False) -> dict[str, Any]:
    repo.files(files)
    repo.commit("base")
    repo.git("tag", "base")
    if witness:
        done = run_agentgate("witness", "record", cwd=repo.path)
        assert done.returncode == 0, done.stdout + done.stderr
    repo.files(change)
    repo.commit("change")
    return checkrun.plan(repo.path, "base", "HEAD").to_json()


def _reason(data: dict[str, Any], code: str) -> dict[str, Any]:
    return next(r for r in data["reasons"] if r["code"] == code)


def test_a_computed_root_sys_path_runs_every_test_file_scoped(repo: GitRepo) -> None:
    data = _plan(repo, ONE_CHANGED)
    assert (data["verdict"], data["tests"]) == ("scoped", EVERY)
    reason = _reason(data, "dynamic-path")
    assert (reason["path"], reason["verdict"]) == ("conftest.py", "scoped")
    assert "the 3 test file(s) under it run" in reason["detail"]
    assert not [r for r in data["reasons"] if r["code"] == "root-conftest"]


def test_a_witness_narrows_the_computed_root_sys_path(repo: GitRepo) -> None:
    data = _plan(repo, ONE_CHANGED, witness=True)
    assert (data["verdict"], data["tests"]) == ("scoped", ["tests/test_one.py::test_one"])


def test_the_root_conftest_changing_still_promotes_and_discards_the_witness(
    repo: GitRepo,
) -> None:
    data = _plan(repo, {"conftest.py": COMPUTED + "X = 1\n"}, witness=True)
    assert (data["verdict"], data["run"], data.get("witness")) == ("promote", "full", None)
    assert _reason(data, "root-conftest")["path"] == "conftest.py"


IMPORTING = {**FILES, "conftest.py": "import app.core  # noqa: F401\n"}


def test_a_root_conftest_importing_the_change_runs_every_test_file_scoped(
    repo: GitRepo,
) -> None:
    # Issue 12: parso's root conftest imports the package, so every code change promoted
    # and discarded the witness. Every test still runs without one, but as a scoped plan.
    data = _plan(repo, ONE_CHANGED, IMPORTING)
    assert (data["verdict"], data["tests"]) == ("scoped", EVERY)
    reason = _reason(data, "root-conftest-imports")
    assert (reason["path"], reason["verdict"]) == ("conftest.py", "scoped")
    assert "conftest.py -> app/core.py" in reason["detail"]
    assert data["why"]["tests/test_plain.py"] == [
        "tests/test_plain.py", "conftest.py", "app/core.py"]
    assert not [r for r in data["reasons"] if r["code"] == "root-conftest"]


def test_a_witness_narrows_a_root_conftest_importing_the_change(repo: GitRepo) -> None:
    data = _plan(repo, ONE_CHANGED, IMPORTING, witness=True)
    assert (data["verdict"], data["tests"]) == ("scoped", ["tests/test_one.py::test_one"])


# The attacks on that narrowing: the root conftest runs the changed function outside any
# test's own code. Each must put every test in the band, test_plain's included.
RUNS_THE_CHANGE = {
    "at its import": "import os\n\nfrom app.core import one\n\n"
    "os.environ['APP_ONE'] = str(one())\n",
    "in a collection hook": "from app.core import one\n\n\n"
    "def pytest_collection_modifyitems(items):\n    assert one() == 1\n",
    "in an autouse fixture": "import pytest\n\nfrom app.core import one\n\n\n"
    "@pytest.fixture(autouse=True)\ndef _check():\n    assert one() == 1\n",
}


def test_a_name_the_root_conftest_binds_from_the_change_at_import_reruns_only_its_readers(
    repo: GitRepo,
) -> None:
    # The legitimate side: one() is pure and only binds START, which no test reads.
    files = {**FILES, "conftest.py": "from app.core import one\n\nSTART = one()\n"}
    data = _plan(repo, ONE_CHANGED, files, witness=True)
    assert (data["verdict"], data["tests"]) == ("scoped", ["tests/test_one.py::test_one"])


@pytest.mark.parametrize("where", list(RUNS_THE_CHANGE))
def test_what_the_root_conftest_runs_of_the_change_reruns_every_test(
    repo: GitRepo, where: str
) -> None:
    files = {**FILES, "conftest.py": RUNS_THE_CHANGE[where]}
    data = _plan(repo, ONE_CHANGED, files, witness=True)
    assert data["verdict"] == "scoped"
    assert data["tests"] == ["tests/test_one.py::test_one", "tests/test_plain.py::test_plain",
                             "tests/test_two.py::test_two"]


LOADER = {
    ".gitignore": FILES[".gitignore"],
    "pyproject.toml": FILES["pyproject.toml"],
    "app/__init__.py": "from app import core, loader  # noqa: F401\n",
    "app/core.py": FILES["app/core.py"],
    "app/loader.py": "import importlib\n\n\ndef load(kind):\n"
    "    return importlib.import_module(kind + '_ext')\n",
    **{k: v for k, v in FILES.items() if k.startswith("tests/")},
    "tests/test_plain.py": "import app  # noqa: F401\n\n\n" + FILES["tests/test_plain.py"],
}


def test_a_computed_import_every_test_reaches_runs_every_test_file(repo: GitRepo) -> None:
    data = _plan(repo, ONE_CHANGED, LOADER)
    assert (data["verdict"], data["tests"]) == ("scoped", EVERY)
    assert _reason(data, "dynamic-import")["path"] == "app/loader.py"


def test_a_witness_narrows_a_computed_import_every_test_reaches(repo: GitRepo) -> None:
    data = _plan(repo, ONE_CHANGED, LOADER, witness=True)
    assert (data["verdict"], data["tests"]) == ("scoped", ["tests/test_one.py::test_one"])
    assert _reason(data, "dynamic-import")["verdict"] == "scoped"


DYNAMIC = ("import importlib\nimport os\n\n"
           "LOADED = importlib.import_module(os.environ.get('EXTRA_MODULE', 'app.extra'))\n")
ROOT_LOADER = {**FILES, "conftest.py": DYNAMIC, "app/extra.py": "FLAG = 1\n"}


def test_a_computed_root_conftest_import_runs_every_test_file_scoped(repo: GitRepo) -> None:
    # Issue 12: a root conftest with a computed import promoted every code change.
    data = _plan(repo, ONE_CHANGED, ROOT_LOADER)
    assert (data["verdict"], data["tests"]) == ("scoped", EVERY)
    reason = _reason(data, "dynamic-import")
    assert (reason["path"], reason["verdict"]) == ("conftest.py", "scoped")
    assert not [r for r in data["reasons"] if r["code"] == "root-conftest"]


def test_a_witness_narrows_the_computed_root_conftest_import(repo: GitRepo) -> None:
    data = _plan(repo, ONE_CHANGED, ROOT_LOADER, witness=True)
    assert (data["verdict"], data["tests"]) == ("scoped", ["tests/test_one.py::test_one"])


def test_what_the_root_conftest_loaded_by_a_computed_name_reruns_every_test(
    repo: GitRepo,
) -> None:
    # The attack on the narrowing: the conftest's computed import loaded app/extra.py at the
    # base, so its module code governs every test's session, test_plain's included, though
    # no test imports it. Without COLLECT depending on the root conftest's import, the
    # witness would skip all three. (A change that only binds a name no test reads, such as
    # FLAG = 2, runs nothing: witness.rebind; this one sets the session's recursion limit.)
    effect = "import sys\n\nFLAG = 1\nsys.setrecursionlimit(5000)\n"
    data = _plan(repo, {"app/extra.py": effect}, ROOT_LOADER, witness=True)
    assert data["verdict"] == "scoped"
    assert data["tests"] == ["tests/test_one.py::test_one", "tests/test_plain.py::test_plain",
                             "tests/test_two.py::test_two"]


def test_a_name_no_test_reads_in_what_the_root_conftest_loaded_runs_nothing(
    repo: GitRepo,
) -> None:
    data = _plan(repo, {"app/extra.py": "FLAG = 2\n"}, ROOT_LOADER, witness=True)
    assert (data["verdict"], data["tests"]) == ("scoped", [])


def test_the_root_conftest_with_a_computed_import_changing_still_promotes(
    repo: GitRepo,
) -> None:
    data = _plan(repo, {"conftest.py": DYNAMIC + "X = 1\n"}, ROOT_LOADER, witness=True)
    assert (data["verdict"], data["run"], data.get("witness")) == ("promote", "full", None)
    assert _reason(data, "root-conftest")["path"] == "conftest.py"
