"""The ledger's commands as ``Result``s: ``ledger check``, ``ledger list``, ``freeze``,
``unfreeze``.

Thaw drills are in ``ledger_drill``. Each function here is what one CLI command calls.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentgate.core.errors import AgentgateError
from agentgate.core.model import Reason, Result
from agentgate.git import gitio
from agentgate.ledger.records import (
    DEFAULT_DRILL_K,
    Entry,
    default_drill_command,
    default_recheck,
    entries,
    is_valid,
    new_record,
    reason_for,
    rel_path,
    utc_today,
    write_record,
)
from agentgate.ledger.rules import JUSTIFIED_VERDICT, parse_date

if TYPE_CHECKING:
    from agentgate.core.config import Config

_TRUST_HINT = "commit the ledger change on its own, as a human (it is a trust file)"


def check_result(root: Path, config: Config, *, today: date | None = None) -> Result:
    found = entries(root, config, today=today)
    reasons = [r for r in (reason_for(root, e) for e in found) if r is not None]
    notes = [] if reasons else [
        f"{len(found)} freeze record(s) in {config.ledger}, all valid" if found
        else f"no freeze records in {config.ledger}"
    ]
    return Result("ledger check", reasons=reasons, notes=notes)


def list_result(root: Path, config: Config, *, today: date | None = None) -> Result:
    """Every record with state, owner, days left and last drill; bad records are reasons too."""
    day = today or utc_today()
    found = entries(root, config, today=day)
    rows = [_row(root, e, day) for e in found]
    reasons = [r for r in (reason_for(root, e) for e in found) if r is not None]
    notes = [] if rows else [f"no freeze records in {config.ledger}"]
    extra: dict[str, Any] = {"records": rows, "text": _text(rows), "markdown": _markdown(rows)}
    return Result("ledger list", reasons=reasons, notes=notes, extra=extra)


def _row(root: Path, entry: Entry, today: date) -> dict[str, Any]:
    data = entry.data or {}
    until = parse_date(data.get("freeze_until"))
    reason: Reason | None = reason_for(root, entry)
    return {
        "test": entry.test,
        "file": rel_path(root, entry.path),
        "state": _text_field(data, "state"),
        "owner": _text_field(data, "owner"),
        "freeze_until": until.isoformat() if until else None,
        "days_left": (until - today).days if until else None,
        "lease_until": _text_field(data, "lease_until"),
        "last_drill": _last_drill(data.get("history")),
        "valid": is_valid(entry),
        "problem": reason.code if reason else None,
    }


def _text_field(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _last_drill(history: Any) -> dict[str, Any] | None:
    drills = [e for e in history if isinstance(e, dict) and e.get("event") == "drill"] if (
        isinstance(history, list)) else []
    if not drills:
        return None
    last = drills[-1]
    return {k: last.get(k) for k in ("at", "result", "passed", "k")}


def _cells(row: dict[str, Any]) -> list[str]:
    left = row["days_left"]
    days = "-" if left is None else ("expired" if left < 0 else f"{left}d")
    drill = row["last_drill"]
    drilled = "never"
    if drill:
        drilled = f"{drill['at']} {drill['result']} {drill['passed']}/{drill['k']}"
    state = row["state"] or "?"
    if not row["valid"]:
        state += f" ({row['problem']})"
    return [state, days, row["owner"] or "?", drilled, row["test"] or row["file"]]


_HEADER = ["state", "left", "owner", "last drill", "test"]


def _text(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    table = [_HEADER, *(_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADER) - 1)]
    return ["  ".join([*(c.ljust(w) for c, w in zip(line, widths, strict=False)), line[-1]])
            for line in table]


def _markdown(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    out = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    for row in rows:
        state, days, owner, drilled, test = (c.replace("|", "\\|") for c in _cells(row))
        out.append(f"| {state} | {days} | {owner} | {drilled} | `{test}` |")
    return out


def freeze(
    root: Path, config: Config, *, test: str, owner: str, reason: str, evidence: dict[str, Any],
    until: date | None = None, rev: str = "HEAD", recheck: str | None = None,
    drill_command: str | None = None, drill_k: int = DEFAULT_DRILL_K, today: date | None = None,
) -> Result:
    """A manual freeze, held to the same rules (evidence included) as attribute's."""
    day = today or utc_today()
    record = new_record(
        test=test, verdict=JUSTIFIED_VERDICT, evidence=evidence, reason=reason, owner=owner,
        frozen_at_sha=gitio.resolve(root, rev),
        freeze_until=until or day + timedelta(days=config.max_freeze_days),
        recheck=recheck or default_recheck(test),
        drill_command=drill_command or default_drill_command(test), drill_k=drill_k, today=day,
    )
    path = write_record(root, config, record, today=day)
    rel = rel_path(root, path)
    note = f"froze {test} until {record.freeze_until.isoformat()} in {rel}; {_TRUST_HINT}"
    return Result("freeze", notes=[note], extra={"file": rel, "record": record.to_json()})


def unfreeze(root: Path, config: Config, test: str) -> Result:
    """Remove the test's record: its failures count again (the safe direction, always allowed)."""
    found = [e for e in entries(root, config) if e.test == test]
    if not found:
        raise AgentgateError(f"no freeze record for {test} in {config.ledger}; "
                             "see agentgate ledger list")
    removed = []
    for entry in found:
        entry.path.unlink()
        removed.append(rel_path(root, entry.path))
    note = f"unfroze {test} (removed {', '.join(removed)}); {_TRUST_HINT}"
    return Result("unfreeze", notes=[note], extra={"removed": removed})
