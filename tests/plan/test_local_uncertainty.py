"""Local uncertainty that every test reaches, narrowed by a witness (issue 12 items 1, 3).

A package ``__init__`` that imports a module with a computed import (Markdown's
``markdown/core.py``): every test reaches the escalation, every test file runs without a
witness, and a complete, fresh witness skips the tests that ran nothing changed.

A root conftest that puts a computed folder on sys.path: a local uncertainty,
not a global promotion. Every test is under the root conftest, so every test file runs
without a witness; a witness narrows that to the tests that ran the change. The root
conftest changing, or importing changed code, still promotes."""

from __future__ import annotations

from typing import Any

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


def test_a_root_conftest_importing_the_change_still_promotes(repo: GitRepo) -> None:
    files = {**FILES, "conftest.py": COMPUTED + "import app.core  # noqa: F401\n"}
    data = _plan(repo, ONE_CHANGED, files)
    assert data["verdict"] == "promote"
    assert "imports changed code" in _reason(data, "root-conftest")["detail"]


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
