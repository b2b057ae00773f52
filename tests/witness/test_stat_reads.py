"""What a test learns from a path's ``stat`` (``os.path.exists``, ``getsize``, ``isdir``,
``Path.exists``, a ``glob`` with no wildcard) counts like a read: no audit event shows a
``stat``, so a file a test only checked for appeared, or grew, and the test was skipped
(red-team, helper-9)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/flags.py": "import os\n\n\ndef local_mode():\n"
    "    return os.path.exists('data/local.flag')\n",
    "data/size.txt": "abc\n",
    "data/sub/keep.txt": "x\n",
    "tests/test_flags.py": "import glob, os, pathlib\nfrom app.flags import local_mode\n\n\n"
    "def test_exists():\n    assert not local_mode()\n\n\n"
    "def test_size():\n    assert os.path.getsize('data/size.txt') == 4\n\n\n"
    "def test_pathlib():\n    assert not pathlib.Path('data/other.flag').exists()\n\n\n"
    "def test_glob():\n    assert glob.glob('data/g.flag') == []\n\n\n"
    "def test_folder():\n    assert os.path.isdir('data/sub')\n"
    "    assert len(os.listdir('data')) == 2\n\n\n"
    "def test_walk():\n    assert sum(len(f) for _d, _s, f in os.walk('data')) == 2\n\n\n"
    "def test_access():\n    assert not os.access('data/access.flag', os.F_OK)\n\n\n"
    "def test_readlink():\n    try:\n        os.readlink('data/link')\n"
    "    except FileNotFoundError:\n        pass\n    else:\n        raise AssertionError\n\n\n"
    "def test_statvfs():\n    try:\n        os.statvfs('data/vfs.flag')\n"
    "    except FileNotFoundError:\n        pass\n    else:\n        raise AssertionError\n\n\n"
    "def test_plain():\n    assert 1 + 1 == 2\n",
    # inspect.getmodule reads __file__ of every module loaded and stats its source
    # (hypothesis does it for every test).
    "app/other.py": "LIMIT = 1\n\n\ndef other():\n    return LIMIT\n",
    "tests/test_inspect.py": "import inspect\n\nimport app.other  # noqa: F401\n"
    "from app.flags import local_mode\n\n\n"
    "def test_getmodule():\n    found = inspect.getmodule(local_mode.__code__)\n"
    "    assert found.__name__ == 'app.flags'\n",
    "tests/test_other.py": "from app.other import other\n\n\n"
    "def test_other():\n    assert other() == 1\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


@pytest.mark.parametrize(("files", "test"), [
    ({"data/local.flag": ""}, "test_exists"),  # read through the repository's own code
    ({"data/size.txt": "abcdef\n"}, "test_size"),
    ({"data/other.flag": ""}, "test_pathlib"),
    ({"data/g.flag": ""}, "test_glob"),
    # no audit event and no os.stat (red-team round 4)
    ({"data/access.flag": ""}, "test_access"),
    ({"data/link": "x"}, "test_readlink"),
    ({"data/vfs.flag": ""}, "test_statvfs"),
], ids=["exists", "getsize", "pathlib", "glob", "access", "readlink", "statvfs"])
def test_a_file_a_test_only_stat_ed_reruns_it_when_it_changes(
    recorded: tuple[GitRepo, str], files: dict[str, str], test: str
) -> None:
    labels = labelled(recorded, f"stat-{test}", files)
    assert labels[f"tests/test_flags.py::{test}"] == IMPACTED
    assert labels["tests/test_flags.py::test_plain"] == SKIP


def test_a_file_appearing_in_a_folder_a_test_stat_ed_reruns_it(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "stat-folder", {"data/sub/new.txt": "y\n"})
    assert labels["tests/test_flags.py::test_folder"] == IMPACTED
    # os.walk lists from the frozen os module's own frames: still the test's listing
    assert labels["tests/test_flags.py::test_walk"] == IMPACTED
    assert labels["tests/test_flags.py::test_size"] == SKIP


@pytest.mark.parametrize("files", [
    {"app/other.py": "LIMIT = 1\nMORE = 2\n\n\ndef other():\n    return LIMIT\n"},
    {"tests/test_other.py": FILES["tests/test_other.py"] + "\n\ndef test_more():\n    pass\n"},
], ids=["new-constant", "test-appended"])
def test_looking_up_modules_by_their_files_depends_on_no_module_code(
    recorded: tuple[GitRepo, str], files: dict[str, str], request: pytest.FixtureRequest,
) -> None:
    """``inspect.getmodule`` reads every loaded module's ``__file__`` and stats its source:
    what the import system set, and whether the file is there. Neither changes with a
    module-level edit elsewhere (new-user trial: appending a test reran attrs's suite)."""
    labels = labelled(recorded, "getmodule-" + request.node.callspec.id, files)
    assert labels["tests/test_inspect.py::test_getmodule"] == SKIP

