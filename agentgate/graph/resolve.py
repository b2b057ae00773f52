"""Module names for paths, and raw import records resolved to a module's edges.

Naming follows Python's own rules for the configured roots: a path under a source root is
named from that root (``src/pkg/a.py`` -> ``pkg.a``), a test file outside every source root
from the repository root (``tests/test_a.py`` -> ``tests.test_a``), a package by its
``__init__.py``; folders without one are namespace packages and need no file.

Resolution keeps more than Python would run, never less: ``import a.b.c`` and
``from a.b import c`` are edges to ``a``, ``a.b`` and ``a.b.c`` whether or not ``a.b.c`` has a
file (so the dependents of a deleted or renamed module are still found), and a module also
depends on its own parent packages, which Python runs before it.
"""

from __future__ import annotations

import functools
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentgate.core.paths import TestFiles

if TYPE_CHECKING:
    from collections.abc import Iterable

    from agentgate.core.config import Config

# Never source, wherever they are: environments, caches, vendored JS.
_SKIP_ANYWHERE = frozenset({"venv", "node_modules", "site-packages", "__pycache__"})
# Build output, when it sits at the top of a flat layout.
_SKIP_AT_TOP = frozenset({"build", "dist"})


@dataclass(frozen=True)
class Roots:
    sources: tuple[str, ...]  # longest first, so a nested root wins
    tests: tuple[str, ...]
    # pytest's ``python_files`` where it collects from the root (no ``testpaths``): a test
    # module outside both roots is in the graph too (new-user trial, dateutil: pytest
    # collected ``docs/exercises/solutions/*_solution.py``, which no plan could reach)
    anywhere: tuple[str, ...] = ()

    def naming_root(self, path: str) -> str | None:
        """The root a path is named from: its source root, else "." for a test file."""
        for root in self.sources:
            if _under(path, root) is not None:
                return root
        return "." if self._in_tests(path) else None

    def is_test(self, path: str) -> bool:
        """Test files and helpers, and every conftest.py: pytest imports them by its rules."""
        return path.rsplit("/", 1)[-1] == "conftest.py" or self._in_tests(path)

    def _in_tests(self, path: str) -> bool:
        return any(_under(path, t) is not None for t in self.tests) or (
            bool(self.anywhere) and _collected(self.anywhere).match(path))


@dataclass(frozen=True)
class _Anywhere:  # a ``core.paths.Layout``: test modules wherever pytest looks
    tests: tuple[str, ...] = ()
    fixtures: tuple[str, ...] = ()
    collect_anywhere: bool = True
    python_files: tuple[str, ...] = ()


@functools.lru_cache(maxsize=8)
def _collected(patterns: tuple[str, ...]) -> TestFiles:
    return TestFiles(_Anywhere(), patterns)


@functools.lru_cache(maxsize=8)
def roots(sources: tuple[str, ...], tests: tuple[str, ...], anywhere: tuple[str, ...] = ()
          ) -> Roots:
    return Roots(tuple(sorted(sources, key=len, reverse=True)), tests, anywhere)


def roots_of(config: Config) -> Roots:
    return roots(tuple(config.sources), tuple(config.tests),
                 tuple(config.python_files) if config.collect_anywhere else ())


def _under(path: str, root: str) -> str | None:
    if root == ".":
        return path
    return path[len(root) + 1 :] if path.startswith(root + "/") else None


def name_in(rooted: Roots, path: str) -> str | None:
    """The dotted module name of a repo-relative ``.py`` path, None if it is not one."""
    if not path.endswith(".py"):
        return None
    root = rooted.naming_root(path)
    if root is None:
        return None
    rel = _under(path, root)
    assert rel is not None
    return _dotted(rel, flat=root == ".")


def _dotted(rel: str, *, flat: bool) -> str | None:
    parts = rel[:-3].split("/")
    if flat and len(parts) > 1 and parts[0] in _SKIP_AT_TOP:
        return None
    if parts[-1] == "__init__":
        parts.pop()
    if not parts:
        return None
    for part in parts:
        if not part or "." in part or part in _SKIP_ANYWHERE:
            return None  # hidden folders start with "."; "a.b" cannot be a module name
    return ".".join(parts)


