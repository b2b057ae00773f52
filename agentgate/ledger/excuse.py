"""The freeze ledger that excuses failures in a range: the merge-base's, read from git.

Issue 11: a freeze record committed earlier in the same range excused the failure it was
written for. The base is the contract; head's ledger is still validated (an invalid ledger
blocks) but only the base's records excuse, and only where head left them as they were.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from agentgate.git import gitio
from agentgate.ledger.records import (
    Entry,
    context,
    entries,
    frozen_in,
    judge,
    mark_duplicates,
    parse_entry,
    utc_today,
)

if TYPE_CHECKING:
    from agentgate.core.config import Config


def entries_at(
    root: Path, config: Config, rev: str, *, today: date | None = None
) -> list[Entry]:
    """The ledger as commit ``rev`` has it, read from git (never the work tree), judged by
    every rule except the test's existence: such a record only ever excuses a node id."""
    folder = posixpath.normpath(config.ledger)
    files = {p: b for p, b in gitio.ls_tree(root, rev, (folder,)).items()
             if posixpath.dirname(p) == folder and p.endswith(".json")}
    blobs = gitio.cat_blobs(root, list(files.values()))
    ctx = context(root, config, today or utc_today(), check_tests=False)
    found = [judge(parse_entry(root / p, blobs.get(b, b"")), ctx) for p, b in sorted(files.items())]
    return mark_duplicates(root, found)


@dataclass(frozen=True)
class Excuses:
    """Which frozen tests a failure is excused for in a range, and which head records are not
    honoured because the base does not hold them (added or changed in the range)."""

    excused: frozenset[str]
    not_at_base: frozenset[str]


def excuses(
    root: Path, config: Config, *, base: str, tree: Path, today: date | None = None
) -> Excuses:
    """The merge-base's ledger excuses (issue 11): a record the range adds or changes is a
    trust change the trust rules judge, and excuses nothing in that range. Head's ledger
    (``tree``) can only take an excuse away: unfrozen, changed, on probation or invalid at
    head, the test counts."""
    day = today or utc_today()
    at_base = frozen_in(entries_at(root, config, base, today=day))
    at_head = frozen_in(entries(tree, config, today=day))
    same = frozenset(t for t, data in at_head.items() if at_base.get(t) == data)
    return Excuses(same, frozenset(at_head) - same)


