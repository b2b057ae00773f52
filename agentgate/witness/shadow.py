"""The shadow sample: skipped tests that run anyway, to audit the witness.

The sample is a pure function of the patch's diff and the node id, so the same patch always
audits the same tests (a rerun cannot shop for a friendlier sample) and a different patch
audits different ones. Frozen tests are never in it: their failures prove nothing about the
witness. The sample is a share of the skips with a floor and a cap, and the cap is relative
to the band: never more audit tests than ``max(FLOOR, ceil(band / BAND_SHARE))``, and never
more than ``CAP`` (issue 12: 18 audit tests next to 6 impacted doubled a small witnessed
band; a sample as large as the band still added a third to the mutation benchmark's
witnessed time). The numbers are justified in bench/README.md.

The sample is bounded in time as well as in count: given the recorded durations, the audit
costs at most a quarter of the band's recorded time, or ``FLOOR`` typical skips (the median
skip's duration) when that is more; the floor's tests may be any skips no slower than the
median. A skip that does not fit is passed over for the next one in the patch's order (the
mutation benchmark: one test taking 14% of the suite's time audited next to a band of 20%).
A slow test is still audited by the patches whose band can pay for it.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Iterable, Mapping

FLOOR = 3  # audited skips at least (when there are that many)
CAP = 10  # audited skips at most, below 100%
BAND_SHARE = 4  # audited skips at most a quarter of the band (above the floor)


def patch_digest(diff: bytes) -> str:
    return hashlib.sha256(diff).hexdigest()


def _key(digest: str, nodeid: str) -> int:
    return int.from_bytes(
        hashlib.sha256(f"{digest}\0{nodeid}".encode("utf-8", "surrogateescape")).digest()[:8],
        "big")


def sample(
    digest: str,
    skipped: Iterable[str],
    percent: float,
    *,
    frozen: frozenset[str] = frozenset(),
    band: int | None = None,
    durations: Mapping[str, float] | None = None,
    band_seconds: float = 0.0,
) -> tuple[str, ...]:
    """The skipped node ids the patch audits, in a stable order: ``percent`` of the skips,
    but at least ``FLOOR`` and at most ``limit(band)`` of them (``band``: how many tests run
    besides the audit; None: no band bound), so a small band is not dominated by its audit;
    100% audits every skip. The ones audited are those whose patch-keyed hash ranks first
    among those that fit ``budget(band_seconds, ...)`` of their recorded ``durations`` (None:
    no time bound); the first ``FLOOR`` may take any skip no slower than the median."""
    candidates = [n for n in skipped if n not in frozen]
    if percent <= 0 or not candidates:
        return ()
    want = bounded(len(candidates), percent, band=band)
    ranked = sorted(candidates, key=lambda n: (_key(digest, n), n))
    if percent >= 100 or durations is None:
        return tuple(sorted(ranked[:want]))
    typical = _median(durations, candidates)
    left = budget(band_seconds, typical)
    chosen: list[str] = []
    for nodeid in ranked:
        cost = durations.get(nodeid, typical)
        if cost <= left or (len(chosen) < FLOOR and cost <= typical):
            chosen.append(nodeid)
            left -= cost
            if len(chosen) == want:
                break
    return tuple(sorted(chosen))


def budget(band_seconds: float, typical: float) -> float:
    """The recorded time one patch's audit may cost: a quarter of the band's, or ``FLOOR``
    typical (median) skips when that is more, so an empty or quick band is still audited."""
    return max(band_seconds / BAND_SHARE, FLOOR * typical)


def _median(durations: Mapping[str, float], candidates: list[str]) -> float:
    known = [durations[n] for n in candidates if n in durations]
    return statistics.median(known) if known else 0.0


def audit_budget(
    skipped: Iterable[str], durations: Mapping[str, float], band_seconds: float
) -> float:
    """``budget`` for these skips, as the report states it."""
    return budget(band_seconds, _median(durations, list(skipped)))


def limit(band: int | None) -> int:
    """The most skips one patch audits below 100%: a quarter of the band, but at least
    ``FLOOR`` (an empty band is still audited) and at most ``CAP``."""
    return CAP if band is None else min(CAP, max(FLOOR, math.ceil(band / BAND_SHARE)))


def bounded(skips: int, percent: float, *, band: int | None = None) -> int:
    """How many of ``skips`` skipped tests the sample audits."""
    if percent >= 100:
        return skips
    want = math.ceil(skips * percent / 100)
    return min(skips, max(FLOOR, min(limit(band), want)))
