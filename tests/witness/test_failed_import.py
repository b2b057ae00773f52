"""An import of a repository module that fails (``try: import app.bad`` / ``except
ImportError``) ran that module's code: what it did counts for the test like any other
import of the repository's. Its flags were dropped, as a library's see-through import's
are, so a module that ran a program before failing left its importer complete."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

BAD = ("import subprocess\n\nsubprocess.run(['ls'], stdout=subprocess.DEVNULL)\n"
       "raise ImportError('not here')\n")
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/bad.py": BAD,
    "app/other.py": "def one():\n    return 1\n",
    "tests/test_bad.py": "def test_bad():\n    try:\n        import app.bad  # noqa: F401\n"
    "    except ImportError:\n        pass\n",
    "tests/test_other.py": "from app.other import one\n\n\ndef test_one():\n"
    "    assert one() == 1\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_failed_import_keeps_what_its_module_did(recorded: tuple[GitRepo, str]) -> None:
    labels = labelled(recorded, "other", {"app/other.py": "def one():\n    return 0 + 1\n"})
    assert labels["tests/test_bad.py::test_bad"] == ESCALATE
    assert labels["tests/test_other.py::test_one"] == IMPACTED
    labels = labelled(recorded, "bad", {"app/bad.py": BAD.replace("not here", "absent")})
    assert labels["tests/test_bad.py::test_bad"] == ESCALATE
    assert labels["tests/test_other.py::test_one"] == SKIP
