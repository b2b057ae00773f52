"""One incremental build of the import graph: a tree listing plus the cache, patched.

The cache holds the last build's assembled graph and the tree it came from. A build lists
the tree -- patching the cached listing with one ``git diff-tree`` against the cached tree,
or, without one, one ``git ls-tree`` -- finds the stale paths (new blob, new path, new name,
new winner of a name), reads and scans only blobs the cache has never seen (one ``git
cat-file --batch``), resolves the stale paths, and patches edges and reversed edges in
place. Edges that depend on which modules exist (star imports, pytest's sys.path for
tests) are recomputed for every path that has them whenever a module appears or
disappears.
"""

from __future__ import annotations

import os
import re
from array import array
from functools import cached_property
from typing import TYPE_CHECKING, Any

from agentgate.core.errors import GitError
from agentgate.git import gitio
from agentgate.graph.cache import COMPACT_AT
from agentgate.graph.expand import Expansions
from agentgate.graph.resolve import Roots, name_in, resolve, split_folders
from agentgate.graph.reverse import TYPECODE, Reverse
from agentgate.graph.scan import scan_sources
from agentgate.graph.types import Listing

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from agentgate.core.model import Change
    from agentgate.graph.cache import BlobRecord, Cache

SCHEMA = 1  # bump when resolution rules change: cached edges are then resolved again
# Only what the graph uses: Python files (any mode git gives a file) and symlinks.
_PY_RE = re.compile(r"(1[0-9]{5}) blob ([0-9a-f]+)\t([^\0]*?\.py)\0")
_LINK_RE = re.compile(r"120000 blob ([0-9a-f]+)\t([^\0]*)\0")
_SYMLINK = "120000"
_LINK = "L:"  # a symlink's record in the blob store: its target
Escalations = tuple[tuple[str, str], ...]


def list_tree(root: Path, tree: str, rooted: Roots, old: Mapping[str, Any]) -> Listing:
    """Every Python file and symlink under the roots in ``tree``. ``old`` is the last build
    (graph_cache.Cache.previous): when it was made under the same roots its listing is
    patched with the files that differ between its tree and this one; otherwise, or when
    its tree is gone from the object store, the whole tree is listed."""
    if old and old["context"] == context_of(rooted):
        try:
            changes = gitio.tree_changes(root, old["tree"], tree)
        except GitError:
            pass  # e.g. the cached tree was garbage-collected
        else:
            return _patched(old, changes, rooted)
    return _listed(root, tree, rooted)


def _patched(old: Mapping[str, Any], changes: Iterable[Change], rooted: Roots) -> Listing:
    python: dict[str, str] = dict(old["blobs"])
    names: dict[str, str] = dict(old["names"])
    links = {p: blob for p, (blob, _) in old["links"].items()}
    added = False
    for change in changes:
        path = change.path
        python.pop(path, None)
        names.pop(path, None)
        links.pop(path, None)
        if change.new_blob is None:
            continue
        if change.new_mode == _SYMLINK:
            if rooted.naming_root(path) is not None:
                links[path] = change.new_blob
        elif (change.new_mode.startswith("10") and path.endswith(".py")  # a file, no link
              and (name := name_in(rooted, path)) is not None):
            python[path], names[path], added = change.new_blob, name, True
    if added:  # ls-tree's order: by the path's bytes
        python = dict(sorted(python.items(), key=lambda item: os.fsencode(item[0])))
        names = {p: names[p] for p in python}
    return Listing(python, names, links)


def _listed(root: Path, tree: str, rooted: Roots) -> Listing:
    out = gitio.run(root, "ls-tree", "-r", "-z", "--full-tree", tree)
    # decoded as gitio decodes every path (os.fsdecode), so the paths of a diff, of a
    # patched listing and of this one are the same strings, and odd bytes round-trip
    text = os.fsdecode(out)
    links = {p: b for b, p in _LINK_RE.findall(text) if rooted.naming_root(p) is not None}
    python = {p: b for mode, b, p in _PY_RE.findall(text) if mode != _SYMLINK}
    names = {}
    for path in list(python):
        name = name_in(rooted, path)
        if name is None:
            del python[path]
        else:
            names[path] = name
    return Listing(python, names, links)


