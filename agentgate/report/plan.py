"""What ``plan`` and ``check`` found, and its text, JSON and markdown.

The records live here, not in ``flows``: the flows sit above ``report`` in the layers, and
this is the lowest layer that sees the plan, the witness and the band together. They hold
the stages' own values (``Plan``, ``WitnessPlan``, ``BandReport``), never display lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from agentgate.core.model import Verdict
from agentgate.run.progress import run_name

if TYPE_CHECKING:
    from agentgate.plan.planner import Plan
    from agentgate.report.explain import NodeExplain
    from agentgate.run.band import BandReport, RunResult
    from agentgate.run.oracle import OracleReport
    from agentgate.witness.select import WitnessPlan


@dataclass(frozen=True)
class Explain:
    """``plan --explain``: the shortest import chain from one test file to a change."""

    test: str
    chain: tuple[str, ...] | None
    in_suite: bool
    # A path that is no test file: the selected test files whose chain passes through it,
    # each with its chain (new-user trial: a source path said "nothing to explain").
    reached_by: tuple[tuple[str, ...], ...] = ()
    # With a witness: what it runs of those test files (node ids, or a whole file), so the
    # count is the band's, not the closure's (new-user trial: "12 selected test file(s) reach
    # it" where the witness ran 5 tests). None: no witness narrowed the plan.
    witnessed: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        chain = list(self.chain) if self.chain else None
        data: dict[str, Any] = {"test": self.test, "chain": chain, "in_suite": self.in_suite}
        if not self.in_suite:
            data["reached_by"] = [list(c) for c in self.reached_by]
        if self.witnessed is not None:
            data["witness_runs"] = list(self.witnessed)
        return data


@dataclass(frozen=True)
class PlanDetail:
    kind: ClassVar[str] = "plan"
    plan: Plan
    merge_base: str
    tests: tuple[str, ...]  # what the band selects: the witnessed selection when there is one
    full_suite: bool
    witness: WitnessPlan | None = None
    explain: Explain | NodeExplain | None = None  # NodeExplain: --explain NODEID

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "merge_base": self.merge_base,
            "tests": list(self.tests),
            "why": {t: list(c) for t, c in self.plan.why.items()},
            "suite_size": len(self.plan.suite),
            "run": "full" if self.full_suite else "band",  # what check runs for this plan
        }
        if self.witness is not None:
            data["witness"] = self._witness_json()
        if self.explain is not None:
            data["explain"] = self.explain.to_json()
        return data

    def _witness_json(self) -> dict[str, Any]:
        from agentgate.report import witness as witness_summary

        assert self.witness is not None
        return witness_summary.to_json(self.witness)


@dataclass(frozen=True)
class BandRun:
    """What ``check`` ran: the band's report and what it was asked to run."""

    report: BandReport
    selection: tuple[str, ...] | None  # None: the whole suite
    missed: tuple[str, ...]  # full-suite failures the band did not select (shadow mode)
    shadow: bool
    hypothesis_seed: int | None  # None unless the property band is on
    oracle: OracleReport | None = None  # the base oracle; None when the range touched no test


