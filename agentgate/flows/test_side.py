"""Test-side modules outside the test roots: code that, at the base, only the tests use.

The base is the contract for its tests, and a test's helpers are part of it: an assertion
helper loosened with the bug rewrites every test that calls it, wherever the helper lives.
Under a test root every module that is not a test file is such support (``inventory``'s
rule). Outside them a module is *test-side* when it is a candidate and every module that
imports it at the base is test-side too: a test file, a conftest, a module under a test
root, a plugin the base loads, or another test-side candidate.

A candidate says it serves the tests by its path (a word starting with ``test``, or
``fixtures``, ``mocks``...: ``named_for_tests``), by what it holds (it imports a test
framework, defines an ``assert...`` or a ``test...`` function or method, or raises
``AssertionError``: ``acts_for_tests``), by a test file binding one of its functions under
a test's name (``bound_as_tests``), or, for a plugin's helpers, by a plugin importing it.
Who imports it is not enough alone: on a flat project every module is imported by its
tests only, and every patch would then pay a run of its tests' base forms. A module the
code under test imports is code, whatever its name or content.

One notion, two uses (``base_contract``): the plugins' helpers are harness, laid over as at
the base for the whole selection; a changed test-side module is support of the base test
files it serves, whose base forms run with it laid over as at the base.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from agentgate.core import pysource
from agentgate.core.config import Config
from agentgate.core.model import Change
from agentgate.core.paths import TestFiles, under, under_any
from agentgate.git import gitio
from agentgate.graph.types import ImportGraph
from agentgate.plan import harness, planner

# Words in a module's path that say it serves the tests: ``app/testing.py``,
# ``pkg/_testing/asserts.py``, ``tests/helpers.py`` beside ``testpaths = ["tests/unit"]``,
# ``app/factories.py``. One word of a folder or file name, split at ``_``, ``-`` and ``.``.
# ``run.outcomes`` keeps a copy (it imports nothing of agentgate's).
TEST_WORDS = frozenset(("fixture", "fixtures", "fake", "fakes", "mock", "mocks", "stub",
                         "stubs", "factories", "cases", "expected", "golden", "snapshots"))
# Test frameworks: a module that imports one is written for the tests.
_FRAMEWORKS = frozenset(("pytest", "_pytest", "unittest", "hypothesis", "nose", "nose2",
                         "testtools", "mock", "doctest"))


def named_for_tests(path: str) -> bool:
    words = [w for part in path.removesuffix(".py").split("/")
             for w in part.replace("-", "_").replace(".", "_").split("_") if w]
    return any(w.lower().startswith("test") or w.lower() in TEST_WORDS for w in words)


def acts_for_tests(text: str | None) -> bool:
    """Whether a module's source is written for the tests: it imports a test framework
    (``import pytest``, ``from unittest import mock``), defines a function whose name starts
    with ``assert`` (``assert_total``, ``assertPrice``) or a test (``test``, pytest's
    default: a contract mixin's ``test_mul`` that the test classes inherit, red-team round
    6), or raises ``AssertionError``. A plain ``assert`` is not enough: code under test
    states its invariants with it."""
    tree = pysource.parse(text)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.name.partition(".")[0] in _FRAMEWORKS for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            if not node.level and (node.module or "").partition(".")[0] in _FRAMEWORKS:
                return True
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.lower().startswith("assert") or node.name.startswith("test"):
                return True
        elif isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id == "AssertionError":
                return True
    return False


def bound_as_tests(root: Path, rev: str, tests: TestFiles) -> frozenset[str]:
    """The modules whose functions a test file at ``rev`` binds under a test's name at its
    top level (``test_mul = check_mul`` after ``from app.contract import check_mul``, or
    ``test_mul = app.contract.check_mul``): the test's body is theirs (red-team round 6).
    One ``git grep`` for such an assignment, and a read of the few test files it finds."""
    found = gitio.files_matching(root, rev, r"^test[A-Za-z0-9_]*[[:space:]]*(:[^=]*)?=[^=]",
                                 ("*.py",))
    files = sorted(f for f in found if tests.match(f))
    modules: set[str] = set()
    for text in (gitio.read_many_at(root, rev, files) if files else {}).values():
        tree = pysource.parse(text)
        if tree is None:
            continue
        imported: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.update((a.asname or a.name, node.module) for a in node.names)
        for node in tree.body:
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) else [])
            if not any(isinstance(t, ast.Name) and t.id.startswith("test") for t in targets):
                continue
            value = getattr(node, "value", None)
            if isinstance(value, ast.Name) and value.id in imported:
                modules.add(imported[value.id])
            elif isinstance(value, ast.Attribute):
                dotted = _dotted(value.value)
                if dotted:
                    modules.add(imported.get(dotted, dotted))
    return frozenset(modules)


def _dotted(expr: ast.expr) -> str | None:
    """``app.contract`` of an ``app.contract`` expression; None for anything else."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        head = _dotted(expr.value)
        return None if head is None else f"{head}.{expr.attr}"
    return None


