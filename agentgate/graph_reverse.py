"""The import graph's reversed edges: who imports each name, as small ints.

A plan walks the reversed edges from the changed modules to everything that can reach them,
and on a monorepo that is most of the graph (issue 3: 18,000 of 47,000 names on the
20,000-module bench). Held as one table of names and, per name, a tuple of the ids of its
importers, the whole thing is two flat lists: they marshal into the cache in a few
milliseconds, load without building a string per edge, and the walk compares ints.

A row is sorted by importer *name*, never by id, so a patched graph walks -- and so names
chains -- exactly as a graph built from nothing does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

_FEW = 32  # seeds looked up by scanning the table rather than indexing it (see ``_ids``)


class Reverse(Mapping[str, tuple[str, ...]]):
    """name -> the modules importing it, sorted; a name nothing imports is absent."""

    def __init__(self, nodes: list[str], rows: list[tuple[int, ...]]) -> None:
        if len(nodes) != len(rows):
            raise ValueError("a row per name")
        self.nodes, self.rows = nodes, rows
        self._index: dict[str, int] | None = None

    @classmethod
    def from_dict(cls, importers: Mapping[str, Iterable[str]]) -> Reverse:
        names = set(importers)
        for found in importers.values():
            names.update(found)
        nodes = sorted(names)
        index = {name: i for i, name in enumerate(nodes)}
        # ids follow name order here, so sorting ids sorts names
        rows = [tuple(sorted(index[m] for m in importers.get(n, ()))) for n in nodes]
        reverse = cls(nodes, rows)
        reverse._index = index
        return reverse

    # --- Mapping ---------------------------------------------------------------------------

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {name: i for i, name in enumerate(self.nodes)}
        return self._index

    def __getitem__(self, name: str) -> tuple[str, ...]:
        row = self.rows[self.index[name]]
        if not row:
            raise KeyError(name)
        nodes = self.nodes
        return tuple(nodes[i] for i in row)

    def __contains__(self, name: object) -> bool:
        i = self.index.get(name) if isinstance(name, str) else None
        return i is not None and bool(self.rows[i])

    def __iter__(self) -> Iterator[str]:
        return (name for name, row in zip(self.nodes, self.rows, strict=True) if row)

    def __len__(self) -> int:
        return sum(1 for row in self.rows if row)

    # --- the walk --------------------------------------------------------------------------

    def closure(self, seeds: Iterable[str]) -> dict[str, str | None]:
        """Every name that can reach a seed (seeds mapped to None, the others to their next
        hop toward the nearest seed), in breadth-first order: ``ImportGraph``'s closure."""
        closure: dict[str, str | None] = dict.fromkeys(seeds)
        nodes, rows = self.nodes, self.rows
        hop = [-2] * len(nodes)  # -2 unseen, -1 a seed, else the id of the next hop
        queue = self._ids(closure)
        for i in queue:
            hop[i] = -1
        start = len(queue)
        for target in queue:  # grows while it is walked: a breadth-first queue
            for importer in rows[target]:
                if hop[importer] == -2:
                    hop[importer] = target
                    queue.append(importer)
        for i in queue[start:]:
            closure[nodes[i]] = nodes[hop[i]]
        return closure

    def _ids(self, names: Iterable[str]) -> list[int]:
        """Ids of the names in the table, in order. A few seeds (a typical patch) are found
        by scanning the table in C; many are worth building the index for."""
        names = list(names)
        if self._index is None and len(names) <= _FEW:
            ids = []
            for name in names:
                try:
                    ids.append(self.nodes.index(name))
                except ValueError:
                    continue  # nothing imports it: a seed only
            return ids
        index = self.index
        return [i for name in names if (i := index.get(name)) is not None]

    # --- patching (graph_build) ------------------------------------------------------------

    def put(self, name: str, importers: Iterable[str]) -> None:
        """Set the importers of ``name`` (none: it drops out of the mapping)."""
        ids = sorted((self._id(m) for m in importers), key=self.nodes.__getitem__)
        if ids or name in self.index:
            self.rows[self._id(name)] = tuple(ids)

    def _id(self, name: str) -> int:
        index = self.index
        i = index.get(name)
        if i is None:
            i = index[name] = len(self.nodes)
            self.nodes.append(name)
            self.rows.append(())
        return i

    def compacted(self) -> Reverse:
        """The same mapping without names no row needs (deleted modules accumulate as empty
        rows while a cache is patched through a history)."""
        return Reverse.from_dict({name: self[name] for name in self})
