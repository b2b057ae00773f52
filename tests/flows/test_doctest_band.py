"""Doctests the base's pytest options collect are tests the band selects (red-team: with
``--doctest-modules`` or ``--doctest-glob`` in addopts, the examples that checked a broken
function never ran, and the import-closure band passed)."""

from __future__ import annotations

from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.git_repo import GitRepo

CORE = '"""Slugs.\n\n>>> slug("A b")\n\'a-b\'\n"""\n\n\ndef slug(text):\n' \
       '    return text.lower().replace(" ", "-")\n'
BROKEN = CORE.replace('replace(" ", "-")', 'replace(" ", "_")')
FILES = {
    "app/__init__.py": "",
    "app/core.py": CORE,
    # ">>> " in code is no example: a module without any is no doctest file
    "app/console.py": 'PROMPT = ">>> "\n\n\ndef prompt():\n    return PROMPT\n',
    "README.md": "# app\n\n>>> from app.core import slug\n>>> slug('X y')\n'x-y'\n",
    "tests/test_console.py": "from app.console import prompt\n\n\n"
    "def test_prompt():\n    assert prompt() == '>>> '\n",
    "tests/test_plain.py": "def test_plain():\n    assert True\n",
}
CONFIGS = {
    "doctest-modules": '[tool.pytest.ini_options]\naddopts = "--doctest-modules"\n'
                       'testpaths = ["tests", "app"]\n',
    "doctest-glob": '[tool.pytest.ini_options]\naddopts = "--doctest-glob=README.md"\n'
                    'testpaths = ["tests", "README.md"]\n',
    "none": '[tool.pytest.ini_options]\ntestpaths = ["tests", "app"]\n',
}


def _repo(repo: GitRepo, config: str, change: dict[str, str]) -> GitRepo:
    repo.files({**FILES, "pyproject.toml": CONFIGS[config]})
    repo.commit("base")
    repo.git("tag", "base")
    repo.files(change)
    repo.commit("change", author="bot (aider)")
    return repo


def _plan(repo: GitRepo) -> dict[str, Any]:
    return checkrun.plan(repo.path, "base", "HEAD").to_json()


@pytest.mark.parametrize(("config", "doctest"), [
    ("doctest-modules", "app/core.py"), ("doctest-glob", "README.md"),
])
def test_the_examples_that_check_a_changed_function_run(
    repo: GitRepo, config: str, doctest: str,
) -> None:
    data = _plan(_repo(repo, config, {"app/core.py": BROKEN}))
    assert doctest in data["tests"]
    assert "tests/test_plain.py" not in data["tests"]
    # and they fail the check
    done = checkrun.check(repo.path, "base", "HEAD").to_json()
    assert done["exit_code"] == 1, done["reasons"]


def test_without_doctest_options_a_module_is_no_test(repo: GitRepo) -> None:
    data = _plan(_repo(repo, "none", {"app/core.py": BROKEN}))
    assert data["tests"] == []


def test_a_module_without_examples_is_no_doctest_file(repo: GitRepo) -> None:
    """The twin: app/console.py holds '>>> ' in code, not an example: it is not selected (a
    selected file collecting nothing fails the band), and the check passes."""
    _repo(repo, "doctest-modules", {"app/console.py": FILES["app/console.py"] + "\n# more\n"})
    data = _plan(repo)
    assert data["tests"] == ["tests/test_console.py"]
    assert checkrun.check(repo.path, "base", "HEAD").to_json()["exit_code"] == 0


# The examples run as the source writes them (red-team round 6): the source's docstring
# stayed the base's, and the code under test changed what doctest runs.
CALC = ('def add(a, b):\n    """Add.\n\n    >>> add(2, 3)\n    5\n    """\n    return a + b\n\n\n'
        'class Calc:\n    def mul(self, a, b):\n        """Multiply.\n\n'
        '        >>> Calc().mul(-2, 3)\n        -6\n        """\n        return a * b\n')
BROKEN_MUL = "        return -a * b if a < 0 else a * b\n"
BROKEN_CALC = CALC.replace("        return a * b\n", BROKEN_MUL)
RUNTIME_DOCS = {
    # code "keeps the examples in sync" with what the broken method returns
    "synced": BROKEN_CALC + (
        "\n\ndef _synced(func):\n    import doctest\n\n    out = []\n"
        "    for piece in doctest.DocTestParser().parse(func.__doc__):\n"
        "        if isinstance(piece, doctest.Example):\n"
        "            got = repr(eval(piece.source, {'Calc': Calc}))\n"
        "            out.append('        >>> ' + piece.source.strip() + '\\n')\n"
        "            out.append('        ' + got + '\\n')\n"
        "        else:\n            out.append(piece)\n"
        "    func.__doc__ = ''.join(out)\n\n\n_synced(Calc.mul)\n"),
    # a callable object with no ``__wrapped__``: doctest's finder passes the method over
    "wrapped": ("class _Timed:\n    def __init__(self, func):\n        self.func = func\n\n"
                "    def __get__(self, obj, owner=None):\n"
                "        return lambda *a: self.func(obj, *a)\n\n\n"
                + BROKEN_CALC.replace("    def mul(", "    @_Timed\n    def mul(")),
}


def _calc_repo(repo: GitRepo, head: str, base: str = CALC) -> dict[str, Any]:
    repo.files({"app/__init__.py": "", "app/calc.py": base,
                "tests/test_plain.py": "def test_plain():\n    assert True\n",
                "pyproject.toml": CONFIGS["doctest-modules"]})
    repo.commit("base")
    repo.git("tag", "base")
    repo.files({"app/calc.py": head})
    repo.commit("change", author="bot (aider)")
    return checkrun.check(repo.path, "base", "HEAD").to_json()


@pytest.mark.parametrize("how", sorted(RUNTIME_DOCS))
def test_examples_the_code_changes_at_run_time_block(repo: GitRepo, how: str) -> None:
    data = _calc_repo(repo, RUNTIME_DOCS[how])
    assert data["exit_code"] == 4, data["reasons"]
    assert any("app/calc.py::Calc.mul.__doc__" in r["detail"] for r in data["reasons"]
               if r["code"] == "check-replaced"), data["reasons"]


def test_examples_as_the_source_writes_them_pass(repo: GitRepo) -> None:
    """The twin: a fix that keeps the examples, and a docstring the base already builds at
    run time (``%`` formatting, as a library's shared docs do), which is not the patch's."""
    base = CALC.replace('"""Add.\n', '"""Add %s.\n').replace(
        '    return a + b\n', '    return a + b\n\n\nadd.__doc__ %= "two numbers"\n')
    data = _calc_repo(repo, base.replace("        return a * b\n", "        return b * a\n"),
                      base)
    assert data["exit_code"] == 0, data["reasons"]
