"""``agentgate plan`` and ``agentgate check``: the gate, the ledger, the import graph, the
planner and the band, in that order, each handing plain data to the next.

The rules come from the merge-base (``gate.check_range`` loads its config); the graph and
the code under test are the head's. ``check`` never runs tests when the trust boundary or
the ledger blocks, and a promoted plan runs the whole suite: when that passes, the promotion
was satisfied and the exit is 0 (the JSON keeps ``"verdict_plan": "promote"``).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import posixpath
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentgate.core.config import PYTEST_CONFIG_FILES, Config, pytest_doctests
from agentgate.core.model import DELETED, Change, Reason, Result, Verdict, worst
from agentgate.core.text import listed
from agentgate.gate import checks as gate
from agentgate.gate.checks import RangeCheck
from agentgate.git import gitio
from agentgate.graph import build as graph_build
from agentgate.graph.types import ImportGraph, module_name
from agentgate.ledger import committed as ledger_committed
from agentgate.ledger import excuse as ledger_excuse
from agentgate.plan import effects, harness, markers, planner
from agentgate.plan import pytest_config as planner_pytest
from agentgate.plan.planner import Plan, PlanInput
from agentgate.report.plan import BandRun, CheckDetail, Explain, PlanDetail
from agentgate.witness import presence

if TYPE_CHECKING:
    # Imported where used: a plan never runs the band, and without a witness store it never
    # reads one (together ~40 ms of a warm plan's start-up).
    from agentgate.report.explain import NodeExplain
    from agentgate.run import band
    from agentgate.run.progress import Display
    from agentgate.witness.select import WitnessPlan

Texts = tuple[str | None, str | None]  # a file's text at the merge-base and at head


@dataclass(frozen=True)
class Planned:
    range: RangeCheck
    ledger: tuple[Reason, ...]
    plan: Plan
    extra_reasons: tuple[Reason, ...] = ()  # e.g. no base to compare against
    base_given: bool = True
    # The witnessed selection (issue 6): per-test, inside the import-closure band's rules.
    # None when no usable witness exists: the import-closure band runs, never fewer tests.
    witness: WitnessPlan | None = None
    witness_notes: tuple[str, ...] = ()

    @property
    def reasons(self) -> list[Reason]:
        drift = []
        if self.witness is not None and self.witness.full_suite:
            drift = [Reason("witness-ambient-drift", Verdict.PROMOTE,
                            "the ambient environment is not the witness's: "
                            + self.witness.ambient_drift[0] + "; full suite required")]
        return [*self.range.reasons, *self.ledger, *self.extra_reasons, *self.plan.reasons,
                *drift]

    @property
    def selection(self) -> tuple[str, ...] | None:
        """What the band passes to pytest; None for the whole suite."""
        if self.full_suite:
            return None
        if self.witness is not None:
            return self.witness.run_args
        return self.plan.tests

    @property
    def deselect(self) -> tuple[str, ...]:
        """The cases of the selection's parametrized functions the witness vouches for."""
        if self.full_suite or self.witness is None:
            return ()
        return self.witness.deselect

    @property
    def blocked(self) -> bool:
        return any(r.verdict is Verdict.BLOCKED for r in (*self.range.reasons, *self.ledger))

    @property
    def full_suite(self) -> bool:
        return any(r.verdict is Verdict.PROMOTE for r in self.reasons)


@dataclass
class CheckResult(Result):
    """A check's verdict: a promotion is *satisfied* once the full suite ran (and its outcome
    is then the failed/passed verdict); trust, scope and ledger verdicts always stand."""

    satisfied: frozenset[Verdict] = field(default_factory=frozenset)

    @property
    def verdict(self) -> Verdict:
        verdicts = [r.verdict for r in self.reasons if r.verdict not in self.satisfied]
        if self.forced is not None:
            verdicts.append(self.forced)
        return worst(verdicts)


# --- plan --------------------------------------------------------------------------------------

def _doctests(root: Path, head: str, head_pytest: Mapping[str, str | None]) -> frozenset[str]:
    """The files pytest collects doctests from at head, by its options (red-team: with
    ``--doctest-modules`` in addopts, a module's examples never ran in the band): modules
    with an example line when ``--doctest-modules`` is on, and text files ``--doctest-glob``
    matches, under ``testpaths``. A failing ``git grep`` fails the plan: no doctest file may
    go unseen."""
    options = pytest_doctests(head_pytest)
    roots = options.roots
    specs = () if "." in roots else tuple(f":(literal){r.rstrip('/')}" for r in roots)
    # A root may be a folder or a file (testpaths = ["tests", "README.md"]).
    found = gitio.files_matching(root, head, "^[[:space:]]*>>>([[:space:]]|$)", specs)
    return frozenset(f for f in found if (
        options.modules and f.endswith(".py")
        and posixpath.basename(f) not in ("conftest.py", "setup.py")
    ) or (not f.endswith(".py") and any(fnmatch.fnmatch(posixpath.basename(f), g)
                                        for g in options.globs)))


