"""Thaw drills: run a frozen test's drill k times, for real, and move the record on.

k/k passes put the record on probation (the test counts again, and the drill re-runs weekly
under a lease); any failure keeps it frozen and renews the freeze only with a cause that names
the ambient input or the reason, because "still flaky" is exactly the relabelling the ledger
exists to stop. Every drill and renewal is appended to the record's history.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentgate.core.errors import AgentgateError
from agentgate.core.model import Reason, Result, Verdict
from agentgate.ledger import ops as ledger_ops
from agentgate.ledger.records import (
    FROZEN,
    PROBATION,
    Entry,
    FreezeRecord,
    entries,
    is_valid,
    reason_for,
    rel_path,
    save,
    utc_today,
)
from agentgate.run import interp, process

if TYPE_CHECKING:
    from agentgate.core.config import Config

LEASE_DAYS = 7  # a test on probation re-proves itself weekly
# Words that say a test fails without saying why; a cause made only of these is refused.
_VAGUE = frozenset(
    " ".join((
        "a again an and as bad before broken bug ci cause fail failed failing fails flake",
        "flakes flakey flakiness flaking flaky idea idk intermittent intermittently is issue",
        "it n na no none nondeterministic not on or problem random randomly reason same",
        "sometimes still sure tbd test tests the todo unclear unknown unstable",
    )).split()
)
_MIN_WORDS = 2


@dataclass(frozen=True)
class DrillOutcome:
    passed: int
    k: int
    seeds: tuple[int, ...]  # PYTHONHASHSEED of each run
    failure: str = ""  # the first failing run, in one line

    @property
    def ok(self) -> bool:
        return self.passed == self.k


def thaw(
    root: Path, config: Config, *, test: str | None = None, due: bool = False,
    cause: str | None = None, today: date | None = None,
) -> Result:
    """Drill one frozen test, or (``due``) every probation lease that has run out."""
    if (test is None) == (not due):
        raise AgentgateError("name one frozen test, or pass --due for every drill that is due")
    day = today or utc_today()
    checked = check_cause(cause, config) if cause is not None else None
    found = entries(root, config, today=day)
    targets, reasons = _due(root, found, day) if due else _named(root, found, test or "")
    result = Result("thaw", reasons=reasons)
    for entry in targets:
        _drill_entry(root, config, entry, checked, day, result)
    if not targets and not reasons:
        result.notes.append("no drill is due")
    return result


def _named(root: Path, found: list[Entry], test: str) -> tuple[list[Entry], list[Reason]]:
    matches = [e for e in found if e.test == test]
    if not matches:
        raise AgentgateError(f"no freeze record for {test}; see agentgate ledger list")
    bad = [r for r in (reason_for(root, e) for e in matches) if r is not None]
    # An invalid or expired record is not drilled: a freeze that expired stays expired.
    return ([] if bad else matches), bad


def _due(root: Path, found: list[Entry], today: date) -> tuple[list[Entry], list[Reason]]:
    bad = [r for r in (reason_for(root, e) for e in found) if r is not None]
    due = [e for e in found if is_valid(e) and _lease_due(e, today)]
    return due, bad


def _lease_due(entry: Entry, today: date) -> bool:
    data = entry.data or {}
    lease = data.get("lease_until")
    return data.get("state") == PROBATION and isinstance(lease, str) and lease <= today.isoformat()


def check_cause(cause: str, config: Config) -> str:
    """The cause, stripped, if it names an ambient input or says something specific."""
    text = " ".join(cause.split())
    words = re.findall(r"[A-Za-z0-9_]+", text)
    ambient = {name.upper() for name in (*config.ambient, *config.pinned_env())}
    if any(w.upper() in ambient for w in words):
        return text
    if len([w for w in words if w.lower() not in _VAGUE]) >= _MIN_WORDS:
        return text
    raise AgentgateError(
        f"--cause {text!r} is too vague; name the ambient input ({', '.join(sorted(ambient))}) "
        "or the reason (e.g. 'shared temp dir between tests')"
    )


def _drill_entry(
    root: Path, config: Config, entry: Entry, cause: str | None, today: date, result: Result
) -> None:
    assert entry.data is not None
    record = FreezeRecord.from_json(entry.data)
    outcome = run_drill(root, config, record)
    updated, reason, note = apply_outcome(
        record, outcome, cause=cause, today=today, max_days=config.max_freeze_days,
        env=_recorded_env(config, record),
    )
    save(entry.path, updated)
    rel = rel_path(root, entry.path)
    if reason is not None:
        result.reasons.append(replace(reason, path=rel))
    result.notes.append(note)
    result.detail = ledger_ops.with_drill(result.detail, _summary(updated, outcome, rel))


def _summary(record: FreezeRecord, outcome: DrillOutcome, rel: str) -> dict[str, Any]:
    return {
        "test": record.test, "file": rel, "passed": outcome.passed, "k": outcome.k,
        "result": "pass" if outcome.ok else "fail", "seeds": sorted(set(outcome.seeds)),
        "state": record.state, "freeze_until": record.freeze_until.isoformat(),
        "lease_until": record.lease_until.isoformat() if record.lease_until else None,
    }


def apply_outcome(
    record: FreezeRecord, outcome: DrillOutcome, *, cause: str | None, today: date,
    max_days: int, env: dict[str, str] | None = None,
) -> tuple[FreezeRecord, Reason | None, str]:
    """The record after a drill, the FAILED reason if it failed, and one line for the report."""
    drilled = record.with_event(
        "drill", today, result="pass" if outcome.ok else "fail", passed=outcome.passed,
        k=outcome.k, seeds=sorted(set(outcome.seeds)), env=env or {},
        **({"failure": outcome.failure} if outcome.failure else {}),
    )
    if outcome.ok:
        lease = today + timedelta(days=LEASE_DAYS)
        note = (f"{record.test}: {outcome.k}/{outcome.k} drill runs passed; on probation "
                f"(counts again), next drill due {lease.isoformat()} (agentgate thaw --due)")
        return replace(drilled, state=PROBATION, lease_until=lease), None, note
    failed = f"{outcome.k - outcome.passed}/{outcome.k} drill runs failed ({outcome.failure})"
    if cause is None:
        detail = (f"{record.test}: {failed}; freeze NOT renewed: re-run agentgate thaw with "
                  "--cause naming the ambient input or reason")
        return drilled, _failed(detail), f"{record.test}: not renewed"
    until = renewal_end(record, today, max_days)
    if until is None:
        return drilled, _failed(f"{record.test}: {failed}; {past_cap(record, max_days)}"), (
            f"{record.test}: not renewed (past max_freeze_days)")
    renewed = replace(drilled, state=FROZEN, lease_until=None, renewed_at=today,
                      freeze_until=until)
    renewed = renewed.with_event("renewed", today, cause=cause, until=until.isoformat())
    detail = f"{record.test}: {failed}; freeze renewed until {until.isoformat()} (cause: {cause})"
    return renewed, _failed(detail), f"{record.test}: renewed until {until.isoformat()}"


def renewal_end(record: FreezeRecord, today: date, max_days: int) -> date | None:
    """The same length as the period that just ended (at most ``max_days``), or None when that
    would run past ``frozen_at + max_days``: the cap counts from the first freeze (issue 11),
    so drills alone never keep a test frozen for longer."""
    period = (record.freeze_until - record.period_start).days
    until = today + timedelta(days=max(1, min(period, max_days)))
    return None if until > freeze_cap(record, max_days) else until


def freeze_cap(record: FreezeRecord, max_days: int) -> date:
    return record.frozen_at + timedelta(days=max_days)


def past_cap(record: FreezeRecord, max_days: int) -> str:
    return (f"freeze NOT renewed: a renewal would run past {freeze_cap(record, max_days)}, "
            f"max_freeze_days = {max_days} from the first freeze on {record.frozen_at}; a new "
            f"attribution is needed: agentgate attribute {shlex.quote(record.test)} --freeze")


def _failed(detail: str) -> Reason:
    return Reason("ledger-drill-failed", Verdict.FAILED, detail)


# --- running the drill ---------------------------------------------------------------------

def drill_seeds(record: FreezeRecord, config: Config) -> list[int]:
    """PYTHONHASHSEED for each of the k runs: the seeds the failure reproduced under.

    A drill under the one pinned seed would pass trivially for a test that fails only under
    seed 3; proving the test stable means passing under the seeds that made it fail. A seed
    the drill itself pins (``ambient``) is the one every run uses.
    """
    pinned = record.drill.ambient.get("PYTHONHASHSEED")
    evidence = record.evidence
    failing = sorted(set(evidence.get("base_fail", ())) & set(evidence.get("head_fail", ())))
    seeds = [int(pinned)] if pinned is not None else failing or [config.pythonhashseed]
    return [seeds[i % len(seeds)] for i in range(record.drill.k)]


def run_drill(root: Path, config: Config, record: FreezeRecord) -> DrillOutcome:
    """Run pytest on the record's test k times in the repository root, pinned, as
    subprocesses agentgate builds itself (the record names no command: issue 11)."""
    argv = drill_argv(root, config, record.test)
    seeds = drill_seeds(record, config)
    passed, failure = 0, ""
    for run, seed in enumerate(seeds, start=1):
        said = _run_once(root, argv, _env(root, config, record, seed), config.timeout or None)
        if said is None:
            passed += 1
        elif not failure:
            failure = f"run {run}, PYTHONHASHSEED={seed}: {said}"
    return DrillOutcome(passed=passed, k=len(seeds), seeds=tuple(seeds), failure=failure)


def _env(root: Path, config: Config, record: FreezeRecord, seed: int) -> dict[str, str]:
    # agentgate's pinned test environment (git's hook variables and the caller's pytest
    # settings stripped), then the drill's own pinned inputs; bytecode off, so a drill leaves
    # the work tree as it found it.
    extra = {**record.drill.ambient, "PYTHONHASHSEED": str(seed), "PYTHONDONTWRITEBYTECODE": "1"}
    return interp.test_env(config, root, seed=seed, extra=extra)


def _recorded_env(config: Config, record: FreezeRecord) -> dict[str, str]:
    env = {**config.pinned_env(), **record.drill.ambient}
    return {k: v for k, v in env.items() if k != "PYTHONHASHSEED"}  # the seeds are recorded


# Ordering and rerun plugins off: a rerun-to-green would hide exactly what a drill seeks.
_PYTEST_ARGS = ("-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                "-p", "no:rerunfailures", "-p", "no:flaky")


def drill_argv(root: Path, config: Config, test: str) -> list[str]:
    """The project's interpreter running pytest on the one node id; ``--`` so that a node id
    can never be read as an option."""
    return [interp.project_python(root, config), *_PYTEST_ARGS, "--", test]


def _run_once(root: Path, argv: list[str], env: dict[str, str], timeout: int | None) -> str | None:
    """None when the run passed, else one line saying how it failed."""
    try:
        done = process.capture(argv, cwd=root, env=env, timeout=timeout)
    except FileNotFoundError:
        raise AgentgateError(f"the project's interpreter {argv[0]!r} was not found; set "
                             "[tool.agentgate] python to one") from None
    if done.timed_out:
        return f"timed out after {timeout}s"
    if done.returncode == 0:
        return None
    return f"exit {done.returncode}: {_gist(os.fsdecode(done.stdout + done.stderr))}"


def _gist(output: str) -> str:
    """pytest's first ``E   `` line says what failed; else the last line of output."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("E ")]
    if errors:
        return errors[0][1:].strip()
    return lines[-1] if lines else "no output"
