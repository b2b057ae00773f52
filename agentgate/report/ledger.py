"""``ledger list`` as a table, in text and in markdown; freeze, unfreeze and thaw say all
they have to say in their notes."""

from __future__ import annotations

from agentgate.ledger.ops import Drills, Frozen, LedgerList, LedgerRow, Unfrozen

LedgerDetail = LedgerList | Frozen | Unfrozen | Drills

_HEADER = ["state", "left", "owner", "last drill", "test"]


def text(detail: LedgerDetail) -> list[str]:
    if not isinstance(detail, LedgerList) or not detail.rows:
        return []
    table = [_HEADER, *(_cells(r) for r in detail.rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADER) - 1)]
    return ["  ".join([*(c.ljust(w) for c, w in zip(line, widths, strict=False)), line[-1]])
            for line in table]


def markdown(detail: LedgerDetail) -> list[str]:
    if not isinstance(detail, LedgerList) or not detail.rows:
        return []
    out = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    for row in detail.rows:
        state, days, owner, drilled, test = (c.replace("|", "\\|") for c in _cells(row))
        out.append(f"| {state} | {days} | {owner} | {drilled} | `{test}` |")
    return out


def _cells(row: LedgerRow) -> list[str]:
    left = row.days_left
    days = "-" if left is None else ("expired" if left < 0 else f"{left}d")
    drill = row.last_drill
    drilled = "never"
    if drill:
        drilled = f"{drill.at} {drill.result} {drill.passed}/{drill.k}"
    state = row.state or "?"
    if not row.valid:
        state += f" ({row.problem})"
    return [state, days, row.owner or "?", drilled, row.test or row.file]
