"""CLI commands of the planner: ``plan`` (report only, in ``cli/fast.py``) and ``check``
(plan, then run). Options are in ``cli/spec.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentgate.cli import fast
from agentgate.cli.common import finish
from agentgate.git import gitio


def check_command(
    *, base: str | None, head: str, fmt: str, shadow: bool, repo: Path, workers: str | None = None,
    verbose: bool = False,
) -> int:
    """Plan the range, then run the band (or the full suite) on a clean tree of head."""
    from agentgate.core.config import parse_workers
    from agentgate.flows import check as checkrun
    from agentgate.report import progress

    root = gitio.repo_root(repo)
    base = base or fast.default_base(root)
    count = None if workers is None else parse_workers(workers)
    with progress.shown() as display:
        result = checkrun.check(root, base, head, shadow=shadow, workers=count,
                                display=display)
    return finish(result, fmt, verbose=verbose)


COMMANDS: dict[tuple[str, ...], Callable[..., int]] = {
    ("plan",): fast.plan,
    ("check",): check_command,
}
