"""The shadow sample: skipped tests that run anyway, to audit the witness.

The sample is a pure function of the patch's diff and the node id, so the same patch always
audits the same tests (a rerun cannot shop for a friendlier sample) and a different patch
audits different ones. Frozen tests are never in it: their failures prove nothing about the
witness.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

_SCALE = float(2**64)


def patch_digest(diff: bytes) -> str:
    return hashlib.sha256(diff).hexdigest()


def sampled(digest: str, nodeid: str, percent: float) -> bool:
    if percent <= 0:
        return False
    key = hashlib.sha256(f"{digest}\0{nodeid}".encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(key[:8], "big") / _SCALE < percent / 100.0


def sample(
    digest: str, skipped: Iterable[str], percent: float, *, frozen: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """The skipped node ids the patch audits, in a stable order."""
    return tuple(sorted(n for n in skipped if n not in frozen and sampled(digest, n, percent)))
