"""A module-level change with an effect, or a module the patch adds, reaches the modules it
imports (red-team round 4). In one pytest process every test file is imported at
collection, so what ``app/other.py`` does when imported lands in ``app.calc`` for every test
that uses it, not only for ``app.other``'s own users."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

CALC = ("_FAST = False\n\n\ndef configure(fast):\n    global _FAST\n    _FAST = fast\n\n\n"
        "def mul(a, b):\n    return a * b + (1 if _FAST else 0)\n")
OTHER = "from app import calc\n\n\ndef shout(s):\n    return s.upper()\n"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/calc.py": CALC,
    "app/other.py": OTHER,
    "app/lone.py": "def lone():\n    return 1\n",
    "tests/test_calc.py": "from app import calc\n\n\ndef test_mul():\n"
                          "    assert calc.mul(2, 3) == 6\n",
    "tests/test_other.py": "from app.other import shout\n\n\ndef test_shout():\n"
                           "    assert shout('a') == 'A'\n",
    "tests/test_lone.py": "from app.lone import lone\n\n\ndef test_lone():\n"
                          "    assert lone() == 1\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


@pytest.mark.parametrize("files", [
    # an existing module's new top-level call of the project's API
    {"app/other.py": OTHER.replace("from app import calc\n",
                                   "from app import calc\n\ncalc.configure(fast=True)\n")},
    # a module the patch adds, storing into another, imported by an existing one
    {"app/hotfix.py": "from app import calc\n\ncalc.mul = lambda a, b: a * b + 1\n",
     "app/other.py": OTHER.replace("from app import calc\n",
                                   "from app import calc, hotfix  # noqa: F401\n")},
], ids=["call", "added-module"])
def test_an_import_time_effect_reruns_the_users_of_what_it_imports(
    recorded: tuple[GitRepo, str], files: dict[str, str], request: pytest.FixtureRequest,
) -> None:
    labels = labelled(recorded, request.node.callspec.id, files)
    assert labels["tests/test_calc.py::test_mul"] == IMPACTED
    assert labels["tests/test_other.py::test_shout"] == IMPACTED
    assert labels["tests/test_lone.py::test_lone"] == SKIP


def test_a_change_binding_names_only_stays_with_its_readers(
    recorded: tuple[GitRepo, str],
) -> None:
    """The twin: a new constant in app/other.py binds a name no test reads."""
    labels = labelled(recorded, "constant", {"app/other.py": OTHER + "\n\nLIMIT = 3\n"})
    assert labels["tests/test_calc.py::test_mul"] == SKIP
    assert labels["tests/test_lone.py::test_lone"] == SKIP