def _collectors(root: Path, checked: RangeCheck, graph: ImportGraph,
                head_pytest: Mapping[str, str | None]) -> frozenset[str]:
    """The conftests and ``-p`` plugins that name ``pytest_collect_file``, at head or at the
    merge-base: the tests they collect from files that are not Python are no test file of
    the graph (red-team round 6: JSON cases a root conftest collected never ran in the band).
    A mention anywhere counts (Sybil binds the hook by assignment)."""
    plugins = [graph.modules[n] for n in harness.addopts_plugins(head_pytest)
               if n in graph.modules]
    specs = (":(glob)**/conftest.py", *(f":(literal){p}" for p in plugins))
    found: set[str] = set()
    for rev in dict.fromkeys((checked.head, checked.merge_base)):
        found |= gitio.files_matching(root, rev, "pytest_collect_file", specs, fixed=True)
    return frozenset(found)


def _named_by(root: Path, checked: RangeCheck) -> dict[str, tuple[str, ...]]:
    """The changed files that are not Python, each with the Python files at head whose text
    names it (its file name): one ``git grep`` for the files naming any of them and one read
    of those, whatever the number of files; nothing for a range that changes none."""
    # Every changed file that is not Python: an inert one is data only where code names it;
    # package data is its package's, and also the data of code elsewhere that names it by
    # a path of its own (red-team round 4: ``lib/render.py`` read ``app/templates/x.txt``
    # from ``__file__`` without importing ``app``).
    inert = sorted({p for c in checked.changes for p in c.paths if not p.endswith(".py")})
    if not inert:
        return {}
    names = {p: posixpath.basename(p) for p in inert}
    readers = gitio.files_matching(root, checked.head, tuple(sorted(set(names.values()))),
                                   ("*.py",), fixed=True)
    blobs = gitio.ls_tree(root, checked.head, tuple(sorted(readers))) if readers else {}
    texts = gitio.cat_blobs(root, list(blobs.values()))
    return {p: tuple(sorted(f for f, b in blobs.items()
                            if name.encode("utf-8", "surrogateescape") in texts.get(b, b"")))
            for p, name in names.items()}


def _effects(root: Path, checked: RangeCheck, config: Config,
             graph: ImportGraph) -> frozenset[str]:
    """The changed or added source modules whose top level gained a statement with an effect
    beyond their own names, or that register into a module they import (``plan.effects``):
    one read of their texts, and one of the registries they may name."""
    tests = planner_pytest.TestFiles(config)
    wanted = [c for c in checked.changes if c.new_blob and c.path.endswith(".py")
              and not tests.match(c.path) and posixpath.basename(c.path) != "conftest.py"]
    if not wanted:
        return frozenset()
    blobs = gitio.cat_blobs(root, [b for c in wanted for b in (c.old_blob, c.new_blob) if b])
    found = {c.path for c in wanted if effects.gained(
        _blob(blobs, c.old_blob), _blob(blobs, c.new_blob))}
    return frozenset(found | _registering(root, checked, config, graph, [
        (c.path, _blob(blobs, c.old_blob), _blob(blobs, c.new_blob))
        for c in wanted if c.path not in found]))


def _registering(root: Path, checked: RangeCheck, config: Config, graph: ImportGraph,
                 texts: list[tuple[str, bytes | None, bytes | None]]) -> set[str]:
    """The changed modules that, at the base or at head, register into another module of
    the tree (a subclass of its registry class, a decorator or top-level call of its
    registering function): ``effects.registrations`` resolved against the graph's modules,
    each judged by the registry's text at head."""
    asked: dict[str, set[tuple[str, str, str]]] = {}
    for path, old, new in texts:
        own = module_name(config, path) or ""
        package = own if path.endswith("__init__.py") else own.rpartition(".")[0]
        for kind, dotted in effects.registrations(old, package) | effects.registrations(
                new, package):
            split = _module_prefix(dotted, graph)
            if split is not None and split[0] != own:
                asked.setdefault(path, set()).add((kind, *split))
    if not asked:
        return set()
    paths = {graph.modules[m] for wants in asked.values() for _, m, _ in wants}
    blobs = gitio.ls_tree(root, checked.head, tuple(sorted(paths)))
    registries = gitio.cat_blobs(root, sorted(set(blobs.values())))

    def text(module: str) -> bytes | None:
        path = graph.modules[module]
        if path not in blobs:  # a module a re-export leads to: read when it does
            blobs.update(gitio.ls_tree(root, checked.head, (path,)))
            registries.update(gitio.cat_blobs(root, [blobs[path]] if path in blobs else []))
        blob = blobs.get(path)
        return registries.get(blob) if blob else None

    def registry(kind: str, module: str, name: str) -> bool:
        for _hop in range(4):  # a package re-exporting what a submodule defines, and on
            found = text(module)
            if effects.registers(found, kind, name):
                return True
            package = module if graph.modules[module].endswith("__init__.py") else (
                module.rpartition(".")[0])
            source = effects.reexport(found, name, package)
            split = _module_prefix(source, graph) if source else None
            if split is None:
                return False
            module, name = split
        return False

    return {path for path, wants in asked.items()
            if any(registry(kind, m, name) for kind, m, name in wants)}


