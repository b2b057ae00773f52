"""What a function's definition shows of its body without running it -- its docstring, and
whether a ``yield`` makes it a generator -- is made when the module runs, not when the
function does. A test that reads ``greet.__doc__`` (a command's help text) or asks
``inspect.isgeneratorfunction(items)`` never runs the body, so a changed docstring or a new
``yield`` counted as a change of the body alone skipped it (red-team, helper-8)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

CMDS = '''def greet(name):
    """Say hello to NAME."""
    return "hello " + name


def items():
    return [1, 2]


def other():
    return 1
'''

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/cmds.py": CMDS,
    "tests/test_cmds.py": "import inspect\nfrom app import cmds\n\n\n"
    "def test_help():\n    assert cmds.greet.__doc__ == 'Say hello to NAME.'\n\n\n"
    "def test_not_a_generator():\n    assert not inspect.isgeneratorfunction(cmds.items)\n\n\n"
    "def test_greet():\n    assert cmds.greet('x') == 'hello x'\n\n\n"
    "def test_other():\n    assert cmds.other() == 1\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def _edit(old: str, new: str) -> dict[str, str]:
    assert old in CMDS, old
    return {"app/cmds.py": CMDS.replace(old, new, 1)}


def test_a_changed_docstring_reruns_the_test_that_reads_it(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "docstring", _edit("Say hello", "Greet"))
    assert labels["tests/test_cmds.py::test_help"] == IMPACTED
    assert labels["tests/test_cmds.py::test_other"] == SKIP


def test_a_new_yield_reruns_the_test_that_asks_for_a_generator(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "generator", _edit("    return [1, 2]", "    yield 1\n    yield 2"))
    assert labels["tests/test_cmds.py::test_not_a_generator"] == IMPACTED
    assert labels["tests/test_cmds.py::test_other"] == SKIP


def test_a_body_change_that_keeps_the_docstring_stays_with_its_callers(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "body", _edit('"hello " + name', '"hello, " + name'))
    assert labels["tests/test_cmds.py::test_greet"] == IMPACTED
    assert labels["tests/test_cmds.py::test_help"] == SKIP
    assert labels["tests/test_cmds.py::test_not_a_generator"] == SKIP
