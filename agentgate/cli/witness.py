"""CLI commands for the witness area (thin: parse, call one function, print)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentgate.cli.common import FormatOption, RepoOption, finish, repo_and_config
from agentgate.report.render import Format

RevOption = Annotated[
    str | None, typer.Option("--rev", help="Revision (default: HEAD for record).")
]


def register(app: typer.Typer) -> None:
    """Adds ``agentgate witness record|export|import|show``."""
    witness_app = typer.Typer(
        help="Skip witnesses: what each test depended on, recorded from a full run.",
        no_args_is_help=True,
    )
    app.add_typer(witness_app, name="witness")

    @witness_app.command("record")
    def record_cmd(
        pytest_args: Annotated[
            list[str] | None, typer.Argument(help="Extra pytest arguments (after --).")
        ] = None,
        rev: RevOption = None,
        repo: RepoOption = Path("."),
        fmt: FormatOption = Format.TEXT,
    ) -> int:
        """Run the full suite once with recording and store the witness for the revision."""
        from agentgate.witness import record

        root, config = repo_and_config(repo)
        return finish(record.record(root, config, rev=rev, pytest_args=pytest_args or ()), fmt)

    @witness_app.command("export")
    def export_cmd(
        file: Annotated[Path, typer.Argument(help="File to write.")],
        rev: RevOption = None,
        every: Annotated[bool, typer.Option("--all", help="Export every stored witness.")] = False,
        repo: RepoOption = Path("."),
        fmt: FormatOption = Format.TEXT,
    ) -> int:
        """Write a witness (default: the newest) to one file, e.g. a CI artifact."""
        from agentgate.witness import manage

        root, _config = repo_and_config(repo)
        return finish(manage.export(root, file, rev=rev, every=every), fmt)

    @witness_app.command("import")
    def import_cmd(
        file: Annotated[Path, typer.Argument(help="File written by witness export.")],
        replace: Annotated[
            bool, typer.Option("--replace", help="Overwrite witnesses already stored.")
        ] = False,
        repo: RepoOption = Path("."),
        fmt: FormatOption = Format.TEXT,
    ) -> int:
        """Add the witnesses from an exported file to this repository's store."""
        from agentgate.witness import manage

        root, _config = repo_and_config(repo)
        return finish(manage.import_(root, file, replace=replace), fmt)

    @witness_app.command("show")
    def show_cmd(
        rev: RevOption = None,
        test: Annotated[
            str | None, typer.Option("--test", help="Node id whose dependencies to list.")
        ] = None,
        repo: RepoOption = Path("."),
        fmt: FormatOption = Format.TEXT,
    ) -> int:
        """List stored witnesses; with --rev or --test, what the tests depended on."""
        from agentgate.witness import manage

        root, _config = repo_and_config(repo)
        return finish(manage.show(root, rev=rev, test=test), fmt)
