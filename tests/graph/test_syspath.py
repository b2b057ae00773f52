"""Folders put on ``sys.path`` in tests and conftests (issue 12): the imports they serve are
edges, and a folder that cannot be computed makes only its own file depend on everything."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from agentgate.core.config import Config
from agentgate.flows import check as checkrun
from agentgate.graph import build as graph_build
from agentgate.graph import scan as imports_scan
from agentgate.graph.scan import scan_sources
from tests.support.git_repo import GitRepo


@pytest.fixture(autouse=True)
def _exact_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    imports_scan.STATS.reset()
    monkeypatch.setattr(imports_scan, "_SMALL_BATCH", 0)  # tiny sources: still the fast path


def _records(source: str) -> tuple[set[str], list[str]]:
    scan = scan_sources({"f": source.encode()})["f"]
    return ({r for r in scan.imports if r.startswith("|")},
            [code for code, _ in scan.escalations])


@pytest.mark.parametrize(
    ("source", "record"),
    [
        ('sys.path.insert(0, "lib")\n', "|rlib"),
        ('sys.path.append(os.path.join(os.path.dirname(__file__), "helpers"))\n', "|fhelpers"),
        ('sys.path.insert(0, str(Path(__file__).parent / "x"))\n', "|fx"),
        ("sys.path.insert(0, str(Path(__file__).resolve().parents[1]))\n", "|f.."),
        ('HERE = os.path.dirname(os.path.abspath(__file__))\n'
         'sys.path.insert(0, os.path.join(HERE, "..", "lib"))\n', "|f../lib"),
        ('ROOT = Path(__file__).absolute().parent.parent\n'
         'sys.path.extend([str(ROOT.joinpath("src"))])\n', "|f../src"),
        ('sys.path += ["vendor"]\n', "|rvendor"),
        ('sys.path[:0] = [os.path.join(os.getcwd(), "tools")]\n', "|rtools"),
        ('site.addsitedir("plugins")\n', "|rplugins"),
        ("def test(monkeypatch):\n    monkeypatch.syspath_prepend(os.path.dirname(__file__))\n",
         "|f."),
        ('import sys as _sys\n_sys.path.insert(0, "lib")\n', "|rlib"),
        ('from sys import path as sp\nsp.append("lib")\n', "|rlib"),
    ],
    ids=["literal", "os-path-join", "path-div", "parents", "bound-name", "joinpath", "iadd",
         "slice", "addsitedir", "syspath_prepend", "sys-alias", "from-sys-import-path"],
)
def test_a_folder_put_on_sys_path_is_recorded(source: str, record: str) -> None:
    header = "import os, site, sys\nfrom pathlib import Path\n"
    assert _records(header + source) == ({record}, [])


@pytest.mark.parametrize(
    "source",
    [
        'sys.path.insert(0, os.environ["PLUGINS"])\n',
        "for p in found:\n    sys.path.append(p)\n",
        "sys.path = computed()\n",
        'sys.path.insert(0, f"{base}/lib")\n',
    ],
    ids=["environ", "loop", "assigned", "f-string"],
)
def test_a_folder_that_cannot_be_computed_escalates(source: str) -> None:
    assert _records("import os, sys\n" + source) == (set(), ["dynamic-path"])


def test_folders_outside_the_tree_and_restores_add_nothing() -> None:
    # The legitimate twins: nothing of the tree can be found there, and nothing escalates.
    source = ("import sys, tempfile\nsaved = list(sys.path)\n"
              "def test(tmp_path, monkeypatch):\n    monkeypatch.syspath_prepend(tmp_path)\n"
              "    sys.path.insert(0, str(tmp_path / 'pkg'))\n"
              "    sys.path.insert(0, tempfile.mkdtemp())\n"
              "    sys.path.insert(0, '/opt/tools')\n    sys.path[:] = saved\n")
    assert _records(source) == (set(), [])


# --- on real repositories ---------------------------------------------------------------------

def _plan(repo: GitRepo, base: dict[str, str], change: dict[str, str]) -> dict[str, Any]:
    repo.files(base)
    repo.commit("base")
    repo.git("tag", "-f", "base")
    repo.files(change)
    repo.commit("change")
    return checkrun.plan(repo.path, "base", "HEAD").to_json()


PLAIN = "def test_plain():\n    assert True\n"
# tests/helpers is a package, so pytest's own sys.path names it ``helpers.helper_mod``:
# only the insert makes ``import helper_mod`` that file.
HELPERS = {
    "app/__init__.py": "",
    "app/core.py": "def one():\n    return 1\n",
    "tests/helpers/__init__.py": "",
    "tests/helpers/helper_mod.py": "VALUE = 1\n",
    "tests/test_uses.py": "import os\nimport sys\n"
    "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'helpers'))\n"
    "import helper_mod\n\ndef test_value():\n    assert helper_mod.VALUE == 1\n",
    "tests/test_plain.py": PLAIN,
}


def test_a_helper_on_an_inserted_folder_selects_the_test_that_imports_it(repo: GitRepo) -> None:
    data = _plan(repo, HELPERS, {"tests/helpers/helper_mod.py": "VALUE = 2\n"})
    assert data["tests"] == ["tests/test_uses.py"]
    assert data["why"]["tests/test_uses.py"] == ["tests/test_uses.py",
                                                 "tests/helpers/helper_mod.py"]
    assert data["exit_code"] == 0


CONFTEST_LIB = {
    "app/__init__.py": "",
    "lib/helper_mod.py": "def value():\n    return 1\n",
    "tests/unit/conftest.py": "import sys\nfrom pathlib import Path\n\n"
    "ROOT = Path(__file__).resolve().parents[2]\nsys.path.insert(0, str(ROOT / 'lib'))\n",
    "tests/unit/test_uses.py": "from helper_mod import value\n\n"
    "def test_value():\n    assert value() == 1\n",
    "tests/unit/test_plain.py": PLAIN,
    "tests/zz_after/test_later.py": "import helper_mod\n\n"
    "def test_later():\n    assert helper_mod.value() == 1\n",
}


def test_a_conftests_folder_serves_the_tests_imports(repo: GitRepo) -> None:
    """lib/ is no test root and no package: without the conftest's insert nothing imports
    ``lib.helper_mod`` and a change to it selects nothing."""
    data = _plan(repo, CONFTEST_LIB, {"lib/helper_mod.py": "def value():\n    return 2 - 1\n"})
    # sys.path is the process's: a test collected after the conftest ran finds it too
    assert data["tests"] == ["tests/unit/test_uses.py", "tests/zz_after/test_later.py"]
    assert data["why"]["tests/unit/test_uses.py"] == ["tests/unit/test_uses.py",
                                                      "lib/helper_mod.py"]


def test_the_conftest_scenario_is_what_pytest_does(repo: GitRepo) -> None:
    """The repository above really runs: the edges describe imports that happen."""
    repo.files(CONFTEST_LIB)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests"], cwd=repo.path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


COMPUTED = {
    "app/__init__.py": "",
    "app/core.py": "def one():\n    return 1\n",
    "app/util.py": "def two():\n    return 2\n",
    "tests/test_core.py": "from app.core import one\n\ndef test_one():\n    assert one() == 1\n",
    "tests/test_plugins.py": "import os\nimport sys\n"
    "sys.path.insert(0, os.environ.get('PLUGINS', '.'))\n\n" + PLAIN,
    "tests/test_plain.py": PLAIN,
}


def test_a_computed_folder_makes_its_own_test_depend_on_everything(repo: GitRepo) -> None:
    data = _plan(repo, COMPUTED, {"app/util.py": "def two():\n    return 1 + 1\n"})
    assert data["tests"] == ["tests/test_plugins.py"]  # test_core reaches neither
    [reason] = [r for r in data["reasons"] if r["code"] == "dynamic-path"]
    assert (reason["path"], reason["verdict"], data["exit_code"]) == (
        "tests/test_plugins.py", "scoped", 0)


def test_a_computed_folder_in_a_conftest_runs_the_tests_under_it(repo: GitRepo) -> None:
    files = {**COMPUTED, "tests/sub/conftest.py": "import sys\n\n"
             "def pytest_configure(config):\n    sys.path.append(config.rootpath / 'x')\n",
             "tests/sub/test_sub.py": PLAIN}
    del files["tests/test_plugins.py"]
    data = _plan(repo, files, {"app/util.py": "def two():\n    return 1 + 1\n"})
    assert data["tests"] == ["tests/sub/test_sub.py"]
    assert data["exit_code"] == 0


def test_a_docs_only_change_reaches_no_computed_folder(repo: GitRepo) -> None:
    data = _plan(repo, COMPUTED, {"README.md": "docs\n"})
    assert (data["tests"], data["exit_code"]) == ([], 0)


def test_a_warm_build_follows_a_folder_added_by_another_file(repo: GitRepo) -> None:
    """The conftest gains the insert; the test importing ``helper_mod`` is unchanged, so only
    the shared folders moving makes the cached build resolve it again."""
    config = Config(root=repo.path, sources=(".",), tests=("tests",))
    conftest = CONFTEST_LIB["tests/unit/conftest.py"]
    repo.files({**CONFTEST_LIB, "tests/unit/conftest.py": ""})
    before = graph_build.build(repo.path, config, repo.commit("no insert yet"))
    assert "lib.helper_mod" not in before.imports["tests.unit.test_uses"]
    repo.files({"tests/unit/conftest.py": conftest})
    after = graph_build.build(repo.path, config, repo.commit("the conftest inserts lib"))
    assert after.stats is not None and after.stats.cache == "warm"
    assert "lib.helper_mod" in after.imports["tests.unit.test_uses"]
    repo.files({"tests/unit/conftest.py": ""})
    again = graph_build.build(repo.path, config, repo.commit("and takes it out again"))
    assert "lib.helper_mod" not in again.imports["tests.unit.test_uses"]
    assert "tests.unit.test_uses" not in again.importers_closure(["lib.helper_mod"])


PYTHONPATH = {
    "app/__init__.py": "",
    "scripts/helper_mod.py": "def value():\n    return 1\n",
    "tests/test_uses.py": "from helper_mod import value\n\n"
    "def test_value():\n    assert value() == 1\n",
    "tests/test_plain.py": PLAIN,
}


def test_pytests_pythonpath_serves_every_tests_imports(repo: GitRepo) -> None:
    files = {**PYTHONPATH, "pyproject.toml": "[tool.pytest.ini_options]\n"
             "pythonpath = ['scripts']\n"}
    data = _plan(repo, files, {"scripts/helper_mod.py": "def value():\n    return 2 - 1\n"})
    assert data["tests"] == ["tests/test_uses.py"]
    assert data["why"]["tests/test_uses.py"] == ["tests/test_uses.py", "scripts/helper_mod.py"]


def test_a_warm_build_follows_a_pythonpath_change(repo: GitRepo) -> None:
    config = Config(root=repo.path, sources=(".",), tests=("tests",))
    repo.files(PYTHONPATH)
    before = graph_build.build(repo.path, config, repo.commit("no pythonpath"))
    assert "scripts.helper_mod" not in before.imports["tests.test_uses"]
    repo.files({"pytest.ini": "[pytest]\npythonpath = scripts\n"})
    after = graph_build.build(repo.path, config, repo.commit("pythonpath = scripts"))
    assert after.stats is not None and after.stats.cache == "warm"
    assert "scripts.helper_mod" in after.imports["tests.test_uses"]
    repo.rm("pytest.ini")
    again = graph_build.build(repo.path, config, repo.commit("no pythonpath again"))
    assert "scripts.helper_mod" not in again.imports["tests.test_uses"]
    # the reversed edges a plan walks agree (the state saved with the middle build)
    assert "tests.test_uses" not in again.importers_closure(["scripts.helper_mod"])
