"""Options shared by every command, and the one way a command prints its result."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentgate.core import config as config_mod
from agentgate.core.config import Config
from agentgate.core.model import Result
from agentgate.git import gitio
from agentgate.report.render import Format, emit

FormatOption = Annotated[
    Format, typer.Option("--format", "-f", help="text (default), json or markdown.")
]
RepoOption = Annotated[
    Path, typer.Option("--repo", "-C", help="Repository to work on (default: current folder).")
]


def repo_and_config(repo: Path) -> tuple[Path, Config]:
    root = gitio.repo_root(repo)
    return root, config_mod.load(root)


def finish(result: Result, fmt: Format) -> int:
    emit(result, fmt)
    return result.exit_code
