"""A library's read while collecting, asked for by the repository: a conftest's
``pytest_generate_tests`` that loads its cases with a library (here ``iniconfig``, which
pytest itself depends on) read the cases file from the library's frame, outside any test,
where only the repository's own reads counted. A changed case kept its id and was skipped
(red-team). A plugin's read at start-up, with no repository code under it, still counts for
no test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "conftest.py": "import iniconfig\n\n\ndef pytest_generate_tests(metafunc):\n"
    "    if 'case' in metafunc.fixturenames:\n"
    "        ini = iniconfig.IniConfig('data/cases.ini')\n"
    "        values = [int(v) for _, v in ini['cases'].items()]\n"
    "        metafunc.parametrize('case', values, ids=[f'c{i}' for i in range(len(values))])\n",
    "data/cases.ini": "[cases]\na = 1\nb = 2\n",
    "data/other.txt": "x\n",
    "tests/test_cases.py": "def test_case(case):\n    assert case > 0\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_cases_a_library_read_while_collecting_rerun_when_they_change(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "cases", {"data/cases.ini": "[cases]\na = -1\nb = 2\n"})
    assert labels["tests/test_cases.py::test_case[c0]"] == IMPACTED


def test_a_file_no_one_read_while_collecting_changes_nothing(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "other", {"data/other.txt": "y\n"})
    assert labels["tests/test_cases.py::test_case[c0]"] == SKIP
