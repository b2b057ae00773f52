"""The one line a check ends with (issue 13): how many tests ran of how many, why, how long,
and how it went -- "ran 54 of 472 tests (6 impacted, 4 incomplete, 44 audit) in 2.7 s:
1 failed".

Every count is the band's own: the node ids agentgate's outcome plugin recorded a report
for (``run.outcomes``), falling back to the JUnit counts when a run wrote no outcomes file;
the reason of each test that ran is the witness's decision for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentgate.core.model import Verdict

NO_TESTS = 5  # pytest's exit status when it collected nothing (run.band.NO_TESTS)

if TYPE_CHECKING:
    from agentgate.plan.planner import Plan
    from agentgate.run.band import BandReport, RunResult
    from agentgate.witness.select import WitnessPlan

# A witnessed decision's label as the summary names it, in the order the parts are listed.
WHY = {
    "run:impacted": "impacted",
    "escalate:incomplete-witness": "incomplete",
    "run:new": "new",
    "run:fixture-drift": "fixture drift",
    "run:frozen": "frozen",
    "run:ambient-drift": "ambient drift",
    "audit": "audit",
    "other": "other",
}


def line(report: BandReport | None, *, plan: Plan, whole: bool, witness: WitnessPlan | None,
         verdict: Verdict) -> str:
    """The summary of what a check ran (``whole``: the full suite); nothing ran: why not
    (``verdict``: the plan's)."""
    if report is None:
        if verdict is Verdict.BLOCKED:
            return "ran no tests: the trust boundary or the freeze ledger blocks"
        return f"ran no tests: none of the suite's {_n(len(plan.suite), 'test file')} impacted"
    main = [r for r in report.runs if r.label != "shadow"]
    seconds = sum(r.duration for r in main)
    what = _what(report, main, plan, whole, witness)
    said = outcome(main)
    if report.problems and said in ("all passed", "no tests collected"):
        # Found in review: a collected test with no outcome read "no tests collected".
        said = f"not green: {_n(len(report.problems), 'outcome problem')} (see above)"
    return f"{what} in {seconds:.1f} s: {said}"


def _what(report: BandReport, main: list[RunResult], plan: Plan, whole: bool,
          witness: WitnessPlan | None) -> str:
    ran = ran_ids(report, main)
    count = len(ran) if ran is not None else sum(_junit_total(r) for r in main)
    if whole:
        return f"ran all {_n(count, 'test')} (full suite)"
    if witness is not None and ran is not None:
        suite = suite_ids({d.nodeid for d in witness.decisions if "::" in d.nodeid}, ran)
        parts = ", ".join(f"{n} {why}" for why, n in reasons(witness, ran).items())
        return f"ran {count} of {_n(len(suite), 'test')} ({parts})"
    return (f"ran {_n(count, 'test')} from {len(plan.tests)} of the suite's "
            f"{_n(len(plan.suite), 'test file')}")


def suite_ids(known: set[str], ran: Iterable[str]) -> set[str]:
    """The suite's node ids at head, as well as the witness and the run tell them: the
    witness's, where a function that ran a case it does not know (a new case, or one whose
    id holds a time or a pid) has the cases that ran in place of its own (new-user trial:
    marshmallow's two time-valued cases were counted twice, 1194 tests where pytest has
    1192). Such a function runs whole: its vouched cases are deselected only when every
    running case keeps its id."""
    ran = set(ran)
    renamed = {n.split("[", 1)[0] for n in ran - known}
    return {n for n in known if n.split("[", 1)[0] not in renamed} | ran


def ran_ids(report: BandReport, main: Iterable[RunResult]) -> list[str] | None:
    """The node ids the outcome plugin saw reported in the main runs; None when a run left
    no outcomes file (accounting fails that run; the summary counts JUnit's cases)."""
    ids: list[str] = []
    for run in main:
        seen = report.seen.get(run.label)
        if seen is None:
            return None
        tests = seen.get("tests") or {}
        ids += [n for n, entry in tests.items() if isinstance(entry, dict) and "reported" in entry]
    return ids


def reasons(witness: WitnessPlan, ran: Iterable[str]) -> dict[str, int]:
    """How many of the tests that ran each reason accounts for, in ``WHY`` order."""
    audit = set(witness.shadow)
    label = {d.nodeid: d.label for d in witness.decisions}
    counts = dict.fromkeys(WHY.values(), 0)
    for nodeid in ran:
        base = nodeid.split("[", 1)[0]
        found = label.get(nodeid) or label.get(base) or label.get(nodeid.split("::", 1)[0])
        why = "audit" if nodeid in audit or base in audit else WHY.get(found or "", "other")
        counts[why] += 1
    return {why: n for why, n in counts.items() if n}


def outcome(main: list[RunResult]) -> str:
    """"all passed", or what did not pass, worst first."""
    failed, errors = sum(r.failed for r in main), sum(r.errors for r in main)
    skipped, passed = sum(r.skipped for r in main), sum(r.passed for r in main)
    xfailed = sum(r.xfailed for r in main)
    excused = sum(len(r.frozen_failed_ids) for r in main)
    # The excused are among the failed (new-user trial: "3 failed, 1 excused" stood next to
    # "2 test(s) failed"): each is said once.
    counted = max(failed - excused, 0)
    by = "its freeze" if excused == 1 else "their freezes"
    bad = [text for n, text in ((counted, f"{counted} failed"), (errors, f"{errors} errors"),
                                (excused, f"{excused} failed but excused by {by}")) if n]
    bad += ["timed out"] if any(r.timed_out for r in main) else []
    odd = [r.exit_code for r in main if r.exit_code not in (0, NO_TESTS) and not r.timed_out]
    if odd and not bad:  # e.g. a harness that hid its failures, or a usage error
        bad.append(f"pytest exited {odd[0]}")
    if not bad and passed + skipped == 0:
        return "no tests collected"
    aside = [text for n, text in ((skipped - xfailed, f"{skipped - xfailed} skipped"),
                                  (xfailed, f"{xfailed} xfailed")) if n]
    if not bad:
        return "all passed" if not skipped else ", ".join([f"{passed} passed", *aside])
    return ", ".join(bad + aside)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _junit_total(run: RunResult) -> int:
    return run.passed + run.failed + run.errors + run.skipped
