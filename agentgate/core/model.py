"""Plain records that flow one way: git -> changes -> checks -> planner -> band -> report."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from agentgate.core import errors


class Verdict(StrEnum):
    SCOPED = "scoped"
    PROMOTE = "promote"
    FAILED = "failed"
    SCOPE_ESCAPE = "scope-escape"
    BLOCKED = "blocked"

    @property
    def exit_code(self) -> int:
        return _EXIT[self]

    @property
    def severity(self) -> int:
        """Which verdict wins when several rules fire: blocked > scope-escape > failed > promote."""
        return _SEVERITY.index(self)


_EXIT = {
    Verdict.SCOPED: errors.EXIT_OK,
    Verdict.FAILED: errors.EXIT_FAILED,
    Verdict.PROMOTE: errors.EXIT_PROMOTE,
    Verdict.SCOPE_ESCAPE: errors.EXIT_SCOPE_ESCAPE,
    Verdict.BLOCKED: errors.EXIT_BLOCKED,
}
_SEVERITY = [Verdict.SCOPED, Verdict.PROMOTE, Verdict.FAILED, Verdict.SCOPE_ESCAPE, Verdict.BLOCKED]


def worst(verdicts: list[Verdict] | tuple[Verdict, ...]) -> Verdict:
    """The most severe verdict; ``scoped`` when nothing fired."""
    return max(verdicts, key=lambda v: v.severity, default=Verdict.SCOPED)


# Status letters as git prints them in --raw output.
ADDED, COPIED, DELETED, MODIFIED, RENAMED, TYPE_CHANGED = "A", "C", "D", "M", "R", "T"
SYMLINK_MODE = "120000"
NULL_MODE = "000000"


@dataclass(frozen=True)
class Change:
    """One changed path. Renames and copies carry ``old_path``; deletions have no new blob."""

    status: str
    path: str
    old_path: str | None = None
    old_mode: str = NULL_MODE
    new_mode: str = NULL_MODE
    old_blob: str | None = None
    new_blob: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path this change touches: both sides of a rename."""
        if self.old_path is not None and self.old_path != self.path:
            return (self.old_path, self.path)
        return (self.path,)

    @property
    def is_deletion(self) -> bool:
        return self.status == DELETED

    @property
    def makes_symlink(self) -> bool:
        return self.new_mode == SYMLINK_MODE and self.old_mode != SYMLINK_MODE

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"status": self.status, "path": self.path}
        if self.old_path is not None:
            data["old_path"] = self.old_path
        return data


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str  # "Name <email>"
    committer: str
    message: str
    trailers: tuple[tuple[str, str], ...] = ()

    @property
    def short(self) -> str:
        return self.sha[:10]

    @property
    def subject(self) -> str:
        return self.message.splitlines()[0] if self.message else ""


@dataclass(frozen=True)
class Reason:
    """Why a verdict was reached: a rule code, the path it concerns, and what to do."""

    code: str
    verdict: Verdict
    detail: str
    path: str | None = None
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "verdict": str(self.verdict),
            "path": self.path,
            "detail": self.detail,
        }
        if self.commit is not None:
            data["commit"] = self.commit
        return data


class Detail(Protocol):
    """What a command found beyond the common part of its ``Result``: a frozen dataclass of
    data, never of display lines (issue 10: pre-rendered lines leaked into ``--format
    json``). ``to_json`` gives its keys of the JSON contract; ``kind`` names the module of
    ``agentgate.report`` that renders it as text and markdown."""

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]: ...


@dataclass
class Result:
    """One command's outcome, rendered as text, JSON or markdown by ``report``.

    The common part is the same for every command; ``detail`` is the command's own typed
    record (a protocol rather than a union: the stages that define the records sit above
    ``core``, which may import none of them)."""

    command: str
    reasons: list[Reason] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    base: str | None = None
    head: str | None = None
    changed: list[Change] = field(default_factory=list)
    detail: Detail | None = None
    forced: Verdict | None = None  # set by commands whose verdict is not only the reasons'

    @property
    def verdict(self) -> Verdict:
        verdicts = [r.verdict for r in self.reasons]
        if self.forced is not None:
            verdicts.append(self.forced)
        return worst(verdicts)

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "command": self.command,
            "verdict": str(self.verdict),
            "exit_code": self.exit_code,
            "base": self.base,
            "head": self.head,
            "changed": [c.path for c in self.changed],
            "reasons": [r.to_json() for r in self.reasons],
            "notes": list(self.notes),
        }
        if self.detail is not None:
            data.update(self.detail.to_json())
        return data
