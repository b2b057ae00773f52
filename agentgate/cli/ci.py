"""CLI commands that publish a check's result to a CI system. Options are in ``cli/spec.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def ci_github(*, result: Path, exit_code: int | None, annotations: int) -> int:
    """Annotations, step outputs and summary from a saved check result; its exit code."""
    from agentgate.flows import github

    return github.publish(result, exit_code, annotations)


COMMANDS: dict[tuple[str, ...], Callable[..., int]] = {
    ("ci", "github"): ci_github,
}
