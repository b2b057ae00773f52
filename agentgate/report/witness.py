"""One summary per patch, for JSON, text and markdown, and the shadow-mode statistics."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from agentgate.core.model import Reason, Verdict
from agentgate.witness import shadow
from agentgate.witness.select import (
    AMBIENT_DRIFT,
    ESCALATE,
    FIXTURE_DRIFT,
    FROZEN,
    IMPACTED,
    NEW,
    SKIP,
    WitnessPlan,
)

_LISTS = (
    ("skipped", SKIP),
    ("escalated", ESCALATE),
    ("impacted", IMPACTED),
    ("fixture_drift", FIXTURE_DRIFT),
    ("ambient", AMBIENT_DRIFT),
    ("frozen", FROZEN),
    ("new", NEW),
)


def to_json(plan: WitnessPlan, *, now: float | None = None) -> dict[str, Any]:
    """The witness part of a plan's and a check's result."""
    lists = {name: [d.nodeid for d in plan.labelled(label)] for name, label in _LISTS}
    counts = {name: len(ids) for name, ids in lists.items()}
    counts["shadowed"] = len(plan.shadow)
    return {
        "revision": plan.witness,
        "age": {"commits": plan.age_commits, "seconds": _age(plan, now)},
        "ambient_drift": plan.full_suite,
        "ambient_reasons": list(plan.ambient_drift),
        "counts": counts,
        **lists,
        "shadowed": list(plan.shadow),
        "deselected": list(plan.deselect),
        "shadow_percent": plan.shadow_percent,
        "shadow_bounds": (
            [shadow.FLOOR, plan.shadow_limit] if plan.shadow_percent < 100 else None),
        "audit": audit_json(plan),
        "patch_sha256": plan.patch_digest,
        "reasons": {d.nodeid: f"{d.label}: {d.detail}" for d in plan.decisions if d.runs},
        "notes": list(plan.notes),
    }


def _age(plan: WitnessPlan, now: float | None) -> int:
    return max(0, int((time.time() if now is None else now) - plan.recorded_at))


def audit_json(plan: WitnessPlan) -> dict[str, Any]:
    """The shadow sample's rule, stated (issue 12 item 5): a share of the skips, at least
    ``floor``, at most ``limit`` = min(cap, max(floor, band)), the band being the tests that
    run besides the audit, within ``budget_seconds`` of recorded time (shadow.budget)."""
    return {"percent": plan.shadow_percent, "floor": shadow.FLOOR, "cap": shadow.CAP,
            "band": plan.band, "limit": plan.shadow_limit, "sampled": len(plan.shadow),
            "budget_seconds": plan.audit_budget if 0 < plan.shadow_percent < 100 else None}


def _share(plan: WitnessPlan) -> str:
    """The audit's share as the report states it: the percentage, and its bounds."""
    percent = plan.shadow_percent
    if percent <= 0 or percent >= 100:
        return f"{percent:g}%"
    band = plan.band
    sized = (" (a quarter of the band)" if band is not None
             and shadow.FLOOR < plan.shadow_limit < shadow.CAP else "")
    budget = (f", within {plan.audit_budget:.2f} s recorded"
              if plan.audit_budget is not None else "")
    return f"{percent:g}%, {shadow.FLOOR} to {plan.shadow_limit}{sized}{budget}"


def text_lines(plan: WitnessPlan, *, now: float | None = None, verbose: bool = True) -> list[str]:
    """The witness's counts; with ``verbose``, each test it runs and why."""
    data = to_json(plan, now=now)
    counts = data["counts"]
    lines = [
        f"witness {plan.witness[:12]} ({plan.age_commits} commit(s), "
        f"{_days(data['age']['seconds'])} old)",
    ]
    if plan.full_suite:
        lines.append(f"ambient drift: the whole suite runs ({plan.ambient_drift[0]})")
    lines.append(
        "  " + ", ".join(f"{name.replace('_', ' ')} {counts[name]}" for name, _ in _LISTS)
        + f", shadowed {counts['shadowed']} ({_share(plan)})"
    )
    for decision in plan.decisions if verbose else ():
        if decision.runs and decision.label != AMBIENT_DRIFT:
            lines.append(f"  {decision.label} {decision.nodeid}: {decision.detail}")
    return lines


def markdown_lines(plan: WitnessPlan, *, now: float | None = None) -> list[str]:
    data = to_json(plan, now=now)
    counts = data["counts"]
    lines = [
        f"**Witness** `{plan.witness[:12]}` ({plan.age_commits} commit(s) old); "
        f"ambient drift: {'yes' if plan.full_suite else 'no'}",
        "",
        "| skipped | shadowed | escalated | impacted | fixture drift | frozen | new |",
        "|---|---|---|---|---|---|---|",
        f"| {counts['skipped']} | {counts['shadowed']} | {counts['escalated']} | "
        f"{counts['impacted']} | {counts['fixture_drift']} | {counts['frozen']} | "
        f"{counts['new']} |",
    ]
    return lines


def _days(seconds: int) -> str:
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def shadow_stats(
    plan: WitnessPlan, failed_ids: Collection[str]
) -> tuple[dict[str, Any], list[Reason]]:
    """Shadow mode: how often the witness escalates, and whether a sampled test it said to
    skip failed (``failed_ids``: the band's failures and errors) -- a witness bug, reported
    as such."""
    total = len(plan.decisions) or 1
    escalated = len(plan.labelled(ESCALATE))
    failed = set(failed_ids)
    failures = sorted(n for n in plan.shadow if n in failed)
    stats = {
        "escalate_ratio": round(escalated / total, 4),
        "shadow_sampled": len(plan.shadow),
        "shadow_failures": failures,
    }
    reasons = [
        Reason(
            code="witness-shadow-failure",
            verdict=Verdict.FAILED,
            detail="the witness said this test could be skipped, yet it failed: a witness bug; "
            "record the witness again and report it",
            path=nodeid,
        )
        for nodeid in failures
    ]
    return stats, reasons
