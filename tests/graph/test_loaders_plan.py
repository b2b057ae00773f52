"""Loaders the graph cannot follow, on real repositories: the loading file depends on
everything, and only the tests that reach it run more (issue 12)."""

from __future__ import annotations

from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.git_repo import GitRepo

PLAIN = "def test_plain():\n    assert True\n"
LOADERS = {
    "spec_from_file_location": "import importlib.util as u\n\n"
    "def load():\n    spec = u.spec_from_file_location('p', 'scripts/plugin.py')\n"
    "    mod = u.module_from_spec(spec)\n    spec.loader.exec_module(mod)\n    return mod\n",
    "run_path": "import runpy\n\ndef load():\n    return runpy.run_path('scripts/plugin.py')\n",
    "exec-of-a-name": "def load():\n    src = open('scripts/plugin.py').read()\n"
    "    exec(src, {})\n",
}


def _plan(repo: GitRepo, loader: str, change: dict[str, str]) -> dict[str, Any]:
    repo.files({
        "app/__init__.py": "",
        "app/core.py": "def one():\n    return 1\n",
        "scripts/plugin.py": "VALUE = 1\n",
        "tests/test_loader.py": loader + "\n" + PLAIN,
        "tests/test_core.py": "from app.core import one\n\n" + PLAIN,
        "tests/test_plain.py": PLAIN,
    })
    repo.commit("base")
    repo.git("tag", "base")
    repo.files(change)
    repo.commit("change")
    return checkrun.plan(repo.path, "base", "HEAD").to_json()


@pytest.mark.parametrize("loader", sorted(LOADERS))
def test_a_loaded_file_changing_runs_the_loader_and_nothing_else(repo: GitRepo,
                                                                 loader: str) -> None:
    data = _plan(repo, LOADERS[loader], {"scripts/plugin.py": "VALUE = 2\n"})
    assert (data["tests"], data["exit_code"]) == (["tests/test_loader.py"], 0)
    reasons = {(r["path"], r["verdict"]) for r in data["reasons"] if r["code"] == "dynamic-import"}
    assert reasons == {("tests/test_loader.py", "scoped")}


def test_a_change_the_loader_does_not_reach_still_runs_it(repo: GitRepo) -> None:
    # It may load anything; the test of the changed module runs too, the plain one does not.
    data = _plan(repo, LOADERS["run_path"], {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py", "tests/test_loader.py"]


def test_a_literal_run_module_is_an_edge_not_an_escalation(repo: GitRepo) -> None:
    runner = "import runpy\n\ndef main():\n    runpy.run_module('app.core', run_name='x')\n"
    data = _plan(repo, runner, {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py", "tests/test_loader.py"]
    assert data["why"]["tests/test_loader.py"] == ["tests/test_loader.py", "app/core.py"]
    assert not [r for r in data["reasons"] if r["code"] == "dynamic-import"]
