"""The ledger's commands as ``Result``s: ``ledger check``, ``ledger list``, ``freeze``,
``unfreeze``.

Thaw drills are in ``flows.thaw`` (their record, ``Drills``, is here). Each function here is
what one CLI command calls; ``report.ledger`` renders the records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agentgate.core.errors import AgentgateError
from agentgate.core.model import Detail, Reason, Result
from agentgate.git import gitio
from agentgate.ledger.records import (
    DEFAULT_DRILL_K,
    Entry,
    FreezeRecord,
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
    rows = tuple(_row(root, e, day) for e in found)
    reasons = [r for r in (reason_for(root, e) for e in found) if r is not None]
    notes = [] if rows else [f"no freeze records in {config.ledger}"]
    return Result("ledger list", reasons=reasons, notes=notes, detail=LedgerList(rows))


@dataclass(frozen=True)
class LastDrill:
    at: Any  # as the record has it: the ledger's own check reports a malformed drill
    result: Any
    passed: Any
    k: Any


@dataclass(frozen=True)
class LedgerRow:
    """One freeze record as ``ledger list`` shows it."""

    test: str | None
    file: str
    state: str | None
    owner: str | None
    freeze_until: str | None
    days_left: int | None
    lease_until: str | None
    last_drill: LastDrill | None
    valid: bool
    problem: str | None  # the rule code of the record's first problem

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LedgerList:
    kind: ClassVar[str] = "ledger"
    rows: tuple[LedgerRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {"records": [r.to_json() for r in self.rows]}


@dataclass(frozen=True)
class Frozen:
    kind: ClassVar[str] = "ledger"
    file: str
    record: FreezeRecord

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "record": self.record.to_json()}


@dataclass(frozen=True)
class Unfrozen:
    kind: ClassVar[str] = "ledger"
    removed: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"removed": list(self.removed)}


@dataclass(frozen=True)
class Drills:
    """``thaw``: one summary per drilled record (read back from JSON by nothing: a dict)."""

    kind: ClassVar[str] = "ledger"
    drills: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"drills": list(self.drills)}


def with_drill(detail: Detail | None, drill: dict[str, Any]) -> Drills:
    """The thaw result's drills with one more."""
    done = detail.drills if isinstance(detail, Drills) else ()
    return Drills((*done, drill))


def _row(root: Path, entry: Entry, today: date) -> LedgerRow:
    data = entry.data or {}
    until = parse_date(data.get("freeze_until"))
    reason: Reason | None = reason_for(root, entry)
    return LedgerRow(
        test=entry.test,
        file=rel_path(root, entry.path),
        state=_text_field(data, "state"),
        owner=_text_field(data, "owner"),
        freeze_until=until.isoformat() if until else None,
        days_left=(until - today).days if until else None,
        lease_until=_text_field(data, "lease_until"),
        last_drill=_last_drill(data.get("history")),
        valid=is_valid(entry),
        problem=reason.code if reason else None,
    )


def _text_field(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _last_drill(history: Any) -> LastDrill | None:
    drills = [e for e in history if isinstance(e, dict) and e.get("event") == "drill"] if (
        isinstance(history, list)) else []
    if not drills:
        return None
    last = drills[-1]
    return LastDrill(*(last.get(k) for k in ("at", "result", "passed", "k")))


def freeze(
    root: Path, config: Config, *, test: str, owner: str, reason: str, evidence: dict[str, Any],
    until: date | None = None, rev: str = "HEAD", recheck: str | None = None,
    drill_ambient: Mapping[str, str] | None = None, drill_k: int = DEFAULT_DRILL_K,
    today: date | None = None,
) -> Result:
    """A manual freeze, held to the same rules (evidence included) as attribute's."""
    day = today or utc_today()
    record = new_record(
        test=test, verdict=JUSTIFIED_VERDICT, evidence=evidence, reason=reason, owner=owner,
        frozen_at_sha=gitio.resolve(root, rev),
        freeze_until=until or day + timedelta(days=config.max_freeze_days),
        recheck=recheck or default_recheck(test),
        drill_k=drill_k, drill_ambient=drill_ambient, today=day,
    )
    path = write_record(root, config, record, today=day)
    rel = rel_path(root, path)
    note = f"froze {test} until {record.freeze_until.isoformat()} in {rel}; {_TRUST_HINT}"
    return Result("freeze", notes=[note], detail=Frozen(rel, record))


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
    return Result("unfreeze", notes=[note], detail=Unfrozen(tuple(removed)))
