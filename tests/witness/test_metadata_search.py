"""The search for installed metadata (new-user trial, Markdown): ``importlib.metadata`` lists
every ``sys.path`` folder for its ``*.dist-info``/``*.egg-info`` names. With the root on the
path, that listing tied every entry-point test to every file added at the root, so the
first patch after ``agentgate init`` (``.agentgate/``) reran Markdown's whole suite. The
search now counts as the packaging files the metadata is made from; metadata committed to
the tree counts as a change to them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    # The root on sys.path, as a flat layout run with ``python -m pytest`` has it.
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n\n"
                      "[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    "app/__init__.py": "",
    "app/plugins.py": "from importlib.metadata import entry_points\n\n\n"
                      "def names():\n"
                      "    return sorted(e.name for e in entry_points(group='app.plugins'))\n",
    "tests/test_plugins.py": "from app.plugins import names\n\n\n"
                             "def test_names():\n    assert names() == []\n",
}
NAMES = "tests/test_plugins.py::test_names"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_file_added_at_the_root_leaves_the_entry_point_test_skipped(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "notes", {"NOTES.txt": "later\n", "extra.py": "X = 1\n"})
    assert labels[NAMES] == SKIP


def test_installed_metadata_committed_to_the_tree_reruns_the_entry_point_test(
    recorded: tuple[GitRepo, str],
) -> None:
    # The twin: what importlib.metadata finds at the root is what the test reads.
    labels = labelled(recorded, "dist-info", {
        "fake-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: fake\nVersion: 1.0\n",
        "fake-1.0.dist-info/entry_points.txt": "[app.plugins]\nx = os:getcwd\n"})
    assert labels[NAMES] == IMPACTED
