"""Commands of the trust gate: hook, fixtures, init, demo."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Filled in by the foundation work."""
