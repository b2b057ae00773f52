"""Loaders the graph cannot follow, on real repositories: the loading file depends on
everything, and only the tests that reach it run more (issue 12)."""

from __future__ import annotations

from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.git_repo import GitRepo

PLAIN = "def test_plain():\n    assert True\n"
LOADERS = {
    "spec_from_file_location": "import importlib.util as u\nimport os\n\n"
    "def load():\n    spec = u.spec_from_file_location('p', os.environ['PLUGIN'])\n"
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


FILE_SPEC = ("import importlib.util as u\nimport os\n\n"
             "def load():\n    spec = u.spec_from_file_location('p', {where})\n"
             "    mod = u.module_from_spec(spec)\n    spec.loader.exec_module(mod)\n"
             "    return mod\n")
KNOWN = {
    "literal": "'scripts/plugin.py'",
    "file-relative": "os.path.join(os.path.dirname(__file__), '..', 'scripts', 'plugin.py')",
    "keyword": "location='scripts/plugin.py'",
}


@pytest.mark.parametrize("where", sorted(KNOWN))
def test_a_file_spec_with_a_known_path_is_an_edge(repo: GitRepo, where: str) -> None:
    # Issue 12: the loaded file changing runs the loader's tests (the edge, not an
    # escalation), and a change elsewhere no longer does.
    loader = FILE_SPEC.format(where=KNOWN[where])
    data = _plan(repo, loader, {"scripts/plugin.py": "VALUE = 2\n"})
    assert data["tests"] == ["tests/test_loader.py"]
    assert data["why"]["tests/test_loader.py"] == ["tests/test_loader.py", "scripts/plugin.py"]
    assert not [r for r in data["reasons"] if r["code"] == "dynamic-import"]
    repo.files({"app/core.py": "def one():\n    return 2 - 1\n"})
    repo.commit("elsewhere")
    assert checkrun.plan(repo.path, "base", "HEAD").to_json()["tests"] == [
        "tests/test_core.py", "tests/test_loader.py"]  # the loaded file still changed


def test_a_change_elsewhere_does_not_reach_a_file_spec_loader(repo: GitRepo) -> None:
    loader = FILE_SPEC.format(where=KNOWN["literal"])
    data = _plan(repo, loader, {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py"]


@pytest.mark.parametrize("other", [
    "u.find_spec(os.environ['MOD'])",  # another spec the runners may run
    "u.spec_from_file_location('q', os.environ['PLUGIN'])",  # a file spec with no known path
])
def test_a_file_spec_next_to_an_unknown_spec_still_escalates(repo: GitRepo, other: str) -> None:
    loader = FILE_SPEC.format(where=KNOWN["literal"]) + f"\n\ndef other():\n    return {other}\n"
    data = _plan(repo, loader, {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py", "tests/test_loader.py"]
    assert {r["path"] for r in data["reasons"] if r["code"] == "dynamic-import"} == {
        "tests/test_loader.py"}


def test_a_file_spec_of_a_file_not_in_the_tree_escalates(repo: GitRepo) -> None:
    loader = FILE_SPEC.format(where="'scripts/absent.py'")
    data = _plan(repo, loader, {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py", "tests/test_loader.py"]
    assert any("scripts/absent.py" in r["detail"] for r in data["reasons"]
               if r["code"] == "dynamic-import")


RUN_AS_MAIN = {
    "argv": "import subprocess, sys\n\ndef run():\n"
    "    return subprocess.run([sys.executable, '-m', 'app.core'], check=True)\n",
    "shell": "import os\n\ndef run():\n    return os.system('python -m app.core --quiet')\n",
}


@pytest.mark.parametrize("how", sorted(RUN_AS_MAIN))
def test_a_module_a_test_runs_as_a_program_is_its_dependency(repo: GitRepo, how: str) -> None:
    """Red-team (helper-8): a test of ``python -m app.core`` in a subprocess imports nothing
    of it, and a change to app/core.py ran no test."""
    data = _plan(repo, RUN_AS_MAIN[how], {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py", "tests/test_loader.py"]
    assert data["why"]["tests/test_loader.py"] == ["tests/test_loader.py", "app/core.py"]


def test_a_module_of_another_project_run_as_a_program_is_no_dependency(repo: GitRepo) -> None:
    """The twin: ``python -m pytest`` names no module of the project; the test does not run
    for a change it does not reach."""
    runner = ("import subprocess, sys\n\ndef run():\n"
              "    return subprocess.run([sys.executable, '-m', 'pytest', '-q'])\n")
    data = _plan(repo, runner, {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py"]


# Ways a test reaches app/core.py by name, with no import statement (red-team): each must
# make a change to app/core.py run it, next to tests/test_plain.py which stays out.
REACHES = {
    "child-code": "import subprocess, sys\n\ndef run():\n"
    "    subprocess.run([sys.executable, '-c', 'from app.core import one; print(one())'])\n",
    "script-by-path": "import pathlib, subprocess, sys\n\n"
    "SCRIPT = pathlib.Path(__file__).resolve().parents[1] / 'app' / 'core.py'\n\n"
    "def run():\n    subprocess.run([sys.executable, str(SCRIPT)])\n",
    "eval-import": "def run():\n    return eval(\"__import__('app.core', fromlist=['one'])\")\n",
    "pydoc-locate": "import pydoc\n\ndef run():\n    return pydoc.locate('app.core.one')()\n",
    "sys-modules": "import sys\n\ndef run():\n    return sys.modules['app.core'].one()\n",
    "importorskip": "import pytest\n\ndef run():\n"
    "    return pytest.importorskip('app.core').one()\n",
    "mock-patch": "import app\nfrom unittest import mock\n\ndef run():\n"
    "    with mock.patch('app.core.helper', create=True):\n        return app.core.one()\n",
    "monkeypatch": "import app\n\ndef run(monkeypatch):\n"
    "    monkeypatch.setattr('app.core.helper', 1, raising=False)\n    return app.core.one()\n",
}
# Ways it may load any module at all: the loading file depends on everything.
ANYTHING = {
    "pickle": "import pickle\n\ndef run(path):\n    return pickle.load(open(path, 'rb'))\n",
    "pickle-by-name": "from pickle import loads\n\ndef run(data):\n    return loads(data)\n",
    "importlib-dict": "import importlib\n\ndef run(name):\n"
    "    return importlib.__dict__['import_module'](name)\n",
    "vars-builtins": "import builtins\n\ndef run(name):\n"
    "    return vars(builtins)['__import__'](name)\n",
    # Red-team round 7: loaders that build what their data names when asked to.
    "yaml-full-loader": "import yaml\n\ndef run(text):\n"
    "    return yaml.load(text, Loader=yaml.Loader)\n",
    "yaml-unsafe-positional": "from yaml import load, UnsafeLoader\n\ndef run(text):\n"
    "    return load(text, UnsafeLoader)\n",
    "numpy-pickle": "import numpy as np\n\ndef run(path):\n"
    "    return np.load(path, allow_pickle=True)\n",
    "logging-file-config": "import logging.config\n\ndef run(path):\n"
    "    logging.config.fileConfig(path)\n",
    "logging-dict-from-data": "import json\nfrom logging import config\n\ndef run(path):\n"
    "    config.dictConfig(json.load(open(path)))\n",
}
# Their safe forms: nothing but plain data is built.
SAFE_LOADS = {
    "yaml-safe-loader": "import yaml\n\ndef run(text):\n"
    "    return yaml.load(text, Loader=yaml.SafeLoader)\n",
    "numpy-no-pickle": "import numpy\n\ndef run(path):\n    return numpy.load(path)\n",
    "logging-dict-in-code": "from logging.config import dictConfig\n\ndef run():\n"
    "    dictConfig({'version': 1})\n",
}


def test_a_pickle_round_trip_of_an_object_held_loads_nothing_new(repo: GitRepo) -> None:
    """The twin of ``pickle``: ``loads(dumps(obj))`` (cachetools' tests copy caches that way)
    names only classes of an object the process holds, whose modules are loaded: no
    escalation, so the test stays out of a change it does not reach."""
    copy = "import pickle\n\ndef run(obj):\n    return pickle.loads(pickle.dumps(obj))\n"
    data = _plan(repo, copy, {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py"], data["reasons"]
    assert not [r for r in data["reasons"] if r["code"] == "dynamic-import"]


def test_a_pickle_round_trip_through_a_local_name_loads_nothing_new(repo: GitRepo) -> None:
    """boltons' idiom: ``pickled = pickle.dumps(obj)`` then ``pickle.loads(pickled)``, every
    binding of the name in the file such an assignment: no escalation."""
    copy = ("import pickle\n\ndef run(obj):\n    pickled = pickle.dumps(obj)\n"
            "    return pickle.loads(pickled)\n")
    data = _plan(repo, copy, {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py"], data["reasons"]


# The name is also bound otherwise, or the dump is not pickle's: the data may name anything.
NOT_A_ROUND_TRIP = {
    "parameter": "import pickle\n\ndef run(obj, pickled):\n    copy = pickle.dumps(obj)\n"
    "    return pickle.loads(pickled), copy\n\ndef other():\n    pickled = pickle.dumps(1)\n"
    "    return pickled\n",
    "rebound": "import pickle\n\ndef run(obj, path):\n    pickled = pickle.dumps(obj)\n"
    "    pickled = open(path, 'rb').read()\n    return pickle.loads(pickled)\n",
    "loop-target": "import pickle\n\ndef run(obj, blobs):\n    pickled = pickle.dumps(obj)\n"
    "    for pickled in blobs:\n        pickle.loads(pickled)\n",
    "module-level": "import pickle\n\npickled = pickle.dumps(1)\n\ndef run():\n"
    "    return pickle.loads(pickled)\n",
    "other-dumps": "import pickle\nimport blobs\n\ndef run(obj):\n"
    "    pickled = blobs.dumps(obj)\n    return pickle.loads(pickled)\n",
    "other-dumps-inline": "import pickle\nimport blobs\n\ndef run(obj):\n"
    "    return pickle.loads(blobs.dumps(obj))\n",
}


@pytest.mark.parametrize("loader", sorted(NOT_A_ROUND_TRIP))
def test_a_pickle_of_data_from_elsewhere_still_escalates(repo: GitRepo, loader: str) -> None:
    data = _plan(repo, NOT_A_ROUND_TRIP[loader], {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py", "tests/test_loader.py"], data["reasons"]
    assert any(r["code"] == "dynamic-import" for r in data["reasons"])


@pytest.mark.parametrize("loader", sorted(REACHES))
def test_a_module_reached_by_name_is_an_edge(repo: GitRepo, loader: str) -> None:
    data = _plan(repo, REACHES[loader], {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py", "tests/test_loader.py"], data["reasons"]


@pytest.mark.parametrize("loader", sorted(ANYTHING))
def test_code_that_may_load_any_module_escalates_its_file(repo: GitRepo, loader: str) -> None:
    data = _plan(repo, ANYTHING[loader], {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py", "tests/test_loader.py"]
    reasons = {(r["path"], r["verdict"]) for r in data["reasons"] if r["code"] == "dynamic-import"}
    assert reasons == {("tests/test_loader.py", "scoped")}


@pytest.mark.parametrize("loader", sorted(SAFE_LOADS))
def test_a_loader_told_to_build_plain_data_escalates_nothing(repo: GitRepo, loader: str) -> None:
    data = _plan(repo, SAFE_LOADS[loader], {"app/core.py": "def one():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_core.py"]
    assert not [r for r in data["reasons"] if r["code"] == "dynamic-import"], data["reasons"]


# Red-team round 4: what runs or imports a module without an import statement.
NAMED = {
    "run-as-program": ("import subprocess, sys\n\ndef run():\n"
                       "    subprocess.run([sys.executable, '-m', 'app'])\n",
                       "app/__main__.py"),
    "folder-as-program": ("import subprocess, sys\n\ndef run():\n"
                          "    subprocess.run([sys.executable, './app/'])\n", "app/__main__.py"),
    "glued-m": ("import subprocess, sys\n\ndef run():\n"
                "    subprocess.run([sys.executable, '-mapp.core'])\n", "app/core.py"),
    "dict-config": ("import logging.config\n\ndef setup():\n    logging.config.dictConfig("
                    "{'version': 1, 'formatters': {'f': {'()': 'app.core.one'}}})\n",
                    "app/core.py"),
    "entry-point": ("from importlib.metadata import EntryPoint\n\ndef load():\n"
                    "    return EntryPoint('one', 'app.core:one', 'g').load()\n", "app/core.py"),
    "dedented-child-code": ("import subprocess, sys, textwrap\n\ndef run():\n"
                            "    code = textwrap.dedent(\"\"\"\n        from app.core import one\n"
                            "        print(one())\n    \"\"\")\n"
                            "    subprocess.run([sys.executable, '-c', code])\n", "app/core.py"),
    "doctest-example": ('def helper():\n    """\n    >>> from app.core import one\n'
                        '    >>> one()\n    1\n    """\n', "app/core.py"),
}


@pytest.mark.parametrize("case", sorted(NAMED))
def test_a_module_named_without_an_import_statement_runs_its_tests(repo: GitRepo,
                                                                   case: str) -> None:
    """The test file reaches the module only through a string (an argv, a logging factory,
    an entry point) or a docstring example: a change there runs it, the plain test does not."""
    loader, changed = NAMED[case]
    repo.files({"app/__main__.py": "print('main')\n"})
    data = _plan(repo, loader, {changed: "def one():\n    return 2 - 1\n"})
    assert "tests/test_loader.py" in data["tests"], data
    assert "tests/test_plain.py" not in data["tests"]
