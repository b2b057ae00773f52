"""Sharded attribution (issue 13 item 3): a CI matrix runs the hundreds of runs that bound a
1% flake rate, each job a share of the seeds, and one merge job draws the verdict.

A share is the seeds ``s`` with ``s % N == I - 1`` (of the sweep ``0..runs-1``, or of the
``--seed`` list in matched mode). Every stage a seed leads to -- its swept runs on both trees,
its reverted runs, its matched re-runs when it failed -- runs in the shard that owns the seed,
so the shards together run exactly the runs one attribution would, and each matched re-run
is decided by the sweep of its own seed. The evidence file holds each run's JUnit-derived
outcome by tree, stage, seed and attempt, and what the runs were asked for; the merge
refuses files that were not asked for the same thing, or do not make exactly one whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgate.attribution.runs import Run, RunRecord
from agentgate.core.errors import ConfigError
from agentgate.run.junit import Outcome

FORMAT = "agentgate-attribution-evidence"
VERSION = 1
# What every shard must have been asked, and the words a refusal uses for each.
_ASKED = {"nodeid": "node id", "base": "base", "head": "head", "mode": "mode",
          "context": "context", "runs": "runs", "repeats": "repeats", "seeds": "seeds",
          "revert_code": "--revert-code", "env": "pinned environment", "of": "shard count N"}


def share(seeds: Sequence[int], shard: tuple[int, int] | None) -> list[int]:
    if shard is None:
        return list(seeds)
    index, count = shard
    return [s for s in seeds if s % count == index - 1]


@dataclass(frozen=True)
class Evidence:
    asked: dict[str, Any]  # the _ASKED keys
    shard: int
    records: tuple[RunRecord, ...]
    base_problem: str = ""
    python: str = ""
    wall_seconds: float = 0.0
    source: str = ""


def write(path: Path, evidence: Evidence) -> None:
    data = {"format": FORMAT, "version": VERSION, **evidence.asked, "shard": evidence.shard,
            "base_problem": evidence.base_problem, "python": evidence.python,
            "wall_seconds": round(evidence.wall_seconds, 3),
            "records": [_record_json(r) for r in evidence.records]}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def _record_json(record: RunRecord) -> dict[str, Any]:
    run = record.run
    return {"tree": run.tree, "seed": run.seed, "stage": run.stage, "attempt": run.attempt,
            "outcome": str(record.outcome), "detail": record.detail,
            "seconds": round(record.seconds, 3)}


def read(path: Path) -> Evidence:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(f"not version-{VERSION} attribution evidence")
        records = tuple(RunRecord(Run(str(r["tree"]), int(r["seed"]), str(r["stage"]),
                                      int(r["attempt"])), Outcome(r["outcome"]),
                                  str(r["detail"]), float(r["seconds"]))
                        for r in data["records"])
        asked = _typed({k: _frozen(data[k]) for k in _ASKED})
        return Evidence(asked, int(data["shard"]), records, str(data["base_problem"]),
                        str(data["python"]), float(data["wall_seconds"]), str(path))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path}: not attribution evidence agentgate can read ({exc}); "
                          "pass files written by attribute --shard I/N --evidence-out FILE"
                          ) from None


_TYPES: dict[str, type | tuple[type, ...]] = {
    "nodeid": str, "base": str, "head": str, "mode": str, "context": str, "runs": int,
    "repeats": int, "seeds": tuple, "revert_code": bool, "env": dict, "of": int}


def _typed(asked: dict[str, Any]) -> dict[str, Any]:
    """The asked values with the types the merge uses (found in review: ``"runs": "many"``
    was an internal error, exit 70)."""
    for key, kind in _TYPES.items():
        value = asked[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError(f"{_ASKED[key]} is {value!r}")
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in asked["seeds"]):
        raise ValueError(f"seeds are {asked['seeds']!r}")
    if not all(isinstance(k, str) and (v is None or isinstance(v, str))
               for k, v in asked["env"].items()):
        raise ValueError(f"the pinned environment is {asked['env']!r}")
    return asked


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def files(paths: Sequence[Path]) -> list[Path]:
    """``--merge`` values: files, or folders meaning every ``*.json`` in them (what a CI
    artifact download leaves)."""
    found: list[Path] = []
    for path in paths:
        found += sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not found:
        raise ConfigError("attribute --merge: no evidence files found")
    return found


def check(shards: Sequence[Evidence], nodeid: str) -> None:
    """Refuse evidence that is not exactly the N shares of one attribution of ``nodeid``."""
    first = shards[0]
    if first.asked["nodeid"] != nodeid:
        raise ConfigError(f"attribute --merge: {first.source} is evidence for "
                          f"{first.asked['nodeid']}, not {nodeid}")
    for other in shards[1:]:
        for key, words in _ASKED.items():
            if other.asked[key] != first.asked[key]:
                raise ConfigError(f"attribute --merge: {other.source} has {words} "
                                  f"{_short(other.asked[key])}, {first.source} has "
                                  f"{_short(first.asked[key])}; merge the shards of one "
                                  "attribution")
    count = int(first.asked["of"])
    indexes = sorted(s.shard for s in shards)
    doubled = sorted({i for i in indexes if indexes.count(i) > 1})
    if doubled:
        raise ConfigError(f"attribute --merge: shard {doubled[0]}/{count} given twice")
    missing = sorted(set(range(1, count + 1)) - set(indexes))
    if missing:
        raise ConfigError(f"attribute --merge: shard {missing[0]}/{count} is missing "
                          f"({len(missing)} of {count} missing)")
    for shard in shards:
        stray = sorted({r.run.seed for r in shard.records
                        if r.run.seed % count != shard.shard - 1})
        if stray:
            raise ConfigError(f"attribute --merge: {shard.source} (shard {shard.shard}/"
                              f"{count}) holds seed {stray[0]}, which is another shard's")


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] if len(text) == 40 and all(c in "0123456789abcdef" for c in text) else text