@dataclass(frozen=True)
class CheckDetail(PlanDetail):
    step_summary: ClassVar[bool] = True  # CI shows a check's markdown (render.emit)
    verdict_plan: Verdict = Verdict.SCOPED
    band: BandRun | None = None  # None: nothing ran
    shadow_stats: dict[str, Any] | None = None
    elapsed: float = 0.0
    # The notes the check itself made: details of a passing check, shown on -v (issue 13); a
    # note a caller adds after (the push's range fallback) always shows.
    quiet_notes: tuple[str, ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if self.shadow_stats is not None:
            data["witness"]["shadow_stats"] = self.shadow_stats
        data["verdict_plan"] = str(self.verdict_plan)
        data["results"] = ({"ran": False} if self.band is None
                           else results_json(self.band, len(self.plan.suite)))
        if self.band is not None and self.band.shadow:
            data["shadow"] = shadow_json(self.band)
        data["duration_s"] = round(self.elapsed, 3)
        return data


def _main(report: BandReport) -> list[RunResult]:
    return [r for r in report.runs if r.label != "shadow"]


def results_json(band: BandRun, suite_size: int) -> dict[str, Any]:
    report, main = band.report, _main(band.report)
    data: dict[str, Any] = {
        "ran": True,
        "scope": "full" if band.selection is None else "band",
        "selected": None if band.selection is None else len(band.selection),
        "suite_size": suite_size,
        **{k: sum(getattr(r, k) for r in main) for k in ("passed", "failed", "errors", "skipped")},
        "failed_ids": [n for r in main for n in r.failed_ids],
        "frozen_failed_ids": [n for r in main for n in r.frozen_failed_ids],
        "green": all(r.green for r in main),
        "tree": report.tree,
        "worktree": report.worktree,
        "interpreter": report.interpreter,
        "pinned_env": report.pinned_env,
        "duration_s": round(sum(r.duration for r in main), 3),
        "runs": [r.to_json() for r in report.runs],
        "base_oracle": None if band.oracle is None else band.oracle.to_json(),
    }
    if band.hypothesis_seed is not None:
        data["hypothesis_seed"] = band.hypothesis_seed
    return data


def shadow_json(band: BandRun) -> dict[str, Any]:
    shadow = band.report.run("shadow")
    if shadow is None:
        whole = band.selection is None
        return {"ran": whole, "missed": [],
                "note": "the band was the full suite" if whole else "nothing ran"}
    return {"ran": True, "missed": list(band.missed), **shadow.to_json()}


# --- text --------------------------------------------------------------------------------------

def text(detail: PlanDetail) -> list[str]:
    """Every line, as ``--verbose`` shows them."""
    first, details, last = sections(detail, verbose=True)
    return [*first, *details, *last]


def sections(detail: PlanDetail, *, verbose: bool) -> tuple[list[str], list[str], list[str]]:
    """(failures, details, summary): a report puts failures right after its reasons, then its
    notes, the details, and ends with the summary (issue 13: a failing push printed 31
    witness lines before the failure). Per-file chains and per-test witness lines, where the
    band ran and each run's counts are ``--verbose`` only; JSON keeps everything."""
    if isinstance(detail.explain, Explain):
        return [], [_explain_line(detail.explain)], []
    if detail.explain is not None:
        return [], detail.explain.lines(), []
    if not isinstance(detail, CheckDetail):
        return [], _test_lines(detail, verbose=verbose), []
    failures = [] if detail.band is None else _failure_lines(detail.band.report, detail)
    details: list[str] = []
    if verbose:
        details = _test_lines(detail, verbose=True)
        if detail.band is not None:
            details += _result_lines(detail.band.report)
    return failures, details, [summary_line(detail)]


def summary_line(detail: CheckDetail) -> str:
    """What the check ran, of how many, and how it went (``report.summary``)."""
    from agentgate.report import summary

    band = detail.band
    return summary.line(None if band is None else band.report, plan=detail.plan,
                        whole=band is not None and band.selection is None,
                        witness=detail.witness, verdict=detail.verdict_plan)


def _test_lines(detail: PlanDetail, *, verbose: bool) -> list[str]:
    the_plan = detail.plan
    full = "; promoted: check runs the full suite" if detail.full_suite else ""
    lines = [f"tests: {len(the_plan.tests)} of {len(the_plan.suite)} test file(s){full}"]
    if not detail.full_suite and detail.witness is not None and detail.tests != the_plan.tests:
        # The count is what ``tests`` lists (issue 12 item 6): the witness's selection, not
        # the import closure's files ("9 of 9 test file(s)" over a band of 58 node ids).
        files = len({t.split("::", 1)[0] for t in detail.tests})
        # A parametrized function is one entry of ``tests`` and many runs: say how many
        # (new-user trial: "538 selected" next to "impacted 911" and "ran 921").
        witnessed = detail.witness
        cases = sum(1 for d in witnessed.decisions if d.runs) + len(witnessed.shadow)
        runs = f" ({cases} tests with their cases)" if cases != len(detail.tests) else ""
        lines = [f"tests: {len(detail.tests)} selected by the witness{runs}, in {files} of "
                 f"{len(the_plan.suite)} test file(s) (the import closure: "
                 f"{len(the_plan.tests)} file(s))"]
    if verbose:
        lines += [f"  {test}: {_chain_text(chain)}" for test, chain in the_plan.why.items()]
    if detail.witness is not None:
        from agentgate.report import witness as witness_summary

        lines += witness_summary.text_lines(detail.witness, verbose=verbose)
    return lines


def _chain_text(chain: Iterable[str]) -> str:
    chain = list(chain)
    return "changed" if len(chain) == 1 else " -> ".join(chain)


def _explain_line(info: Explain) -> str:
    if info.chain:
        return f"why {info.test}: {_chain_text(info.chain)}{_witnessed(info)}"
    if not info.in_suite and info.reached_by:
        shown = "; ".join(_chain_text(c) for c in info.reached_by[:3])
        more = f"; and {len(info.reached_by) - 3} more" if len(info.reached_by) > 3 else ""
        files = ("selected test file(s)" if info.witnessed is None
                 else "test file(s) of the import closure")
        return (f"why {info.test}: not a test file; {len(info.reached_by)} {files} reach it: "
                f"{shown}{more}{_witnessed(info)}")
    if not info.in_suite:
        return (f"why {info.test}: not a test file at head, and no selected test file's "
                "chain passes through it")
    return f"why {info.test}: not impacted (no import chain from it to a changed file)"


def _witnessed(info: Explain) -> str:
    """What the witness runs of the files the chain or chains start at, if one narrowed."""
    if info.witnessed is None:
        return ""
    if not info.witnessed:
        return "; the witness runs none of their tests (none executed what changed)"
    shown = ", ".join(info.witnessed[:3])
    more = f", and {len(info.witnessed) - 3} more" if len(info.witnessed) > 3 else ""
    return f"; the witness runs {len(info.witnessed)} of their test(s): {shown}{more}"


def _failure_lines(report: BandReport, detail: PlanDetail) -> list[str]:
    """Each failing test with why the band ran it (new-user trial: the reason a test outside
    the edited module ran was only in ``-v``'s hundred lines of per-test decisions), then
    pytest's tail."""
    lines: list[str] = []
    why = _why_ran(detail)
    for run in report.runs:
        if run.green:
            continue
        # A bounded list (new-user trial round 7: 1,296 FAILED lines, each wrapped over
        # three or four, pushed the summary 4,935 lines down); JSON lists them all.
        shown = run.failed_ids[:FAILED_SHOWN]
        lines += [f"  FAILED {n}{why(n, run.label)}" for n in shown]
        if len(run.failed_ids) > len(shown):
            lines.append(f"  ... and {len(run.failed_ids) - len(shown)} more failed in this "
                         "run (--format json lists them all)")
        lines += [f"  | {line}" for line in run.output_tail]
    return lines


FAILED_SHOWN = 20  # failed tests a text report names per run


def _why_ran(detail: PlanDetail) -> Callable[[str, str], str]:
    """`` (why)`` for a failed node id: the witness's reason, or the changed file its file's
    import chain reaches (the chain is ``-v``'s)."""
    decisions: dict[str, str] = {}
    if detail.witness is not None:
        decisions = {d.nodeid: f"{d.label} {d.detail}" if d.detail else d.label
                     for d in detail.witness.decisions if d.runs}

    def why(nodeid: str, label: str) -> str:
        if label == "full" or detail.full_suite:
            return ""
        function = nodeid.split("[", 1)[0]
        file = nodeid.split("::", 1)[0]
        said = decisions.get(nodeid) or decisions.get(function) or decisions.get(file)
        chain = detail.plan.why.get(file, ())
        if said is None and len(chain) > 1:  # the chain itself is -v's
            said = f"reaches {chain[-1]}"
        return f"  ({said})" if said else ""

    return why


def _result_lines(report: BandReport) -> list[str]:
    where = "temporary worktree of head" if report.worktree else "the checkout (clean, at head)"
    lines = [f"ran in {where} with {report.interpreter}"]
    lines += [f"{run_name(run.label)}: {run.passed} passed, {run.failed} "
              f"failed, {run.errors} errors, {run.skipped} skipped in {run.duration:.1f} s"
              for run in report.runs]
    return lines


# --- markdown ----------------------------------------------------------------------------------

def markdown(detail: PlanDetail) -> list[str]:
    """A plan has no markdown of its own; a check's list items also make the step summary."""
    if not isinstance(detail, CheckDetail):
        return []
    the_plan = detail.plan
    if detail.full_suite:
        band = f"full suite of {len(the_plan.suite)} test file(s)"
    elif detail.witness is not None and detail.tests != the_plan.tests:
        # What ``tests`` lists, as the text says (new-user trial: "band: 13 of 13 test
        # file(s)" over a band of 67 tests, the import closure's files).
        files = len({t.split("::", 1)[0] for t in detail.tests})
        band = (f"{len(detail.tests)} selected by the witness, in {files} of "
                f"{len(the_plan.suite)} test file(s)")
    else:
        band = f"{len(the_plan.tests)} of {len(the_plan.suite)} test file(s)"
    lines = [f"- band: {band}"]
    if detail.band is not None:
        main = _main(detail.band.report)
        passed, failed, errors, skipped = (sum(getattr(r, k) for r in main)
                                           for k in ("passed", "failed", "errors", "skipped"))
        lines.append(f"- results: {passed} passed, {failed} failed, "
                     f"{errors} errors, {skipped} skipped")
    lines.append(f"- {summary_line(detail)}")
    lines.append(f"- time: {detail.elapsed:.1f} s")
    if detail.witness is not None:
        from agentgate.report import witness as witness_summary

        # After the list, set off by blank lines: a paragraph and a table inside it ended
        # the list and left "- time" a list of its own (issue 13).
        lines += ["", *witness_summary.markdown_lines(detail.witness), ""]
    return lines
