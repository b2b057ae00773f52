"""Commands of the trust gate: hooks, fixture manifest, init and demo."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from agentgate.cli.common import FormatOption, RepoOption, finish, repo_and_config
from agentgate.flows import hooks as hookcmd
from agentgate.report.render import Format

HELP_CODES = "Exit 0 allowed, 3 scope escape, 4 blocked."


def register(app: typer.Typer) -> None:
    hook = typer.Typer(help="What the git hooks call (pre-commit, commit-msg, pre-push).")
    app.add_typer(hook, name="hook")
    hook.command("pre-commit", help=f"Check the staged change. {HELP_CODES}")(_pre_commit)
    hook.command("commit-msg", help=f"Check the message's trailers. {HELP_CODES}")(_commit_msg)
    hook.command("pre-push", help="Check every pushed commit and the range.")(_pre_push)
    fixtures = typer.Typer(help="The fixture manifest (sha256sum format).")
    app.add_typer(fixtures, name="fixtures")
    fixtures.command("record", help="Write the manifest from the work tree.")(_record)
    fixtures.command("verify", help="Check the work tree against the manifest.")(_verify)
    app.command("init", help="Write a starter config, scope file and manifest.")(_init)
    app.command("demo", help="Play an agent's patch against an example repository.")(_demo)


def _fmt_args(fmt: Format) -> list[str]:
    return ["--format", str(fmt)]


def _pre_commit(fmt: FormatOption = Format.TEXT) -> int:
    return hookcmd.pre_commit(_fmt_args(fmt))


def _commit_msg(message_file: Path, fmt: FormatOption = Format.TEXT) -> int:
    return hookcmd.commit_msg([*_fmt_args(fmt), str(message_file)])


def _pre_push(
    remote: Annotated[str | None, typer.Argument(help="Remote name (git passes it).")] = None,
    url: Annotated[str | None, typer.Argument(help="Remote URL (git passes it).")] = None,
    fmt: FormatOption = Format.TEXT,
) -> int:
    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    return hookcmd.pre_push([*_fmt_args(fmt), *([remote] if remote else [])], stdin)


def _record(repo: RepoOption = Path("."), fmt: FormatOption = Format.TEXT) -> int:
    from agentgate.flows import fixtures as fixturescmd

    root, config = repo_and_config(repo)
    return finish(fixturescmd.record(root, config), fmt)


def _verify(repo: RepoOption = Path("."), fmt: FormatOption = Format.TEXT) -> int:
    from agentgate.flows import fixtures as fixturescmd

    root, config = repo_and_config(repo)
    return finish(fixturescmd.verify(root, config), fmt)


def _init(repo: RepoOption = Path("."), fmt: FormatOption = Format.TEXT) -> int:
    from agentgate.flows import starter

    root, config = repo_and_config(repo)
    return finish(starter.init(root, config), fmt)


def _demo(
    keep: Annotated[bool, typer.Option(help="Keep the example repository and print it.")] = False,
    fmt: FormatOption = Format.TEXT,
) -> int:
    from agentgate.flows import demo

    return demo.run(keep=keep, fmt=fmt)