def _module_prefix(dotted: str, graph: ImportGraph) -> tuple[str, str] | None:
    """``app.registry.Handler`` -> (``app.registry``, ``Handler``): the longest prefix that
    is a module of the tree, and the rest (one name, or an object's method)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module in graph.modules and graph.modules[module].endswith(".py"):
            rest = ".".join(parts[cut:])
            return (module, rest) if rest.count(".") <= 1 else None
    return None


def _blob(blobs: Mapping[str, bytes], blob: str | None) -> bytes | None:
    return blobs.get(blob) if blob else None


def plan(root: Path, base: str | None, head: str = "HEAD", *, explain: str | None = None) -> Result:
    # confirm_env=False: plan executes nothing from the branch (issue 11), not even the
    # interpreter the witness gate would fingerprint; check confirms it before the band.
    planned = with_ledger(plan_range(root, base, head, confirm_env=False), root)
    result = Result(command="plan")
    _fill(result, planned)
    asked = _explain(planned, explain) if explain is not None else None
    result.detail = PlanDetail(**_plan_fields(planned), explain=asked)
    return result


def plan_range(root: Path, base: str | None, head: str, *, confirm_env: bool = True) -> Planned:
    checked = gate.check_range(root, base, head)
    config = checked.config
    graph = graph_build.build(root, config, checked.head)
    head_pytest = gitio.read_many_at(root, checked.head, list(PYTEST_CONFIG_FILES))
    texts = _change_texts(root, checked, config)
    inp = PlanInput(
        config=config,
        changes=tuple(checked.changes),
        graph=graph,
        pytest_head=head_pytest,
        pytest_changed=_pytest_changed(texts),
        markers=tuple(_added_markers(config, texts, planner_pytest.python_files(head_pytest))),
        doctests=_doctests(root, checked.head, head_pytest),
        named_by=_named_by(root, checked),
        effects=_effects(root, checked, config, graph),
        collectors=_collectors(root, checked, graph, head_pytest),
    )
    extra = () if base is not None else (Reason(
        "no-base", Verdict.PROMOTE, "nothing to compare against: full suite required"),)
    planned = Planned(checked, (), planner.plan(inp), extra, base_given=base is not None)
    return _with_witness(root, planned, confirm_env)


def _with_witness(root: Path, planned: Planned, confirm_env: bool) -> Planned:
    """Narrow the band per test with the newest usable witness (one recorded at an ancestor
    of the base); a promoted or blocked plan, or no witness, keeps the import-closure band."""
    if planned.full_suite or planned.blocked or not planned.base_given:
        return planned
    checked, notes = planned.range, list[str]()
    if not presence.store_path(root).is_file():
        return dataclasses.replace(planned, witness_notes=(presence.NO_STORE,))
    from agentgate.witness import select as witness_gate

    # A range the import closure finds no test reaching (empty, docs only, a script no test
    # names) audits nothing: the closure bounds what any test can see of it, so a skip there
    # has nothing to be wrong about (new-user trial: three audit tests on a README push).
    reached = bool(planned.plan.tests or planned.plan.item_dirs)
    wplan = witness_gate.evaluate(
        root, checked.config, base=checked.merge_base, head=checked.head,
        frozen=ledger_excuse.excuses(root, checked.config, base=checked.merge_base,
                                     tree=root).excused, notes=notes, check_env=confirm_env,
        audited=reached,
    )
    return dataclasses.replace(planned, witness=wplan, witness_notes=tuple(notes))


def with_ledger(planned: Planned, root: Path) -> Planned:
    """The freeze ledger as head commits it, validated, so an invalid record in the pushed
    code blocks; plan and check both judge it here, so they agree (issue 13). Excuses come
    from the merge-base's ledger (``_excused``), never from this one."""
    found = ledger_committed.check_at(root, planned.range.config, planned.range.head)
    return dataclasses.replace(planned, ledger=tuple(found))


def _fill(result: Result, planned: Planned) -> None:
    checked, the_plan = planned.range, planned.plan
    result.base = checked.base if planned.base_given else None
    result.head, result.changed = checked.head, checked.changes
    result.reasons = planned.reasons
    result.notes = [*checked.notes, *the_plan.notes, *planned.witness_notes]


def _plan_fields(planned: Planned) -> dict[str, Any]:
    """The ``PlanDetail`` fields plan and check share."""
    selection = planned.selection
    tests = selection if planned.witness is not None and selection is not None else None
    return {"plan": planned.plan, "merge_base": planned.range.merge_base,
            "tests": planned.plan.tests if tests is None else tests,
            "full_suite": planned.full_suite, "witness": planned.witness}


