"""``attribute --freeze``: the attribution's evidence into a freeze record, or a refusal.

Only a verdict that allows a freeze (PRE_EXISTING, reproduced on both trees) writes a record;
any other refuses with the verdict's reason and exit 4. The ledger's own rules (maximum
length, one record per test, evidence that justifies the verdict) still apply in
``ledger.write_record``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentgate.attribution.summary import AttributionDetail, FreezeOutcome
from agentgate.core.model import Reason, Result, Verdict
from agentgate.ledger import records as ledger

if TYPE_CHECKING:
    from pathlib import Path

    from agentgate.attribution.request import Request
    from agentgate.attribution.summary import Summary
    from agentgate.attribution.verdict import Decision
    from agentgate.core.config import Config

DRILL_FLOOR = 10  # thaw drill runs at least this many times, cycling the failing seeds


def freeze(
    root: Path, config: Config, request: Request, summary: Summary, decision: Decision,
    result: Result,
) -> Result:
    """The result with the freeze written (a note) or refused (a BLOCKED reason)."""
    assert request.freeze is not None
    if not decision.freeze_allowed:
        refusal = (
            f"refusing to freeze: the verdict is {decision.verdict} ({decision.detail}); only "
            "a PRE_EXISTING failure reproduced on both trees may be frozen"
        )
        refused = _with_freeze(result, FreezeOutcome(written=False, refused=refusal))
        reason = Reason("attribute-freeze-refused", Verdict.BLOCKED, refusal, summary.nodeid)
        return replace(result, reasons=[*result.reasons, reason], detail=refused)
    evidence = evidence_for(summary, config)
    record = ledger.new_record(
        test=summary.nodeid,
        verdict=str(decision.verdict),
        evidence=evidence,
        reason=request.freeze.reason or decision.detail,
        owner=request.freeze.owner,
        frozen_at_sha=summary.head_sha,
        freeze_until=request.freeze.until,
        recheck=_detail(result).recheck,
        # Each failing seed is drilled at least as often as it was re-run to show it fails.
        drill_k=max(DRILL_FLOOR, len(evidence["head_fail"]) * summary.repeats),
        today=request.today,
    )
    path = ledger.write_record(root, config, record, today=request.today)
    rel = os.path.relpath(path, root)
    written = _with_freeze(result, FreezeOutcome(written=True, path=rel))
    note = f"freeze record written to {rel}; commit it on its own (the ledger is a trust file)"
    return replace(result, notes=[*result.notes, note], detail=written)


def _detail(result: Result) -> AttributionDetail:
    assert isinstance(result.detail, AttributionDetail), "built by summary.build_result"
    return result.detail


def _with_freeze(result: Result, outcome: FreezeOutcome) -> AttributionDetail:
    return replace(_detail(result), freeze=outcome)


def evidence_for(summary: Summary, config: Config) -> dict[str, Any]:
    assert summary.base is not None
    return {
        "base_fail": summary.base.failing_seeds(),
        "head_fail": summary.head.failing_seeds(),
        "mode": summary.mode,
        "seeds": list(summary.seeds),
        "tz": config.tz,
        "lc_all": config.lc_all,
        "context": summary.context,
        "repeats": summary.repeats,
        "base_sha": summary.base_sha,
        "per_seed": {
            "base": summary.base.by_seed_text(),
            "head": summary.head.by_seed_text(),
        },
    }
