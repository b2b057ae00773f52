"""Changes -> impact set -> verdict reasons: which test files a patch must run, and why.

Pure: every input is plain data (the range's changes, the head's import graph, the texts of
the pytest configuration files at both ends, the markers the patch added), so each rule is
testable without git. The impact set only ever grows: when a rule cannot tell, it adds tests
or promotes; nothing a patch does removes a test the repository's structure selects.
"""

from __future__ import annotations

import bisect
import fnmatch
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agentgate.core.config import Config, option_words, pytest_option
from agentgate.core.model import DELETED, RENAMED, Change, Reason, Verdict
from agentgate.core.text import listed
from agentgate.graph.types import ImportGraph, module_name
from agentgate.plan import harness
from agentgate.plan.deps import dependency_reasons
from agentgate.plan.markers import AddedMarker
from agentgate.plan.pytest_config import (
    TestFiles,
    is_test_file,
    pytest_config_reasons,
    python_files,
    under,
)

CONFTEST = "conftest.py"


@dataclass(frozen=True)
class PlanInput:
    config: Config  # the merge-base's: the rules that govern a patch are the base's
    changes: tuple[Change, ...]
    graph: ImportGraph  # the head's
    # Root pytest config files at head (file -> text): which files pytest collects.
    pytest_head: Mapping[str, str | None] = field(default_factory=dict)
    # Every pytest config file the range touched, at any depth: path -> (base, head) text
    # (pyproject.toml and setup.cfg among them: their dependency tables are read too).
    pytest_changed: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    markers: tuple[AddedMarker, ...] = ()
    # Files pytest collects doctests from at head (``--doctest-modules``: modules holding
    # ``>>>``; ``--doctest-glob``, ``test*.txt``: text files): tests like the test files.
    doctests: frozenset[str] = frozenset()
    # Changed files an ``inert`` pattern matches -> the Python files at head that name them
    # (their file name in the text): ``RATES.md`` read by ``app/tax.py`` is no doc.
    named_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Changed or added modules whose top level gained a statement with an effect beyond
    # their own names (``effects``): they reach the modules they import.
    effects: frozenset[str] = frozenset()
    # Conftests (and ``-p`` plugins) that collect tests from files that are not Python: their
    # ``pytest_collect_file`` (JSON cases, Markdown examples, as Sybil and pytest's own YAML
    # example do), at head or at the merge-base.
    collectors: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Plan:
    tests: tuple[str, ...]  # impacted test files at head, sorted
    why: Mapping[str, tuple[str, ...]]  # test -> shortest chain: the test ... a changed file
    suite: tuple[str, ...]  # every test file at head
    reasons: tuple[Reason, ...]  # PROMOTE reasons; scope and trust come from the gate
    notes: tuple[str, ...] = ()
    # Folders whose non-Python files a collector turns into tests (``PlanInput.collectors``):
    # what those tests import is in their data, so every change that reaches code runs them.
    item_dirs: tuple[str, ...] = ()
    # Whether the range changes anything code may read (not inert files alone): an installed
    # collector's items, found when the interpreter is known (``check``), run only then.
    touches_code: bool = False

    @property
    def promoted(self) -> bool:
        return any(r.verdict is Verdict.PROMOTE for r in self.reasons)

    def explain(self, test: str) -> tuple[str, ...] | None:
        return self.why.get(test)


@dataclass
class _Impact:
    """Working state of one plan: seeds (module -> changed path) and chains per test."""

    seeds: dict[str, str] = field(default_factory=dict)
    conftests: list[str] = field(default_factory=list)
    test_data: list[str] = field(default_factory=list)  # non-Python files in a test root
    inert: list[str] = field(default_factory=list)  # files that impact nothing
    why: dict[str, tuple[str, ...]] = field(default_factory=dict)
    escalated: set[str] = field(default_factory=set)  # seeds only an escalation made

    def offer(self, test: str, chain: Iterable[str]) -> None:
        """Keep the shortest chain per test (ties: the first in sorted order)."""
        candidate = tuple(chain)
        current = self.why.get(test)
        if current is None or (len(candidate), candidate) < (len(current), current):
            self.why[test] = candidate


