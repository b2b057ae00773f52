"""What ``agentgate attribute`` is asked to do: one test, two trees, the seeds and modes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

MODES = ("both", "swept", "matched")
CONTEXTS = ("alone", "file")


@dataclass(frozen=True)
class FreezeRequest:
    owner: str
    until: date
    reason: str = ""


@dataclass(frozen=True)
class Request:
    nodeid: str
    base: str | None = None
    head: str = "HEAD"
    runs: int = 10  # seeds swept: 0..runs-1
    repeats: int = 3  # re-runs of each matched seed per tree
    seeds: tuple[int, ...] = ()  # matched mode's seeds
    mode: str = "both"
    context: str = "alone"
    jobs: int | None = None  # default: os.cpu_count()
    serial: bool = False  # one run at a time, base's runs before head's
    timeout: float | None = None  # per run; default config ``timeout``
    revert_code: bool = False
    freeze: FreezeRequest | None = None
    progress: bool | None = None  # None: only when stderr is a TTY
    today: date | None = None  # injectable "today" for the freeze checks
    shard: tuple[int, int] | None = None  # (I, N): only the I-th share of the seeds
    evidence_out: Path | None = None  # where a shard's evidence goes (attribution.evidence)
