"""``agentgate plan`` and ``agentgate check``: the gate, the ledger, the import graph, the
planner and the band, in that order, each handing plain data to the next.

The rules come from the merge-base (``gate.check_range`` loads its config); the graph and
the code under test are the head's. ``check`` never runs tests when the trust boundary or
the ledger blocks, and a promoted plan runs the whole suite: when that passes, the promotion
was satisfied and the exit is 0 (the JSON keeps ``"verdict_plan": "promote"``).
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentgate.core.config import PYTEST_CONFIG_FILES, Config
from agentgate.core.model import DELETED, Change, Reason, Result, Verdict, worst
from agentgate.gate import checks as gate
from agentgate.gate.checks import RangeCheck
from agentgate.git import gitio
from agentgate.graph import build as graph_build
from agentgate.ledger import records as ledger
from agentgate.plan import markers, planner
from agentgate.plan import pytest_config as planner_pytest
from agentgate.plan.planner import Plan, PlanInput
from agentgate.witness import presence

if TYPE_CHECKING:
    # Imported where used: a plan never runs the band, and without a witness store it never
    # reads one (together ~40 ms of a warm plan's start-up).
    from agentgate.run import band
    from agentgate.witness.select import WitnessPlan

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
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
                            "the patch changes the ambient environment: "
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

def plan(root: Path, base: str | None, head: str = "HEAD", *, explain: str | None = None) -> Result:
    planned = with_ledger(plan_range(root, base, head), root)
    result = Result(command="plan")
    _fill(result, planned)
    result.extra["text"] = _test_lines(planned)
    if explain is not None:
        result.extra["explain"] = _explain(planned.plan, explain)
        result.extra["text"] = [_explain_line(result.extra["explain"])]
    return result


def plan_range(root: Path, base: str | None, head: str) -> Planned:
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
    )
    extra = () if base is not None else (Reason(
        "no-base", Verdict.PROMOTE, "nothing to compare against: full suite required"),)
    planned = Planned(checked, (), planner.plan(inp), extra, base_given=base is not None)
    return _with_witness(root, planned)


def _with_witness(root: Path, planned: Planned) -> Planned:
    """Narrow the band per test with the newest usable witness (one recorded at an ancestor
    of the base); a promoted or blocked plan, or no witness, keeps the import-closure band."""
    if planned.full_suite or planned.blocked or not planned.base_given:
        return planned
    checked, notes = planned.range, list[str]()
    if not presence.store_path(root).is_file():
        return dataclasses.replace(planned, witness_notes=(presence.NO_STORE,))
    from agentgate.witness import select as witness_gate

    wplan = witness_gate.evaluate(
        root, checked.config, base=checked.merge_base, head=checked.head,
        frozen=ledger.frozen_tests(root, checked.config), notes=notes,
    )
    return dataclasses.replace(planned, witness=wplan, witness_notes=tuple(notes))


def with_ledger(planned: Planned, tree: Path) -> Planned:
    """The freeze ledger as ``tree`` has it: for ``check`` the clean tree of head, so an
    uncommitted freeze record cannot excuse a failure of the code being pushed."""
    return dataclasses.replace(planned, ledger=tuple(ledger.check(tree, planned.range.config)))


def _fill(result: Result, planned: Planned) -> None:
    checked, the_plan = planned.range, planned.plan
    result.base = checked.base if planned.base_given else None
    result.head, result.changed = checked.head, checked.changes
    result.reasons = planned.reasons
    result.notes = [*checked.notes, *the_plan.notes, *planned.witness_notes]
    result.extra.update({
        "merge_base": checked.merge_base,
        "tests": list(planned.selection if planned.witness is not None and
                      planned.selection is not None else the_plan.tests),
        "why": {t: list(c) for t, c in the_plan.why.items()},
        "suite_size": len(the_plan.suite),
        "run": "full" if planned.full_suite else "band",  # what check runs for this plan
    })
    if planned.witness is not None:
        from agentgate.report import witness as witness_summary

        result.extra["witness"] = witness_summary.to_json(planned.witness)


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

def check(root: Path, base: str | None, head: str = "HEAD", *, shadow: bool = False) -> Result:
    from agentgate.run import band

    start = time.monotonic()
    planned = plan_range(root, base, head)
    result = CheckResult(command="check")
    if planned.blocked:
        _not_run(result, planned)
    else:
        with band.clean_tree(root, planned.range.head) as tree:
            planned = with_ledger(planned, tree.path)
            if planned.blocked:
                _not_run(result, planned)
            else:
                _fill_check(result, planned)
                _run(root, planned, tree, result, shadow=shadow)
    elapsed = time.monotonic() - start
    result.extra["duration_s"] = round(elapsed, 3)
    result.extra["markdown"] = _summary_lines(planned, result, elapsed)
    _append_summary(result)
    return result


def _fill_check(result: CheckResult, planned: Planned) -> None:
    _fill(result, planned)
    result.extra["verdict_plan"] = str(worst([r.verdict for r in planned.reasons]))
    result.extra["text"] = _test_lines(planned)


def _not_run(result: CheckResult, planned: Planned) -> None:
    _fill_check(result, planned)
    result.notes.append("tests not run: the trust boundary or the freeze ledger blocks")
    result.extra["results"] = {"ran": False}


def _run(
    root: Path, planned: Planned, tree: band.Tree, result: CheckResult, *, shadow: bool
) -> None:
    from agentgate.flows import check_results as checkrun_results
    from agentgate.run import band

    config = planned.range.config
    selection = planned.selection
    if selection == () and not shadow:
        result.notes.append("no test impacted: nothing to run")
        result.extra["results"] = {"ran": False}
        return
    spec = band.BandSpec(selection, config.property_band, config.hypothesis_seed, shadow)
    frozen = ledger.frozen_tests(tree.path, config)
    report = band.run_band(root, config, tree, spec, frozen)
    result.reasons += checkrun_results.run_reasons(report, selection)
    if selection is None:
        result.satisfied = frozenset({Verdict.PROMOTE})
        result.notes.append(checkrun_results.promotion_note(report))
    result.notes += [f"frozen test failed (excused by its freeze): {n}"
                     for r in report.runs for n in r.frozen_failed_ids]
    result.extra["results"] = checkrun_results.results_json(report, selection, planned.plan, config)
    if shadow:
        result.extra["shadow"] = checkrun_results.shadow_json(report, selection)
    if planned.witness is not None:
        from agentgate.report import witness as witness_summary

        failed = {n for r in report.runs if r.label != "shadow" for n in r.failed_ids}
        stats, audit = witness_summary.shadow_stats(planned.witness, failed)
        result.reasons += audit  # a sampled skip that fails is a witness bug: it fails
        result.extra["witness"]["shadow_stats"] = stats
    result.extra["text"] = [*result.extra["text"], *_result_lines(report)]


# --- text and markdown -------------------------------------------------------------------------

def _test_lines(planned: Planned) -> list[str]:
    the_plan = planned.plan
    full = "; promoted: check runs the full suite" if planned.full_suite else ""
    lines = [f"tests: {len(the_plan.tests)} of {len(the_plan.suite)} test file(s){full}"]
    for test, chain in the_plan.why.items():
        lines.append(f"  {test}: {_chain_text(chain)}")
    if planned.witness is not None:
        from agentgate.report import witness as witness_summary

        lines += witness_summary.text_lines(planned.witness)
    return lines


def _chain_text(chain: Iterable[str]) -> str:
    chain = list(chain)
    return "changed" if len(chain) == 1 else " -> ".join(chain)


def _explain(the_plan: Plan, test: str) -> dict[str, Any]:
    path = test.replace("\\", "/").removeprefix("./").split("::", 1)[0]
    chain = the_plan.explain(path)
    return {"test": path, "chain": list(chain) if chain else None,
            "in_suite": path in the_plan.suite}


def _explain_line(info: dict[str, Any]) -> str:
    test, chain = info["test"], info["chain"]
    if chain:
        return f"why {test}: {_chain_text(chain)}"
    if not info["in_suite"]:
        return f"why {test}: not a test file at head; nothing to explain"
    return f"why {test}: not impacted (no import chain from it to a changed file)"


def _result_lines(report: band.BandReport) -> list[str]:
    where = "temporary worktree of head" if report.worktree else "the checkout (clean, at head)"
    lines = [f"ran in {where} with {report.interpreter}"]
    for run in report.runs:
        lines.append(
            f"{run.label}: {run.passed} passed, {run.failed} failed, {run.errors} errors, "
            f"{run.skipped} skipped in {run.duration:.1f} s"
        )
        lines += [f"  FAILED {n}" for n in run.failed_ids]
        if not run.green:
            lines += [f"  | {line}" for line in run.output_tail]
    return lines


def _summary_lines(planned: Planned, result: Result, elapsed: float) -> list[str]:
    """Markdown list items for the report and the GitHub step summary."""
    the_plan = planned.plan
    size = "full suite" if planned.full_suite else f"{len(the_plan.tests)}"
    lines = [f"- band: {size} of {len(the_plan.suite)} test file(s)"]
    results = result.extra.get("results", {})
    if results.get("ran"):
        lines.append(f"- results: {results['passed']} passed, {results['failed']} failed, "
                     f"{results['errors']} errors, {results['skipped']} skipped")
    if planned.witness is not None:
        from agentgate.report import witness as witness_summary

        lines += witness_summary.markdown_lines(planned.witness)
    lines.append(f"- time: {elapsed:.1f} s")
    return lines


def _append_summary(result: Result) -> None:
    """GitHub Actions shows whatever a step appends to the file this variable names."""
    target = os.environ.get(SUMMARY_ENV)
    if not target:
        return
    from agentgate.report.render import markdown

    try:
        with open(target, "a", encoding="utf-8") as out:
            out.write(markdown(result) + "\n")
    except OSError as exc:
        result.notes.append(f"could not append to ${SUMMARY_ENV} ({exc})")
