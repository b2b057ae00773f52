"""A freeze of a parametrized function excuses only its cases that fail at the base too.

``band.is_frozen`` lets a record for ``test_x`` excuse every case ``test_x[...]``: a human
froze the function for its one pre-existing failing case, and a patch that then broke every
other case was excused (red-team rt4, finding 13). The base is the contract: a case that
passes at the base and fails at head is the patch's doing, whatever its function's record
says. So a failed case excused only through its function's record (its own id is not frozen)
runs on the base itself (``oracle.outcomes_at_base``, cached per base, as the skipped-by-code
rule does) and stays excused only when it fails or errors there too. A case the base does not
have (added by the patch, or its file is not at the base) is not excused: fail closed. Without
a base, or when no such case failed, nothing runs here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

from agentgate.core.model import Reason, Verdict
from agentgate.core.paths import function_id
from agentgate.core.text import listed
from agentgate.gate.checks import RangeCheck
from agentgate.git import gitio
from agentgate.run import oracle
from agentgate.run.band import BandReport

CODE = "frozen-case-not-failing-at-base"

# A case's outcome on the base, as a sentence says it: "" is a case the base does not collect
# (one the patch added, or its file is not at the base), "?" one whose base run did not finish.
_AT_BASE = {"passed": "passes", "skipped": "is skipped", "xfailed": "xfails",
            "": "is not collected", "?": "could not be run"}


def through_function(report: BandReport, frozen: frozenset[str]) -> list[str]:
    """The failed cases the band excused by their function's record, not their own."""
    return sorted({n for r in report.runs for n in r.frozen_failed_ids if n not in frozen})


def judge(root: Path, checked: RangeCheck, report: BandReport, frozen: frozenset[str]
          ) -> tuple[BandReport, list[Reason]]:
    """``report`` with the cases their function's freeze does not cover counted as failures
    (``failed_ids``), and a reason per function naming them."""
    cases = through_function(report, frozen)
    if not cases:
        return report, []
    outcomes, reasons = _at_base(root, checked, cases)
    kept = {n for n in cases if outcomes.get(n) == "failed"}
    uncovered = [n for n in cases if n not in kept]
    if not uncovered:
        return report, reasons
    gone = set(uncovered)
    runs = tuple(dataclasses.replace(
        r, failed_ids=tuple(sorted({*r.failed_ids, *(gone & set(r.frozen_failed_ids))})),
        frozen_failed_ids=tuple(n for n in r.frozen_failed_ids if n not in gone))
        for r in report.runs)
    return dataclasses.replace(report, runs=runs), reasons + _reasons(uncovered, outcomes)


def _at_base(root: Path, checked: RangeCheck, cases: list[str]
             ) -> tuple[dict[str, str], list[Reason]]:
    """Each case's outcome on the base ("" or absent: the base has no such case); a base
    run that did not finish knows none, and says so as a failure."""
    files = tuple(sorted({n.split("::", 1)[0] for n in cases}))
    present = gitio.ls_tree(root, checked.merge_base, files)
    asked = [n for n in cases if n.split("::", 1)[0] in present]
    if not asked:
        return {}, []
    found = oracle.outcomes_at_base(root, checked.config, checked.merge_base, asked)
    if found.problem:
        return dict.fromkeys(asked, "?"), [
            Reason("base-oracle-incomplete", Verdict.FAILED, found.problem)]
    return dict(found.outcomes), []


def _reasons(uncovered: Iterable[str], outcomes: dict[str, str]) -> list[Reason]:
    by_function: dict[str, list[str]] = {}
    for nodeid in uncovered:
        by_function.setdefault(function_id(nodeid), []).append(nodeid)
    return [Reason(CODE, Verdict.FAILED, _detail(function, ids, outcomes),
                   path=function.split("::", 1)[0])
            for function, ids in sorted(by_function.items())]


def _detail(function: str, ids: list[str], outcomes: dict[str, str]) -> str:
    if len(ids) == 1:
        what = f"{ids[0]} failed and {_said(ids[0], outcomes)} at the base"
    else:
        shown = listed([f"{n} {_said(n, outcomes)}" for n in ids], 3)
        what = f"{len(ids)} cases of {function} failed that do not fail at the base ({shown})"
    return (f"{what}; the freeze of {function} covers only its cases that fail at the base "
            "too")


def _said(nodeid: str, outcomes: dict[str, str]) -> str:
    return _AT_BASE.get(outcomes.get(nodeid, ""), "does not fail")