def _change_texts(root: Path, checked: RangeCheck, config: Config) -> dict[Change, Texts]:
    """Base and head text of the changed files the planner reads: pytest configuration files
    at any depth (pytest reads the first one found walking up from the tests it is given)
    and Python files under a test root. One ``git cat-file`` for all of them."""
    wanted = [
        c for c in checked.changes
        if any(posixpath.basename(p) in PYTEST_CONFIG_FILES for p in c.paths)
        or (c.path.endswith(".py") and any(planner_pytest.under(c.path, t) for t in config.tests))
    ]
    blobs = gitio.cat_blobs(root, [b for c in wanted for b in (c.old_blob, c.new_blob) if b])
    return {c: (_text(blobs, c.old_blob), _text(blobs, c.new_blob)) for c in wanted}


def _pytest_changed(texts: dict[Change, Texts]) -> dict[str, Texts]:
    """Per pytest configuration path, its (base, head) text; a rename is a removal at the old
    path and an addition at the new one."""
    pairs: dict[str, Texts] = {}
    for change, (old, new) in texts.items():
        if change.old_path and change.old_path != change.path:
            pairs[change.old_path] = (old, None)
            pairs[change.path] = (None, new)
        else:
            pairs[change.path] = (old, new)
    return {p: t for p, t in pairs.items() if posixpath.basename(p) in PYTEST_CONFIG_FILES}


def _text(blobs: dict[str, bytes], blob: str | None) -> str | None:
    if blob is None or blob not in blobs:
        return None
    return blobs[blob].decode("utf-8", errors="surrogateescape")


def _added_markers(
    config: Config, texts: dict[Change, Texts], patterns: tuple[str, ...]
) -> list[markers.AddedMarker]:
    """Markers added to tests that existed at the merge-base, in every changed Python file
    under a test root (test files per test; helpers and conftests as a whole)."""
    found: list[markers.AddedMarker] = []
    for change, (base_text, head_text) in texts.items():
        if change.status == DELETED or not change.path.endswith(".py"):
            continue
        is_test = planner_pytest.is_test_file(change.path, config, patterns)
        found += markers.added_markers(change.path, base_text, head_text, is_test_file=is_test)
    return found


# --- check -------------------------------------------------------------------------------------

def check(root: Path, base: str | None, head: str = "HEAD", *, shadow: bool = False,
          workers: int | str | None = None, display: Display | None = None) -> Result:
    """``workers``: ``--workers``, else the config's (pytest-xdist, run.band); ``display``:
    where the band's live counts go while it runs (a terminal), if anywhere."""
    from agentgate.run import band

    start = time.monotonic()
    planned = with_ledger(plan_range(root, base, head), root)
    result = CheckResult(command="check")
    ran: _Ran = (None, None)
    if planned.blocked:
        _not_run(result, planned)
    else:
        from agentgate.flows import base_contract
        from agentgate.run import installed, tamper

        if planned.base_given:
            base_contract.warm(root, planned.range)
        before = tamper.snapshot(root)
        outside = _interpreter_folders(root, planned)
        planned = _installed_collectors(planned, outside)
        noted = installed.note(outside)
        with band.clean_tree(root, planned.range.head, planned.range.config) as tree:
            _fill(result, planned)
            ran = _run(root, planned, tree, result, shadow=shadow, workers=workers,
                       display=display)
        result.reasons += _tampered(tamper.changed(root, before))
        result.reasons += _installed_changed(installed.changed(noted, installed.note(outside)))
    _prune(root, planned, result)  # the tree's lock is released by now
    if head == "HEAD":
        result.notes += _uncommitted(root)
    result.detail = CheckDetail(
        **_plan_fields(planned), verdict_plan=worst([r.verdict for r in planned.reasons]),
        band=ran[0], shadow_stats=ran[1], elapsed=time.monotonic() - start,
        quiet_notes=tuple(n for n in result.notes if routine(n)),
    )
    return result


# The notes a passing check keeps for --verbose: how the band was chosen, never what a human
# must see (a governing commit, an accepted or harmless suppression, a witness that could not
# be used, a freeze record that excuses nothing: review, issue 13).
ROUTINE_NOTES = (
    "no witness recorded", "witness ", "no test impacted", "impacts no test",
    "graph escalation(s) ignored", "promoted: the full suite ran and passed",
    "no declared scope",  # the repository's standing configuration, not this patch's
    # A case id holding a time or a pid that passed on head's code (new-user trial: two
    # four-line notes on every passing check of marshmallow's suite).
    "unstable case id",
)


def routine(note: str) -> bool:
    return note.startswith(ROUTINE_NOTES) and not note.startswith("witness not used")

_Ran = tuple[BandRun | None, dict[str, Any] | None]  # what ran, the witness's shadow stats


def _prune(root: Path, planned: Planned, result: CheckResult) -> None:
    """Bound the caches after each check (issue 13: worktrees piled up)."""
    from agentgate.flows import gc as housekeeping  # sqlite3 for the witness store

    problem = housekeeping.after_run(root, planned.range.config)
    if problem:
        result.notes.append(problem)


