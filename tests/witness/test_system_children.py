"""A process the recording cannot follow (not Python, so no fragment) that reads no file of
the repository: a filter of the base system given no operand (``sh -c cat``, click's pager
tests), or a program that reads none (``echo``). Its test's witness stays complete; what it
read is its standard input, which the test wrote. Any other such process keeps its test
incomplete: an operand that may name a file, a redirection, a program a test's PATH puts
first, a shell start-up file (each one an attack next to the twin that passes)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgate.witness import children
from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

PAGER = ("import subprocess\n\n\ndef page(text, cmd, env=None):\n"
         "    return subprocess.run(cmd, shell=True, input=text, capture_output=True,\n"
         "                          text=True, env=env, check=True).stdout\n")
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/pager.py": PAGER,
    "app/other.py": "def one():\n    return 1\n",
    "data/a.txt": "a\n",
    "tests/bin/cat": "#!/bin/sh\nexec /bin/cat data/a.txt\n",
    "tests/test_pager.py": "import os\nfrom app.pager import page\nfrom app.other import one\n\n\n"
    "def test_cat():\n    assert page('hi', 'cat') == 'hi'\n\n\n"
    "def test_argv():\n    import subprocess\n"
    "    assert subprocess.run(['head', '-1'], input='x\\ny\\n', capture_output=True,\n"
    "                          text=True).stdout == 'x\\n'\n\n\n"
    "def test_echo():\n    assert page('', 'echo data/a.txt') == 'data/a.txt\\n'\n\n\n"
    "def test_other():\n    assert one() == 1\n\n\n"
    # the attacks: each reads data/a.txt through a program the recording cannot follow
    "def test_operand():\n    assert page('', 'cat data/a.txt') == 'a\\n'\n\n\n"
    "def test_redirect():\n    assert page('', 'cat < data/a.txt') == 'a\\n'\n\n\n"
    "def test_path_first():\n"
    "    env = {**os.environ, 'PATH': os.path.abspath('tests/bin') + ':' + os.environ['PATH']}\n"
    "    assert page('', 'cat', env) == 'a\\n'\n\n\n"
    "def test_bash_env(tmp_path):\n"
    "    env = {**os.environ, 'BASH_ENV': os.path.abspath('data/a.txt')}\n"
    "    assert page('x', 'cat', env) == 'x'\n\n\n"
    "def test_bash_env_inherited(monkeypatch):\n"
    "    monkeypatch.setenv('BASH_ENV', os.path.abspath('data/a.txt'))\n"
    "    assert page('x', 'cat') == 'x'\n",
}
CONTAINED = ("test_cat", "test_argv", "test_echo")
ATTACKS = ("test_operand", "test_redirect", "test_path_first", "test_bash_env",
           "test_bash_env_inherited")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES, executable=("tests/bin/cat",))


def test_a_system_filter_on_stdin_leaves_its_test_complete(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "other", {"app/other.py": "def one():\n    return 2 - 1\n"})
    assert {n: labels[f"tests/test_pager.py::{n}"] for n in CONTAINED} == dict.fromkeys(
        CONTAINED, SKIP)
    assert labels["tests/test_pager.py::test_other"] == IMPACTED
    # what it runs in the process still reruns it
    labels = labelled(recorded, "pager", {"app/pager.py": PAGER.replace("check=True", "check=1")})
    assert labels["tests/test_pager.py::test_cat"] == IMPACTED


def test_a_process_that_may_read_a_file_keeps_its_test_incomplete(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "data", {"data/a.txt": "b\n"})
    assert {n: labels[f"tests/test_pager.py::{n}"] for n in ATTACKS} == dict.fromkeys(
        ATTACKS, ESCALATE)
    assert labels["tests/test_pager.py::test_cat"] == SKIP


class _Rec:
    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.child_folder = None
        self.spawns: list[children.Spawn] = []
        self.settled: set[int] = set()

    def rel(self, path: object) -> str | None:
        text = os.fspath(path)  # type: ignore[call-overload]
        return os.path.relpath(text, self.root) if text.startswith(self.root + "/") else None


@pytest.mark.parametrize(("argv", "expected"), [
    (("/bin/sh", "-c", "cat"), True),
    (("/bin/sh", "-c", "cat "), True),
    (("/bin/sh", "-c", "'cat' -n"), True),
    (("/bin/sh", "-c", "head -5"), True),
    (("/bin/sh", "-c", "echo a b c"), True),
    (("/bin/sh", "-c", "cat data.txt"), False),
    (("/bin/sh", "-c", "cat -- x"), False),
    (("/bin/sh", "-c", "cat; cat x"), False),
    (("/bin/sh", "-c", "cat | sh"), False),
    (("/bin/sh", "-c", "cat $X"), False),
    (("/bin/sh", "-c", "X=1 cat"), False),
    (("/bin/sh", "-c", "cat *"), False),
    (("/bin/sh", "-c", "less"), False),
    (("/bin/sh", "-c", "python3 -c 1"), False),
    (("/bin/sh", "-c", "cat", "extra"), False),
    (("/bin/sh", "script.sh"), False),
])
def test_which_commands_read_no_file(tmp_path: Path, argv: tuple[str, ...],
                                     expected: bool) -> None:
    spawn = children.Spawn(1, "t:x", (argv[0],), argv, ("PATH=/usr/bin:/bin",))
    assert children.contained(spawn, _Rec(tmp_path)) is expected
