"""A module a patch adds where an import searched before it found another (issue 12).

pytest puts ``tests/`` first on ``sys.path`` (rootdir-relative imports), so ``import colorsys``
in a test tries ``tests/colorsys.py`` before it finds the standard library's, and
``import app`` tries ``tests/app.py`` before the repository's ``app/``; in a module's own
folder a package beats a source module (``tests/helpers/__init__.py`` over
``tests/helpers.py``). A patch that adds such a file changes what every later import of the
name loads -- the first, and every one answered from ``sys.modules`` after it -- though
nothing a test ran or read at the base changed: the places each search tried first count
for every test, like a failed import's.
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
    "app/helpers.py": "def helper():\n    return 1\n",
    "tests/helpers.py": "def local():\n    return 2\n",
    # The first import of colorsys, then two more answered from sys.modules.
    "tests/test_colors.py": "def test_colors():\n    import colorsys\n\n"
    "    assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)\n",
    "tests/test_colors_again.py": "import colorsys\n\n\n"
    "def test_again():\n    assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)\n\n\n"
    "def test_inside():\n    import colorsys as again\n\n"
    "    assert again.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)\n",
    "tests/test_core.py": "from app import core, helpers\n\n\n"
    "def test_core():\n    assert core.answer() == 42 and helpers.helper() == 1\n",
    "tests/test_local.py": "import helpers\n\n\n"
    "def test_local():\n    assert helpers.local() == 2\n",
    # A namespace package (no __init__.py), imported by one test.
    "app/ns/mod.py": "VALUE = 1\n",
    "tests/test_ns.py": "def test_ns():\n    from app.ns import mod\n\n    assert mod.VALUE == 1\n",
    # A folder of the repository searched after the standard library: nothing there wins.
    "tests/conftest.py": "import sys\nfrom pathlib import Path\n\n"
    "sys.path.append(str(Path(__file__).resolve().parent.parent / 'extra'))\n",
}
COLORS = "tests/test_colors.py::test_colors"
AGAIN = "tests/test_colors_again.py::test_again"
INSIDE = "tests/test_colors_again.py::test_inside"
CORE = "tests/test_core.py::test_core"
LOCAL = "tests/test_local.py::test_local"
ALL = (COLORS, AGAIN, INSIDE, CORE, LOCAL)
SHADOW = "def rgb_to_hsv(r, g, b):\n    return (1.0, 1.0, 1.0)\n"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


@pytest.mark.parametrize(
    ("added", "text"),
    [
        ("tests/colorsys.py", SHADOW),  # ahead of the standard library's
        ("tests/app.py", "core = helpers = None\n"),  # ahead of the repository's package
        ("tests/helpers/__init__.py", ""),  # a package beside a module, top level
        ("app/helpers/__init__.py", ""),  # and in a package
    ],
)
def test_a_module_added_where_an_import_searched_first_reruns_every_test(
    recorded: tuple[GitRepo, str], added: str, text: str,
) -> None:
    # Every importer, not only the first: the rest were answered from sys.modules.
    labels = labelled(recorded, added.replace("/", "-"), {added: text})
    assert {labels[n] for n in ALL} == {IMPACTED}


def test_a_module_added_where_no_import_searched_first_reruns_nothing(
    recorded: tuple[GitRepo, str],
) -> None:
    # Searched after the standard library's colorsys was found; a name nothing imports.
    labels = labelled(recorded, "extra", {"extra/colorsys.py": SHADOW, "tests/unused.py": ""})
    assert {labels[n] for n in ALL} == {SKIP}


def test_a_package_made_of_a_namespace_package_reruns_its_importers_only(
    recorded: tuple[GitRepo, str],
) -> None:
    # app/ns/__init__.py now runs at every import of app.ns; a file added below a namespace
    # package names its folder too, so this stays with the importers, not every test.
    labels = labelled(recorded, "ns", {"app/ns/__init__.py": "raise ImportError('no')\n"})
    assert labels["tests/test_ns.py::test_ns"] == IMPACTED
    assert {labels[n] for n in ALL} == {SKIP}