def _not_run(result: CheckResult, planned: Planned) -> None:
    _fill(result, planned)
    result.notes.append("tests not run: the trust boundary or the freeze ledger blocks")


def _run(
    root: Path, planned: Planned, tree: band.Tree, result: CheckResult, *, shadow: bool,
    workers: int | str | None = None, display: Display | None = None,
) -> _Ran:
    from agentgate.flows import check_results as checkrun_results
    from agentgate.run import band, interp

    config = planned.range.config
    selection = planned.selection
    item_dirs = planned.plan.item_dirs if selection is not None else ()
    if selection == () and not item_dirs and not shadow:
        result.notes.append("no test impacted: nothing to run")
        return None, None
    # The range's interpreter check (issue 11): not a file the range tracks or changed.
    interp.project_python(root, config, head=planned.range.head,
                          base=planned.range.merge_base if planned.base_given else None)
    spec = band.BandSpec(selection, config.property_band, config.hypothesis_seed, shadow,
                         config.workers if workers is None else workers,
                         len(planned.plan.suite), planned.deselect,
                         _patch_tests(planned) if planned.base_given else (),
                         _conftest_dirs(root, planned, selection), item_dirs)
    frozen = _excused(root, planned, tree.path, result)
    report = band.run_band(root, config, tree, spec, frozen, display=display)
    report = _no_tests_at_base(root, planned, report)
    report, uncovered = _frozen_cases(root, planned, report, frozen)
    result.reasons += checkrun_results.run_reasons(report, selection) + uncovered
    result.notes += checkrun_results.shadow_note(report, selection)
    if selection is None:
        result.satisfied = frozenset({Verdict.PROMOTE})
        result.notes.append(checkrun_results.promotion_note(report))
    full: band.BandReport | None = None
    leakers = _leaked(root, planned, report, result) if selection is not None else None
    if leakers is not None:
        # In one process, whatever the band's workers: the leak reaches the tests after it
        # only where they share its process (xdist would spread them over workers).
        full = band.run_band(root, config, tree,
                             dataclasses.replace(spec, selection=None, workers=0, apart=()),
                             frozen, display=display)
        full, uncovered = _frozen_cases(root, planned, full, frozen)
        result.reasons += checkrun_results.run_reasons(full, None) + _new(uncovered, result)
        result.satisfied = frozenset({Verdict.PROMOTE})
        result.notes.append(checkrun_results.promotion_note(full))
        result.reasons += _without_leakers(root, planned, tree, spec, frozen, report, leakers,
                                           display)
    elif selection is None and _apart_leaked(report, root):
        # The range's test files ran apart from the base's; what they left changed reaches
        # the tests after them where pytest runs the suite in one process: so it runs so.
        full = band.run_band(root, config, tree, dataclasses.replace(spec, workers=0, apart=()),
                             frozen, display=display)
        full, uncovered = _frozen_cases(root, planned, full, frozen)
        result.reasons += checkrun_results.run_reasons(full, None) + _new(uncovered, result)
        result.notes.append(checkrun_results.promotion_note(full))
    result.notes += [f"frozen test failed (excused by its freeze): {n}"
                     for r in report.runs for n in r.frozen_failed_ids]
    result.notes += _failing_at_base(planned, report)
    seed = config.hypothesis_seed if config.property_band else None
    from agentgate.flows import base_contract  # the base oracle (issue 11)

    vouched: frozenset[str] = frozenset()
    if planned.witness is not None:
        from agentgate.witness.select import SKIP

        vouched = frozenset(d.nodeid for d in planned.witness.labelled(SKIP))
    found = base_contract.judge(root, planned.range, planned.selection, report, result,
                                base_given=planned.base_given, vouched=vouched)
    # The report shows the whole suite when a leak sent the check there; the base oracle
    # and the witness audit judged the band's own run above.
    ran = BandRun(report if full is None else full, selection if full is None else None,
                  tuple(checkrun_results.shadow_missed(report, selection)), shadow, seed, found)
    return ran, _audit(planned, report, result)


def _frozen_cases(root: Path, planned: Planned, report: band.BandReport,
                  frozen: frozenset[str]) -> tuple[band.BandReport, list[Reason]]:
    """A failed case excused only by its parametrized function's freeze stays excused when
    it fails at the base too (``flows.freeze_cases``; red-team rt4-13); the others count as
    failures, with their reasons. Without a base, as the ledger says: no base run."""
    from agentgate.flows import freeze_cases

    if not planned.base_given:
        return report, []
    return freeze_cases.judge(root, planned.range, report, frozen)


def _new(reasons: list[Reason], result: CheckResult) -> list[Reason]:
    """Those of ``reasons`` the result does not hold yet (a case judged by an earlier run)."""
    return [r for r in reasons if r not in result.reasons]


