"""One rule a freeze record breaks: a code (the reason's) and what to do about it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    code: str
    detail: str
