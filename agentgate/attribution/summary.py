"""The attribution's Result: its typed detail and that detail's JSON (``report.attribution``
renders the text and markdown)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from agentgate.attribution import stats
from agentgate.attribution.verdict import Attribution, Decision, TreeEvidence, fisher_p
from agentgate.core.model import Reason, Result

if TYPE_CHECKING:
    from agentgate.attribution.request import Request

_ONE_PERCENT = 0.01


@dataclass(frozen=True)
class Summary:
    """Everything the runs established, before a verdict is drawn from it."""

    nodeid: str
    mode: str
    context: str
    seeds: tuple[int, ...]
    runs: int
    repeats: int
    stage: str  # the runs rates and Fisher's test are computed over
    jobs: int
    serial: bool
    python: str
    env: dict[str, str]
    base: TreeEvidence | None  # None when the base could not be checked out
    head: TreeEvidence
    reverted: TreeEvidence | None
    base_problem: str
    base_sha: str
    head_sha: str
    wall_seconds: float


def recheck_command(request: Request, base: str, head: str) -> str:
    """The exact command that repeats this attribution on the same two commits."""
    args = ["agentgate", "attribute", request.nodeid, "--base", base, "--head", head]
    args += ["--mode", request.mode, "--context", request.context]
    if request.mode == "matched":
        for seed in request.seeds:
            args += ["--seed", str(seed)]
    else:
        args += ["--runs", str(request.runs)]
    args += ["--repeats", str(request.repeats)]
    if request.serial:
        args.append("--serial")
    if request.revert_code:
        args.append("--revert-code")
    return shlex.join(args)


@dataclass(frozen=True)
class FreezeOutcome:
    """``attribute --freeze``: the record written, or why not."""

    written: bool
    path: str | None = None
    refused: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.written:
            return {"written": True, "path": self.path}
        return {"written": False, "refused": self.refused}


@dataclass(frozen=True)
class AttributionDetail:
    """The runs' summary, the verdict drawn from it, and how to repeat it."""

    kind: ClassVar[str] = "attribution"
    summary: Summary
    decision: Decision
    recheck: str
    freeze: FreezeOutcome | None = None

    def to_json(self) -> dict[str, Any]:
        data = _json(self.summary, self.decision, self.recheck)
        if self.freeze is not None:
            data["freeze"] = self.freeze.to_json()
        return data


def build_result(summary: Summary, decision: Decision, recheck: str) -> Result:
    verdict = decision.verdict
    reason = Reason(
        code=f"attribute-{verdict.lower().replace('_', '-')}",
        verdict=verdict.gate,
        detail=decision.detail,
        path=summary.nodeid,
    )
    return Result(
        command="attribute",
        reasons=[reason],
        base=summary.base_sha,
        head=summary.head_sha,
        detail=AttributionDetail(summary, decision, recheck),
        forced=verdict.gate,
    )


# --- JSON ---------------------------------------------------------------------------------

def _json(summary: Summary, decision: Decision, recheck: str) -> dict[str, Any]:
    base, head = summary.base, summary.head
    both_ran = base is not None and base.ran_any() and head.ran_any()
    return {
        "verdict": str(decision.verdict),
        "freeze_allowed": decision.freeze_allowed,
        "gate": str(decision.verdict.gate),
        "detail": decision.detail,
        "test": summary.nodeid,
        "mode": summary.mode,
        "context": summary.context,
        "seeds": list(summary.seeds),
        "repeats": summary.repeats,
        "rates_over": summary.stage,
        "env": dict(summary.env),
        "python": summary.python,
        "jobs": summary.jobs,
        "serial": summary.serial,
        "trees": {
            "base": tree_json(base, summary.stage) if base is not None else None,
            "head": tree_json(head, summary.stage),
        },
        "fisher_p": fisher_p(base, head, summary.stage) if both_ran and base else None,
        "bound": _bounds(summary) if decision.verdict is Attribution.NO_REPRO else None,
        "revert_code": _reverted(summary),
        "base_problem": summary.base_problem or None,
        "recheck": recheck,
        "wall_seconds": round(summary.wall_seconds, 3),
    }


def tree_json(tree: TreeEvidence, stage: str) -> dict[str, Any]:
    failures, executed = tree.sample(stage)
    low, high = stats.clopper_pearson(failures, executed)
    return {
        "sha": tree.sha,
        "runs": len(tree.records),
        "counts": tree.counts(),
        "failing_seeds": tree.failing_seeds(),
        "flaky_seeds": tree.flaky_seeds(),
        "failures": failures,
        "executed": executed,
        "rate": failures / executed if executed else None,
        "ci95": [low, high],
        "per_seed": tree.by_seed_text(),
        "problems": problems(tree),
    }


def problems(tree: TreeEvidence) -> list[str]:
    """The distinct failure and harness messages, so the report shows what went wrong."""
    seen: list[str] = []
    for record in tree.records:
        if record.outcome.failing or not record.outcome.ran:
            line = f"{record.outcome}: {record.detail}" if record.detail else str(record.outcome)
            if line not in seen:
                seen.append(line)
    return seen[:5]


def _bounds(summary: Summary) -> dict[str, Any]:
    trees = [t for t in (summary.head, summary.base) if t is not None]
    needed = stats.runs_to_bound(_ONE_PERCENT)
    out: dict[str, Any] = {"runs_for_1pct": needed}
    for tree in trees:
        executed = sum(1 for r in tree.records if r.outcome.ran and str(r.outcome) != "skipped")
        out[tree.name] = {
            "runs": executed,
            "upper95": stats.upper_bound_no_failures(executed),
            "rule_of_three": stats.rule_of_three(executed),
            "more_runs_for_1pct": max(0, needed - executed),
        }
    return out


def _reverted(summary: Summary) -> dict[str, Any] | None:
    rev = summary.reverted
    if rev is None:
        return None
    failing_rev, failing_head = rev.failing_seeds(), summary.head.failing_seeds()
    if failing_rev and failing_head:
        answer = "fails with the code change reverted too: not caused by the patch's code"
    elif failing_head:
        answer = "passes with the code change reverted: the patch's code makes it fail"
    elif failing_rev:
        answer = "fails only with the code change reverted: it tests the patch's new code"
    else:
        answer = "passes with and without the code change"
    return {"answer": answer, **tree_json(rev, "reverted")}
