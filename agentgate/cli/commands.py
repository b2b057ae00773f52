"""Builds the typer app: the commands of ``cli/spec.py``, each calling its area's
implementation (``COMMANDS`` in each area module); the areas hold no logic."""

from __future__ import annotations

from typing import Annotated

import typer

from agentgate import __version__
from agentgate.cli import build


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentgate {__version__}")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="agentgate",
        help="Decide how much checking a patch gets, from the repository itself.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=build.PLAIN_HELP,
        add_completion=False,
    )

    @app.callback()
    def _root(
        version: Annotated[
            bool, typer.Option("--version", callback=_version, is_eager=True, metavar="",
                               help="Show the version and exit.")
        ] = False,
        debug: Annotated[
            bool, typer.Option("--debug", metavar="", help="Show tracebacks.")
        ] = False,
    ) -> None:
        """agentgate: verdicts are exit codes (0 scoped, 1 failed, 2 promote, 3 scope
        escape, 4 blocked, 64 usage or configuration error)."""

    from agentgate.cli import attribute, ci, ledger, plan, trust, witness
    from agentgate.cli import housekeeping as gc

    impls = {}
    for area in (trust, plan, ledger, attribute, witness, ci, gc):
        impls.update(area.COMMANDS)
    build.add_commands(app, impls)
    return app
