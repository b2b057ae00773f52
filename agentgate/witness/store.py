"""The witness store: one sqlite file under the git dir, one row per recorded revision.

Each witness is kept as one zlib-compressed JSON document with every path and unit
interned once, so a suite of thousands of tests costs a few hundred kilobytes. Export
writes the same schema to a single file (CI records on main and publishes it; developers
import it). A store whose schema this agentgate does not read is refused, never deleted
or overwritten (coverage.py raises on a schema mismatch; testmon silently drops its data):
a cache may be rebuilt, a witness is evidence.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgate.core.errors import AgentgateError
from agentgate.git import gitio
from agentgate.witness import presence
from agentgate.witness.depgraph import Node, TestEntry, Witness

SCHEMA = 1
FORMAT = "agentgate-witness"
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS witness (
    sha TEXT PRIMARY KEY,
    recorded_at REAL NOT NULL,
    stored_at REAL NOT NULL,
    tests INTEGER NOT NULL,
    incomplete INTEGER NOT NULL,
    python TEXT NOT NULL,
    data BLOB NOT NULL
);
"""


class StoreError(AgentgateError):
    """The store exists but this agentgate cannot use it; it is left as it is."""


@dataclass(frozen=True)
class Entry:
    sha: str
    recorded_at: float
    stored_at: float
    tests: int
    incomplete: int
    python: str


def default_path(root: Path) -> Path:
    return presence.store_path(root)


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_repo(cls, root: Path) -> Store:
        return cls(default_path(root))

    def exists(self) -> bool:
        return self.path.is_file()

    @contextmanager
    def _connect(self, *, create: bool) -> Iterator[sqlite3.Connection]:
        if not create and not self.exists():
            raise StoreError(f"no witness store at {self.path}; run agentgate witness record")
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            con = sqlite3.connect(self.path)
        except sqlite3.Error as exc:
            raise StoreError(f"witness store {self.path} cannot be opened ({exc})") from None
        try:
            self._check_schema(con, create=create)
            with con:
                yield con
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"witness store {self.path} is not readable ({exc}); it was left untouched: "
                "move it away and record again"
            ) from None
        finally:
            con.close()

    def _check_schema(self, con: sqlite3.Connection, *, create: bool) -> None:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and create:
            with con:
                con.executescript(_TABLES)
                con.execute("INSERT INTO meta VALUES ('schema', ?), ('format', ?)",
                            (str(SCHEMA), FORMAT))
            return
        row = con.execute("SELECT value FROM meta WHERE key='schema'").fetchone() if (
            "meta" in tables) else None
        if row is None or row[0] != str(SCHEMA):
            found = "no agentgate schema" if row is None else f"schema {row[0]}"
            raise StoreError(
                f"witness store {self.path} has {found}; this agentgate reads schema {SCHEMA}. "
                "It was left untouched: move it away (or read it with the agentgate that "
                "wrote it) and record again"
            )

    # --- writing -------------------------------------------------------------------------

    def save(self, witness: Witness) -> bool:
        """Store a witness; True when it replaced one recorded for the same revision."""
        with self._connect(create=True) as con:
            replaced = con.execute(
                "SELECT 1 FROM witness WHERE sha=?", (witness.sha,)
            ).fetchone() is not None
            con.execute(
                "INSERT OR REPLACE INTO witness VALUES (?, ?, ?, ?, ?, ?, ?)",
                (witness.sha, witness.recorded_at, time.time(), len(witness.tests),
                 sum(1 for t in witness.tests.values() if not t.complete), witness.python,
                 zlib.compress(json.dumps(encode(witness)).encode("utf-8"), 6)),
            )
        return replaced

    def copy_to(self, other: Store, shas: list[str], *, replace: bool) -> tuple[int, int]:
        """Copy witnesses into another store: (copied, kept because already there)."""
        copied = kept = 0
        with self._connect(create=False) as src, other._connect(create=True) as dst:
            for sha in shas:
                row = src.execute("SELECT * FROM witness WHERE sha=?", (sha,)).fetchone()
                there = dst.execute("SELECT 1 FROM witness WHERE sha=?", (sha,)).fetchone()
                if row is None:
                    continue
                if there and not replace:
                    kept += 1
                    continue
                dst.execute("INSERT OR REPLACE INTO witness VALUES (?, ?, ?, ?, ?, ?, ?)", row)
                copied += 1
        return copied, kept

    def delete(self, shas: list[str]) -> int:
        """Remove the witnesses of ``shas`` (``gc``, or pruning by count); how many went."""
        if not shas or not self.exists():
            return 0
        with self._connect(create=False) as con:
            return sum(con.execute("DELETE FROM witness WHERE sha=?", (sha,)).rowcount
                       for sha in shas)

    def prune(self, keep: int) -> list[str]:
        """Keep the ``keep`` newest recordings (config keep_witnesses; never fewer than one:
        a witness is evidence); the removed shas."""
        beyond = [e.sha for e in self.entries()[max(keep, 1):]]
        self.delete(beyond)
        return beyond

    # --- reading -------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        """Every stored witness, newest recording first."""
        if not self.exists():
            return []
        with self._connect(create=False) as con:
            rows = con.execute(
                "SELECT sha, recorded_at, stored_at, tests, incomplete, python FROM witness "
                "ORDER BY recorded_at DESC"
            ).fetchall()
        return [Entry(*row) for row in rows]

    def sizes(self) -> dict[str, int]:
        """Each stored witness's size in bytes (what ``gc`` frees by removing it)."""
        if not self.exists():
            return {}
        with self._connect(create=False) as con:
            rows = con.execute("SELECT sha, length(data) FROM witness").fetchall()
        return {sha: int(size) for sha, size in rows}

    def load(self, sha: str) -> Witness | None:
        with self._connect(create=False) as con:
            row = con.execute("SELECT data FROM witness WHERE sha=?", (sha,)).fetchone()
        if row is None:
            return None
        try:
            return decode(json.loads(zlib.decompress(row[0])))
        except (zlib.error, ValueError, KeyError, TypeError, IndexError) as exc:
            raise StoreError(
                f"witness for {sha[:12]} in {self.path} is damaged ({exc}); it was left "
                "untouched: record again"
            ) from None


