"""The freeze ledger: one JSON record per frozen test, audited on every check.

A quarantine list without an expiry becomes a permanent exemption, so every record carries
evidence that the failure pre-dates the patch, an owner, an expiry no further out than
``max_freeze_days``, and a drill that can prove the test stable again (``flows.thaw``).
``check`` is a precondition of plan/check and runs in the commit hook: it reads JSON and
test files' syntax trees only, never collects tests, and imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentgate.core.errors import EXIT_BLOCKED, AgentgateError
from agentgate.core.model import Reason, Verdict
from agentgate.ledger.problem import Problem
from agentgate.ledger.rules import (
    RECORD_VERSION,
    Context,
    parse_date,
    record_problems,
)

if TYPE_CHECKING:
    from agentgate.core.config import Config

SCHEMA = "freeze_record.schema.json"  # package data next to this module
DEFAULT_DRILL_K = 20
FROZEN, PROBATION = "frozen", "probation"


def utc_today() -> date:
    """Today in UTC: a freeze expires on the same day on every machine and in CI."""
    return datetime.now(UTC).date()


@dataclass(frozen=True)
class Drill:
    """What ``thaw`` runs, as data: python -m pytest on the record's test, k times, under the
    pinned environment plus ``ambient`` (names from the config's ``ambient`` list)."""

    k: int
    ambient: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FreezeRecord:
    test: str
    verdict: str
    evidence: Mapping[str, Any]
    reason: str
    owner: str
    frozen_at_sha: str
    frozen_at: date
    freeze_until: date
    recheck: str
    drill: Drill
    state: str = FROZEN
    renewed_at: date | None = None  # start of the current period after a renewal
    lease_until: date | None = None  # probation only: when the next drill is due
    history: tuple[Mapping[str, Any], ...] = ()

    @property
    def period_start(self) -> date:
        return self.renewed_at or self.frozen_at

    def to_json(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "test": self.test,
            "verdict": self.verdict,
            "state": self.state,
            "owner": self.owner,
            "reason": self.reason,
            "frozen_at": self.frozen_at.isoformat(),
            "renewed_at": _iso(self.renewed_at),
            "freeze_until": self.freeze_until.isoformat(),
            "lease_until": _iso(self.lease_until),
            "frozen_at_sha": self.frozen_at_sha,
            "evidence": _plain(self.evidence),
            "recheck": self.recheck,
            "drill": {"k": self.drill.k, "ambient": dict(self.drill.ambient)},
            "history": [_plain(entry) for entry in self.history],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FreezeRecord:
        """A record from JSON that ``record_problems`` found no fault with."""
        return cls(
            test=data["test"], verdict=data["verdict"], evidence=dict(data["evidence"]),
            reason=data["reason"], owner=data["owner"], frozen_at_sha=data["frozen_at_sha"],
            frozen_at=_date(data["frozen_at"]), freeze_until=_date(data["freeze_until"]),
            recheck=data["recheck"],
            drill=Drill(data["drill"]["k"], dict(data["drill"]["ambient"])),
            state=data["state"], renewed_at=parse_date(data.get("renewed_at")),
            lease_until=parse_date(data.get("lease_until")),
            history=tuple(dict(e) for e in data["history"]),
        )

    def with_event(self, event: str, today: date, **fields: Any) -> FreezeRecord:
        entry = {"at": today.isoformat(), "event": event, **fields}
        return replace(self, history=(*self.history, entry))


def _iso(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


def _date(value: str) -> date:
    parsed = parse_date(value)
    assert parsed is not None, "validated before use"
    return parsed


def _plain(value: Any) -> Any:
    """A JSON-ready deep copy: mappings to dicts, tuples to lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def new_record(
    *, test: str, verdict: str, evidence: dict[str, Any], reason: str, owner: str,
    frozen_at_sha: str, freeze_until: date, recheck: str, drill_k: int,
    drill_ambient: Mapping[str, str] | None = None, today: date | None = None,
) -> FreezeRecord:
    """A fresh ``frozen`` record; nothing is checked until ``write_record``."""
    start = today or utc_today()
    record = FreezeRecord(
        test=test, verdict=verdict, evidence=_plain(evidence), reason=reason, owner=owner,
        frozen_at_sha=frozen_at_sha, frozen_at=start, freeze_until=freeze_until,
        recheck=recheck, drill=Drill(drill_k, dict(drill_ambient or {})),
    )
    return record.with_event("frozen", start, owner=owner, verdict=verdict,
                             until=freeze_until.isoformat())


def default_recheck(test: str) -> str:
    return f"agentgate attribute {shlex.quote(test)} --mode matched"


# --- reading the ledger ---------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One file of the ledger folder; ``data`` is None when the file is not a JSON object."""

    path: Path
    data: dict[str, Any] | None
    error: str | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def test(self) -> str | None:
        value = self.data.get("test") if self.data is not None else None
        return value if isinstance(value, str) else None


def ledger_dir(root: Path, config: Config) -> Path:
    return root / config.ledger


def entries(root: Path, config: Config, *, today: date | None = None) -> list[Entry]:
    """Every record file, each with all the problems the rules find in it."""
    folder = ledger_dir(root, config)
    if not folder.exists():
        return []
    if not folder.is_dir():
        return [Entry(folder, None, "the ledger path is not a folder; make it one")]
    ctx = context(root, config, today or utc_today())
    found = [judge(_read(path), ctx) for path in sorted(folder.glob("*.json"))]
    return mark_duplicates(root, found)


def context(root: Path, config: Config, today: date, *, check_tests: bool = True) -> Context:
    return Context(root=root, today=today, max_days=config.max_freeze_days,
                   check_tests=check_tests, ambient=config.ambient)


def _read(path: Path) -> Entry:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Entry(path, None, f"unreadable ({exc}); fix the file or delete it")
    return parse_entry(path, raw)


def parse_entry(path: Path, raw: bytes) -> Entry:
    try:
        data = json.loads(raw.decode("utf-8"),
                          object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
    except UnicodeDecodeError:
        return Entry(path, None, "not valid UTF-8; re-save it as UTF-8 JSON")
    except ValueError as exc:
        return Entry(path, None, f"malformed JSON ({exc}); fix the file or delete it")
    if not isinstance(data, dict):
        return Entry(path, None, "not a JSON object; a record is one object per file")
    return Entry(path, data)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json keeps the last of two equal keys; a record that says two things says neither.
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"key {repeated[0]!r} appears twice")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def judge(entry: Entry, ctx: Context) -> Entry:
    if entry.data is None:
        return entry
    return replace(entry, problems=record_problems(entry.data, ctx))


def mark_duplicates(root: Path, found: list[Entry]) -> list[Entry]:
    by_test: dict[str, list[Entry]] = defaultdict(list)
    for entry in found:
        if entry.test is not None:
            by_test[entry.test].append(entry)
    marked = []
    for entry in found:
        same = by_test.get(entry.test or "", [])
        others = [rel_path(root, e.path) for e in same if e is not entry]
        if others:
            entry = replace(entry, problems=[*entry.problems, Problem(
                "ledger-duplicate", f"the test is also frozen by {', '.join(others)}; "
                "keep one record per test and delete the other")])
        marked.append(entry)
    return marked


def rel_path(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def is_valid(entry: Entry) -> bool:
    return entry.data is not None and entry.error is None and not entry.problems


def reason_for(root: Path, entry: Entry) -> Reason | None:
    """The one BLOCKED reason for a bad record: the first problem's code, every detail."""
    if entry.error is not None:
        path = rel_path(root, entry.path)
        return Reason("ledger-malformed", Verdict.BLOCKED, entry.error, path=path)
    if not entry.problems:
        return None
    detail = "; ".join(p.detail for p in entry.problems)
    if entry.test is not None:
        detail = f"{entry.test}: {detail}"
    return Reason(entry.problems[0].code, Verdict.BLOCKED, detail, path=rel_path(root, entry.path))


# --- the contract with the planner and attribution -----------------------------------------

def check(root: Path, config: Config, *, today: date | None = None) -> list[Reason]:
    """Every bad record as one BLOCKED ``ledger-...`` reason; empty when valid or absent."""
    found = (reason_for(root, e) for e in entries(root, config, today=today))
    return [r for r in found if r is not None]


def frozen_tests(root: Path, config: Config, *, today: date | None = None) -> frozenset[str]:
    """Node ids whose failure the band may excuse: valid, unexpired, not on probation.

    A test on probation passed its drills and counts again; an expired or otherwise invalid
    record is not honoured (and ``check`` blocks).
    """
    return frozenset(frozen_in(entries(root, config, today=today)))


def frozen_in(found: list[Entry]) -> dict[str, dict[str, Any]]:
    """Valid, unexpired records not on probation, by test."""
    return {
        e.test: e.data for e in found
        if is_valid(e) and e.test is not None and e.data is not None and e.data["state"] == FROZEN
    }


def write_record(
    root: Path, config: Config, record: FreezeRecord, *, today: date | None = None
) -> Path:
    """Write a new record after holding it to every rule ``check`` applies; refuse otherwise.

    Raises AgentgateError (exit 4) naming every problem, including an existing record for
    the same test (thaw or unfreeze that one instead).
    """
    day = today or utc_today()
    ctx = context(root, config, day)
    data = record.to_json()
    problems = [p.detail for p in record_problems(data, ctx)]
    problems += [f"already frozen by {rel_path(root, e.path)}; thaw or unfreeze that record"
                 for e in entries(root, config, today=day) if e.test == record.test]
    if problems:
        raise AgentgateError(f"refusing to freeze {record.test}: {'; '.join(problems)}",
                             exit_code=EXIT_BLOCKED)
    path = ledger_dir(root, config) / record_file_name(record.test)
    save(path, record)
    return path


def save(path: Path, record: FreezeRecord) -> None:
    """Replace the file in one rename, so a crash never leaves half a record behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record.to_json(), indent=2, ensure_ascii=False) + "\n"
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8", errors="surrogateescape")
    tmp.replace(path)


def record_file_name(test: str) -> str:
    """Readable and unique: a slug of the node id plus a hash, so ids differing only in
    punctuation (``test_x[a/b]`` and ``test_x[a-b]``) never share a file."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", test).strip("._-")[:80] or "test"
    digest = hashlib.sha256(test.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{slug}-{digest}.json"


def find(root: Path, config: Config, test: str, *, today: date | None = None) -> list[Entry]:
    return [e for e in entries(root, config, today=today) if e.test == test]

