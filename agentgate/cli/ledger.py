"""CLI commands for the ledger area (owned by the ledger work; thin: parse, call, print)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Adds this area's commands to the root app."""