def plan(inp: PlanInput) -> Plan:
    patterns = python_files(inp.pytest_head)
    graph = inp.graph
    tests = test_files(inp.config, inp.pytest_head, graph, patterns)
    modules = set(graph.modules.values())
    tests |= {p for p in inp.doctests if p in modules}  # a module's examples reach its code
    texts = sorted(p for p in inp.doctests if p not in modules)
    impact = _seed(inp, graph)
    _escalate_locally(graph, impact)
    closure = graph.importers_closure(impact.seeds)
    _select(inp, graph, closure, tests, impact)
    touches = _touches_code(impact)
    item_dirs = collector_dirs(inp.config, inp.collectors) if touches else ()
    for text in texts:  # its examples may import anything: every change runs it
        impact.offer(text, (text,))
    tests |= set(texts)
    reasons = _reasons(inp, graph, closure, impact, patterns)
    reasons += _escalations(graph, impact.seeds, tests)
    notes = _notes(impact, graph)
    if item_dirs:
        notes.append(collectors_note(inp.collectors, item_dirs))
    return Plan(
        tests=tuple(sorted(impact.why)),
        why=dict(sorted(impact.why.items())),
        suite=tuple(sorted(tests)),
        reasons=tuple(reasons),
        notes=tuple(notes),
        item_dirs=item_dirs,
        touches_code=touches,
    )


def collectors_note(collectors: Iterable[str], item_dirs: Iterable[str]) -> str:
    return (f"tests collected from non-Python files ({', '.join(sorted(collectors))}: "
            f"pytest_collect_file) may import anything: those under {', '.join(item_dirs)} run")


def collector_dirs(config: Config, collectors: Iterable[str]) -> tuple[str, ...]:
    """The folders a collector's items come from: its own (a conftest's), else the test
    roots (a root conftest's, a plugin's, an installed one's; the whole tree where pytest's
    ``testpaths`` is unset), outermost."""
    found: set[str] = set()
    for path in collectors:
        folder = posixpath.dirname(path) if posixpath.basename(path) == CONFTEST else ""
        if folder:
            found.add(folder)
        else:
            found.update(("." if config.collect_anywhere else t) for t in config.tests)
    return outermost(found)


def outermost(folders: Iterable[str]) -> tuple[str, ...]:
    """The folders none of the others holds, sorted."""
    found = set(folders)
    if "." in found:
        return (".",)
    return tuple(f for f in sorted(found) if not any(under(f, g) for g in found if g != f))


def test_files(config: Config, pytest_head: Mapping[str, str | None], graph: ImportGraph,
               patterns: tuple[str, ...]) -> set[str]:
    """The test files at head: under the test roots, and, where pytest's ``testpaths`` do
    not say where it collects, wherever pytest finds them in the whole tree (pyflakes keeps
    its tests in ``pyflakes/test/``: with ``tests`` for the only root a plan found no test
    for any patch, ran nothing and passed). Fixture folders hold none."""
    tests, skipped = TestFiles(config, patterns), _NotRecursed(pytest_head)
    return {p for p in graph.modules.values() if tests.match(p) and not skipped(p)}


# pytest's own ``norecursedirs`` when the configuration sets none.
_NORECURSE_DEFAULT = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv",
                      "{arch}")


class _NotRecursed:
    """Whether pytest's collection never reaches a file: a folder on its way down from where
    it starts (each of ``testpaths``, else the root) matches ``norecursedirs`` (a name
    pattern, or one with a ``/`` matched against the folder's path, as pytest's
    ``fnmatch_ex`` does). New-user trial: marshmallow's ``tests/mypy_test_cases`` is in
    ``norecursedirs``; its files were selected, pytest collected them when named, and a
    harmless patch failed."""

    def __init__(self, pytest_head: Mapping[str, str | None]) -> None:
        value = pytest_option(pytest_head, "norecursedirs")
        words = option_words(value) if value is not None else list(_NORECURSE_DEFAULT)
        self.names = [w for w in words if "/" not in w]
        self.paths = ["*/" + w.strip("/") for w in words if "/" in w]
        starts = option_words(pytest_option(pytest_head, "testpaths"))
        self.starts = [s.strip("/") for s in starts if s.strip("/") not in ("", ".")]

    def __call__(self, path: str) -> bool:
        folders = path.split("/")[:-1]
        begin = max((len(s.split("/")) for s in self.starts
                     if path.startswith(s + "/")), default=0)
        for depth in range(begin, len(folders)):
            name = folders[depth]
            if any(fnmatch.fnmatch(name, pattern) for pattern in self.names):
                return True
            full = "/" + "/".join(folders[: depth + 1])
            if any(fnmatch.fnmatch(full, pattern) for pattern in self.paths):
                return True
        return False


