"""Turn a finished recording into plain data: blocks per context, files, imports, tests.

Runs inside the recording pytest process (stdlib, ``blocks`` and ``units`` only; pytest only
for types, so agentgate can read ``RAW_VERSION`` without pytest). The raw recording is a
JSON-able dict that ``agentgate.witness.graph`` turns into a witness.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agentgate.witness import blocks, units, watch

if TYPE_CHECKING:
    import pytest

# 2: contexts carry ``missing`` (where failed imports looked); 3: ``startup``, the imports
# of pytest's start-up seen by ``boot`` (an older agentgate would not charge them); 4: a
# module's file from its import spec (``module_file``), not ``__file__``; 5: contexts carry
# ``reads`` (module attributes read, ``watch``) and the recording names its ``unwatched``
# modules (without them ``rebind`` is not used); 6: contexts of cached entries (``k:``), whose
# flags count for their readers, and imports that lead to older contexts.
RAW_VERSION = 6


@dataclass
class Context:
    opened: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)
    flags: dict[str, str] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)  # import contexts started from here
    missing: set[str] = field(default_factory=set)  # where imports found no module
    reads: dict[str, set[str]] = field(default_factory=dict)  # module path -> names (watch)
    # (kind, path as given) of the reads and listings already charged here: the same one
    # again adds nothing and skips the walk up the stack (``Recorder.on_event``: Markdown's
    # tests call ``entry_points()``, which stats every ``sys.path`` folder, per extension).
    charged: set[tuple[str, str]] = field(default_factory=set)


@dataclass
class TestRun:
    file: str
    fixtures: set[str]
    ambient: str
    outcome: str = "passed"
    duration: float = 0.0


class Recording(units.Traced, Protocol):
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
    import_names: dict[str, str]
    top_names: set[str]
    preloaded: set[str]
    startup: list[str]
    watcher: watch.Watcher


def tool_dirs() -> tuple[str, ...]:
    """Folders whose own file reads are tooling (pytest's assertion rewriting reading test
    sources), never a test's data. The import system's reads come from frozen frames; the
    ``importlib`` folder is not tooling: ``importlib.resources`` and ``importlib.metadata``
    read data and metadata on the test's behalf. Found without importing them: ``boot``
    starts recording before pytest (and pluggy, which may be the repository's) is imported."""
    dirs = []
    for name in ("_pytest", "pluggy", "coverage"):  # coverage stats every file it traces
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        found = list(getattr(spec, "submodule_search_locations", None) or ())
        dirs.extend(found[:1])
    return tuple(os.path.join(d, "") for d in dirs if d)


def module_files() -> Iterator[str]:
    for name, module in list(sys.modules.items()):
        path = module_file(name, module)
        if path is not None:
            yield path


def module_file(name: str, module: object, *, parent: bool = True) -> str | None:
    """The file a module was loaded from, as its import system spec says (``spec.origin``
    with ``has_location``), not ``__file__``: a loader may make a module that has no file
    of its own and give it another module's ``__file__`` for introspection (``tlz`` copies
    ``toolz.dicttoolz`` into ``tlz.dicttoolz`` and sets its ``__file__`` to
    ``toolz/dicttoolz.py``), and taking that module for the file would charge the loader's
    run to every user of the real module, and the file's module name to the copy. A module
    without a location belongs to the nearest parent package that has one (every import of
    ``tlz.dicttoolz`` imports ``tlz`` first, so ``tlz``'s users are the copy's users); one
    with no spec at all (set up by hand) is taken at its ``__file__``. ``parent=False``: the
    module's own file only (None for a module without a location)."""
    spec = getattr(module, "__spec__", None)
    if spec is None:
        path = getattr(module, "__file__", None)
        return path if isinstance(path, str) else None
    if getattr(spec, "has_location", False) and isinstance(getattr(spec, "origin", None), str):
        return str(spec.origin)
    package = name.rpartition(".")[0] if parent else ""
    while package:
        spec = getattr(sys.modules.get(package), "__spec__", None)
        origin = getattr(spec, "origin", None)
        if getattr(spec, "has_location", False) and isinstance(origin, str):
            return origin
        package = package.rpartition(".")[0]
    return None


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
    found = units.by_context(rec)
    contexts = context_entries(rec, found)
    parents = _alias_parents(rec)
    for ctx in parents.keys() & contexts.keys():
        # Importing ``mirror.core`` first imports ``mirror``, inside it: that import is the
        # importer's (``import_parents``), not part of app/core.py's own node. A package
        # outside the repository stays where it was (what its import ran is see-through).
        packages = _parents(rec.import_names[ctx])[:-1]
        contexts[ctx]["imports"] = [
            c for c in contexts[ctx]["imports"] if rec.import_names.get(c) not in packages
            or rec.import_files.get(c) not in parents[ctx]]
    return {
        "version": RAW_VERSION,
        "python": sys.version.split()[0],
        "started_at": rec.started_at,
        "ambient": rec.session_ambient,
        "contexts": contexts,
        "startup": [c for c in rec.startup if c in contexts],
        "unwatched": unwatched_modules(rec, found),
        # Reads made by evaluated text (``eval``, ``exec``) were watched too: without this,
        # an older recording's ``unwatched`` is not to be trusted (``depgraph.unwatched``).
        "eval_reads": [],
        "import_files": {k: v for k, v in rec.import_files.items() if v},
        "import_parents": parents,
        # Also every module still imported at the end (one imported before recording).
        "top_names": sorted(rec.top_names | {n.partition(".")[0] for found in modules.values()
                                             for n, _pkg in found}),
        "static": _static_imports(rec.root, modules),
        "preloaded": sorted(rec.preloaded),
        "preloaded_blocks": preloaded_blocks(rec),
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


def context_entries(rec: Recording, found: units.Units) -> dict[str, Any]:
    """Every context that holds data or leads to one; imports of third-party modules that
    ran no repository code are dropped (most of them)."""
    entries: dict[str, dict[str, Any]] = {}
    for name, ctx in rec.contexts.items():
        entries[name] = {
            "units": found.get(name, {}),
            "opened": sorted(ctx.opened),
            "listed": sorted(ctx.listed),
            "missing": sorted(ctx.missing),
            "reads": {path: sorted(names) for path, names in sorted(ctx.reads.items())},
            "flags": dict(ctx.flags),
            "imports": list(ctx.imports),
        }
    for name, files in found.items():
        entries.setdefault(name, empty_entry())["units"] = files
    kept: dict[str, bool] = {}
    for name in entries:
        _keep(name, entries, rec.import_files, kept)
    return {n: entries[n] for n in entries if kept[n] or n == "c"}


def _keep(first: str, entries: dict[str, dict[str, Any]], files: dict[str, str | None],
          kept: dict[str, bool]) -> None:
    """Whether a context is kept (it holds data, is a repository module's import, or leads
    to a kept one), each decided after the contexts it leads to, its list trimmed to the
    kept ones. An import context leads to the ones it started, and also to older ones: a
    module it imported again by name (``Recorder.again``), a cached entry it read
    (``Recorder.cache_miss``), so numbers do not order them. Depth first, without recursion
    (a chain of imports may be deep); a context met again on its own path stays listed."""
    stack = [first]
    while stack:
        name = stack[-1]
        if name in kept:
            stack.pop()
            continue
        entry = entries.get(name)
        if entry is None:
            kept[name] = False
            stack.pop()
            continue
        pending = [c for c in entry["imports"] if c not in kept and c not in stack]
        if pending:
            stack.extend(pending)
            continue
        entry["imports"] = [c for c in entry["imports"] if kept.get(c) or c in stack]
        has_data = any(entry[k] for k in ("units", "opened", "listed", "missing", "reads",
                                          "flags", "imports"))
        kept[name] = bool(has_data or files.get(name))
        stack.pop()


def unwatched_modules(rec: Recording, found: units.Units) -> list[str]:
    """The repository's modules whose attribute reads were not seen (``watch``): those with
    a class of their own, and files whose module code ran with no import the recorder saw
    (``runpy``, a spec made from a path), and modules imported before recording started."""
    rec.watcher.still_watched()
    watched = set(rec.watcher.paths.values())
    ran = {path for files in found.values() for path, names in files.items()
           if blocks.MODULE in names}
    # Watched from the start on, but what read them before (pytest's start-up: a plugin's
    # pytest_addoption) was not seen.
    early = {p for p in rec.preloaded if p.endswith(".py")}
    return sorted(rec.watcher.unwatched | (ran - watched) | early)


def preloaded_blocks(rec: Recording) -> dict[str, list[str]]:
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
        if rel.endswith(".py") and not any(part in f"/{rel}" for part in units.OMIT):
            layout = units.layout_of(os.path.join(rec.root, *rel.split("/")))
            names = [b.name for b in layout.blocks] if layout else [blocks.WHOLE]
            found[rel] = [blocks.MODULE, *sorted(set(names))]
    return found


def empty_entry() -> dict[str, Any]:
    return {"units": {}, "opened": [], "listed": [], "missing": [], "reads": {}, "flags": {},
            "imports": []}


def _modules(rec: Recording, session: pytest.Session) -> dict[str, list[tuple[str, str]]]:
    """Repository files that ran as modules: {path: [(module name, package or "")]}; a file
    may run as several (``tlz`` gives ``tlz.curried`` the ``__path__`` of ``toolz.curried``,
    so toolz/curried/operator.py runs again as ``tlz.curried.operator``)."""
    found: dict[str, set[tuple[str, str]]] = defaultdict(set)
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
        rel = rec.rel(module_file(name, module, parent=False))  # a copy claims no file
        if rel and rel.endswith(".py"):
            package = getattr(module, "__package__", None) or name.rpartition(".")[0]
            found[rel].add((name, package))
    return {rel: sorted(names) for rel, names in found.items()}


def _names_file(name: str, rel: str) -> bool:
    """Whether a module name is the one its file's place in the tree gives it
    (``toolz.curried.operator`` for toolz/curried/operator.py, ``app.x`` for src/app/x.py)."""
    stem = rel[:-3] if rel.endswith(".py") else rel
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts.pop()
    dotted = name.split(".")
    return parts[len(parts) - len(dotted):] == dotted


def alias_parents(rel: Callable[[object], str | None], name: str,
                  path: str) -> tuple[str, ...]:
    """For a repository file imported under another name than its own (a copy's
    ``tlz.curried.operator``, found on the ``__path__`` ``tlz.curried`` borrowed): the files
    of that name's parent packages, which its import ran first or found imported. The file's
    own node keeps only its own name's parents (its other users never imported the copy's
    packages); the import (``_alias_parents``) and each read of the module object
    (``watch``) carry these."""
    if _names_file(name, path):
        return ()
    parents: list[str] = []
    for parent in _parents(name)[:-1]:
        module = sys.modules.get(parent)
        found = rel(module_file(parent, module)) if module is not None else None
        if found and found != path and found not in parents:
            parents.append(found)
    return tuple(parents)


def _alias_parents(rec: Recording) -> dict[str, list[str]]:
    """Per import context of a file under another name than its own: ``alias_parents``."""
    found: dict[str, list[str]] = {}
    for ctx, name in rec.import_names.items():
        path = rec.import_files.get(ctx)
        parents = alias_parents(rec.rel, name, path) if path else ()
        if parents:
            found[ctx] = list(parents)
    return found


def _static_imports(
    root: str, modules: dict[str, list[tuple[str, str]]]
) -> dict[str, dict[str, list[str]]]:
    """Repository files each block of each module imports: ``{path: {block: [paths]}}``.

    A test that uses module M depends on the module-level code of everything M's module
    block imports, even modules no test ran a line of (a constants module read through
    ``from .settings import LIMIT``); an import inside a function counts only for tests that
    ran that function. The dynamic record alone cannot show either.
    """
    by_name = {name: rel for rel, names in modules.items() for name, _pkg in names}
    edges: dict[str, dict[str, list[str]]] = {}
    for rel, names in modules.items():
        per_block: dict[str, set[str]] = defaultdict(set)
        full = os.path.join(root, *rel.split("/"))
        # Its own name's parent packages belong to its module block; another name's are
        # that import's (``_alias_parents``). A file with no name of its own keeps them all.
        own = {n for n, _pkg in names if _names_file(n, rel)} or {n for n, _pkg in names}
        for name, package in names:
            found = _imported_names(full, name, package, parents=name in own)
            for block, imported in found.items():
                per_block[block] |= {by_name[n] for n in imported if n in by_name} - {rel}
        kept = {block: sorted(targets) for block, targets in per_block.items() if targets}
        if kept:
            edges[rel] = kept
    return edges


def _imported_names(path: str, name: str, package: str, *,
                    parents: bool = True) -> dict[str, set[str]]:
    """Module names imported by each block of a file (relative imports from ``package``);
    with ``parents``, the module's own parent packages belong to its module block
    (importing ``a.b.c`` runs ``a`` and ``a.b`` first)."""
    found: dict[str, set[str]] = defaultdict(set)
    if parents:
        found[blocks.MODULE].update(_parents(name)[:-1])
    tree, layout = units.parsed(path)
    if tree is None or layout is None:
        return found
    nodes = ast.walk(tree) if path in units.CALLS else _statements(tree.body)
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
