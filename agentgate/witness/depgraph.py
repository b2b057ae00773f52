"""A raw recording becomes a witness: a graph of what each test depended on.

Nodes are the things a test can depend on besides its own code: ``file:<path>`` (a
module: its module block, the code its import ran, whatever it imports), ``fixture:<key>``
(the code a fixture's setup ran) and ``c`` (repository code run outside any test, e.g. a
conftest collection hook). A test depends on its own executed blocks, the files it opened or
listed, and the nodes of every file it touched, every fixture it used, and ``c``. Because
a test depends on the *file* node of each module it touched, the code that module's import
ran counts for every test that uses the module, whichever test happened to import it first.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from agentgate.witness.blocks import DIR, MISSING, MODULE, READ, WHOLE

Unit = tuple[str, str]  # (path, block name | MODULE | WHOLE | DIR | MISSING | READ + name)
COLLECT = "c"
CACHED = "k:"  # a cached function's one entry, computed once (``recorder.cache_miss``)
NOT_PASSED = "did not pass when recorded"
PRELOADED = "imported before recording started"
# Code that asks whether a tracer runs (``sys.gettrace()``, ``sys.monitoring``, coverage in
# ``sys.modules``) may take another path while recording than in any other run: what the
# recording saw it run does not say what it runs (red-team: ``_traced_add if
# sys.gettrace() else _plain_add``, and a patch to ``_plain_add`` skipped the test).
READS_TRACER = "its code asks whether a tracer runs"
# Every test is under the root conftest: what its import ran (its module code, the modules it
# imported, by a computed name too) counts for every test, like collection itself. Collection
# imports are otherwise the files' own nodes (issue 12: a root conftest's computed import is a
# local escalation that a witness narrows, so the witness must see what it loaded).
ROOT_CONFTEST = "conftest.py"


@dataclass(frozen=True)
class Node:
    key: str
    units: frozenset[Unit]
    deps: frozenset[str]
    flags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TestEntry:
    nodeid: str
    file: str
    units: frozenset[Unit]
    deps: frozenset[str]
    flags: tuple[tuple[str, str], ...]
    fixtures: tuple[str, ...]
    outcome: str
    duration: float
    ambient: str
    incomplete: str | None = None  # why the witness cannot vouch for this test

    @property
    def complete(self) -> bool:
        return self.incomplete is None


@dataclass(frozen=True)
class Witness:
    sha: str
    recorded_at: float
    python: str
    env: str  # fingerprint of the interpreter and installed distributions ("" unknown)
    ambient: dict[str, str | None]
    nodes: dict[str, Node]
    tests: dict[str, TestEntry]
    collected: frozenset[str]
    collect_errors: frozenset[str]
    info: dict[str, Any] = field(default_factory=dict)


# ``info`` key: the recording ran the whole suite with no pytest arguments of its own
# (``witness record`` without ``--``); a direct ``pytest --agentgate-witness`` run never says so.
WHOLE_SUITE = "whole_suite"
DISTRIBUTIONS = "distributions"  # name-version of each installed distribution when recorded
# ``info`` key: modules the recording saw imported, whose import ran no repository function
# (so no class of theirs ran a project base's __init_subclass__ or metaclass; ``rebind``).
QUIET_IMPORTS = "quiet_imports"


def is_block(name: str) -> bool:
    """Whether a unit's name is a function block (not a module level, data, a listing, an
    absent module or an attribute read)."""
    return name not in (MODULE, WHOLE, DIR, MISSING) and not name.startswith(READ)


# ``info`` key: the repository's modules whose attribute reads the recording could not see
# (``watch``). Absent: a recording that did not watch reads at all (``rebind`` is not used).
UNWATCHED = "unwatched"
# Top-level names under which the recording saw a repository module imported: a standard
# library name among them is the repository's (``rebind``: no standard-library alias).
TOP_NAMES = "top_names"
# Present when the recording also watched what evaluated text (``eval``, ``exec``) reads of
# modules: before, it took that text for module-level code and saw none of it.
EVAL_READS = "eval_reads"
# Process state each test left changed when the recording ran it, and what collection left
# changed (``agentgate.run.leaks``: "NODEID\tKEY", "\tKEY"). Absent: a recording from before,
# which says nothing, so every leak at head is new.
STATE_LEAKS = "state_leaks"
_MERGED = (UNWATCHED, TOP_NAMES, EVAL_READS, STATE_LEAKS)  # the union, or none if one lacks it


def file_key(path: str) -> str:
    return "file:" + path


@dataclass
class _Builder:
    raw: dict[str, Any]
    tracked: Callable[[str], bool]  # executed code counts only in files git tracks
    data_ok: Callable[[str], bool]  # opened paths: tracked, or absent (a patch may add it)
    reads_tracer: Callable[[str], bool] = lambda _path: False  # ``READS_TRACER``
    nodes: dict[str, Node] = field(default_factory=dict)
    quiet: list[str] = field(default_factory=list)

    def ctx(self, name: str) -> dict[str, Any]:
        empty: dict[str, Any] = {"units": {}, "opened": [], "listed": [], "flags": {}}
        return dict(self.raw["contexts"].get(name, empty))

    def gather(
        self, name: str, *, imports: bool = True
    ) -> tuple[set[Unit], set[str], dict[str, str]]:
        """A context's units, the nodes it leads to, and its flags; imports of files outside
        the repository are see-through (their own flags are the library's business)."""
        ctx = self.ctx(name)
        units: set[Unit] = set()
        deps: set[str] = set()
        for path, names in ctx.get("units", {}).items():
            if self.tracked(path):
                units.update((path, n) for n in names)
                deps.add(file_key(path))
                deps.update(self.imported_by(path, names))
        units.update((p, WHOLE) for p in ctx.get("opened", ()) if self.data_ok(p))
        units.update((p, DIR) for p in ctx.get("listed", ()))
        units.update((p, MISSING) for p in ctx.get("missing", ()))
        for path, names in ctx.get("reads", {}).items():
            if self.tracked(path):
                units.update((path, READ + n) for n in names)
                deps.add(file_key(path))
        flags = dict(ctx.get("flags", {}))
        for child in ctx.get("imports", ()):
            if imports or child.startswith(CACHED):  # a cached entry is never a file's own
                self.import_of(child, units, deps, flags)
        return units, deps, flags

    def import_of(
        self, child: str, units: set[Unit], deps: set[str], flags: dict[str, str] | None = None
    ) -> None:
        """What one import context adds: the file node of a repository module, else (an
        import of a library, see-through) what it ran and imported. A cached entry's
        context (``k:``, ``recorder.Recorder.cache_miss``) is the reader's own computation,
        done once: what it ran, imported and read, and its flags (a process it started)."""
        if child.startswith(CACHED):
            child_units, child_deps, child_flags = self.gather(child)
            units |= child_units
            deps |= child_deps
            for why, detail in child_flags.items():
                if flags is not None:
                    flags.setdefault(why, detail)
            return
        # A repository file imported under a copy's name needs that name's packages.
        deps.update(file_key(p) for p in self.raw.get("import_parents", {}).get(child, ())
                    if self.tracked(p))
        path = self.raw["import_files"].get(child)
        if path and self.tracked(path):
            deps.add(file_key(path))
        else:
            child_units, child_deps, _flags = self.gather(child)
            units |= child_units
            deps |= child_deps

    def imported_by(self, path: str, names: Iterable[str]) -> set[str]:
        """The file nodes the given blocks of ``path`` import (see harvest._static_imports)."""
        static = self.raw.get("static", {}).get(path, {})
        return {file_key(p) for name in names for p in static.get(name, ())}

    def file_nodes(self) -> None:
        per_file: dict[str, list[str]] = defaultdict(list)
        for ctx, path in self.raw["import_files"].items():
            if path and self.tracked(path):
                per_file[path].append(ctx)
        executed = {p for c in self.raw["contexts"].values() for p in c.get("units", {})}
        preloaded = set(self.raw.get("preloaded", ()))
        for path in sorted(set(per_file) | executed | set(self.raw.get("static", {}))):
            if self.tracked(path):
                self.nodes[file_key(path)] = self.file_node(path, per_file[path], preloaded)
        self.quiet = sorted(
            p for p in per_file if file_key(p) in self.nodes
            and not any(is_block(n) for _path, n in self.nodes[file_key(p)].units))

    def file_node(self, path: str, contexts: list[str], preloaded: set[str]) -> Node:
        units: set[Unit] = {(path, MODULE)}
        deps: set[str] = set()
        flags: dict[str, str] = {}
        for ctx in contexts:
            u, d, f = self.gather(ctx)
            units |= u
            deps |= d
            flags.update(f)
        deps.update(self.imported_by(path, [MODULE]))
        if path in preloaded and not contexts and "preloaded_blocks" not in self.raw:
            flags[PRELOADED] = path  # a recording from before preloaded modules were charged
        if self.reads_tracer(path):
            flags[READS_TRACER] = path  # every test that ran or imported it is incomplete
        deps.discard(file_key(path))
        return Node(file_key(path), frozenset(units), frozenset(deps), tuple(sorted(flags.items())))

    def other_nodes(self) -> None:
        for name in self.raw["contexts"]:
            if name.startswith("f:") or name == COLLECT:
                key = COLLECT if name == COLLECT else "fixture:" + name[2:]
                # Collection imports every test module; those imports are the files' own
                # nodes, not something every test depends on.
                units, deps, flags = self.gather(name, imports=name != COLLECT)
                if name == COLLECT:
                    self.charge_startup(units, deps)
                    self.charge_preloaded(units, deps)
                    deps.add(file_key(ROOT_CONFTEST))
                self.nodes[key] = Node(
                    key, frozenset(units), frozenset(deps), tuple(sorted(flags.items()))
                )

    def charge_startup(self, units: set[Unit], deps: set[str]) -> None:
        """What pytest's start-up imported, seen by ``boot`` before any plugin ran (pytest
        itself, ``-p`` plugins and what they import): every test runs under it, like the
        root conftest. Collection's imports (test modules, conftests) stay the files' own."""
        for child in self.raw.get("startup", ()):
            self.import_of(child, units, deps)

    def charge_preloaded(self, units: set[Unit], deps: set[str]) -> None:
        """Modules imported before recording started ran their module code, and maybe any of
        their functions, unseen: every test depends on all of them (``c``, which every test
        depends on), whichever tests were later seen running them."""
        for path, names in self.raw.get("preloaded_blocks", {}).items():
            if self.tracked(path):
                units.update((path, n) for n in names)
                deps.add(file_key(path))

    def test_entry(self, nodeid: str, info: dict[str, Any]) -> TestEntry:
        units, deps, flags = self.gather("t:" + nodeid)
        deps |= {COLLECT, file_key(info["file"])}
        deps |= set(self.fixture_nodes(info.get("fixtures", ())))
        deps = {d for d in deps if d in self.nodes}
        if info.get("outcome") == "failed":
            flags[NOT_PASSED] = "failed"
        return TestEntry(
            nodeid=nodeid,
            file=info["file"],
            units=frozenset(units),
            deps=frozenset(deps),
            flags=tuple(sorted(flags.items())),
            fixtures=tuple(info.get("fixtures", ())),
            outcome=str(info.get("outcome", "passed")),
            duration=float(info.get("duration", 0.0)),
            ambient=str(info.get("ambient", "")),
        )

    def fixture_nodes(self, keys: Iterable[str]) -> Iterable[str]:
        for key in keys:
            if key.startswith("*::"):
                suffix = key[1:]
                yield from (
                    k for k in self.nodes if k.startswith("fixture:") and k.endswith(suffix)
                )
            else:
                yield "fixture:" + key


def build(
    raw: dict[str, Any],
    *,
    sha: str,
    tracked: Callable[[str], bool],
    data_ok: Callable[[str], bool],
    env: str = "",
    reads_tracer: Callable[[str], bool] = lambda _path: False,
) -> Witness:
    """The witness of one recording at revision ``sha``; ``reads_tracer``: whether a file's
    code asks whether a tracer runs (``READS_TRACER``)."""
    builder = _Builder(raw, tracked, data_ok, reads_tracer)
    builder.file_nodes()
    builder.other_nodes()
    tests = {n: builder.test_entry(n, info) for n, info in raw["tests"].items()}
    nodes = builder.nodes
    tests = with_incompleteness(nodes, tests)
    return Witness(
        sha=sha,
        recorded_at=float(raw.get("started_at", 0.0)),
        python=str(raw.get("python", "")),
        env=env,
        ambient=dict(raw.get("ambient", {})),
        nodes=nodes,
        tests=tests,
        collected=frozenset(raw.get("collected", ())),
        collect_errors=frozenset(raw.get("collect_errors", ())),
        info={QUIET_IMPORTS: builder.quiet,
              **({UNWATCHED: list(raw["unwatched"])} if "unwatched" in raw else {}),
              **({TOP_NAMES: list(raw["top_names"])} if "top_names" in raw else {}),
              **({EVAL_READS: []} if "eval_reads" in raw else {})},
    )


def unwatched(witness: Witness) -> frozenset[str] | None:
    """The modules whose attribute reads the recording did not see; None when it watched
    none, or did not watch evaluated text's (an older recording: ``rebind`` now trusts
    ``eval``/``exec`` in a module's own globals to have been seen)."""
    found = witness.info.get(UNWATCHED)
    return None if found is None or EVAL_READS not in witness.info else frozenset(found)


def top_names(witness: Witness) -> frozenset[str] | None:
    """The top-level names the recording saw repository modules imported under; None when
    it did not say (an older recording)."""
    found = witness.info.get(TOP_NAMES)
    return None if found is None else frozenset(found)


def merged_evidence(*infos: dict[str, Any]) -> dict[str, Any]:
    """``info`` for witnesses made of several: every part's unwatched modules, top-level
    names and ``eval_reads`` marker, each key dropped when some part lacks it."""
    merged: dict[str, Any] = {}
    for key in _MERGED:
        parts = [i.get(key) for i in infos]
        if all(p is not None for p in parts):
            merged[key] = sorted({item for part in parts for item in part or ()})
    return merged


def unmerged(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` without the keys ``merged_evidence`` decides."""
    return {k: v for k, v in info.items() if k not in _MERGED}


def quiet_imports(witness: Witness) -> Callable[[str], bool]:
    """Whether the recording saw the module imported with no repository function run (an
    older witness says nothing: no module is quiet)."""
    quiet = frozenset(witness.info.get(QUIET_IMPORTS, ()))
    return quiet.__contains__


def paths(witness: Witness) -> set[str]:
    """Every path the witness's nodes and tests name (their units and the tests' files)."""
    found = {p for n in witness.nodes.values() for p, _ in n.units}
    found |= {p for t in witness.tests.values() for p, _ in t.units}
    return found | {t.file for t in witness.tests.values()}


def import_runs(witness: Witness) -> dict[str, frozenset[Unit]]:
    """Per module: the functions the recording saw run while it was imported (its file
    node's blocks, not its module level, data or listings)."""
    found: dict[str, frozenset[Unit]] = {}
    for key, node in witness.nodes.items():
        if key.startswith("file:"):
            runs = frozenset(u for u in node.units if is_block(u[1]))
            if runs:
                found[key[len("file:"):]] = runs
    return found


def dependents(nodes: dict[str, Node]) -> dict[str, list[str]]:
    reverse: dict[str, list[str]] = defaultdict(list)
    for node in nodes.values():
        for dep in node.deps:
            reverse[dep].append(node.key)
    return reverse


def spread(nodes: dict[str, Node], seeds: dict[str, str]) -> dict[str, str]:
    """Every node that depends, directly or not, on a seed, with the seed's explanation."""
    reverse = dependents(nodes)
    found = dict(seeds)
    queue = deque(seeds)
    while queue:
        key = queue.popleft()
        for parent in reverse.get(key, ()):
            if parent not in found:
                found[parent] = found[key]
                queue.append(parent)
    return found


def with_incompleteness(
    nodes: dict[str, Node], tests: dict[str, TestEntry]
) -> dict[str, TestEntry]:
    """A test is incomplete when it, or anything it depends on, did what the witness cannot
    follow: the reason travels with it (e.g. the import of a module that ran a subprocess)."""
    seeds = {k: f"{n.flags[0][0]} ({_where(k)}: {n.flags[0][1]})" for k, n in nodes.items()
             if n.flags}
    tainted = spread(nodes, seeds)
    out = {}
    for nodeid, test in tests.items():
        why = f"{test.flags[0][0]}: {test.flags[0][1]}" if test.flags else None
        if why is None:
            why = next((tainted[d] for d in sorted(test.deps) if d in tainted), None)
        out[nodeid] = replace(test, incomplete=why)
    return out


def _where(key: str) -> str:
    return key.split(":", 1)[1] if ":" in key else "collection"


def closure(witness: Witness, test: TestEntry) -> frozenset[Unit]:
    """Every unit a test depends on, through all its nodes (for ``witness show``)."""
    units = set(test.units)
    seen: set[str] = set()
    queue = deque(test.deps)
    while queue:
        key = queue.popleft()
        node = witness.nodes.get(key)
        if key in seen or node is None:
            continue
        seen.add(key)
        units |= node.units
        queue.extend(node.deps)
    return frozenset(units)
