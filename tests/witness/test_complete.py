"""Complete witnesses (issue 12 item 4): failed imports and folder listings are recorded.

A test that tried to import a module that did not exist, or that listed a folder of the tree,
depended on the absence of a file: a patch that adds the file changes what the test does, so
the test reruns. One real recording serves the module (each test branches its own patch off
W); the end-to-end tests run the real ``check`` and show the rerun test failing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentgate.witness.select import IMPACTED, SKIP, WitnessPlan
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import patch, plan, recorded_repo

SETTINGS = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
}
FILES = {
    **SETTINGS,
    "app/__init__.py": "",
    "app/core.py": "def value():\n    return 1\n",
    "app/loader.py": "import importlib\n\n\ndef load(name):\n"
    "    return importlib.import_module('plugins.' + name)\n",
    "app/registry.py": "import os\nimport pkgutil\n\nHERE = os.path.dirname(__file__)\n\n\n"
    "def discover():\n"
    "    return sorted(m.name for m in pkgutil.iter_modules([os.path.join(HERE, 'plugins')]))\n",
    "app/plugins/a.py": "OK = True\n",
    "data/one.json": "{}\n",
    "data/old/keep.txt": "",
    "tests/test_optional.py": "try:\n    import app.local as local\nexcept ImportError:\n"
    "    local = None\n\n\ndef test_optional():\n    assert (local.VALUE if local else 1) == 1\n",
    "tests/test_probe.py": "import importlib.util\n\n\n"
    "def test_probe():\n    assert importlib.util.find_spec('app.speedups') is None\n",
    "tests/test_loader.py": "import pytest\n\nfrom app.loader import load\n\n\n"
    "def test_loader():\n    with pytest.raises(ImportError):\n        load('x')\n",
    "tests/test_registry.py": "from app.registry import discover\n\n\n"
    "def test_registry():\n    assert discover() == ['a']\n",
    "tests/test_glob.py": "import glob\n\n\n"
    "def test_glob():\n    assert glob.glob('data/*.json') == ['data/one.json']\n",
    "tests/test_entry.py": "import importlib.metadata\n\n\n"
    "def test_entry():\n    assert not importlib.metadata.entry_points(group='no-such-group')\n",
    "tests/test_core.py": "from app.core import value\n\n\n"
    "def test_core():\n    assert value() == 1\n",
}
OPTIONAL = "tests/test_optional.py::test_optional"
LOADER = "tests/test_loader.py::test_loader"
PROBE = "tests/test_probe.py::test_probe"
REGISTRY = "tests/test_registry.py::test_registry"
GLOB = "tests/test_glob.py::test_glob"
ENTRY = "tests/test_entry.py::test_entry"
CORE = "tests/test_core.py::test_core"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def _run(recorded: tuple[GitRepo, str], name: str, files: dict[str, str],
         *, remove: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    repo, w = recorded
    patch(repo, w, name, files, remove=remove)
    return _decided(plan(repo, w))


def _decided(found: WitnessPlan) -> dict[str, tuple[str, str]]:
    return {d.nodeid: (d.label, d.detail) for d in found.decisions}


def _impacted(decided: dict[str, tuple[str, str]]) -> dict[str, str]:
    return {n: why for n, (label, why) in decided.items() if label == IMPACTED}


# --- failed imports ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("added", "why"),
    [
        ("app/local.py", "import-appeared app/local.py"),
        ("app/local/__init__.py", "import-appeared app/local/__init__.py"),
        ("app/local/readme.txt", "import-appeared app/local/readme.txt"),  # namespace package
    ],
)
def test_a_module_appearing_where_an_import_failed_reruns_the_test(
    recorded: tuple[GitRepo, str], added: str, why: str
) -> None:
    decided = _run(recorded, f"local-{added.replace('/', '-')}", {added: "VALUE = 2\n"})
    assert _impacted(decided) == {OPTIONAL: why}


def test_a_computed_import_that_failed_reruns_when_its_module_appears(
    recorded: tuple[GitRepo, str],
) -> None:
    decided = _run(recorded, "plugin-x", {"plugins/x.py": ""})
    impacted = _impacted(decided)
    assert impacted.pop(LOADER) == "import-appeared plugins/x.py"
    # importlib.metadata lists every folder on sys.path (the root among them) for its
    # dist-infos: that search counts as the packaging files, not as the root's listing, so a
    # file added at the root does not rerun every entry-point test (new-user trial).
    assert impacted == {}


def test_a_module_found_where_find_spec_found_none_reruns_the_prober(
    recorded: tuple[GitRepo, str],
) -> None:
    decided = _run(recorded, "speedups", {"app/speedups.py": ""})
    assert _impacted(decided) == {PROBE: "import-appeared app/speedups.py"}


def test_an_unrelated_new_module_reruns_nothing(recorded: tuple[GitRepo, str]) -> None:
    decided = _run(recorded, "other", {"app/other.py": "", "app/local_extra.py": ""})
    assert _impacted(decided) == {}
    assert decided[OPTIONAL][0] == decided[LOADER][0] == decided[CORE][0] == SKIP


# --- listings ------------------------------------------------------------------------------


def test_a_plugin_appearing_in_a_listed_folder_reruns_the_lister(
    recorded: tuple[GitRepo, str],
) -> None:
    decided = _run(recorded, "plugin-b", {"app/plugins/b.py": "OK = False\n"})
    assert _impacted(decided) == {REGISTRY: "app/plugins/ (listing)"}
    decided = _run(recorded, "plugin-a-gone", {}, remove=("app/plugins/a.py",))
    assert _impacted(decided) == {REGISTRY: "app/plugins/ (listing)"}


def test_a_new_subfolder_changes_the_listing_of_the_folder_above(
    recorded: tuple[GitRepo, str],
) -> None:
    # pkgutil lists app/plugins only; a new package in it is a new entry of that listing.
    decided = _run(recorded, "plugin-pkg", {"app/plugins/sub/__init__.py": ""})
    assert _impacted(decided) == {REGISTRY: "app/plugins/ (listing)"}
    # The glob listed data/ only; data/new/ is a new entry of it.
    decided = _run(recorded, "data-new", {"data/new/two.json": "{}\n"})
    assert _impacted(decided) == {GLOB: "data/ (listing)"}


def test_a_file_appearing_in_an_existing_subfolder_is_no_change_above_it(
    recorded: tuple[GitRepo, str],
) -> None:
    decided = _run(recorded, "data-old", {"data/old/more.txt": ""})
    assert _impacted(decided) == {}  # data/ lists the same names
    decided = _run(recorded, "data-flat", {"data/two.json": "{}\n"})
    assert _impacted(decided) == {GLOB: "data/ (listing)"}


def test_reading_installed_metadata_depends_on_the_packaging_files(
    recorded: tuple[GitRepo, str],
) -> None:
    decided = _run(recorded, "packaging",
                   {"pyproject.toml": SETTINGS["pyproject.toml"] + "# entry points move\n"})
    assert _impacted(decided) == {ENTRY: "pyproject.toml"}


# --- end to end: the rerun test runs, and fails ---------------------------------------------


def _check(repo: GitRepo, base: str) -> tuple[int, dict[str, Any]]:
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


def _recorded(repo: GitRepo, files: dict[str, str]) -> str:
    repo.files(files)
    base = repo.commit("initial")
    done = run_agentgate("witness", "record", cwd=repo.path)
    assert done.returncode == 0, done.stdout + done.stderr
    return base


def test_check_runs_and_fails_the_test_whose_missing_import_appeared(repo: GitRepo) -> None:
    base = _recorded(repo, {k: FILES[k] for k in (*SETTINGS, "app/__init__.py",
                                                  "app/core.py", "tests/test_optional.py",
                                                  "tests/test_core.py")})
    repo.write("app/local.py", "VALUE = 2\n")
    repo.commit("add the optional module")
    code, data = _check(repo, base)
    assert code == 1
    assert data["results"]["failed_ids"] == [OPTIONAL]
    assert data["witness"]["skipped"] == [CORE]


def test_check_runs_and_fails_the_lister_of_a_broken_new_plugin(repo: GitRepo) -> None:
    lister = "app/registry.py"
    test = "tests/test_registry.py"
    files = {**SETTINGS, "app/__init__.py": "", "app/core.py": FILES["app/core.py"],
             lister: FILES[lister], "app/plugins/a.py": "OK = True\n",
             test: "import importlib\n\nfrom app.registry import discover\n\n\n"
             "def test_registry():\n    for name in discover():\n"
             "        assert importlib.import_module('app.plugins.' + name).OK\n",
             "tests/test_core.py": FILES["tests/test_core.py"]}
    base = _recorded(repo, files)
    repo.write("app/plugins/b.py", "OK = False\n")
    repo.commit("a broken plugin")
    code, data = _check(repo, base)
    assert code == 1
    assert data["results"]["failed_ids"] == [REGISTRY]
    assert data["witness"]["skipped"] == [CORE]
