"""Where a repository's witness store lives, and what a plan says when there is none.

Kept apart from the store (sqlite3) and the gate so a plan without a witness -- the common
case -- can tell so without importing either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentgate.git import gitio

if TYPE_CHECKING:
    from pathlib import Path

NO_STORE = "no witness recorded (agentgate witness record); import-closure band"


def store_path(root: Path) -> Path:
    return gitio.state_dir(root) / "witness" / "witness.sqlite3"
