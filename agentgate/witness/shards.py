"""Sharded witness recording (issue 13 item 3): a CI matrix records 1/N of the suite per job,
and one merge job puts the shards together into the one witness a full recording would make.

The partition is **by test file**, by a hash of its path: every test of a file records in the
same shard, so its module-scoped fixtures and class setups run once there, as in a full run,
and a test's recorded dependencies never depend on which shard ran a neighbour first. Every
shard still collects the whole suite (pytest deselects after collection), so collection's
own recording (the ``c`` node, every test module's import) is the same in each.

Pure except the shard file's reading and writing; the plugin imports ``part`` in the
project's interpreter (stdlib only here, and the store's codec).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agentgate.core.config import parse_shard
from agentgate.core.errors import ConfigError
from agentgate.witness.depgraph import (
    QUIET_IMPORTS,
    WHOLE_SUITE,
    Node,
    Witness,
    merged_evidence,
    unmerged,
    with_incompleteness,
)

FORMAT = "agentgate-witness-shard"
VERSION = 1


def parse(text: str) -> tuple[int, int]:
    """``--shard I/N`` (exit 64 on anything else)."""
    return parse_shard(text)


def part(path: str, count: int) -> int:
    """The shard (1..count) a test file's tests belong to: the same on every machine."""
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def in_shard(nodeid: str, index: int, count: int) -> bool:
    return part(nodeid.split("::", 1)[0], count) == index


@dataclass(frozen=True)
class Shard:
    index: int
    count: int
    witness: Witness
    source: str = ""  # the file it was read from, for messages


def write(path: Path, shard: Shard) -> None:
    from agentgate.witness.store import encode

    data = {"format": FORMAT, "version": VERSION, "shard": shard.index, "of": shard.count,
            "witness": encode(shard.witness)}
    path.write_text(json.dumps(data), encoding="utf-8")


def read(path: Path) -> Shard:
    from agentgate.witness.store import decode

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(f"not a version-{VERSION} witness shard")
        return Shard(int(data["shard"]), int(data["of"]), decode(data["witness"]), str(path))
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ConfigError(f"{path}: not a witness shard agentgate can read ({exc}); pass "
                          "files written by witness record --shard I/N --out FILE") from None


def merge(shards: Sequence[Shard]) -> Witness:
    """The witness of the whole suite; refuses shards that do not make exactly one whole."""
    _refuse_mismatch(shards)
    first = shards[0].witness
    tests = {n: t for s in shards for n, t in s.witness.tests.items()}
    nodes = _merged_nodes(shards)
    whole = all(s.witness.info.get(WHOLE_SUITE) is True for s in shards)
    quiet = set.intersection(*(set(s.witness.info.get(QUIET_IMPORTS, ())) for s in shards))
    info = unmerged(first.info)
    return replace(
        first, recorded_at=min(s.witness.recorded_at for s in shards), nodes=nodes,
        info={**info, WHOLE_SUITE: whole, QUIET_IMPORTS: sorted(quiet),
              **merged_evidence(*(s.witness.info for s in shards))},
        # A node one shard flagged taints every test that reaches it, whichever shard ran it.
        tests=with_incompleteness(nodes, tests),
        collected=frozenset().union(*(s.witness.collected for s in shards)),
        collect_errors=frozenset().union(*(s.witness.collect_errors for s in shards)),
    )


def _refuse_mismatch(shards: Sequence[Shard]) -> None:
    if not shards:
        raise ConfigError("witness merge: give the shard files to merge")
    first = shards[0]
    for shard in shards[1:]:
        for what, mine, theirs in _compared(first, shard):
            if mine != theirs:
                raise ConfigError(f"witness merge: {shard.source} has {what} {theirs}, "
                                  f"{first.source} has {mine}; record every shard of one "
                                  "revision with one interpreter and environment")
    indexes = sorted(s.index for s in shards)
    doubled = sorted({i for i in indexes if indexes.count(i) > 1})
    if doubled:
        raise ConfigError(f"witness merge: shard {doubled[0]}/{first.count} given twice")
    missing = sorted(set(range(1, first.count + 1)) - set(indexes))
    if missing:
        raise ConfigError(f"witness merge: shard {missing[0]}/{first.count} is missing "
                          f"({len(missing)} of {first.count} missing)")
    _refuse_strays(shards)


def _compared(first: Shard, other: Shard) -> list[tuple[str, object, object]]:
    a, b = first.witness, other.witness
    return [("revision", a.sha[:12], b.sha[:12]), ("shard count N =", first.count, other.count),
            ("interpreter", a.python, b.python),
            ("environment fingerprint", a.env or "(none)", b.env or "(none)"),
            ("ambient fingerprint", _ambient(a), _ambient(b))]


def _ambient(witness: Witness) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(witness.ambient.items()))


def _refuse_strays(shards: Sequence[Shard]) -> None:
    """Each test in the shard its file hashes to, and in no other."""
    for shard in shards:
        stray = sorted(n for n in shard.witness.tests
                       if not in_shard(n, shard.index, shard.count))
        if stray:
            raise ConfigError(f"witness merge: {shard.source} (shard {shard.index}/"
                              f"{shard.count}) holds {stray[0]}, which belongs to another "
                              "shard; record it again with this agentgate")


def _merged_nodes(shards: Sequence[Shard]) -> dict[str, Node]:
    """Each node as every shard saw it: the union of what they recorded (an upper bound,
    so a merged witness never selects fewer tests than one of its shards would)."""
    nodes: dict[str, Node] = {}
    for shard in shards:
        for key, node in shard.witness.nodes.items():
            seen = nodes.get(key)
            nodes[key] = node if seen is None else Node(
                key, seen.units | node.units, seen.deps | node.deps,
                tuple(sorted(set(seen.flags) | set(node.flags))))
    return nodes
