"""``init`` and ``fixtures record``: their records and renderings.

The records live here because ``flows`` (which makes them) sits above ``report``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class InitDetail:
    kind: ClassVar[str] = "project"
    pre_commit_config: str  # the snippet to paste into .pre-commit-config.yaml

    def to_json(self) -> dict[str, Any]:
        return {"pre_commit_config": self.pre_commit_config}


@dataclass(frozen=True)
class FixturesRecorded:
    kind: ClassVar[str] = "project"
    manifest: str
    entries: int

    def to_json(self) -> dict[str, Any]:
        return {"manifest": self.manifest, "entries": self.entries}


ProjectDetail = InitDetail | FixturesRecorded


def text(detail: ProjectDetail) -> list[str]:
    if isinstance(detail, InitDetail):
        return ["", *detail.pre_commit_config.splitlines()]
    return []


def markdown(detail: ProjectDetail) -> list[str]:
    if isinstance(detail, InitDetail):
        return ["```yaml", *detail.pre_commit_config.splitlines(), "```"]
    return []
