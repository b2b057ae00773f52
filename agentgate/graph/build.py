"""Building the import graph of one revision from git (the value types are in graph.types).

``build(root, config, rev)`` reads the tree at ``rev`` from git, never the working tree:
one ``git ls-tree`` lists every file with its blob id, the cache under
``.git/agentgate/graph`` (graph.cache) says which blobs it has seen, and only the others are
read, in one ``git cat-file --batch``, and scanned (graph.scan); the cached graph is then
patched (graph.builder). The graph over-approximates: when it cannot tell -- a computed
dynamic import, a file that does not parse or is not UTF-8, a relative import above the
top, a symlink into the code -- it says so in ``escalations`` and never guesses small.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from agentgate.core.config import PYTEST_CONFIG_FILES, pytest_option
from agentgate.git import gitio
from agentgate.graph import cache as graph_cache
from agentgate.graph.builder import Builder, context_of, list_tree
from agentgate.graph.cache import LazyMap
from agentgate.graph.expand import link_escalations
from agentgate.graph.resolve import roots_of
from agentgate.graph.reverse import Reverse
from agentgate.graph.scan import STATS
from agentgate.graph.types import BuildStats, Escalation, ImportGraph

if TYPE_CHECKING:
    from pathlib import Path

    from agentgate.core.config import Config


def build(root: Path, config: Config, rev: str) -> ImportGraph:
    """Graph of the tree at commit ``rev`` (NOT the working tree), cached under
    ``gitio.state_dir(root)/graph`` keyed by git blob id. A tree the cache already describes
    is read from it as it is; otherwise the cached listing is patched with the files that
    differ (one ``git diff-tree``), and only blobs it has not seen are read and parsed."""
    tree_id = gitio.resolve(root, rev, peel="tree")
    rooted = roots_of(config)
    cache = graph_cache.load(gitio.state_dir(root) / "graph")
    if (cache.status == "warm" and cache.hot["tree"] == tree_id
            and cache.hot["context"] == context_of(rooted)):
        return _cached(cache.hot)
    old = cache.previous()
    tree = list_tree(root, tree_id, rooted, old)
    parsed, notes = STATS.parsed, len(STATS.notes)
    builder = Builder(root, rooted, tree, cache, old, pythonpath(root, tree_id))
    builder.run()
    found = [(path, code, detail) for path, pairs in sorted(builder.escalations.items())
             for code, detail in pairs]
    found += [(path, "unresolved-import", detail)
              for path, detail in link_escalations(tree, builder.links)]
    changed = builder.changed
    token = graph_cache.new_token() if changed else old["token"]
    graph_cache.save(cache, builder.hot(tree_id, token, tuple(found)),
                     builder.state(token) if changed else None, builder.new_blobs,
                     builder.store if changed and builder.compact else None)
    stats = BuildStats(len(tree.python), builder.read, STATS.parsed - parsed,
                       len(builder.stale), cache.status)
    return ImportGraph(builder.modules, LazyMap(builder.imports, builder.reverse.decode),
                       tuple(Escalation(*e) for e in found), tree.names, builder.reverse,
                       stats, tuple(STATS.notes[notes:]))


def pythonpath(root: Path, tree: str) -> tuple[str, ...]:
    """The folders pytest's ``pythonpath`` option puts on sys.path (relative to the root,
    inside the tree): like a conftest's ``sys.path.insert``, they serve every test's imports."""
    value = pytest_option(gitio.read_many_at(root, tree, list(PYTEST_CONFIG_FILES)), "pythonpath")
    items = value.split() if isinstance(value, str) else (
        [str(v) for v in value] if isinstance(value, list) else [])
    folders = {posixpath.normpath(item) for item in items}
    return tuple(sorted(f for f in folders if not f.startswith(("/", "../")) and f != ".."))


def _cached(hot: dict[str, Any]) -> ImportGraph:
    """The graph of a tree the cache already describes: no git, no parsing, no patching."""
    stats = BuildStats(len(hot["names"]), 0, 0, 0, "warm")
    reverse = Reverse(hot["nodes"], hot["flat"], hot["starts"])
    return ImportGraph(hot["modules"], None, tuple(Escalation(*e) for e in hot["reported"]),
                       hot["names"], reverse, stats)