def read_blobs(root: Path, blobs: list[str]) -> dict[str, bytes]:
    """Contents of many blobs from one ``git cat-file --batch``; a missing one is an error
    (a graph with a silently absent file would select fewer tests)."""
    contents = gitio.cat_blobs(root, blobs)
    missing = [b for b in blobs if b not in contents]
    if missing:
        raise GitError(f"git cat-file: object {missing[0]} is missing; run git fsck and retry")
    return contents


def context_of(rooted: Roots) -> tuple[Any, ...]:
    return (SCHEMA, rooted.sources, rooted.tests, rooted.anywhere)


class Builder:
    """Patches the last build (or an empty graph) into the graph of ``tree``."""

    def __init__(self, root: Path, rooted: Roots, tree: Listing, cache: Cache,
                 old: Mapping[str, Any], pythonpath: tuple[str, ...] = ()) -> None:
        self.root, self.rooted, self.tree, self.cache = root, rooted, tree, cache
        self.pythonpath = pythonpath  # pytest's ``pythonpath`` folders (graph.build)
        same_roots = old.get("context") == context_of(rooted)
        same_names = same_roots and old["names"] == tree.names
        self.tops = old["tops"] if same_names else frozenset(
            name.partition(".")[0] for name in tree.names.values())
        self.fresh = not same_roots or old["tops"] != self.tops
        self.old: Mapping[str, Any] = _EMPTY if self.fresh else old
        self.imports: dict[str, bytes] = dict(self.old["imports"])
        self.reverse = Reverse(list(self.old["nodes"]), self.old["flat"],
                                      self.old["starts"])
        self.expand: dict[str, tuple[Any, ...]] = dict(self.old["expand"])
        self.escalations: dict[str, Escalations] = dict(self.old["escalations"])
        self.modules = old["modules"] if same_names and not self.fresh else _winners(tree.names)
        self.new_blobs: dict[str, BlobRecord] = {}
        self.read = 0
        self.links: dict[str, tuple[str, str]] = {}
        self.stale: list[str] = []
        self.removed: list[str] = []

    def run(self) -> None:
        self.stale, self.removed = self._stale()
        raw = self._raw_records(self.stale)
        resolved = {p: self._resolve(p, raw[self.tree.python[p]]) for p in self.stale}
        for path in self.removed:
            self.escalations.pop(path, None)
            self.expand.pop(path, None)
        names_moved = self.modules.keys() != self.old["modules"].keys()
        shared = self._shared(self.expand).union(self.pythonpath)
        before = self._shared(self.old["expand"]).union(self.old["pythonpath"])
        moved = names_moved or self.fresh or shared != before
        again = set(self.expand) if moved else set()
        expansions = Expansions(self.rooted, self.tree.names, self.modules, shared)
        changed: dict[str, frozenset[str]] = {}
        for path in sorted(again.union(self.stale)):
            name = self.tree.names[path]
            if self.modules.get(name) != path:
                continue  # shadowed by a package or an earlier path: Python never runs it
            edges = resolved[path] if path in resolved else self.expand[path][0]
            if path in self.expand:
                _, probes, stars, folders = self.expand[path]
                found = expansions.of(path, name, probes, stars, folders)
                changed[name] = frozenset(edges).union(found)
            else:
                changed[name] = frozenset(edges)
        gone = self.old["modules"].keys() - self.modules.keys()
        self._patch(changed, gone)

    def _shared(self, expand: Mapping[str, tuple[Any, ...]]) -> frozenset[str]:
        """Folders tests and conftests put on sys.path: the process's, so every test's (a
        conftest's insert stays for the tests collected after it)."""
        return frozenset(f for p, entry in expand.items() if self.rooted.is_test(p)
                         for f in entry[3])

    @property
    def changed(self) -> bool:
        """Whether the state differs from the last build's (the graph part is written
        whenever the tree does)."""
        return bool(self.fresh or self.stale or self.removed or self.new_blobs
                    or self.links != self.old["links"]
                    or self.pythonpath != self.old["pythonpath"])

    def _stale(self) -> tuple[list[str], list[str]]:
        """Paths to resolve again, and paths gone since the cached build."""
        old_blobs, old_names = self.old["blobs"], self.old["names"]
        # set operations on dict views run in C: 20,000 paths in a few milliseconds
        stale = {path for path, _ in self.tree.python.items() - old_blobs.items()}
        if self.tree.names != old_names:
            stale.update(path for path, _ in self.tree.names.items() - old_names.items())
        old_modules = self.old["modules"]
        if self.modules is not old_modules:
            stale.update(p for n, p in self.modules.items() if old_modules.get(n) != p)
        return sorted(stale), sorted(old_blobs.keys() - self.tree.python.keys())
    def _raw_records(self, paths: list[str]) -> dict[str, BlobRecord]:
        """Raw records of the blobs these paths hold (and the symlinks' targets): from the
        cache's blob store, else read from git and scanned."""
        old_links = self.old["links"]
        links = {p: b for p, b in self.tree.links.items() if old_links.get(p, ("",))[0] != b}
        sources = {self.tree.python[p] for p in paths}
        wanted = sources | {_LINK + b for b in links.values()}
        # the store is decoded only when it holds one of them: a new commit's blobs are new
        known = self.cache.blobs() if self._store_may_have(wanted) else {}
        have = {k: r for k in wanted if (r := known.get(k)) is not None and _record_ok(r)}
        missing = sorted(wanted - have.keys())
        if missing:
            self.read = len(missing)
            contents = read_blobs(self.root, [key.removeprefix(_LINK) for key in missing])
            scans = scan_sources({b: contents[b] for b in missing if b in sources})
            for blob, scan in scans.items():
                have[blob] = (scan.imports, scan.escalations)
            for key in missing:
                if key.startswith(_LINK):
                    have[key] = ((os.fsdecode(contents[key.removeprefix(_LINK)]),), ())
            self.new_blobs = {key: have[key] for key in missing}
        self.links = {
            p: (b, have[_LINK + b][0][0] if p in links else old_links[p][1])
            for p, b in self.tree.links.items()
        }
        return have

    def _store_may_have(self, wanted: set[str]) -> bool:
        if not wanted or not self.cache.segments:
            return False
        stored = self.old["stored"] or None
        return stored is None or any(f"\n{key}\n" in stored for key in wanted)

    def _resolve(self, path: str, raw: BlobRecord) -> tuple[str, ...]:
        imports, escalations = raw
        name = self.tree.names[path]
        records, folders, files = split_folders(path, imports)
        test = self.rooted.is_test(path) or bool(folders)
        done = resolve(name, path.endswith("__init__.py"), records, self.tops, test=test)
        problems = tuple(
            ("unresolved-import", f"relative import {_shown(p)} goes above the top-level package")
            for p in done.problems
        ) + self._unloadable(files)
        edges = done.edges + tuple(self.tree.names[f] for f in files if f in self.tree.names)
        if escalations or problems:
            self.escalations[path] = escalations + problems
        else:
            self.escalations.pop(path, None)
        if done.probes or done.stars or folders:
            self.expand[path] = (edges, done.probes, done.stars, folders)
        else:
            self.expand.pop(path, None)
        return edges

    def _unloadable(self, files: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """A file loaded by path that is no module of the tree (absent when scanned): what
        the loader runs is unknown, so it escalates as before (issue 12)."""
        return tuple(("dynamic-import", f"loads {f!r} by path, which is not a module of the "
                      "tree") for f in files if f not in self.tree.names)

    def _patch(self, changed: Mapping[str, frozenset[str]], gone: Iterable[str]) -> None:
        """Apply new edge sets to imports and to the reversed edges, in place."""
        if not self.imports:  # a fresh build: no old edges to take away
            self._fill(changed)
            return
        reverse = self.reverse
        adds: dict[str, set[str]] = {}
        drops: dict[str, set[str]] = {}
        for name in gone:
            for target in reverse.decode(self.imports.pop(name, None)):
                drops.setdefault(target, set()).add(name)
        for name, edges in changed.items():
            held = self.imports.get(name)
            old = reverse.decode(held)
            if held is not None and old == edges:
                continue
            for target in old - edges:
                drops.setdefault(target, set()).add(name)
            for target in edges - old:
                adds.setdefault(target, set()).add(name)
            self.imports[name] = reverse.encode(edges)
        for target in adds.keys() | drops.keys():
            now = set(reverse.get(target, ())) - drops.get(target, set())
            reverse.put(target, now | adds.get(target, set()))
        if reverse.unused(self.imports) > len(reverse.nodes) // 2 + 1000:
            # mostly names of deleted modules: renumbered, and the forward edges packed again
            self.reverse = reverse.compacted()
            self.imports = {n: self.reverse.encode(reverse.decode(b))
                            for n, b in self.imports.items()}

    def _fill(self, edges_of: Mapping[str, frozenset[str]]) -> None:
        reverse: dict[str, list[str]] = {}
        for name in sorted(edges_of):
            for target in edges_of[name]:
                reverse.setdefault(target, []).append(name)
        self.reverse = Reverse.from_dict(reverse)
        self.imports = {name: self.reverse.encode(edges) for name, edges in edges_of.items()}

    def hot(self, tree: str, token: str, escalations: tuple[tuple[str, str, str], ...]
            ) -> dict[str, Any]:
        """The graph part of the cache for ``tree``; ``token`` names its state."""
        reverse = self.reverse
        flat, starts = reverse.pack()
        return {
            "context": context_of(self.rooted),
            "tree": tree,
            "token": token,
            "tops": self.tops,
            "names": self.tree.names,
            "modules": self.modules,
            "nodes": reverse.nodes,
            "flat": flat,
            "starts": starts,
            "reported": escalations,
        }

    def state(self, token: str) -> dict[str, Any]:
        return {
            "token": token,
            "blobs": self.tree.python,
            "imports": self.imports,
            "expand": self.expand,
            "escalations": self.escalations,
            "links": self.links,
            "pythonpath": self.pythonpath,
            "stored": _ids(self.store) if self.compact else self._stored(),
        }

    @property
    def compact(self) -> bool:
        """Whether to rewrite the blob store as one segment: after a fresh build, or once
        enough small segments have piled up."""
        return self.fresh or len(self.cache.segments) >= COMPACT_AT

    def _stored(self) -> str:
        return (self.old["stored"] or "\n") + _ids(self.new_blobs)[1:]

    @cached_property
    def store(self) -> dict[str, BlobRecord]:
        """The blob store to save: this tree's blobs, plus older ones up to as many again
        (a plan may build base and head trees alternately: both should stay warm)."""
        live = set(self.tree.python.values()) | {_LINK + b for b, _ in self.links.values()}
        old = self.cache.blobs()
        kept = {b: r for b, r in old.items() if b in live}
        kept.update(self.new_blobs)
        limit = 2 * len(live) + 1000
        for blob, record in old.items():
            if len(kept) >= limit:
                break
            kept.setdefault(blob, record)
        return kept


# The last build when there is none: what a fresh build patches (into everything).
_EMPTY: Mapping[str, Any] = {
    "blobs": {}, "names": {}, "modules": {}, "imports": {}, "nodes": [], "flat": b"",
    "starts": bytes(array(TYPECODE, [0])),
    "expand": {}, "escalations": {}, "links": {}, "pythonpath": (), "stored": "",
}



def _ids(blobs: Iterable[str]) -> str:
    """Blob ids as one newline-delimited string: 20,000 of them load as one object and a
    few lookups (``"\\n<id>\\n" in ids``) cost less than hashing them all into a set."""
    return "\n" + "".join(f"{blob}\n" for blob in blobs)


def _record_ok(record: object) -> bool:
    """A blob record's shape, checked when used: the store is checksummed, not trusted."""
    return (
        type(record) is tuple
        and len(record) == 2
        and all(type(part) is tuple for part in record)
        and all(type(x) is str for x in record[0])
        and all(type(e) is tuple and len(e) == 2 for e in record[1])
    )


def _shown(raw: str) -> str:
    head, _, names = raw.partition(":")
    return f"'from {head} import {names}'" if names else repr(head)


def _winners(names: Mapping[str, str]) -> dict[str, str]:
    """module -> path; on a clash a package beats a module (as Python's finder does), then
    the earlier path."""
    modules: dict[str, str] = {}
    for path, name in names.items():
        held = modules.get(name)
        if held is None or _beats(path, held):
            modules[name] = path
    return modules


def _beats(path: str, held: str) -> bool:
    package, held_package = path.endswith("__init__.py"), held.endswith("__init__.py")
    return (package and not held_package) or (package == held_package and path < held)
