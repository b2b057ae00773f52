"""The shadow sample: skipped tests that run anyway, to audit the witness.

The sample is a pure function of the patch's diff and the node id, so the same patch always
audits the same tests (a rerun cannot shop for a friendlier sample) and a different patch
audits different ones. Frozen tests are never in it: their failures prove nothing about the
witness. The sample is a share of the skips with a floor and a cap, and the cap is relative
to the band: never more audit tests than ``max(FLOOR, ceil(band / BAND_SHARE))``, and never
more than ``CAP`` (issue 12: 18 audit tests next to 6 impacted doubled a small witnessed
band; a sample as large as the band still added a third to the mutation benchmark's
witnessed time). The numbers are justified in bench/README.md.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

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
) -> tuple[str, ...]:
    """The skipped node ids the patch audits, in a stable order: ``percent`` of the skips,
    but at least ``FLOOR`` and at most ``limit(band)`` of them (``band``: how many tests run
    besides the audit; None: no band bound), so a small band is not dominated by its audit;
    100% audits every skip. The ones audited are those whose patch-keyed hash ranks first."""
    candidates = [n for n in skipped if n not in frozen]
    if percent <= 0 or not candidates:
        return ()
    want = bounded(len(candidates), percent, band=band)
    ranked = sorted(candidates, key=lambda n: (_key(digest, n), n))
    return tuple(sorted(ranked[:want]))


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
