"""An attribution as text and markdown: the verdict, each tree's failure rate with its
interval, the failing seeds, the bound when nothing reproduced, and the recheck command."""

from __future__ import annotations

from typing import Any

from agentgate.attribution import stats
from agentgate.attribution.summary import AttributionDetail, Summary, problems
from agentgate.attribution.verdict import TreeEvidence

_MAX_SEED_LINES = 10


def text(detail: AttributionDetail) -> list[str]:
    summary, decision, extra = detail.summary, detail.decision, detail.to_json()
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
    found = problems(tree)
    said = f"; {found[0]}" if found else ""
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


def markdown(detail: AttributionDetail) -> list[str]:
    summary, decision = detail.summary, detail.decision
    said = text(detail)
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
    rest = [line.strip() for line in said[2:] if not line.startswith(("base ", "head ",
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
