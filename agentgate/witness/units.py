"""Which blocks each context ran: the tracer's record mapped onto each file's blocks.

Python 3.12+ records code objects per context (``tracer.Tracer``); before, coverage's lines
per context, kept in memory (``lines.LineTracer``) or, when coverage's internals differ, in
coverage's own data. Each file is parsed once (``parsed``), for its blocks here and for its
imports in ``harvest``.

Stdlib only, Python 3.9 syntax: it runs in the project's interpreter.
"""

from __future__ import annotations

import ast
import dis
import hashlib
import json
import os
import re
import sqlite3
from collections import defaultdict
from types import CodeType
from typing import TYPE_CHECKING, Any, Protocol

from agentgate.witness import blocks

if TYPE_CHECKING:
    from agentgate.witness.lines import LineTracer
    from agentgate.witness.tracer import Tracer

Units = dict[str, dict[str, list[str]]]  # context -> repository path -> block names


class Traced(Protocol):
    """What the mapping reads from the recorder (``recorder.Recorder``)."""

    tracer: Tracer | None  # Python 3.12+: code objects per context
    lines: LineTracer | None  # before: coverage's lines per context

    def rel(self, path: object) -> str | None: ...


# Installed code inside the tree (a virtualenv in the repository) is not the repository's.
OMIT = ("/site-packages/", "/dist-packages/", "/.venv/", "/.tox/")


def by_context(rec: Traced) -> Units:
    if rec.tracer is not None:
        return _units_from_codes(rec, rec.tracer)
    assert rec.lines is not None
    if rec.lines.by_context is not None:
        return _units_from_sets(rec, rec.lines)
    return _units_from_lines(rec, rec.lines.cov.get_data())


def _units_from_sets(rec: Traced, tracer: LineTracer) -> Units:
    """The lines each context ran (kept in memory, ``lines.LineTracer``), mapped onto the
    blocks of each file through a table of each file's lines."""
    assert tracer.by_context is not None
    tables: dict[str, tuple[str, _LineBlocks] | None] = {}
    found: dict[str, dict[str, list[str]]] = {}
    for ctx, per_file in tracer.by_context.items():
        names: dict[str, set[str]] = defaultdict(set)
        for path, lines in per_file.items():
            if path not in tables:
                name = tracer.file_name(path)  # as coverage's data would name it
                rel = rec.rel(name)
                tables[path] = None if rel is None else (rel, _LineBlocks(name))
            where = tables[path]
            if where is not None and lines:
                names[where[0]].update(where[1].of(lines))
        if names:
            found[ctx] = {f: sorted(n) for f, n in names.items()}
    return found


class _LineBlocks:
    """The block of each line of one file, from a table indexed by line number up to the
    end of its last block (every line after it is module code)."""

    def __init__(self, path: str) -> None:
        self.layout = layout_of(path)
        last = self.layout.blocks[-1].end if self.layout and self.layout.blocks else 0
        self.table = [self.layout.block_at(n) for n in range(last + 1)] if self.layout else []

    def of(self, lines: set[int]) -> set[str]:
        if self.layout is None:
            return {blocks.MODULE}
        if min(lines) >= 0 and max(lines) < len(self.table):
            return set(map(self.table.__getitem__, lines))
        return {self.layout.block_at(n) for n in lines}


def _units_from_lines(rec: Traced, data: Any) -> Units:
    """coverage's lines per context (its ``switch_context`` kept them), onto blocks."""
    fast = _units_from_bits(rec, data)
    return fast if fast is not None else _units_from_contexts(rec, data)


# Every (file, context, lines) row of coverage's data in one query, where coverage's public
# API asks once per file and decodes every row's lines bit by bit: a third of the harvest's
# time on Jinja2 (issue 12 item 6, bench/README.md). Read through coverage's ``_connect``
# only where it exists and the data holds lines; else the public path.
_LINE_BITS = ("SELECT file.path, context.context, line_bits.numbits FROM line_bits "
              "JOIN file ON file.id = line_bits.file_id "
              "JOIN context ON context.id = line_bits.context_id")
_BITS = tuple(tuple(b for b in range(8) if byte >> b & 1) for byte in range(256))


def _units_from_bits(rec: Traced, data: Any) -> Units | None:
    connect = getattr(data, "_connect", None)
    if connect is None or data.has_arcs():
        return None
    from coverage.exceptions import CoverageException

    try:
        with connect() as con, con.execute(_LINE_BITS) as cur:
            rows = list(cur)
    except (CoverageException, sqlite3.Error, AttributeError, TypeError):
        return None  # another coverage's schema: the public path answers the same
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    files: dict[str, _ByteBlocks | None] = {}
    for path, ctx, numbits in rows:
        if path not in files:
            rel = rec.rel(path)
            files[path] = None if rel is None else _ByteBlocks(rel, layout_of(path))
        where = files[path]
        names = where.of(numbits) if where is not None else set()
        if where is not None and names:
            found[ctx or "c"][where.rel].update(names)
    return {ctx: {f: sorted(n) for f, n in fs.items()} for ctx, fs in found.items()}


class _ByteBlocks:
    """The blocks of one file's lines, eight lines (one numbits byte) at a time: the tests
    that ran the same function share its bytes, so each (offset, byte) maps once."""

    def __init__(self, rel: str, layout: blocks.FileBlocks | None) -> None:
        self.rel = rel
        self.layout = layout
        self.cache: dict[tuple[int, int], tuple[str, ...]] = {}

    def of(self, numbits: bytes) -> set[str]:
        """The blocks holding the lines of a coverage numbits value (bit n: line n)."""
        names: set[str] = set()
        for i, byte in enumerate(numbits):
            if byte:
                found = self.cache.get((i, byte))
                if found is None:
                    found = self.cache[(i, byte)] = self._byte(i, byte)
                names.update(found)
        return names

    def _byte(self, i: int, byte: int) -> tuple[str, ...]:
        if self.layout is None:
            return (blocks.MODULE,)
        return tuple({self.layout.block_at(i * 8 + b) for b in _BITS[byte]})