class TestSide:
    """Which modules of the base's graph are test-side: each question one walk up the
    importers, with the texts it needs read from the base once."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, graph: ImportGraph, config: Config, tests: TestFiles,
                 plugins: Iterable[str], text: Callable[[str], str | None],
                 bound: frozenset[str] = frozenset()) -> None:
        self.graph, self.config, self.tests = graph, config, tests
        self.plugins = frozenset(plugins)
        self.bound = bound  # ``bound_as_tests``
        self._text = text
        self._by_path = {path: name for name, path in graph.modules.items()}
        self._plugin_modules = {self._by_path[p] for p in self.plugins if p in self._by_path}
        self._acts: dict[str, bool] = {}

    def module(self, path: str) -> str | None:
        return self._by_path.get(path)

    def path(self, module: str) -> str:
        return self.graph.modules.get(module, "")

    def seed(self, path: str) -> bool:
        """Test-side by where it is: a test file, a conftest, under a test root, a plugin."""
        return bool(path) and (
            self.tests.match(path) or under_any(path, self.config.tests)
            or posixpath.basename(path) == harness.CONFTEST or path in self.plugins)

    def candidate(self, module: str) -> bool:
        """Says it serves the tests: by its path, its source, or a plugin importing it."""
        path = self.path(module)
        if not path or (path.endswith("__init__.py") and not named_for_tests(path)):
            return False
        if named_for_tests(path) or module in self.bound or any(
                module in self.graph.imports.get(p, ()) for p in self._plugin_modules):
            return True
        if path not in self._acts:
            self._acts[path] = acts_for_tests(self._text(path))
        return self._acts[path]

    def users(self, module: str) -> set[str] | None:
        """The modules that reach ``module`` (itself included) when all of them are
        test-side; None when code that is not reaches it, or it is no candidate."""
        if not self.candidate(module):
            return None
        reached, todo = {module}, [module]
        while todo:
            for importer in self.graph.importers.get(todo.pop(), ()):
                if importer in reached:
                    continue
                if not (self.seed(self.path(importer)) or self.candidate(importer)):
                    return None
                reached.add(importer)
                todo.append(importer)
        return reached

    def served(self, users: set[str]) -> set[str]:
        """The base's test files a test-side module serves: the test files among its users,
        and every test file under a conftest among them."""
        paths = {self.path(m) for m in users}
        folders = [posixpath.dirname(p) or "." for p in paths
                   if posixpath.basename(p) == harness.CONFTEST]
        return {p for p in self.graph.modules.values() if self.tests.match(p) and (
            p in paths or any(under(p, f) for f in folders))}

    def plugin_helpers(self) -> set[str]:
        """The test-side modules the plugins import, and what those import that is
        test-side by name or source: harness, like the plugins."""
        found: set[str] = set()
        todo = [t for p in self._plugin_modules for t in self.graph.imports.get(p, ())]
        seen = set(todo)
        while todo:
            target = todo.pop()
            path = self.path(target)
            if not path or path in self.plugins or self.users(target) is None:
                continue
            found.add(path)
            for nxt in self.graph.imports.get(target, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return found


def test_data(changes: Iterable[Change], tests: TestFiles, config: Config) -> set[str]:
    """The changed files outside the test roots that are not Python and whose path names
    them for tests (``golden/``, ``app/expected/``, ``testdata/``: red-team round 5, the
    expected values edited with the bug), save inert files and agentgate's own: the tests'
    data, the base's like a helper, for every base test file the band ran."""
    return {p for c in changes for p in c.paths
            if not p.endswith(".py") and not under_any(p, config.tests) and named_for_tests(p)
            and not tests.match(p) and not planner.inert(config, p)
            and not planner.agentgates(config, p)}


def base_text(root: Path, rev: str, prefetch: Iterable[str] = (),
              known: Mapping[str, str | None] | None = None) -> Callable[[str], str | None]:
    """A reader of the base's texts, each read once: ``known`` already read, the rest of
    ``prefetch`` in one batch now, anything else when asked."""
    cache: dict[str, str | None] = dict(known or {})
    wanted = [p for p in prefetch if p not in cache]
    cache.update(gitio.read_many_at(root, rev, wanted) if wanted else {})

    def read(path: str) -> str | None:
        if path not in cache:
            cache[path] = gitio.read_text_at(root, rev, path)
        return cache[path]

    return read
