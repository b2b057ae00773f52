"""A file a test read through a symbolic link of the repository (``data/current.json`` ->
``v2.json``, a linked folder, ``/proc/self/cwd/...``): the recording saw the link's path
only, so a patch to the file it leads to skipped the test (red-team). The target counts as
read too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "data/v2.json": '{"rate": 2}\n',
    "data/other.json": '{"rate": 9}\n',
    "tests/test_data.py": "import json\n\n\n"
    "def test_current():\n"
    "    assert json.load(open('data/current.json'))['rate'] == 2\n\n\n"
    "def test_folder_link():\n"
    "    assert json.load(open('fixtures/v2.json'))['rate'] == 2\n\n\n"
    "def test_other():\n    assert json.load(open('data/other.json'))['rate'] == 9\n\n\n"
    "def test_proc_cwd():  # the working folder through the kernel's own link\n"
    "    assert json.load(open('/proc/self/cwd/data/v2.json'))['rate'] == 2\n",
}
LINKS = {"data/current.json": "v2.json", "fixtures": "data"}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES, links=LINKS)


def test_a_file_read_through_a_link_reruns_its_test_when_it_changes(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "target", {"data/v2.json": '{"rate": 3}\n'})
    assert labels["tests/test_data.py::test_current"] == IMPACTED
    assert labels["tests/test_data.py::test_folder_link"] == IMPACTED
    assert labels["tests/test_data.py::test_proc_cwd"] == IMPACTED
    assert labels["tests/test_data.py::test_other"] == SKIP


def test_another_file_leaves_the_linked_readers_skipped(recorded: tuple[GitRepo, str]) -> None:
    labels = labelled(recorded, "other", {"data/other.json": '{"rate": 8}\n'})
    assert labels["tests/test_data.py::test_current"] == SKIP
    assert labels["tests/test_data.py::test_folder_link"] == SKIP
    assert labels["tests/test_data.py::test_proc_cwd"] == SKIP
    assert labels["tests/test_data.py::test_other"] == IMPACTED