def newest_usable(root: Path, store: Store, base: str) -> tuple[Entry | None, str]:
    """The witness recorded at the ancestor of ``base`` closest to it, and a note."""
    best: tuple[int, Entry] | None = None
    for entry in store.entries():
        if not gitio.ref_exists(root, entry.sha) or not gitio.is_ancestor(root, entry.sha, base):
            continue
        distance = commits_between(root, entry.sha, base)
        if best is None or distance < best[0]:
            best = (distance, entry)
    if best is None:
        return None, f"no witness recorded at an ancestor of {base[:12]}"
    return best[1], f"witness {best[1].sha[:12]}, {best[0]} commit(s) before the base"


def commits_between(root: Path, old: str, new: str) -> int:
    out = gitio.run(root, "rev-list", "--count", f"{old}..{new}")
    return int(out.strip() or b"0")


# --- encoding ------------------------------------------------------------------------------


class _Interner:
    def __init__(self) -> None:
        self.paths: dict[str, int] = {}
        self.units: dict[tuple[int, str], int] = {}

    def path(self, path: str) -> int:
        return self.paths.setdefault(path, len(self.paths))

    def unit_ids(self, units: frozenset[tuple[str, str]]) -> list[int]:
        ids = (self.units.setdefault((self.path(p), n), len(self.units)) for p, n in units)
        return sorted(ids)


def encode(witness: Witness) -> dict[str, Any]:
    intern = _Interner()
    keys = {key: i for i, key in enumerate(witness.nodes)}
    nodes = [
        [key, intern.unit_ids(n.units), sorted(keys[d] for d in n.deps if d in keys),
         [list(f) for f in n.flags]]
        for key, n in witness.nodes.items()
    ]
    tests = [
        [t.nodeid, intern.path(t.file), intern.unit_ids(t.units),
         sorted(keys[d] for d in t.deps if d in keys), [list(f) for f in t.flags],
         list(t.fixtures), t.outcome, round(t.duration, 4), t.ambient, t.incomplete]
        for t in witness.tests.values()
    ]
    return {
        "schema": SCHEMA, "sha": witness.sha, "recorded_at": witness.recorded_at,
        "python": witness.python, "env": witness.env, "ambient": witness.ambient,
        "paths": list(intern.paths), "units": [[p, n] for (p, n) in intern.units],
        "nodes": nodes, "tests": tests, "collected": sorted(witness.collected),
        "collect_errors": sorted(witness.collect_errors), "info": witness.info,
    }


def decode(data: dict[str, Any]) -> Witness:
    paths: list[str] = data["paths"]
    units = [(paths[p], n) for p, n in data["units"]]
    keys = [n[0] for n in data["nodes"]]

    def unit_set(ids: list[int]) -> frozenset[tuple[str, str]]:
        return frozenset(units[i] for i in ids)

    nodes = {
        key: Node(key, unit_set(u), frozenset(keys[d] for d in deps), _flags(flags))
        for key, u, deps, flags in data["nodes"]
    }
    tests = {}
    for nodeid, file, u, deps, flags, fixtures, outcome, duration, ambient, why in data["tests"]:
        tests[nodeid] = TestEntry(
            nodeid=nodeid, file=paths[file], units=unit_set(u),
            deps=frozenset(keys[d] for d in deps), flags=_flags(flags), fixtures=tuple(fixtures),
            outcome=outcome, duration=float(duration), ambient=ambient, incomplete=why,
        )
    return Witness(
        sha=data["sha"], recorded_at=float(data["recorded_at"]), python=data["python"],
        env=data["env"], ambient=dict(data["ambient"]), nodes=nodes, tests=tests,
        collected=frozenset(data["collected"]), collect_errors=frozenset(data["collect_errors"]),
        info=dict(data.get("info", {})),
    )


def _flags(flags: list[list[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((str(a), str(b)) for a, b in flags)
