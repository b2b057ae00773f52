"""The attribution's Result: JSON fields in ``Result.extra``, text and markdown lines."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentgate.attribution import stats
from agentgate.attribution.verdict import Attribution, Decision, TreeEvidence, fisher_p
from agentgate.core.model import Reason, Result

if TYPE_CHECKING:
    from agentgate.attribution.request import Request

_MAX_SEED_LINES = 10
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


def build_result(summary: Summary, decision: Decision, recheck: str) -> Result:
    verdict = decision.verdict
    reason = Reason(
        code=f"attribute-{verdict.lower().replace('_', '-')}",
        verdict=verdict.gate,
        detail=decision.detail,
        path=summary.nodeid,
    )
    extra = _extra(summary, decision, recheck)
    extra["text"] = text_lines(summary, decision, extra)
    extra["markdown"] = markdown_lines(summary, decision, extra)
    return Result(
        command="attribute",
        reasons=[reason],
        base=summary.base_sha,
        head=summary.head_sha,
        extra=extra,
        forced=verdict.gate,
    )


# --- JSON ---------------------------------------------------------------------------------

def _extra(summary: Summary, decision: Decision, recheck: str) -> dict[str, Any]:
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
        "problems": _problems(tree),
    }


def _problems(tree: TreeEvidence) -> list[str]:
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


# --- text and markdown ---------------------------------------------------------------------

def text_lines(summary: Summary, decision: Decision, extra: dict[str, Any]) -> list[str]:
    lines = [
        f"test: {summary.nodeid} ({_setup(summary)})",
        f"verdict: {decision.verdict}; freeze "
        + ("allowed" if decision.freeze_allowed else "not allowed"),
    ]
    for tree in (summary.base, summary.head, summary.reverted):
        if tree is not None and tree.records:
            lines.append(_tree_line(tree, "reverted" if tree.name == "reverted" else summary.stage))
    lines += _seed_lines(summary)
    if extra["fisher_p"] is not None:
        lines.append(f"head vs base: Fisher exact p = {extra['fisher_p']:.3g} (two-sided, "
                     f"{summary.stage} runs)")
    if extra["bound"] is not None:
        lines.append(_bound_line(extra["bound"]))
    if extra["revert_code"] is not None:
        lines.append(f"revert-code: {extra['revert_code']['answer']}")
    total = sum(len(t.records) for t in (summary.base, summary.head, summary.reverted) if t)
    lines.append(f"runs: {total} in {summary.wall_seconds:.1f} s, {summary.jobs} jobs"
                 + (", serial" if summary.serial else "") + f", python {summary.python}")
    lines.append(f"recheck: {extra['recheck']}")
    return lines


def _setup(summary: Summary) -> str:
    pinned = " ".join(f"{k}={v}" for k, v in summary.env.items())
    return (f"context {summary.context}, mode {summary.mode}, seeds {_span(summary.seeds)}, "
            f"{summary.repeats} repeats, {pinned}")


def _tree_line(tree: TreeEvidence, stage: str) -> str:
    failures, executed = tree.sample(stage)
    low, high = stats.clopper_pearson(failures, executed)
    rate = f"{_pct(failures / executed)}, 95% CI {_pct(low)}-{_pct(high)}" if executed else "-"
    failing = ", ".join(str(s) for s in tree.failing_seeds()) or "none"
    problems = _problems(tree)
    said = f"; {problems[0]}" if problems else ""
    return (f"{tree.name} {tree.sha[:10]}: {failures}/{executed} failed in the {stage} runs "
            f"({rate}); failing seeds: {failing}{said}")


def _seed_lines(summary: Summary) -> list[str]:
    trees = [t for t in (summary.base, summary.head) if t is not None and t.ran_any()]
    seeds = sorted({s for t in trees for s in t.failing_seeds()})
    lines = []
    for seed in seeds[:_MAX_SEED_LINES]:
        parts = []
        for tree in trees:
            outs = [o for o in tree.by_seed().get(seed, []) if o.ran]
            parts.append(f"{tree.name} failed {sum(o.failing for o in outs)}/{len(outs)}")
        lines.append(f"  seed {seed}: " + ", ".join(parts))
    return lines


def _bound_line(bound: dict[str, Any]) -> str:
    head = bound["head"]
    return (
        f"no failure in {head['runs']} runs on head: flake rate below {_pct(head['upper95'])} "
        f"(95% one-sided; rule of three {_pct(head['rule_of_three'])}); "
        f"{bound['runs_for_1pct']} runs would bound it at 1% ({head['more_runs_for_1pct']} more)"
    )


def markdown_lines(summary: Summary, decision: Decision, extra: dict[str, Any]) -> list[str]:
    text = text_lines(summary, decision, extra)
    lines = [
        f"**{decision.verdict}**, freeze "
        + ("allowed" if decision.freeze_allowed else "not allowed") + f": {_md(decision.detail)}",
        "",
        f"`{_md(summary.nodeid)}`: {_md(_setup(summary))}",
        "",
        "| tree | commit | failed / runs | rate (95% CI) | failing seeds |",
        "|---|---|---|---|---|",
    ]
    for tree in (summary.base, summary.head, summary.reverted):
        if tree is not None and tree.records:
            lines.append(_tree_row(tree, "reverted" if tree.name == "reverted" else summary.stage))
    lines.append("")
    rest = [line.strip() for line in text[2:] if not line.startswith(("base ", "head ",
                                                                      "reverted "))]
    for line in rest:
        code = line.startswith("recheck:")
        head, _, tail = line.partition(": ")
        lines.append(f"- {head}: `{tail}`" if code else f"- {_md(line)}")
    return lines


def _tree_row(tree: TreeEvidence, stage: str) -> str:
    failures, executed = tree.sample(stage)
    low, high = stats.clopper_pearson(failures, executed)
    rate = f"{_pct(failures / executed)} ({_pct(low)}-{_pct(high)})" if executed else "-"
    failing = ", ".join(str(s) for s in tree.failing_seeds()) or "none"
    if not tree.ran_any():
        failing = _md(tree.first_problem())
    return f"| {tree.name} | `{tree.sha[:10]}` | {failures}/{executed} | {rate} | {failing} |"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _span(seeds: tuple[int, ...]) -> str:
    if not seeds:
        return "none"
    if list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(s) for s in seeds)