def _no_tests_at_base(root: Path, planned: Planned, report: band.BandReport
                      ) -> band.BandReport:
    """A selected file that collected no test is no failure when the base's own collection
    of it has none either: a helper module named as tests are (Markdown's
    ``markdown/test_tools.py`` failed every check that reached it, new-user check). One the
    base has tests in stays ``not-collected``: the patch made them vanish. The base's
    collection is the cached base inventory; only asked when such a file occurs."""
    from agentgate.core.errors import AgentgateError
    from agentgate.run import inventory

    files = sorted({n for p in report.problems if p.code == "not-collected"
                    for n in p.nodeids if "::" not in n})
    if not files or not planned.base_given:
        return report
    mb = planned.range.merge_base
    present = gitio.ls_tree(root, mb, tuple(files))
    at_base = [f for f in files if f in present]
    try:
        tests = inventory.inventory(root, planned.range.config, mb, tuple(at_base)).nodeids
    except AgentgateError:
        return report  # the base cannot be collected: the problem stands
    empty = {f for f in files if not any(n.split("::", 1)[0] == f for n in tests)}
    problems = []
    for problem in report.problems:
        if problem.code == "not-collected" and empty & set(problem.nodeids):
            left = tuple(n for n in problem.nodeids if n not in empty)
            if not left:
                continue
            problem = dataclasses.replace(problem, nodeids=left)
        problems.append(problem)
    return dataclasses.replace(report, problems=tuple(problems))


def _interpreter_folders(root: Path, planned: Planned) -> list[Path]:
    """The project interpreter's folders outside the repository (``run.installed``); none
    when nothing will run or the interpreter is refused (the band says why)."""
    from agentgate.core.errors import AgentgateError
    from agentgate.run import installed, interp

    if planned.selection == () and not planned.plan.touches_code:
        return []
    config = planned.range.config
    try:  # refused as the band refuses it: never run a file the range supplies
        python = interp.project_python(root, config, head=planned.range.head,
                                       base=planned.range.merge_base if planned.base_given
                                       else None)
    except AgentgateError:
        return []
    return installed.folders(python, interp.test_env(config, root), root, [root])


def _installed_collectors(planned: Planned, outside: list[Path]) -> Planned:
    """Add the test roots' non-Python items where an installed plugin collects them (red-team
    round 6, 04: pytest-yaml, tavern, nbval by entry point), as a conftest's are
    (``_collectors``), for a range that touches code; seen only where the interpreter is
    known, so ``plan`` does not list them."""
    from agentgate.run import installed

    if planned.full_suite or not planned.plan.touches_code:
        return planned
    found = installed.collectors(outside)
    if not found:
        return planned
    config, the_plan = planned.range.config, planned.plan
    named = [f"{name} (installed)" for name in found]
    dirs = planner.outermost([*the_plan.item_dirs, *planner.collector_dirs(config, named)])
    the_plan = dataclasses.replace(the_plan, item_dirs=dirs, notes=(
        *the_plan.notes, planner.collectors_note(named, dirs)))
    return dataclasses.replace(planned, plan=the_plan)


def _installed_changed(paths: list[str]) -> list[Reason]:
    """The project interpreter's own files changed while the patch's code ran: what ran
    after (the base oracle's runs, every later check) ran what it left there."""
    if not paths:
        return []
    shown = listed(paths, 3)
    return [Reason("interpreter-tampered", Verdict.BLOCKED, "the project interpreter's "
                   f"installed files changed while the patch's code ran ({shown}): what ran "
                   "after it, and every later run of that interpreter, runs what it left "
                   "there; reinstall the environment and check again", path=shown)]


def _tampered(paths: list[str]) -> list[Reason]:
    """agentgate's own state changed by something else while the patch's code ran
    (``run.tamper``): what was read from it afterwards cannot be trusted."""
    if not paths:
        return []
    shown = listed(paths, 3)
    return [Reason("state-tampered", Verdict.BLOCKED, f"agentgate's own state under "
                   f".git/agentgate changed while the patch's code ran ({shown}), not by "
                   "agentgate: what it read from there afterwards cannot be trusted; remove "
                   "the files (agentgate gc --all) and check again",
                   path=".git/agentgate")]


def _uncommitted(root: Path) -> list[str]:
    """A check judges commits: changes the work tree holds are said to be left out (new-user
    trial: an uncommitted bug on main was 'scoped (exit 0)', with no word about it)."""
    paths = gitio.uncommitted(root)
    if not paths:
        return []
    shown = listed(paths, 3)
    return [f"not checked: uncommitted changes to {len(paths)} tracked file(s) ({shown}); "
            "check judges the range's commits: commit them to have them checked"]


def _conftest_dirs(root: Path, planned: Planned, selection: tuple[str, ...] | None
                   ) -> tuple[str, ...]:
    """The folders whose conftest the whole suite loads and a run of the selection would
    not (``core.paths.sibling_conftests``): the band walks them for their conftests."""
    if selection is None:
        return ()
    from agentgate.core.paths import sibling_conftests

    checked = planned.range
    conftests = [p for p in gitio.ls_tree(root, checked.head)
                 if posixpath.basename(p) == "conftest.py"]
    found = sibling_conftests(conftests, checked.config, selection)
    # Where the project steers pytest's walk itself (``norecursedirs``, ``collect_ignore``:
    # a sample project's conftest under the tests that the whole suite never loads), which
    # folders its run loads is not known here: none is added. The base says so, never the
    # patch (a ``collect_ignore`` an agent writes into a conftest turns nothing off).
    if found and gitio.files_matching(root, checked.merge_base,
                                      ("norecursedirs", "collect_ignore"),
                                      (*conftests, *PYTEST_CONFIG_FILES), fixed=True):
        return ()
    return tuple(found)


