"""CLI commands of the planner: ``plan`` (report only) and ``check`` (plan, then run)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentgate.cli.common import FormatOption, RepoOption, finish
from agentgate.cli.fastplan import repo_relative
from agentgate.git import gitio
from agentgate.report.render import Format

BaseOption = Annotated[
    str, typer.Option("--base", help="Base of the range (e.g. origin/main): its merge-base "
                      "with head supplies the rules.")
]
HeadOption = Annotated[str, typer.Option("--head", help="Head of the range (default HEAD).")]


def register(app: typer.Typer) -> None:
    app.command("plan")(plan_command)
    app.command("check")(check_command)


def plan_command(
    base: BaseOption,
    head: HeadOption = "HEAD",
    fmt: FormatOption = Format.TEXT,
    explain: Annotated[
        str | None,
        typer.Option("--explain", metavar="PATH",
                     help="Show the shortest import chain from this test file to a change."),
    ] = None,
    repo: RepoOption = Path("."),
) -> int:
    """Which tests the range must run, and why; exit code is the verdict."""
    from agentgate.flows import check as checkrun

    root = gitio.repo_root(repo)
    return finish(checkrun.plan(root, base, head, explain=repo_relative(root, explain)), fmt)


def check_command(
    base: BaseOption,
    head: HeadOption = "HEAD",
    fmt: FormatOption = Format.TEXT,
    shadow: Annotated[
        bool, typer.Option("--shadow", help="Also run the full suite and report every "
                           "failure the band did not select.")
    ] = False,
    repo: RepoOption = Path("."),
) -> int:
    """Plan the range, then run the band (or the full suite) on a clean tree of head."""
    from agentgate.flows import check as checkrun

    root = gitio.repo_root(repo)
    return finish(checkrun.check(root, base, head, shadow=shadow), fmt)
