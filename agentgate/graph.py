"""The import graph of one revision, and its reverse closure.

``build(root, config, rev)`` reads the tree at ``rev`` from git, never the working tree:
one ``git ls-tree`` lists every file with its blob id, the cache under
``.git/agentgate/graph`` (graph_cache) says which blobs it has seen, and only the others are
read, in one ``git cat-file --batch``, and scanned (imports_scan); the cached graph is then
patched (graph_build). The graph over-approximates: when it cannot tell -- a computed
dynamic import, a file that does not parse or is not UTF-8, a relative import above the
top, a symlink into the code -- it says so in ``escalations`` and never guesses small.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentgate import gitio, graph_cache
from agentgate.graph_build import Builder, context_of, list_tree
from agentgate.graph_cache import LazyMap
from agentgate.graph_expand import link_escalations
from agentgate.graph_resolve import name_in, roots_of
from agentgate.imports_scan import STATS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from agentgate.config import Config


@dataclass(frozen=True)
class Escalation:
    path: str  # repo-relative file
    code: str  # "dynamic-import" | "syntax-error" | "not-utf8" | "unresolved-import"
    detail: str  # e.g. "importlib.import_module(name) with a computed name at line 12"


@dataclass(frozen=True)
class BuildStats:
    files: int  # Python files in the graph
    read: int  # blobs read from git by this build
    parsed: int  # blobs scanned by this build
    resolved: int  # paths whose imports were resolved again
    cache: str  # "warm", "cold" or "rebuilt: why"


@dataclass(frozen=True, eq=False)
class ImportGraph:
    """modules: module -> repo-relative file (source, test, helper, conftest; a package maps
    to its __init__.py). imports: module -> internal names it imports, with the parent
    packages of each (their __init__ runs) and the module's own parents; a name under one of
    the repo's top-level packages that has no file is kept, so the dependents of a deleted
    or renamed module are found."""

    modules: Mapping[str, str]
    imports: Mapping[str, frozenset[str]]
    escalations: tuple[Escalation, ...]
    files: Mapping[str, str] = field(default_factory=dict)  # path -> module, every .py file
    reverse: Mapping[str, tuple[str, ...]] | None = field(default=None, repr=False)
    stats: BuildStats | None = None
    notes: tuple[str, ...] = ()

    def module_of(self, path: str) -> str | None:
        """The module a file of this tree is (a shadowed file too); None for other paths."""
        return self.files.get(path)

    @property
    def importers(self) -> Mapping[str, tuple[str, ...]]:
        """Reversed edges: name -> the modules that import it, sorted."""
        if self.reverse is None:
            reverse: dict[str, list[str]] = {}
            for importer in sorted(self.imports):
                for target in self.imports[importer]:
                    reverse.setdefault(target, []).append(importer)
            object.__setattr__(self, "reverse", {k: tuple(v) for k, v in reverse.items()})
        assert self.reverse is not None
        return self.reverse

    def importers_closure(self, seeds: Iterable[str]) -> dict[str, str | None]:
        """Every module that can reach a seed (seeds included, mapped to None), each mapped to
        its next hop toward the nearest seed (BFS over reversed edges) so shortest chains can
        be read off."""
        closure: dict[str, str | None] = dict.fromkeys(seeds)
        queue = deque(closure)
        importers = self.importers
        # a closure is often most of the graph (issue 3): skip LazyMap's per-key call
        get = importers.raw_get if isinstance(importers, LazyMap) else importers.get
        while queue:
            target = queue.popleft()
            for importer in get(target, ()):
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


def build(root: Path, config: Config, rev: str) -> ImportGraph:
    """Graph of the tree at commit ``rev`` (NOT the working tree), cached under
    ``gitio.state_dir(root)/graph`` keyed by git blob id: one ``git ls-tree`` tells what
    changed since the cache, and only blobs it has not seen are read and parsed."""
    commit = gitio.resolve(root, rev)
    rooted = roots_of(config)
    cache_dir = gitio.state_dir(root) / "graph"
    cache = graph_cache.load(cache_dir)
    same_roots = cache.status == "warm" and cache.hot["context"] == context_of(rooted)
    tree = list_tree(root, commit, rooted, cache.hot["names"] if same_roots else {})
    parsed, notes = STATS.parsed, len(STATS.notes)
    builder = Builder(root, rooted, tree, cache)
    builder.run()
    if builder.changed:
        graph_cache.save(cache, builder.hot(), builder.new_blobs,
                         builder.store if builder.compact else None)
    escalations = [
        Escalation(path, code, detail)
        for path, found in sorted(builder.escalations.items())
        for code, detail in found
    ]
    escalations += [
        Escalation(path, "unresolved-import", detail)
        for path, detail in link_escalations(tree, builder.links)
    ]
    stats = BuildStats(len(tree.python), builder.read, STATS.parsed - parsed,
                       len(builder.stale), cache.status)
    imports = LazyMap(builder.imports, frozenset)
    importers = LazyMap(builder.importers, tuple)
    return ImportGraph(builder.modules, imports, tuple(escalations), tree.names, importers,
                       stats, tuple(STATS.notes[notes:]))