def _patch_tests(planned: Planned) -> tuple[str, ...]:
    """The test files the range added or changed, as head has them (``band.PATCH_TESTS``);
    none when they are every test file of the suite (no base test of another file to keep
    them from: a whole suite of them alone ran nothing, exit 5)."""
    from agentgate.core.paths import TestFiles

    checked = planned.range
    tests = TestFiles(checked.config)
    found = tuple(sorted({c.path for c in checked.changes if c.status != DELETED
                          and c.new_blob != c.old_blob and tests.match(c.path)}))
    return () if set(planned.plan.suite) <= set(found) else found


def _apart_leaked(report: band.BandReport, root: Path) -> bool:
    """Whether the range's own test files, run apart, left process state changed."""
    from agentgate.run import band, leaks

    return bool(leaks.found([report.seen.get(band.PATCH_TESTS)], (report.tree, root)))


def _leaked(
    root: Path, planned: Planned, report: band.BandReport, result: CheckResult
) -> frozenset[str] | None:
    """The band's tests (``leaks.COLLECTION`` for its collection) that left process state
    changed that they did not at the base (``run.leaks``; the witness says, else a run at
    the base), or None when none did: the tests the band left out would see it in the full
    suite, so the promotion is recorded and the whole suite runs, in one process: a shadow
    run may have spread it over xdist workers."""
    from agentgate.run import leaks

    found = leaks.found(report.seen.values(), (report.tree, root))
    if not found:
        return None
    base = planned.witness.state_leaks if planned.witness is not None else None
    source = "the witness" if base is not None else None
    if base is not None and planned.base_given and leaks.new(found, base):
        # What a library sets up as it is first imported leaks in whichever test imports it
        # first: in a band without the base's first importer, another test is first. Those
        # tests' files, run at the base, say whether they leave it there too.
        again = _base_leaks(root, planned, leaks.fresh(found, base))
        if again is not None:
            base, source = base | again, "the witness, and a run of those test files at the base"
    elif base is None and planned.base_given:
        base = _base_leaks(root, planned, found)
        source = "a run of those test files at the base" if base is not None else None
    lines = leaks.new(found, base)
    if lines and planned.base_given:
        # Within a file the first importer moves too: the band's own tests, run at the base in
        # the order they ran, leave there what the base's code leaves in that order (toolz:
        # an audited test_memoize_partial first put the tree on sys.path, its file's earlier
        # tests did at the base).
        ran = tuple((report.seen.get("band") or {}).get("tests") or {})
        again = _base_leaks(root, planned, {}, nodes=ran) if ran else None
        if again is not None:
            base = (base or frozenset()) | again
            source = (f"{source}, and the band's own tests run at the base" if source
                      else "the band's own tests run at the base")
            lines = leaks.new(found, base)
    if not lines:
        return None
    swapped = leaks.swapped(leaks.fresh(found, base))
    if swapped:
        result.reasons.append(Reason(leaks.SWAP_CODE, Verdict.BLOCKED,
                                     leaks.swap_detail(swapped)))
    result.reasons.append(Reason(leaks.PROMOTE_CODE, Verdict.PROMOTE,
                                 leaks.reason_detail(lines, source=source),
                                 path=_leak_path(lines[0])))
    return frozenset(leaks.fresh(found, base))


def _without_leakers(
    root: Path, planned: Planned, tree: band.Tree, spec: band.BandSpec, frozen: frozenset[str],
    report: band.BandReport, leakers: frozenset[str], display: Display | None,
) -> list[Reason]:
    """The band's other tests once more, in a process where the tests that leaked anew do
    not run first. The whole suite shows what their state does to the tests after them; this
    shows what those tests do without it: a stub of a broken module left in ``sys.modules``
    makes the tests after it pass in the band and in the whole suite alike (red-team)."""
    from agentgate.flows import check_results as checkrun_results
    from agentgate.run import band

    ran = (report.seen.get("band") or {}).get("tests") or {}
    rest = tuple(n for n in ran if n not in leakers)
    if not rest or leakers <= {""}:  # only collection leaked: every test saw it
        return []
    alone = band.run_band(root, planned.range.config, tree, dataclasses.replace(
        spec, selection=rest, shadow=False, property_band=()), frozen, display=display)
    alone, uncovered = _frozen_cases(root, planned, alone, frozen)
    told = (f" (run without {listed(sorted(leakers - {''}), 3)}, which left "
            "state changed)")
    return [dataclasses.replace(r, detail=r.detail + told)
            for r in [*checkrun_results.run_reasons(alone, rest), *uncovered]]