def pytest_name(path: str, packages: frozenset[str]) -> str:
    """The name pytest's default ``prepend`` import mode gives a test file: from the first
    folder up that has no ``__init__.py`` (that folder goes on sys.path)."""
    folder, stem = posixpath.split(path[:-3])
    parts = [] if stem == "__init__" else [stem]
    while folder in packages:
        folder, name = posixpath.split(folder)
        parts.insert(0, name)
    return ".".join(parts)


DESCENDANTS = "**"  # ``prefix:**``: any module whose name starts with the prefix
SYS_PATH = "|"  # a raw record of a folder put on sys.path (graph.scan_syspath)


def split_folders(
    path: str, raws: Iterable[str]
) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    """The import records of the file at ``path``, the repo-relative folders inside the tree
    its ``|f``/``|r`` records put on sys.path, and the files its ``|F``/``|R`` records load
    by path (graph.scan_syspath), sorted."""
    imports: list[str] = []
    folders: set[str] = set()
    files: set[str] = set()
    for raw in raws:
        if not raw.startswith(SYS_PATH):
            imports.append(raw)
            continue
        kind, rel = raw[1], raw[2:]
        found = posixpath.normpath(posixpath.join(posixpath.dirname(path), rel)
                                   if kind in "fF" else rel)
        if found != ".." and not found.startswith("../"):
            (files if kind in "FR" else folders).add(found)
    return imports, tuple(sorted(folders)), tuple(sorted(files))


@dataclass(frozen=True)
class Resolved:
    edges: tuple[str, ...]
    probes: tuple[str, ...]  # absolute names a test file imports: maybe siblings on sys.path
    stars: tuple[str, ...]  # ``from X import *``: X's submodules may be imported too
    problems: tuple[str, ...]  # relative imports that go above the top-level package


def resolve(
    module: str, is_package: bool, raws: Iterable[str], tops: frozenset[str], *, test: bool
) -> Resolved:
    package = module if is_package else module.rpartition(".")[0]
    edges: set[str] = set(_ancestors(module))
    probes: list[str] = []
    stars: list[str] = []
    problems: list[str] = []
    for raw in raws:
        head, _, names = raw.partition(":")
        base = _absolute(head, module, package)
        if base is None:
            problems.append(raw)
            continue
        targets = [base]
        for name in names.split(",") if names else ():
            if name == "*":
                stars.append(base)
            elif name == DESCENDANTS:  # a computed import under a constant prefix
                stars.append(f"{base}.{DESCENDANTS}")
            else:
                targets.append(f"{base}.{name}")
        relative = head.startswith((".", "@"))
        if relative or base.partition(".")[0] in tops:
            edges.update(targets)
            for target in targets:
                edges.update(_ancestors(target))
        if test and not relative:
            probes.extend(targets)
    edges.discard(module)
    return Resolved(tuple(sorted(edges)), tuple(sorted(set(probes))), tuple(stars),
                    tuple(problems))


@functools.lru_cache(maxsize=1 << 16)
def _ancestors(name: str) -> tuple[str, ...]:
    """``a.b.c`` -> (``a``, ``a.b``); memoised: the same targets recur in every module."""
    parts = name.split(".")
    return tuple(".".join(parts[:i]) for i in range(1, len(parts)))


def _absolute(head: str, module: str, package: str) -> str | None:
    """``head`` of a raw record as an absolute name; None if it climbs above the top."""
    if head.startswith("@"):  # import_module(".x", __name__): relative to the module itself
        head, package = head[1:], module
    level = len(head) - len(head.lstrip("."))
    if not level:
        return head
    parts = package.split(".") if package else []
    if level - 1 >= len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    rest = head[level:]
    return ".".join([*base, rest] if rest else base)
