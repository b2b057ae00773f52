"""The one path-prefix rule and the one test-file rule (issue 10, item 2).

Pure and stdlib only: every stage that asks "is this path inside that folder?" or "is this a
test file?" asks here, so the gate, the planner and the witness skip gate cannot disagree.

``under(path, prefix)``: whole path components (``app/pay`` never matches ``app/payments``),
an exact match counts (a prefix may name a file), a trailing ``/`` is ignored, and ``.`` or
``""`` is the whole repository. Flat layouts configure ``tests`` or ``sources`` as ``["."]``,
and git's own pathspec ``.`` means everything, so ``.`` means everything everywhere.

The test-file rule is what pytest collects under agentgate's configuration, because
agentgate's job is to run what pytest runs: a ``.py`` file under a test root (pytest's
``testpaths``, which ``tests`` defaults to) or, where ``testpaths`` is unset, anywhere
pytest's default ``norecursedirs`` lets it look (pytest then collects from the root: tabulate's
``test/``, pyflakes' ``pyflakes/test/``, a ``docs/`` example pytest's ``python_files`` names),
whose name matches pytest's ``python_files`` (``test_*.py`` and ``*_test.py`` when the
configuration names none), and not under a fixture folder (fixtures are data the tests read,
recorded in the manifest, not tests). So ``src/test_foo.py`` is not a test file when
``testpaths = ["tests"]`` (pytest never collects it) and is one without ``testpaths``, and
``tests/fixtures/test_data.py`` is never one (it is fixture data). A pattern holding a ``/``
matches the whole path, as pytest's ``fnmatch_ex`` does. The test *roots* (``tests``) are
something else: the folders whose other files are the tests' helpers and data.

``function_id(nodeid)``: the one rule for a node id without its parameters.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from typing import Protocol

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")  # pytest's own default for python_files
# A folder pytest's default ``norecursedirs`` never enters, as a path's component (``.*``,
# ``venv``, ``build``, ``dist``, ``*.egg``, ``node_modules``, ``_darcs``, ``CVS``, ``{arch}``):
# where pytest collects anywhere, a test module inside one is no test.
_NOT_RECURSED = re.compile(r"(?:^|/)(?:\.[^/]*|venv|build|dist|[^/]*\.egg|node_modules|_darcs"
                           r"|CVS|\{arch\})/")
WHOLE_REPO = (".", "")


class Layout(Protocol):
    """What the test-file rule needs of a configuration (``core.config.Config`` has it)."""

    @property
    def tests(self) -> tuple[str, ...]: ...

    @property
    def fixtures(self) -> tuple[str, ...]: ...

    @property
    def collect_anywhere(self) -> bool: ...

    @property
    def python_files(self) -> tuple[str, ...]: ...


def function_id(nodeid: str) -> str:
    """A pytest node id without its parameters: ``path::Class::test[1-a::b]`` ->
    ``path::Class::test`` (parameters may hold ``::`` and ``[``; the path may hold ``[``);
    an id without parameters, or a file, is itself."""
    head, sep, rest = nodeid.partition("::")
    return head + sep + rest.split("[", 1)[0]


def under(path: str, prefix: str) -> bool:
    """Whether ``path`` is ``prefix`` itself or inside it; ``.`` is the whole repository."""
    folder = prefix.rstrip("/")
    return folder in WHOLE_REPO or path == folder or path.startswith(folder + "/")


def under_any(path: str, prefixes: Iterable[str]) -> bool:
    return any(under(path, p) for p in prefixes)


class TestFiles:
    """The test-file rule compiled once per plan: the planner runs it on every module."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, layout: Layout, patterns: tuple[str, ...] | None = None) -> None:
        """``patterns``: pytest's ``python_files`` at another revision than the layout's
        (head's, where the planner asks what head collects); the layout's by default."""
        self.roots = None if layout.collect_anywhere else _prefixes(layout.tests)
        self.fixtures = _prefixes(layout.fixtures)
        patterns = patterns or layout.python_files or DEFAULT_PYTHON_FILES
        names = [fnmatch.translate(p) for p in patterns if "/" not in p]
        paths = [fnmatch.translate(p) for p in patterns if "/" in p]
        self.name_re = re.compile("|".join(names)) if names else None
        self.path_re = re.compile("|".join(f"(?:.*/)?{p}" for p in paths)) if paths else None

    def match(self, path: str) -> bool:
        if not path.endswith(".py") or not _starts(path, self.roots):
            return False
        if _starts(path, self.fixtures):
            return False
        if self.roots is None and _NOT_RECURSED.search(path):
            return False
        name = path.rpartition("/")[2]
        return bool((self.name_re and self.name_re.match(name))
                    or (self.path_re and self.path_re.match(path)))


def sibling_conftests(conftests: Iterable[str], layout: Layout, selected: Iterable[str]
                      ) -> list[str]:
    """The folders of ``conftests`` (paths of ``conftest.py`` files) that the whole suite's
    run loads and a run of the ``selected`` files (node ids) would not: inside the folders
    pytest collects from, not one a selected file's own folders already load (the root's,
    ``tests/``'s, ``tests/unit/``'s for ``tests/unit/test_x.py``), fixture folders included."""
    roots = None if layout.collect_anywhere else _prefixes(layout.tests)
    loaded = {""}
    for nodeid in selected:
        parts = nodeid.split("::", 1)[0].split("/")[:-1]
        loaded.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    found = []
    for conftest in conftests:
        folder = conftest.rpartition("/")[0]
        # A fixture folder's too: pytest knows nothing of agentgate's ``fixtures`` and walks
        # it (red-team round 7); a project that keeps it from the walk says so in
        # ``norecursedirs`` or ``collect_ignore``, and then no folder is added (``check``).
        if folder in loaded or not _starts(folder + "/", roots):
            continue
        if _NOT_RECURSED.search(folder + "/"):  # pytest never walks into it, anywhere
            continue
        found.append(folder)
    return sorted(set(found))


def is_test_file(path: str, layout: Layout, patterns: tuple[str, ...] | None = None) -> bool:
    """One path against the rule; compile a ``TestFiles`` when asking for many."""
    return TestFiles(layout, patterns).match(path)


def _prefixes(folders: Iterable[str]) -> tuple[str, ...] | None:
    """Folder prefixes for ``str.startswith`` (``under`` in one C call); None is everything,
    ``()`` nothing (no fixture folders configured)."""
    folders = [f.rstrip("/") for f in folders]
    if any(f in WHOLE_REPO for f in folders):
        return None
    return tuple(f + "/" for f in folders)


def _starts(path: str, prefixes: tuple[str, ...] | None) -> bool:
    """``under`` against each prefix: ``path + "/"`` lets an exact match count too."""
    return prefixes is None or (path + "/").startswith(prefixes)
