"""The one way a command finds its repository and prints its result."""

from __future__ import annotations

from pathlib import Path

from agentgate.core import config as config_mod
from agentgate.core.config import Config
from agentgate.core.model import Result
from agentgate.git import gitio
from agentgate.report.render import Format, emit


def repo_and_config(repo: Path) -> tuple[Path, Config]:
    root = gitio.repo_root(repo)
    return root, config_mod.load(root)


def finish(result: Result, fmt: str, *, verbose: bool = False) -> int:
    emit(result, Format(fmt), verbose=verbose)
    return result.exit_code
