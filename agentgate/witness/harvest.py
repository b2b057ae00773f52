"""Turn a finished recording into plain data: blocks per context, files, imports, tests.

Runs inside the recording pytest process (stdlib and ``blocks`` only; pytest only for
types, so agentgate can read ``RAW_VERSION`` without pytest). The raw recording is a
JSON-able dict that ``agentgate.witness.graph`` turns into a witness.
"""

from __future__ import annotations

import ast
import dis
import os
import re
import sqlite3
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import CodeType
from typing import TYPE_CHECKING, Any, Protocol

from agentgate.witness import blocks

if TYPE_CHECKING:
    import pytest

    from agentgate.witness.lines import LineTracer
    from agentgate.witness.tracer import Tracer

RAW_VERSION = 2  # 2: contexts carry ``missing`` (where failed imports looked)


@dataclass
class Context:
    opened: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)
    flags: dict[str, str] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)  # import contexts started from here
    missing: set[str] = field(default_factory=set)  # where imports found no module


@dataclass
class TestRun:
    file: str
    fixtures: set[str]
    ambient: str
    outcome: str = "passed"
    duration: float = 0.0


class Recording(Protocol):
    """What a harvest reads from the recorder (``recorder.Recorder``), which imports this
    module: the dependency runs one way."""

    root: str
    started_at: float
    session_ambient: dict[str, str | None]
    contexts: dict[str, Context]
    tests: dict[str, TestRun]
    collected: set[str]
    collect_errors: set[str]
    import_files: dict[str, str | None]
    preloaded: set[str]
    tracer: Tracer | None  # Python 3.12+: code objects per context
    lines: LineTracer | None  # before: coverage's lines per context

    def rel(self, path: object) -> str | None: ...


def tool_dirs() -> tuple[str, ...]:
    """Folders whose own file reads are tooling (pytest's assertion rewriting reading test
    sources), never a test's data. The import system's reads come from frozen frames; the
    ``importlib`` folder is not tooling: ``importlib.resources`` and ``importlib.metadata``
    read data and metadata on the test's behalf."""
    import _pytest
    import pluggy

    dirs = [os.path.dirname(m.__file__ or "") for m in (_pytest, pluggy)]
    return tuple(os.path.join(d, "") for d in dirs if d)


def module_files() -> Iterator[str]:
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            yield path


def fixture_key(fixturedef: Any) -> str:
    return f"{getattr(fixturedef, 'baseid', '')}::{fixturedef.argname}"


def fixture_keys(item: pytest.Item) -> set[str]:
    """Every fixture definition the test requested, overridden ones included."""
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", None)
    keys: set[str] = set()
    for name in getattr(item, "fixturenames", ()):
        found = defs.get(name, ()) if isinstance(defs, dict) else ()
        keys.update(fixture_key(d) for d in found)
        if not found:
            keys.add(f"*::{name}")  # unknown definition: every fixture of that name counts
    return keys


def raw_recording(rec: Recording, session: pytest.Session) -> dict[str, Any]:
    modules = _modules(rec, session)
    units = _units_by_context(rec)
    return {
        "version": RAW_VERSION,
        "python": sys.version.split()[0],
        "started_at": rec.started_at,
        "ambient": rec.session_ambient,
        "contexts": _contexts(rec, units),
        "import_files": {k: v for k, v in rec.import_files.items() if v},
        "static": _static_imports(rec.root, modules),
        "preloaded": sorted(rec.preloaded),
        "preloaded_blocks": _preloaded_blocks(rec),
        "tests": {
            nodeid: {
                "file": run.file,
                "fixtures": sorted(run.fixtures),
                "ambient": run.ambient,
                "outcome": run.outcome,
                "duration": round(run.duration, 6),
            }
            for nodeid, run in rec.tests.items()
        },
        "collected": sorted(rec.collected),
        "collect_errors": sorted(rec.collect_errors),
    }


