"""The import graph's reversed edges: who imports each name, as small ints.

A plan walks the reversed edges from the changed modules to everything that can reach them,
and on a monorepo that is most of the graph (issue 3: 18,000 of 47,000 names on the
20,000-module bench). Held as one table of names and the ids of each name's importers, all
rows packed in one array of unsigned ints with an array of where each row starts, the
cache stores two byte strings: they load without building an object per edge, and the walk
reads ints straight out of them. A build that patches the graph keeps the packed rows and
records only the rows it changes; packing them again copies the untouched spans whole.

A row is sorted by importer *name*, never by id, so a patched graph walks -- and so names
chains -- exactly as a graph built from nothing does.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import pairwise
from typing import Final

TYPECODE: Final = "I"  # unsigned int: 4 bytes on every platform CPython runs on; the cache's
# header names the item size and byte order all the same
_SIZE = array(TYPECODE).itemsize
_FEW = 32  # seeds looked up by scanning the table rather than indexing it (see ``_ids``)


class Reverse(Mapping[str, tuple[str, ...]]):
    """name -> the modules importing it, sorted; a name nothing imports is absent."""

    def __init__(self, nodes: list[str], flat: bytes, starts: bytes) -> None:
        """From ``pack``'s bytes; ValueError when they do not fit the table of names."""
        self.nodes = nodes
        self._data = flat
        self._flat, self._starts = _ints(flat), _ints(starts)
        if not fits(len(nodes), self._flat, self._starts):
            raise ValueError("rows do not fit the name table")
        self._packed = len(nodes)  # names whose rows the packed arrays hold
        self._over: dict[int, tuple[int, ...]] = {}  # rows set since: by id
        self._index: dict[str, int] | None = None

    @classmethod
    def from_dict(cls, importers: Mapping[str, Iterable[str]]) -> Reverse:
        names = set(importers)
        for found in importers.values():
            names.update(found)
        nodes = sorted(names)
        index = {name: i for i, name in enumerate(nodes)}
        flat, starts = array(TYPECODE), array(TYPECODE, [0])
        for name in nodes:
            # ids follow name order here, so sorting ids sorts names
            flat.extend(sorted(index[m] for m in importers.get(name, ())))
            starts.append(len(flat))
        reverse = cls(nodes, flat.tobytes(), starts.tobytes())
        reverse._index = index
        return reverse

    def pack(self) -> tuple[bytes, bytes]:
        """Every row in one array of ids and the offsets where each starts."""
        if not self._over and self._packed == len(self.nodes):
            return self._data, bytes(self._starts)
        old_starts, data = self._starts, self._data
        flat, starts = array(TYPECODE), array(TYPECODE, [0])
        done = 0  # rows [0, done) are in the new arrays
        for i in sorted(self._over):
            if i > done and done < self._packed:  # an untouched span: copied whole
                end = min(i, self._packed)
                shift = len(flat) - old_starts[done]
                flat.frombytes(data[old_starts[done] * _SIZE:old_starts[end] * _SIZE])
                starts.extend([s + shift for s in old_starts[done + 1:end + 1]])
                done = end
            starts.extend([len(flat)] * (i - done))  # new names without importers
            flat.extend(self._over[i])
            starts.append(len(flat))
            done = i + 1
        if done < self._packed:
            shift = len(flat) - old_starts[done]
            flat.frombytes(data[old_starts[done] * _SIZE:])
            starts.extend([s + shift for s in old_starts[done + 1:]])
            done = self._packed
        starts.extend([len(flat)] * (len(self.nodes) - done))
        return flat.tobytes(), starts.tobytes()

    @property
    def rows(self) -> list[tuple[int, ...]]:
        """Per name, its importers' ids."""
        return [tuple(self._row(i)) for i in range(len(self.nodes))]

    def _row(self, i: int) -> Sequence[int]:
        row = self._over.get(i) if self._over else None
        if row is not None:
            return row
        if i >= self._packed:
            return ()
        return self._flat[self._starts[i]:self._starts[i + 1]]

    # --- Mapping ---------------------------------------------------------------------------

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {name: i for i, name in enumerate(self.nodes)}
        return self._index

    def __getitem__(self, name: str) -> tuple[str, ...]:
        row = self._row(self.index[name])
        if not row:
            raise KeyError(name)
        nodes = self.nodes
        return tuple(nodes[i] for i in row)

    def __contains__(self, name: object) -> bool:
        i = self.index.get(name) if isinstance(name, str) else None
        return i is not None and bool(self._row(i))

    def __iter__(self) -> Iterator[str]:
        return (name for i, name in enumerate(self.nodes) if self._row(i))

    def __len__(self) -> int:
        return len(self.nodes) - self.empty()

    def empty(self) -> int:
        """How many names of the table nothing imports."""
        return len(self._empty_ids())

    def _empty_ids(self) -> list[int]:
        starts, packed, over = self._starts, self._packed, self._over
        empty = [i for i, (a, b) in enumerate(pairwise(starts)) if a == b and i not in over]
        empty += [i for i in range(packed, len(self.nodes)) if i not in over]  # added since
        empty += [i for i, row in over.items() if not row]
        return empty

    # --- the walk --------------------------------------------------------------------------

    def closure(self, seeds: Iterable[str]) -> dict[str, str | None]:
        """Every name that can reach a seed (seeds mapped to None, the others to their next
        hop toward the nearest seed), in breadth-first order: ``ImportGraph``'s closure."""
        closure: dict[str, str | None] = dict.fromkeys(seeds)
        nodes = self.nodes
        hop = [-2] * len(nodes)  # -2 unseen, -1 a seed, else the id of the next hop
        queue = self._ids(closure)
        for i in queue:
            hop[i] = -1
        start = len(queue)
        # The queue grows while it is walked: breadth first. The packed rows are sliced
        # inline (no call per name) unless a patch has set some rows.
        if not self._over and self._packed == len(nodes):
            flat, starts = self._flat, self._starts
            for target in queue:
                for importer in flat[starts[target]:starts[target + 1]]:
                    if hop[importer] == -2:
                        hop[importer] = target
                        queue.append(importer)
        else:
            row = self._row
            for target in queue:
                for importer in row(target):
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

    # --- patching (graph.builder) ------------------------------------------------------------

    def put(self, name: str, importers: Iterable[str]) -> None:
        """Set the importers of ``name`` (none: it drops out of the mapping)."""
        ids = sorted((self.id_of(m) for m in importers), key=self.nodes.__getitem__)
        if ids or name in self.index:
            self._over[self.id_of(name)] = tuple(ids)

    def id_of(self, name: str) -> int:
        """The id of ``name`` in the table, added (with no importers) if it is new."""
        index = self.index
        i = index.get(name)
        if i is None:
            i = index[name] = len(self.nodes)
            self.nodes.append(name)
        return i

    def encode(self, names: Iterable[str]) -> bytes:
        """A set of names as packed ids of this table (the builder's forward edges)."""
        return array(TYPECODE, sorted(self.id_of(name) for name in names)).tobytes()

    def decode(self, data: bytes | None) -> frozenset[str]:
        """``encode``'s names back (None: no names)."""
        nodes = self.nodes
        return frozenset(nodes[i] for i in _ints(data)) if data else frozenset()

    def unused(self, edges: Mapping[str, bytes]) -> int:
        """How many names ``compacted`` would drop: nothing imports them and, by ``edges``
        (the forward edges, ``encode``'s), they import nothing. Deleted modules leave such
        names behind while a cache is patched through a history; a test module, imported by
        nothing, is not one of them."""
        nodes = self.nodes
        return sum(1 for i in self._empty_ids() if not edges.get(nodes[i]))

    def compacted(self) -> Reverse:
        """The same mapping without the names no row needs."""
        return Reverse.from_dict({name: self[name] for name in self})


def _ints(data: bytes) -> memoryview:
    if len(data) % _SIZE:
        raise ValueError("not an array of ids")
    return memoryview(data).cast(TYPECODE)


def fits(count: int, flat: Sequence[int], starts: Sequence[int]) -> bool:
    """Whether packed rows can belong to a table of ``count`` names (the cache's checksum
    vouches for the ids themselves)."""
    return len(starts) == count + 1 and starts[0] == 0 and starts[-1] == len(flat)


def packed_fits(count: int, flat: bytes, starts: bytes) -> bool:
    try:
        return fits(count, _ints(flat), _ints(starts))
    except ValueError:
        return False
