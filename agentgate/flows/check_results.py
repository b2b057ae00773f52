"""A band report turned into what a check says: its reasons and notes (the ``results`` and
``shadow`` JSON are ``report.plan``'s). Failures fail (1); a failure, error or timeout in the
property band blocks (4) with its seed, never retried on another; a full-suite failure the
band did not select (shadow mode) is a planner miss and fails too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentgate.core.model import Reason, Verdict
from agentgate.core.text import listed
from agentgate.run.progress import run_name

if TYPE_CHECKING:
    from agentgate.run import accounting, band


def promotion_note(report: band.BandReport) -> str:
    main = [r for r in report.runs if r.label != "shadow"]
    if all(r.green for r in main) and not report.problems:
        return "promoted: the full suite ran and passed, so the promotion is satisfied"
    return "promoted: the full suite ran and did not pass"


_PROPERTY_RUNS = ("property", "property-marked")


def run_reasons(report: band.BandReport, selection: tuple[str, ...] | None) -> list[Reason]:
    reasons = []
    for run in report.runs:
        if run.label == "shadow" or run.green:
            continue
        if run.label in _PROPERTY_RUNS:
            reasons.append(Reason("property-band", Verdict.BLOCKED, _property_detail(run),
                                  path=_first_file(run.failed_ids)))
        else:
            reasons.append(Reason(_failure_code(run), Verdict.FAILED, _failure_detail(run),
                                  path=_first_file(run.failed_ids)))
    reasons += [_accounting_reason(p) for p in report.problems]
    missed = shadow_missed(report, selection)
    if missed:
        reasons.append(Reason(
            "shadow-missed", Verdict.FAILED,
            f"the full suite failed {len(missed)} test(s) the band did not select "
            f"({listed(missed)}): the planner missed a dependency", path=_first_file(missed),
        ))
    apart = shadow_disagrees(report, selection)
    if apart:
        reasons.append(Reason(
            "shadow-disagrees", Verdict.FAILED,
            f"the full suite failed {len(apart)} test(s) the band ran and passed "
            f"({listed(apart)}): they depend on what other tests leave behind; run the full "
            "suite and fix the order dependence", path=_first_file(apart),
        ))
    return reasons


def _accounting_reason(problem: accounting.Problem) -> Reason:
    """A test agentgate selected that produced no outcome it recorded, or one the harness
    reported as other than what happened (issue 11)."""
    detail = problem.detail + (f": {listed(problem.nodeids)}" if problem.nodeids else "")
    return Reason(problem.code, problem.verdict, detail, path=_first_file(problem.nodeids))


def _failure_code(run: band.RunResult) -> str:
    if run.timed_out:
        return "tests-timeout"
    return "tests-failed" if run.failed_ids else "pytest-error"


def _failure_detail(run: band.RunResult) -> str:
    if run.timed_out:
        return f"the {_named(run)} run was stopped at the time limit ({run.duration:.0f} s)"
    if run.failed_ids:
        return (f"{len(run.failed_ids)} test(s) failed in the {_named(run)}: "
                f"{listed(run.failed_ids)}")
    return f"pytest exited {run.exit_code} in the {_named(run)} without a test failure " \
           "(usage, collection or internal error; see the output)"


def _named(run: band.RunResult) -> str:
    """A run's label as a sentence names it, after "the"."""
    return run_name(run.label).removeprefix("the ")


def _property_detail(run: band.RunResult) -> str:
    what = "timed out" if run.timed_out else (
        f"failed ({listed(run.failed_ids)})" if run.failed_ids
        else f"errored (exit {run.exit_code})")
    return f"property band {what} with --hypothesis-seed={run.seed}; it is never retried on " \
           "another seed: reproduce with that seed and fix the code or the property"


def _first_file(ids: Iterable[str]) -> str | None:
    return next((i.split("::", 1)[0] for i in ids), None)


def shadow_note(report: band.BandReport, selection: tuple[str, ...] | None) -> list[str]:
    """What the shadow full suite said of the band, when it ran and missed nothing (new-user
    trial: a long ``--shadow`` run ended saying nothing of it)."""
    shadow = report.run("shadow")
    if shadow is None or selection is None or shadow_missed(report, selection) or (
            shadow_disagrees(report, selection)):
        return []
    failed = len(shadow.failed_ids)
    how = (f"its {failed} failure(s) all in the band's selection" if failed
           else "it passed")
    return [f"shadow full suite: {shadow.passed} passed, {failed} failed; {how}: the band "
            "missed nothing"]


def shadow_missed(report: band.BandReport, selection: tuple[str, ...] | None) -> list[str]:
    """The shadow full suite's failures of tests the band did not select."""
    shadow = report.run("shadow")
    if shadow is None or selection is None:
        return []
    return [n for n in shadow.failed_ids if not _selected(n, selection)]


def shadow_disagrees(report: band.BandReport, selection: tuple[str, ...] | None) -> list[str]:
    """The shadow full suite's failures of tests the band selected and did not see fail:
    the test fails in the full suite's order and passes alone (red-team round 6: ``--shadow``
    printed the failure and called the band complete)."""
    shadow = report.run("shadow")
    if shadow is None or selection is None:
        return []
    seen = {n for run in report.runs if run.label != "shadow"
            for n in (*run.failed_ids, *run.frozen_failed_ids)}
    return [n for n in shadow.failed_ids if _selected(n, selection) and n not in seen]


def _selected(nodeid: str, selection: tuple[str, ...]) -> bool:
    """Whether the band's selection (files, classes, functions, cases) holds this test: a
    case of a selected function is selected (new-user trial: a parametrized test the band
    ran was said to be missed)."""
    return any(nodeid == s or nodeid.startswith((f"{s}::", f"{s}[")) for s in selection)