def _contexts(rec: Recording, units: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """Every context that holds data or leads to one; imports of third-party modules that
    ran no repository code are dropped (most of them)."""
    entries: dict[str, dict[str, Any]] = {}
    for name, ctx in rec.contexts.items():
        entries[name] = {
            "units": units.get(name, {}),
            "opened": sorted(ctx.opened),
            "listed": sorted(ctx.listed),
            "missing": sorted(ctx.missing),
            "flags": dict(ctx.flags),
            "imports": list(ctx.imports),
        }
    for name, files in units.items():
        entries.setdefault(name, _empty())["units"] = files
    kept: set[str] = set()
    # Children are numbered after their parents, so one pass from the highest number up
    # decides each import context after all of its children.
    imports = sorted((n for n in entries if n.startswith("i:")), key=lambda n: -int(n[2:]))
    others = [n for n in entries if not n.startswith("i:")]
    for name in [*imports, *others]:
        entry = entries[name]
        entry["imports"] = [c for c in entry["imports"] if c in kept]
        has_data = any(entry[k] for k in ("units", "opened", "listed", "missing", "flags",
                                          "imports"))
        if has_data or rec.import_files.get(name):
            kept.add(name)
    return {n: entries[n] for n in entries if n in kept or n == "c"}


def _preloaded_blocks(rec: Recording) -> dict[str, list[str]]:
    """What of each module imported before recording started may have run unseen: all of it.
    Its module block and any of its functions ran at its import or in pytest's start-up
    before the recorder could see them (``LIMIT = _init()``), and a function a test was later
    seen running may also have run then, for every other test (a review of issue 12's first
    version found exactly that hole). Every test depends on these blocks, which is safe where
    marking the tests incomplete would escalate them all (pytest imports pluggy before any
    plugin starts); a file that does not parse depends on all of its content (``WHOLE``)."""
    found: dict[str, list[str]] = {}
    for rel in sorted(rec.preloaded):
        # Installed code inside the tree (a .venv) is the environment's, not the repository's.
        if rel.endswith(".py") and not any(part in f"/{rel}" for part in _OMIT):
            layout = _parsed(os.path.join(rec.root, *rel.split("/")))[1]
            names = [b.name for b in layout.blocks] if layout else [blocks.WHOLE]
            found[rel] = [blocks.MODULE, *sorted(set(names))]
    return found


def _empty() -> dict[str, Any]:
    return {"units": {}, "opened": [], "listed": [], "missing": [], "flags": {}, "imports": []}


# Installed code inside the tree (a virtualenv in the repository) is not the repository's.
_OMIT = ("/site-packages/", "/dist-packages/", "/.venv/", "/.tox/")


def _units_by_context(rec: Recording) -> dict[str, dict[str, list[str]]]:
    if rec.tracer is not None:
        return _units_from_codes(rec, rec.tracer)
    assert rec.lines is not None
    if rec.lines.by_context is not None:
        return _units_from_sets(rec, rec.lines)
    return _units_from_lines(rec, rec.lines.cov.get_data())


def _units_from_sets(rec: Recording, tracer: LineTracer) -> dict[str, dict[str, list[str]]]:
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
        self.layout = _parsed(path)[1]
        last = self.layout.blocks[-1].end if self.layout and self.layout.blocks else 0
        self.table = [self.layout.block_at(n) for n in range(last + 1)] if self.layout else []

    def of(self, lines: set[int]) -> set[str]:
        if self.layout is None:
            return {blocks.MODULE}
        if min(lines) >= 0 and max(lines) < len(self.table):
            return set(map(self.table.__getitem__, lines))
        return {self.layout.block_at(n) for n in lines}


def _units_from_lines(rec: Recording, data: Any) -> dict[str, dict[str, list[str]]]:
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


def _units_from_bits(rec: Recording, data: Any) -> dict[str, dict[str, list[str]]] | None:
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
            files[path] = None if rel is None else _ByteBlocks(rel, _parsed(path)[1])
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


def _units_from_contexts(rec: Recording, data: Any) -> dict[str, dict[str, list[str]]]:
    """The same through coverage's public API: one query per measured file."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for measured in data.measured_files():
        rel = rec.rel(measured)
        if rel is None:
            continue
        layout = _parsed(measured)[1]
        for line, contexts in data.contexts_by_lineno(measured).items():
            name = layout.block_at(line) if layout else blocks.MODULE
            for ctx in contexts:
                found[ctx or "c"][rel].add(name)
    return {ctx: {f: sorted(n) for f, n in files.items()} for ctx, files in found.items()}


def _units_from_codes(rec: Recording, tracer: Tracer) -> dict[str, dict[str, list[str]]]:
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
    rec: Recording, code: CodeType, files: dict[str, tuple[str, blocks.FileBlocks | None] | None]
) -> tuple[str, str] | None:
    """(repository path, block) of a code object, or None for code outside the repository."""
    name = code.co_filename
    if name not in files:
        files[name] = _measured(rec, name)
    where = files[name]
    return None if where is None else (where[0], _block(where[1], code))


def _measured(rec: Recording, name: str) -> tuple[str, blocks.FileBlocks | None] | None:
    if name.startswith("<"):
        return None  # frozen modules, exec'd strings: no file in the repository
    full = os.path.abspath(name)
    rel = rec.rel(full)
    if rel is None or any(part in full.replace(os.sep, "/") for part in _OMIT):
        return None
    return rel, _parsed(full)[1]


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
_CALLS: set[str] = set()
_CALLED = re.compile(r"import_module|__import__")


def _parsed(path: str) -> tuple[ast.Module | None, blocks.FileBlocks | None]:
    """Each file parsed once for both the block layout and the import scan."""
    if path not in _PARSED:
        tree = layout = None
        source = _read(path)
        try:
            text = blocks.decode(source) if source is not None else None
            if text is not None and (not text.isascii() or _CALLED.search(text)):
                _CALLS.add(path)
            tree = ast.parse(text) if text is not None else None
            layout = blocks.from_tree(tree, text) if tree is not None and text else None
        except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
            tree = layout = None
        _PARSED[path] = (tree, layout)
    return _PARSED[path]


def _modules(rec: Recording, session: pytest.Session) -> dict[str, tuple[str, str]]:
    """Repository files that ran as modules: {path: (module name, package or "")}."""
    found: dict[str, tuple[str, str]] = {}
    candidates = list(sys.modules.items())
    for plugin in session.config.pluginmanager.get_plugins():
        name = getattr(plugin, "__name__", None)
        if isinstance(name, str) and hasattr(plugin, "__file__"):
            candidates.append((name, plugin))
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None:
            candidates.append((module.__name__, module))
    for name, module in candidates:
        rel = rec.rel(getattr(module, "__file__", None))
        if rel and rel.endswith(".py"):
            package = getattr(module, "__package__", None) or name.rpartition(".")[0]
            found[rel] = (name, package)
    return found


def _static_imports(
    root: str, modules: dict[str, tuple[str, str]]
) -> dict[str, dict[str, list[str]]]:
    """Repository files each block of each module imports: ``{path: {block: [paths]}}``.

    A test that uses module M depends on the module-level code of everything M's module
    block imports, even modules no test ran a line of (a constants module read through
    ``from .settings import LIMIT``); an import inside a function counts only for tests that
    ran that function. The dynamic record alone cannot show either.
    """
    by_name = {name: rel for rel, (name, _pkg) in modules.items()}
    edges: dict[str, dict[str, list[str]]] = {}
    for rel, (name, package) in modules.items():
        per_block: dict[str, list[str]] = {}
        full = os.path.join(root, *rel.split("/"))
        for block, names in _imported_names(full, name, package).items():
            targets = {by_name[n] for n in names if n in by_name} - {rel}
            if targets:
                per_block[block] = sorted(targets)
        if per_block:
            edges[rel] = per_block
    return edges


def _imported_names(path: str, name: str, package: str) -> dict[str, set[str]]:
    """Module names imported by each block of a file; the module's own parent packages
    belong to its module block (importing ``a.b.c`` runs ``a`` and ``a.b`` first)."""
    found: dict[str, set[str]] = defaultdict(set)
    found[blocks.MODULE].update(_parents(name)[:-1])
    tree, layout = _parsed(path)
    if tree is None or layout is None:
        return found
    nodes = ast.walk(tree) if path in _CALLS else _statements(tree.body)
    for node in nodes:
        names = _node_imports(node, package)
        if names:
            found[layout.block_at(getattr(node, "lineno", 0))].update(names)
    return found


_HOLDERS = tuple(getattr(ast, n) for n in ("excepthandler", "match_case") if hasattr(ast, n))


def _statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every statement, nested ones included, without the expressions ``ast.walk`` visits:
    the import scan of a file that calls no ``import_module`` needs only statements."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        yield node
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.stmt):
                        todo.append(item)
                    elif isinstance(item, _HOLDERS):  # except and case clauses
                        todo.extend(item.body)


def _node_imports(node: ast.AST, package: str) -> list[str]:
    names: list[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            names.extend(_parents(alias.name))
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(node.module, node.level, package)
        if base:
            names.extend(_parents(base))
            names.extend(f"{base}.{a.name}" for a in node.names)
    elif isinstance(node, ast.Call) and _literal_import(node):
        names.extend(_parents(node.args[0].value))  # type: ignore[attr-defined]
    return names


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _resolve(module: str | None, level: int, package: str) -> str | None:
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else [])) or None


def _literal_import(node: ast.Call) -> bool:
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return (
        called in ("import_module", "__import__")
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )
