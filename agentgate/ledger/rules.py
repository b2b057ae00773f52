"""The rules one freeze record must satisfy: every problem as a ``Problem``, never an exception.

Works on the record's parsed JSON rather than on a ``FreezeRecord`` so that a hand-edited,
half-broken file is still judged field by field and every problem is reported at once.
``agentgate/ledger/freeze_record.schema.json`` describes the same shape; a test keeps them in step.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any

from agentgate.ledger import nodeid as ledger_nodeid
from agentgate.ledger.drill import drill_problems
from agentgate.ledger.problem import Problem

RECORD_VERSION = 1
REQUIRED = (
    "test", "verdict", "evidence", "reason", "owner", "frozen_at_sha", "frozen_at",
    "freeze_until", "recheck", "drill", "state", "history",
)
OPTIONAL = ("version", "renewed_at", "lease_until")
EVIDENCE_REQUIRED = ("base_fail", "head_fail", "mode", "seeds", "tz")
STATES = ("frozen", "probation")
# Only a failure that reproduces on the base tree, under the same seeds, is the patch's
# finding rather than its doing (issue 5's verdict table); nothing else may be frozen.
JUSTIFIED_VERDICT = "PRE_EXISTING"

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


@dataclass
class Context:
    """What the rules need besides the record; ``parsed`` caches test files within one check."""

    root: Path
    today: date
    max_days: int
    parsed: dict[Path, ledger_nodeid.Parsed] = field(default_factory=dict)
    # False for a ledger read from git at another revision (the merge-base's): its records
    # only excuse node ids, and a record for a test that is gone excuses nothing.
    check_tests: bool = True
    ambient: tuple[str, ...] = ()  # the names a drill may pin: the config's ``ambient`` list


def record_problems(data: dict[str, Any], ctx: Context) -> list[Problem]:
    """Every rule the record breaks, most fundamental first (the first one names the reason)."""
    problems = _missing(data) + _shape(data)
    problems += _verdict(data) + _owner(data) + _evidence(data.get("evidence"))
    problems += drill_problems(data.get("drill"), ctx.ambient) + _dates(data, ctx)
    if ctx.check_tests and _test_problem(data.get("test")) is None:
        problems += _test_exists(data["test"], ctx)
    return problems


def parse_date(value: Any) -> date | None:
    """A strict ``YYYY-MM-DD`` date (``date.fromisoformat`` alone also takes ``20260101``)."""
    if not isinstance(value, str) or not _DATE.match(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _missing(data: dict[str, Any]) -> list[Problem]:
    missing = [k for k in REQUIRED if k not in data]
    evidence = data.get("evidence")
    if isinstance(evidence, dict):
        missing += [f"evidence.{k}" for k in EVIDENCE_REQUIRED if k not in evidence]
    if not missing:
        return []
    return [Problem("ledger-missing-field", f"missing {', '.join(missing)}; add "
                    f"{'it' if len(missing) == 1 else 'them'} or re-create the record with "
                    "agentgate freeze / agentgate attribute --freeze")]


def _shape(data: dict[str, Any]) -> list[Problem]:
    found = [f"unknown field {k!r}" for k in data if k not in REQUIRED and k not in OPTIONAL]
    for key, check in _FIELD_CHECKS.items():
        # Optional fields may be null; required ones may not.
        wrong = check(data[key]) if key in data and (
            data[key] is not None or key not in OPTIONAL) else None
        if wrong:
            found.append(f"{key} {wrong}")
    if data.get("state") == "probation" and parse_date(data.get("lease_until")) is None:
        found.append("a record on probation needs lease_until (YYYY-MM-DD)")
    return [Problem("ledger-field", f"{m}; fix the field") for m in found]


def _test_problem(value: Any) -> str | None:
    if not isinstance(value, str) or "::" not in value:
        return "must be a pytest node id 'path/to/test_file.py::name'"
    path = value.split("::", 1)[0]
    parts = PurePosixPath(path).parts
    if "\\" in path or path.startswith("/") or ".." in parts or not parts:
        return "must name a test file by a relative path inside the repository"
    return None


def _non_empty(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() else "must be a non-empty string"


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be a string"


def _sha(value: Any) -> str | None:
    ok = isinstance(value, str) and bool(_SHA.match(value))
    return None if ok else "must be a commit id (7 to 64 lowercase hex digits)"


def _iso(value: Any) -> str | None:
    return None if parse_date(value) is not None else "must be a date YYYY-MM-DD"


def _state(value: Any) -> str | None:
    return None if value in STATES else f"must be one of {', '.join(STATES)}"


def _history(value: Any) -> str | None:
    ok = isinstance(value, list) and all(
        isinstance(e, dict) and parse_date(e.get("at")) and _non_empty(e.get("event")) is None
        for e in value
    )
    return None if ok else "must be a list of entries, each with 'at' (YYYY-MM-DD) and 'event'"


def _version(value: Any) -> str | None:
    if value == RECORD_VERSION and not isinstance(value, bool):
        return None
    return f"must be {RECORD_VERSION} (this record was not written by this agentgate)"


def _evidence_shape(value: Any) -> str | None:
    return None if isinstance(value, dict) else "must be an object"


# Field -> what is wrong with its value (None when nothing). Emptiness of owner, the
# verdict's value and the drill (``ledger.drill``: it needs the config's ambient list) are
# rules of their own, with their own codes.
_FIELD_CHECKS: dict[str, Callable[[Any], str | None]] = {
    "test": _test_problem,
    "verdict": _string,
    "evidence": _evidence_shape,
    "reason": _non_empty,
    "owner": _string,
    "frozen_at_sha": _sha,
    "frozen_at": _iso,
    "freeze_until": _iso,
    "renewed_at": _iso,
    "lease_until": _iso,
    "recheck": _non_empty,
    "state": _state,
    "history": _history,
    "version": _version,
}


def _verdict(data: dict[str, Any]) -> list[Problem]:
    verdict = data.get("verdict")
    if not isinstance(verdict, str) or verdict == JUSTIFIED_VERDICT:
        return []
    return [Problem("ledger-verdict", f"verdict is {verdict!r}, and only {JUSTIFIED_VERDICT} "
                    "justifies a freeze; fix the test, or remove the record (agentgate unfreeze)")]


def _owner(data: dict[str, Any]) -> list[Problem]:
    owner = data.get("owner")
    if not isinstance(owner, str) or owner.strip():
        return []
    return [Problem("ledger-owner", "owner is empty; name the person who answers for this freeze")]


def _seed_list(value: Any) -> list[int] | None:
    if not isinstance(value, list):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return value


def _evidence(evidence: Any) -> list[Problem]:
    """PRE_EXISTING means: the same seeds failed on the base tree and on the patch tree."""
    if not isinstance(evidence, dict) or any(k not in evidence for k in EVIDENCE_REQUIRED):
        return []  # reported as a shape or missing-field problem
    wrong = _evidence_wrong(evidence)
    if wrong is None:
        return []
    return [Problem("ledger-evidence", f"evidence does not justify {JUSTIFIED_VERDICT}: {wrong}; "
                    "re-run agentgate attribute and freeze from its evidence")]


def _evidence_wrong(evidence: dict[str, Any]) -> str | None:
    base, head = _seed_list(evidence["base_fail"]), _seed_list(evidence["head_fail"])
    seeds = _seed_list(evidence["seeds"])
    if base is None or head is None or seeds is None:
        return "base_fail, head_fail and seeds must be lists of integer seeds"
    for key in ("mode", "tz"):
        if _non_empty(evidence[key]):
            return f"{key} must be a non-empty string"
    if not seeds:
        return "no seeds were run"
    if not base:
        return "nothing failed on the base tree (base_fail is empty)"
    if not head:
        return "nothing failed on the patch tree (head_fail is empty)"
    stray = sorted(set(base + head) - set(seeds))
    if stray:
        return f"failing seeds {stray} are not among the seeds run"
    if set(base) != set(head):
        return f"base failed on seeds {sorted(set(base))} but head on {sorted(set(head))}"
    return None


def _dates(data: dict[str, Any], ctx: Context) -> list[Problem]:
    frozen_at, until = parse_date(data.get("frozen_at")), parse_date(data.get("freeze_until"))
    if frozen_at is None or until is None:
        return []
    renewed = parse_date(data.get("renewed_at"))
    wrong = _date_order(frozen_at, renewed, until, ctx.today)
    if wrong:
        return [Problem("ledger-dates", f"{wrong}; fix the dates")]
    if ctx.today > until:
        return [Problem("ledger-expired", f"freeze expired on {until.isoformat()} and is no "
                        f"longer honoured; {_after_expiry(data)}")]
    # The cap counts from the first freeze, renewals included (issue 11): a renewal that
    # restarted the clock let a record stay frozen for years on drills alone. Past the cap
    # the failure needs fresh evidence, a new attribution.
    if (until - frozen_at).days > ctx.max_days:
        limit = date.fromordinal(frozen_at.toordinal() + ctx.max_days).isoformat()
        return [Problem("ledger-too-long", f"freeze runs {(until - frozen_at).days} days "
                        f"from its first freeze on {frozen_at.isoformat()}, more than "
                        f"max_freeze_days = {ctx.max_days}; set freeze_until to {limit} or "
                        f"earlier, or re-attribute the test for a new freeze")]
    return []


def _after_expiry(data: dict[str, Any]) -> str:
    test = data.get("test")
    unfreeze = f"agentgate unfreeze {shlex.quote(test) if isinstance(test, str) else 'NODEID'}"
    if data.get("state") == "probation":
        return f"the test passed its drills: run {unfreeze}"
    return f"fix the test and run {unfreeze}, or re-attribute it and freeze it again"


def _date_order(frozen_at: date, renewed: date | None, until: date, today: date) -> str | None:
    if frozen_at > today:
        return f"frozen_at {frozen_at.isoformat()} is in the future"
    if renewed is not None and not frozen_at <= renewed <= today:
        return f"renewed_at {renewed.isoformat()} is not between frozen_at and today"
    if until < (renewed or frozen_at):
        return "freeze_until is before the freeze started"
    return None


def _test_exists(nodeid: str, ctx: Context) -> list[Problem]:
    found = ledger_nodeid.locate(ctx.root, nodeid, ctx.parsed)
    if found.status == ledger_nodeid.FOUND:
        return []
    if found.status == ledger_nodeid.MISSING:
        return [Problem("ledger-test-missing", f"the test no longer exists ({found.why}); "
                        f"remove the record: agentgate unfreeze {shlex.quote(nodeid)}")]
    return [Problem("ledger-test-unresolved", f"cannot tell whether the test exists "
                    f"({found.why}); make the test file parse, or unfreeze the test")]