def _units_from_contexts(rec: Traced, data: Any) -> Units:
    """The same through coverage's public API: one query per measured file."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for measured in data.measured_files():
        rel = rec.rel(measured)
        if rel is None:
            continue
        layout = layout_of(measured)
        for line, contexts in data.contexts_by_lineno(measured).items():
            name = layout.block_at(line) if layout else blocks.MODULE
            for ctx in contexts:
                found[ctx or "c"][rel].add(name)
    return {ctx: {f: sorted(n) for f, n in files.items()} for ctx, files in found.items()}


def _units_from_codes(rec: Traced, tracer: Tracer) -> Units:
    """The blocks each context entered, from the code objects the tracer saw there."""
    units: dict[CodeType, tuple[str, str] | None] = {}
    files: dict[str, tuple[str, blocks.FileBlocks | None] | None] = {}
    found: dict[str, dict[str, list[str]]] = {}
    for ctx, codes in tracer.by_context.items():
        per_file: dict[str, set[str]] = defaultdict(set)
        for code in codes:
            unit = units.get(code, _UNSEEN)
            if unit is _UNSEEN:
                unit = units[code] = _unit(rec, code, files)
            if unit is not None:
                per_file[unit[0]].add(unit[1])
        if per_file:
            found[ctx] = {f: sorted(n) for f, n in per_file.items()}
    return found


_UNSEEN: Any = object()


def _unit(
    rec: Traced, code: CodeType, files: dict[str, tuple[str, blocks.FileBlocks | None] | None]
) -> tuple[str, str] | None:
    """(repository path, block) of a code object, or None for code outside the repository."""
    name = code.co_filename
    if name not in files:
        files[name] = _measured(rec, name)
    where = files[name]
    return None if where is None else (where[0], _block(where[1], code))


def _measured(rec: Traced, name: str) -> tuple[str, blocks.FileBlocks | None] | None:
    if name.startswith("<"):
        return None  # frozen modules, exec'd strings: no file in the repository
    full = os.path.abspath(name)
    rel = rec.rel(full)
    if rel is None or any(part in full.replace(os.sep, "/") for part in OMIT):
        return None
    return rel, layout_of(full)


def _block(layout: blocks.FileBlocks | None, code: CodeType) -> str:
    """The block a code object belongs to: the function body (or the outer function's,
    for a nested one) its lines lie in, else the module block (module and class bodies)."""
    if layout is not None:
        for _offset, line in dis.findlinestarts(code):
            if line is not None:
                name = layout.block_at(line)
                if name != blocks.MODULE:
                    return name
    return blocks.MODULE


_PARSED: dict[str, tuple[ast.Module | None, blocks.FileBlocks | None]] = {}
# Files whose text may hold a literal ``import_module("x")`` or ``__import__("x")`` call (a
# non-ASCII identifier may spell either after NFKC normalisation): only these are walked
# expression by expression; an import statement is found among the statements alone.
CALLS: set[str] = set()
_CALLED = re.compile(r"import_module|__import__")


def parsed(path: str) -> tuple[ast.Module | None, blocks.FileBlocks | None]:
    """Each file parsed once for both the block layout and the import scan."""
    if path not in _PARSED:
        tree = layout = None
        source = _read(path)
        try:
            text = blocks.decode(source) if source is not None else None
            if text is not None and (not text.isascii() or _CALLED.search(text)):
                CALLS.add(path)
            tree = ast.parse(text) if text is not None else None
            layout = (blocks.from_tree(tree, text, sums=False) if tree is not None and text
                      else None)
        except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
            tree = layout = None
        _PARSED[path] = (tree, layout)
    return _PARSED[path]


# A folder the children of one recording share (``child.start``): each file's block layout,
# parsed by the first child that ran it and read back by the others, by the hash of its
# bytes. pyflakes' integration tests start a Python child per test, and each parsed
# checker.py (2,200 lines) again for its blocks. None in the recording process itself.
LAYOUTS: list[str | None] = [None]


def layout_of(path: str) -> blocks.FileBlocks | None:
    """A file's block layout (``parsed``); in a child, shared with the recording's other
    children through ``LAYOUTS``."""
    folder = LAYOUTS[0]
    if folder is None or path in _PARSED:
        return parsed(path)[1]
    source = _read(path)
    if source is None:
        return parsed(path)[1]
    stored = os.path.join(folder, hashlib.sha256(source).hexdigest() + ".json")
    try:
        with open(stored, encoding="utf-8") as fh:
            layout = _layout_from(json.load(fh))
        _PARSED[path] = (None, layout)
        return layout
    except (OSError, ValueError, TypeError, KeyError):
        pass
    layout = parsed(path)[1]
    try:
        os.makedirs(folder, exist_ok=True)
        tmp = f"{stored}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(None if layout is None else [[b.name, b.start, b.end, b.checksum,
                                                    b.shown] for b in layout.blocks], fh)
        os.replace(tmp, stored)
    except OSError:
        pass
    return layout


def _layout_from(data: Any) -> blocks.FileBlocks | None:
    if data is None:
        return None
    found = tuple(blocks.Block(str(n), int(a), int(b), str(c), str(d)) for n, a, b, c, d in data)
    return blocks.FileBlocks(found, "", tuple(b.start for b in found))


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None