def _base_leaks(root: Path, planned: Planned, found: Mapping[str, Any],
                nodes: tuple[str, ...] = ()) -> frozenset[str] | None:
    """What the leaking tests' files leave changed at the merge-base, run there (a test file
    the patch did not change that leaked there already keeps the small band: boltons'
    tbutils test sets ``sys.excepthook``); None when that run cannot say. Without a witness,
    for every leak; with one, for the leaks it does not explain. Collection alone leaking
    runs the band's own selection there. ``nodes``: run these node ids instead, in this
    order (those whose file the base has; one the base lacks ends the run: None)."""
    from agentgate.core.errors import AgentgateError
    from agentgate.run import band, leaks

    files = sorted({n.split("::", 1)[0] for n in nodes or found if n != leaks.COLLECTION}
                   or {s.split("::", 1)[0] for s in planned.selection or ()})
    # Items a collector made of files that are not Python ran in a run of their own
    # (``band.ITEMS``): that run, at the base, says what they leave there (the first of them
    # set up ``tests/__init__.py``'s package, putting the tree on ``sys.path``).
    items = planned.plan.item_dirs if any(not f.endswith(".py") for f in files) else ()
    files = [f for f in files if f.endswith(".py")] if items else files
    at_base = set(gitio.ls_tree(root, planned.range.merge_base, tuple(files)))
    chosen = (tuple(n for n in nodes if n.split("::", 1)[0] in at_base) if nodes
              else tuple(f for f in files if f in at_base))
    if not chosen and not items:
        return None
    config = planned.range.config
    try:
        with band.clean_tree(root, planned.range.merge_base, config) as tree:
            # The folders walked for their conftests alone load theirs as head's band did:
            # during collection, where what their import sets is collection's leak.
            ran = band.run_band(root, config, tree, band.BandSpec(
                chosen, workers=0, item_dirs=items,
                conftest_dirs=_conftest_dirs(root, planned, chosen) if chosen else ()))
    except AgentgateError:
        return None
    seen = [d for d in ran.seen.values() if d is not None]
    if not seen or not all(d.get("finished") for d in seen):
        return None
    return frozenset(leaks.entries(leaks.found(seen, (tree.path, root))))


def _leak_path(line: str) -> str | None:
    head = line.split(" ", 1)[0]
    return head.split("::", 1)[0] if "::" in head else None


def _failing_at_base(planned: Planned, report: band.BandReport) -> list[str]:
    """A failed test the witness saw fail at its revision already: the patch did not break
    it, and the way forward is the flake attribution and a freeze, not a fix (new-user
    trial: every patch on attrs failed on such a test, with no hint)."""
    if planned.witness is None:
        return []
    from agentgate.witness.depgraph import NOT_PASSED

    before = {d.nodeid for d in planned.witness.decisions if NOT_PASSED in d.detail}
    failed = sorted({n for r in report.runs for n in r.failed_ids} & before)
    return [f"{n} failed when the witness was recorded too: `agentgate attribute {n}` "
            f"tells whether it is pre-existing (and whether a freeze is allowed)"
            for n in failed]


def _excused(root: Path, planned: Planned, tree: Path, result: CheckResult) -> frozenset[str]:
    """The merge-base's freeze ledger excuses, never the range's own records (issue 11)."""
    found = ledger_excuse.excuses(root, planned.range.config, base=planned.range.merge_base,
                                  tree=tree)
    result.notes += [f"freeze record added or changed in the range excuses nothing until it is "
                     f"in the base: {t}" for t in sorted(found.not_at_base)]
    return found.excused


def _audit(planned: Planned, report: band.BandReport, result: CheckResult) -> dict[str, Any] | None:
    """A sampled skip that fails is a witness bug: it fails."""
    if planned.witness is None:
        return None
    from agentgate.report import witness as witness_summary

    failed = {n for r in report.runs if r.label != "shadow" for n in r.failed_ids}
    stats, audit = witness_summary.shadow_stats(planned.witness, failed)
    result.reasons += audit
    return stats


def _explain(planned: Planned, asked: str) -> Explain | NodeExplain:
    """A path: its import chain; a node id: the witness's decision too (report.explain)."""
    the_plan = planned.plan
    nodeid = asked.replace("\\", "/").removeprefix("./")
    path = nodeid.split("::", 1)[0]
    chain = the_plan.explain(path)
    reached = tuple(c for _t, c in sorted(the_plan.why.items()) if path in c[1:])
    files = {c[0] for c in reached} if not chain else {path}
    witnessed = None if planned.witness is None or planned.full_suite else tuple(
        n for n in planned.witness.run_args if n.split("::", 1)[0] in files)
    found = Explain(path, tuple(chain) if chain else None, path in the_plan.suite, reached,
                    witnessed)
    if "::" not in nodeid:
        return found
    from agentgate.report.explain import explain_node

    return explain_node(nodeid, test=path, chain=found.chain, in_suite=found.in_suite,
                        witness=planned.witness, full_suite=planned.full_suite)
