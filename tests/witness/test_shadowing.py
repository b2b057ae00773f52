"""A module a patch adds where an import searched before it found another (issue 12).

pytest puts ``tests/`` first on ``sys.path`` (rootdir-relative imports), so ``import colorsys``
in a test tries ``tests/colorsys.py`` before it finds the standard library's, and
``import app`` tries ``tests/app.py`` before the repository's ``app/``. A patch that adds
either file changes what that import loads, though nothing the test ran or read at the
base changed: the places the search tried first are recorded like a failed import's.
"""

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
    "app/core.py": "def answer():\n    return 42\n",
    "tests/test_colors.py": "def test_colors():\n    import colorsys\n\n"
    "    assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)\n",
    "tests/test_core.py": "from app import core\n\n\n"
    "def test_core():\n    assert core.answer() == 42\n",
    "tests/test_plain.py": "def test_plain():\n    assert 1 + 1 == 2\n",
    # A folder of the repository searched after the standard library: nothing there wins.
    "tests/conftest.py": "import sys\nfrom pathlib import Path\n\n"
    "sys.path.append(str(Path(__file__).resolve().parent.parent / 'extra'))\n",
}
COLORS = "tests/test_colors.py::test_colors"
CORE = "tests/test_core.py::test_core"
PLAIN = "tests/test_plain.py::test_plain"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_module_added_ahead_of_the_standard_librarys_reruns_its_importers(
    recorded: tuple[GitRepo, str],
) -> None:
    shadow = "def rgb_to_hsv(r, g, b):\n    return (1.0, 1.0, 1.0)\n"
    labels = labelled(recorded, "colorsys", {"tests/colorsys.py": shadow})
    assert labels[COLORS] == IMPACTED
    assert labels[CORE] == labels[PLAIN] == SKIP
    # The twin: searched after the standard library's was found, it changes nothing.
    labels = labelled(recorded, "extra", {"extra/colorsys.py": shadow})
    assert labels[COLORS] == labels[CORE] == labels[PLAIN] == SKIP


def test_a_module_added_ahead_of_the_repositorys_package_reruns_its_importers(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "app", {"tests/app.py": "core = None\n"})
    assert labels[CORE] == IMPACTED
    assert labels[COLORS] == labels[PLAIN] == SKIP
