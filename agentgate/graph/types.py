"""The import graph's value types: a graph, its escalations, its build statistics (pure).

``agentgate.graph.build`` makes an ``ImportGraph`` from git; this module holds only the
records and the reverse closure a plan walks, so the planner can read a graph without
loading the code that builds one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentgate.graph.resolve import name_in, roots_of
from agentgate.graph.reverse import Reverse

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from agentgate.core.config import Config


@dataclass(frozen=True)
class Escalation:
    path: str  # repo-relative file
    code: str  # "dynamic-import" | "syntax-error" | "not-utf8" | "unresolved-import" |
    # "too-complex" (a file too large or deeply nested to scan) | "dynamic-path" (a folder
    # put on sys.path that cannot be computed) | "dynamic-prefix" (narrowed to a prefix)
    detail: str  # e.g. "importlib.import_module(name) with a computed name at line 12"


@dataclass(frozen=True)
class Listing:
    """The Python files and symlinks of one revision under the source and test roots."""

    python: dict[str, str]  # path -> blob, Python files under the roots
    names: dict[str, str]  # path -> module name
    links: dict[str, str]  # path -> blob, symlinks under the roots


@dataclass(frozen=True)
class BuildStats:
    files: int  # Python files in the graph
    read: int  # blobs read from git by this build
    parsed: int  # blobs scanned by this build
    resolved: int  # paths whose imports were resolved again
    cache: str  # "warm", "cold" or "rebuilt: why"


class ImportGraph:
    """modules: module -> repo-relative file (source, test, helper, conftest; a package maps
    to its __init__.py). imports: module -> internal names it imports, with the parent
    packages of each (their __init__ runs) and the module's own parents; a name under one of
    the repo's top-level packages that has no file is kept, so the dependents of a deleted
    or renamed module are found. importers: the same edges reversed. Either is derived from
    the other on first use (a cached graph carries only the reversed edges a plan walks)."""

    def __init__(
        self,
        modules: Mapping[str, str],
        imports: Mapping[str, frozenset[str]] | None = None,
        escalations: tuple[Escalation, ...] = (),
        files: Mapping[str, str] | None = None,  # path -> module, every .py file
        reverse: Mapping[str, tuple[str, ...]] | None = None,
        stats: BuildStats | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        if imports is None and reverse is None:
            raise ValueError("a graph needs its edges one way or the other")
        self.modules, self.escalations, self.stats, self.notes = modules, escalations, stats, notes
        self.files: Mapping[str, str] = files if files is not None else {}
        self._imports, self._reverse = imports, reverse

    def module_of(self, path: str) -> str | None:
        """The module a file of this tree is (a shadowed file too); None for other paths."""
        return self.files.get(path)

    @property
    def imports(self) -> Mapping[str, frozenset[str]]:
        if self._imports is None:
            assert self._reverse is not None
            edges: dict[str, set[str]] = {name: set() for name in self.modules}
            for target, importers in self._reverse.items():
                for importer in importers:
                    edges.setdefault(importer, set()).add(target)
            self._imports = {name: frozenset(found) for name, found in edges.items()}
        return self._imports

    @property
    def importers(self) -> Mapping[str, tuple[str, ...]]:
        """Reversed edges: name -> the modules that import it, sorted."""
        if self._reverse is None:
            assert self._imports is not None
            reverse: dict[str, list[str]] = {}
            for importer in sorted(self._imports):
                for target in self._imports[importer]:
                    reverse.setdefault(target, []).append(importer)
            self._reverse = {k: tuple(v) for k, v in reverse.items()}
        return self._reverse

    def importers_closure(self, seeds: Iterable[str]) -> dict[str, str | None]:
        """Every module that can reach a seed (seeds included, mapped to None), each mapped to
        its next hop toward the nearest seed (BFS over reversed edges) so shortest chains can
        be read off."""
        importers = self.importers
        if isinstance(importers, Reverse):
            return importers.closure(seeds)
        closure: dict[str, str | None] = dict.fromkeys(seeds)
        queue = deque(closure)
        while queue:
            target = queue.popleft()
            for importer in importers.get(target, ()):
                if importer not in closure:
                    closure[importer] = target
                    queue.append(importer)
        return closure

    def chain(self, module: str, closure: Mapping[str, str | None]) -> list[str]:
        """module -> ... -> seed, following the closure's next hops ([] if not in it)."""
        if module not in closure:
            return []
        hops = [module]
        while (nxt := closure.get(hops[-1])) is not None and nxt not in hops:
            hops.append(nxt)
        return hops


def module_name(config: Config, path: str) -> str | None:
    """Pure: the dotted module name a repo-relative .py path has under the configured source
    roots / test roots (None if it is not Python under them). Works for deleted paths too."""
    return name_in(roots_of(config), path)