# --- seeds ------------------------------------------------------------------------------------

def _seed(inp: PlanInput, graph: ImportGraph) -> _Impact:
    impact = _Impact()
    packages = _Packages(inp.config, graph)
    for change in inp.changes:
        for path in change.paths:
            _seed_path(inp.config, packages, path, impact, inp.named_by.get(path, ()))
    for path in sorted(inp.effects):
        # Its import-time effect lands in what it imports, for every test that uses that
        # (effects.py): each such module is reached as if the file had changed it.
        name = module_name(inp.config, path)
        edges = set(graph.imports.get(name, ())) if name is not None else set()
        targets = {t for t in edges if t in graph.modules}
        # ``from app.registry import Handler`` is an edge to ``app.registry.Handler`` too:
        # the module a name was imported from is a target of its own.
        named_from = {t.rpartition(".")[0] for t in edges - targets} & graph.modules.keys()
        # A parent package is an edge of every submodule: no target of its own, here.
        parents = {".".join(module.split(".")[:i]) for module in targets | {name or ""}
                   for i in range(1, module.count(".") + 1)} - named_from
        for target in sorted((targets | named_from) - parents):
            if target in graph.modules and target not in impact.seeds:
                impact.seeds[target] = path
    return impact


def _seed_path(config: Config, packages: _Packages, path: str, impact: _Impact,
               named_by: tuple[str, ...] = ()) -> None:
    if posixpath.basename(path) == CONFTEST:
        impact.conftests.append(path)
        return
    name = module_name(config, path) if path.endswith(".py") else None
    if name is not None:
        impact.seeds.setdefault(name, path)
    elif any(under(path, t) for t in (*config.tests, *config.fixtures)):
        impact.test_data.append(path)
    elif (package := packages.of(path)) is not None:
        # Package data: whatever imports the package (the graph gives every module an edge
        # to its parent packages, so importers of its submodules too) may read the file, and
        # so may code elsewhere that names it (a path built from its own ``__file__``).
        impact.seeds.setdefault(package, path)
        for name in (module_name(config, f) for f in named_by):
            if name is not None:
                impact.seeds.setdefault(name, path)
    elif agentgates(config, path):
        impact.inert.append(path)
    elif inert(config, path):
        # A file the code names (``open(ROOT / "RATES.md")`` in app/tax.py) is read by that
        # code, whatever its kind: the tests reaching those files run (red-team).
        readers = [n for n in (module_name(config, f) for f in named_by) if n is not None]
        for name in readers:
            impact.seeds.setdefault(name, path)
        if not readers:
            impact.inert.append(path)
    else:
        # A file outside the packages (rates/vat.json read by app/tax.py): any code may
        # read it, so every test may (issue 12); a witness narrows this to the tests that
        # opened it.
        impact.test_data.append(path)


