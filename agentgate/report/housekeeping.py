"""``agentgate gc``: its record and renderings.

The record lives here because ``flows`` (which makes it) sits above ``report``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Removal:
    kind: str  # worktree, scratch, lock, graph cache, base inventory, witness, ...
    name: str  # its path under the state dir, or the witness's revision
    size: int  # bytes
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "bytes": self.size, "why": self.why}


@dataclass(frozen=True)
class GcDetail:
    kind: ClassVar[str] = "housekeeping"
    where: str  # the state dir, as shown
    dry_run: bool
    removed: tuple[Removal, ...]  # or, on a dry run, what would be
    in_use: tuple[Removal, ...]  # kept: a run holds them

    def to_json(self) -> dict[str, Any]:
        key = "would_remove" if self.dry_run else "removed"
        return {"state_dir": self.where, "dry_run": self.dry_run,
                key: [r.to_json() for r in self.removed],
                "bytes": sum(r.size for r in self.removed),
                "in_use": [r.to_json() for r in self.in_use]}


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def text(detail: GcDetail) -> list[str]:
    verb = "would remove" if detail.dry_run else "removed"
    total = human_size(sum(r.size for r in detail.removed))
    lines = [f"{verb} {len(detail.removed)} item(s), {total}, from {detail.where}"]
    lines += [_line(r) for r in detail.removed]
    lines += [_line(r, kept="kept, in use: ") for r in detail.in_use]
    return lines


def _line(r: Removal, kept: str = "") -> str:
    return f"  {kept}{r.kind} {r.name} ({human_size(r.size)}): {r.why}"


def markdown(detail: GcDetail) -> list[str]:
    return [f"- {line.strip()}" for line in text(detail)]
