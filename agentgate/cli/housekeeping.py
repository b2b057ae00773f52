"""``agentgate gc``. Options are in ``cli/spec.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentgate.cli.common import finish, repo_and_config


def _gc(*, dry_run: bool, every: bool, days: int | None, repo: Path, fmt: str) -> int:
    from agentgate.flows import gc

    root, config = repo_and_config(repo)
    return finish(gc.gc(root, config, dry_run=dry_run, every=every, days=days), fmt)


COMMANDS: dict[tuple[str, ...], Callable[..., int]] = {("gc",): _gc}