def inert(config: Config, path: str) -> bool:
    """Whether an ``inert`` pattern matches a changed file (a doc, Markdown, settings)."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in config.inert)


def agentgates(config: Config, path: str) -> bool:
    """agentgate's own files (the scope file, the fixture manifest, the freeze ledger,
    ``.agentgate/``): the trust gate judges them, and no test reads them. A human's scope
    commit read as data any test may read ran every test file (new-user trial, dateutil)."""
    return (path in (config.scope_file, config.manifest) or under(path, config.ledger)
            or path.startswith(".agentgate/"))


class _Packages:
    """Which package a non-Python file belongs to: its folder's, when that folder is a regular
    package or a namespace package something imports."""

    def __init__(self, config: Config, graph: ImportGraph) -> None:
        self.config, self.graph = config, graph

    def of(self, path: str) -> str | None:
        """The nearest enclosing package (``pkg/templates/page.html`` belongs to ``pkg``)."""
        folder = posixpath.dirname(path)
        while folder:
            name = module_name(self.config, f"{folder}/__init__.py")
            if name is not None and (name in self.graph.modules or name in self.graph.importers):
                return name
            folder = posixpath.dirname(folder)
        return None


# --- selection ---------------------------------------------------------------------------------

def _select(
    inp: PlanInput,
    graph: ImportGraph,
    closure: Mapping[str, str | None],
    tests: set[str],
    impact: _Impact,
) -> None:
    conftests: dict[str, tuple[str, ...]] = {path: (path,) for path in impact.conftests}
    for name, path in graph.modules.items():
        if name not in closure:
            continue
        if path in tests:
            impact.offer(path, _chain_paths(graph, closure, name, impact))
        elif path == CONFTEST or path.endswith("/" + CONFTEST):
            # A conftest importing changed code changes the fixtures of every test below it.
            conftests.setdefault(path, _chain_paths(graph, closure, name, impact))
    # A plugin ``addopts`` loads with ``-p`` is every test's, as the root conftest is: its
    # fixtures and hooks reach tests that import nothing of it (red-team round 4).
    for plugin in harness.addopts_plugins(inp.pytest_head):
        if plugin in graph.modules and plugin in closure:
            conftests.setdefault(CONFTEST, _chain_paths(graph, closure, plugin, impact))
    ordered = sorted(tests)
    for conftest, chain in conftests.items():
        for test in _tests_under(ordered, posixpath.dirname(conftest)):
            impact.offer(test, (test, *chain))
    for data in impact.test_data:
        # A data file in a test root is read by tests we cannot name: all of that root's. A
        # fixture folder outside every test root feeds the whole suite.
        roots = [t for t in inp.config.tests if under(data, t)] or list(inp.config.tests)
        for root in roots:
            for test in _tests_under(ordered, root):
                impact.offer(test, (test, data))


def _tests_under(ordered: list[str], folder: str) -> list[str]:
    """The slice of the sorted test paths inside ``folder`` (the root for "" or ".")."""
    if folder in ("", "."):
        return ordered
    prefix = folder.rstrip("/") + "/"
    start = bisect.bisect_left(ordered, prefix)
    end = bisect.bisect_left(ordered, prefix[:-1] + chr(ord("/") + 1))
    return ordered[start:end]


# The end of a chain at a file that escalated locally: it depends on every module it might
# load, and some module changed (``plan --explain`` said "changed" of such a test file).
EVERY_MODULE = "(every module: its imports cannot be read, see its escalation)"


def _chain_paths(
    graph: ImportGraph, closure: Mapping[str, str | None], name: str, impact: _Impact
) -> tuple[str, ...]:
    """A module chain as repo paths, ending with the changed file (which may be the seed's own
    file, a deleted module's old path, or a package data file), or with ``EVERY_MODULE``
    after a file that is a seed only by its own escalation."""
    seeds = impact.seeds
    modules = graph.chain(name, closure)
    paths = [graph.modules.get(m, seeds.get(m, m)) for m in modules]
    changed = seeds.get(modules[-1]) if modules else None
    if changed is not None and (not paths or paths[-1] != changed):
        paths.append(changed)
    if modules and modules[-1] in impact.escalated:
        paths.append(EVERY_MODULE)
    return tuple(paths)


# --- reasons -----------------------------------------------------------------------------------

def _reasons(
    inp: PlanInput,
    graph: ImportGraph,
    closure: Mapping[str, str | None],
    impact: _Impact,
    patterns: tuple[str, ...],
) -> list[Reason]:
    reasons = _protected(inp, graph, closure, impact)
    reasons += _root_conftest(inp, graph, closure, impact)
    reasons += pytest_config_reasons(inp.pytest_changed)
    reasons += dependency_reasons(inp.changes, inp.pytest_changed)
    reasons += _checkout_attributes(inp.changes)
    reasons += _deleted_tests(inp, patterns)
    reasons += [
        Reason("marker-added", Verdict.PROMOTE, m.describe() + ": a relabelled test hides "
               "a failure; full suite required", path=m.path)
        for m in inp.markers
    ]
    return reasons


def _promote(code: str, detail: str, path: str | None = None) -> Reason:
    return Reason(code=code, verdict=Verdict.PROMOTE, detail=detail, path=path)


def _protected(
    inp: PlanInput, graph: ImportGraph, closure: Mapping[str, str | None], impact: _Impact
) -> list[Reason]:
    """One reason per protected prefix the impact set touches, naming the shortest route."""
    if not inp.config.protected:
        return []
    wanted = tuple(p.rstrip("/") for p in inp.config.protected)
    touched: dict[str, str | None] = {p: None for c in inp.changes for p in c.paths}
    for name in closure:
        path = graph.modules.get(name)
        if path is not None and path.startswith(wanted):
            touched.setdefault(path, name)
    touched.update({test: None for test in impact.why if test not in touched})
    reasons = []
    for prefix in inp.config.protected:
        hits = [p for p in touched if under(p, prefix)]
        if not hits:
            continue
        routes = [_route(p, touched[p], graph, closure, impact) for p in hits]
        route = min(routes, key=lambda r: (len(r), r))
        reasons.append(_promote(
            "protected",
            f"impact set reaches protected {prefix!r} ({len(hits)} file(s); "
            f"{' -> '.join(route)})",
            route[0],
        ))
    return reasons


def _route(
    path: str,
    module: str | None,
    graph: ImportGraph,
    closure: Mapping[str, str | None],
    impact: _Impact,
) -> tuple[str, ...]:
    if path in impact.why:
        return impact.why[path]
    if module is not None:
        return _chain_paths(graph, closure, module, impact)
    return (path,)


def _checkout_attributes(changes: Iterable[Change]) -> list[Reason]:
    """A ``.gitattributes`` decides the bytes a checkout gives any tracked file (line
    endings, ``working-tree-encoding``, filters), the tree the band and the suite run in:
    changed, a file no blob of the range touched may read differently (red-team, helper-9:
    ``data.txt text eol=crlf`` broke a test the witness skipped)."""
    for change in changes:
        path = next((p for p in change.paths if posixpath.basename(p) == ".gitattributes"), None)
        if path is not None:
            return [_promote("checkout-attributes", f"{path} changed: a checkout may give "
                             "tracked files other bytes than their blobs; full suite required",
                             path)]
    return []


def _root_conftest(
    inp: PlanInput, graph: ImportGraph, closure: Mapping[str, str | None], impact: _Impact
) -> list[Reason]:
    """The root conftest can reshape collection of every test (hooks, plugins, deselection):
    changed, it needs the whole suite. Importing something changed, it puts every test in the
    band (``_select``) without promoting (issue 12: a conftest that imports the package is
    the common case, and a promotion would discard the witness). The witness narrows it
    soundly: what the conftest's import ran, and what its hooks ran at start-up and
    collection, is ``COLLECT``, which every test depends on; what its fixtures and per-test
    hooks ran is charged to the tests that ran them."""
    if CONFTEST in impact.conftests:
        return [_promote("root-conftest", "root conftest.py changed: it governs every "
                         "test's collection; full suite required", CONFTEST)]
    for name, path in graph.modules.items():
        if path == CONFTEST and name in closure:
            if _uncertain_only(graph, impact, name):
                return []
            route = " -> ".join(_chain_paths(graph, closure, name, impact))
            return [Reason("root-conftest-imports", Verdict.SCOPED, f"root conftest.py "
                           f"imports changed code ({route}): every test runs under it, and "
                           "a witness narrows them to what ran the change", path=CONFTEST)]
    return []


# A folder the root conftest puts on sys.path that cannot be computed, or a module it imports
# by a computed name, is an uncertainty about what it imports: local, like any file's (issue
# 12). Every test is under the root conftest, so the band is wide without a witness, and a
# witness narrows it (every test's witness depends on what the root conftest's import ran:
# ``witness.depgraph``, ``COLLECT``).
LOCAL_AT_ROOT = frozenset(("dynamic-path", "dynamic-import"))


def _uncertain_only(graph: ImportGraph, impact: _Impact, name: str) -> bool:
    """Whether the root conftest is in the impact set only by a local escalation of its own
    (``LOCAL_AT_ROOT``), not because it imports changed code: then only its tests run (all
    of them, through ``_select``), and a witness may narrow them."""
    if name not in impact.escalated:
        return False
    codes = {e.code for e in graph.escalations if e.path == CONFTEST}
    if not codes <= LOCAL_AT_ROOT:
        return False
    others = [seed for seed in impact.seeds if seed != name]
    return name not in graph.importers_closure(others)


def _deleted_tests(inp: PlanInput, patterns: tuple[str, ...]) -> list[Reason]:
    """A deleted test file, or one renamed to a name pytest does not collect, is a test that
    no longer runs: the band cannot vouch for what it covered."""
    reasons = []
    for change in inp.changes:
        old = change.old_path if change.status == RENAMED else change.path
        if old is None or not is_test_file(old, inp.config, patterns):
            continue
        gone = change.status == DELETED or (
            change.status == RENAMED and not is_test_file(change.path, inp.config, patterns)
        )
        if gone:
            reasons.append(_promote("test-deleted", "test file deleted (or renamed out of "
                                    "collection); full suite required", old))
    return reasons


# Escalations the graph already narrowed to edges (a computed import under a constant
# prefix depends on every module under it): reported, never seeded as "everything".
NARROWED = frozenset(("dynamic-prefix",))


def _escalate_locally(graph: ImportGraph, impact: _Impact) -> None:
    """Uncertainty stays local (DESIGN principle 2, issue 12): a file the graph cannot read
    (a computed import, a file that does not parse or decode, an import it cannot resolve)
    depends on everything it might load, so any change to a module reaches it. It becomes a
    seed of its own: the tests that reach it run, and nothing else does. A patch that changes
    no module (docs only) reaches none of them."""
    if not impact.seeds:
        return
    for escalation in graph.escalations:
        name = graph.module_of(escalation.path)
        if name is not None and escalation.code not in NARROWED and name not in impact.seeds:
            impact.seeds[name] = escalation.path
            impact.escalated.add(name)


def _escalations(
    graph: ImportGraph, seeded: Mapping[str, str], tests: set[str]
) -> list[Reason]:
    """Every escalation in the report, with its path and why. One the graph cannot place in
    a module (a symlink into the code) is not local: the whole suite runs, as before."""
    reasons = []
    for e in graph.escalations:
        name = graph.module_of(e.path)
        if name is None:
            reasons.append(_promote(e.code, f"{e.detail}: the import graph cannot tell what "
                                    "this path is; full suite required", e.path))
            continue
        if e.code in NARROWED:
            reasons.append(Reason(e.code, Verdict.SCOPED, f"{e.detail}: it depends on every "
                                  "module under that prefix", path=e.path))
            continue
        effect = _effect(graph, name, tests) if name in seeded else "no change reaches it"
        reasons.append(Reason(e.code, Verdict.SCOPED, f"{e.detail}: the import graph cannot "
                              f"tell what this file depends on, so it depends on every module; "
                              f"{effect}", path=e.path))
    return reasons


def _effect(graph: ImportGraph, name: str, tests: set[str]) -> str:
    if graph.modules.get(name) == CONFTEST:
        return f"the {len(tests)} test file(s) under it run"
    reached = sum(graph.modules.get(m) in tests for m in graph.importers_closure([name]))
    return f"the {reached} test file(s) that reach it run" if reached else "no test reaches it"


def _touches_code(impact: _Impact) -> bool:
    return bool(impact.seeds or impact.conftests or impact.test_data or impact.why)


def _notes(impact: _Impact, graph: ImportGraph) -> list[str]:
    notes = list(graph.notes)
    if impact.inert:
        notes.append(f"impacts no test (outside sources and tests): "
                     f"{listed(sorted(impact.inert))}")
    if graph.escalations and not _touches_code(impact):
        notes.append(f"{len(graph.escalations)} graph escalation(s) ignored: no code changed")
    return notes
