"""The commands that run before typer is imported: ``plan``, the hooks and ``witness record``.

Planning must be a small fraction of collecting a suite, the commit hook must feel instant,
and recording is measured against the plain suite (issue 12: at most 1.5x); typer's start-up
(its parameter adapters, rich, pydantic) alone is ~0.3 s of CPU. These
implementations take the spec's parsed values, so the fast path (``cli/parse.py``) and the
typer app (``cli/build.py``) both call them, and neither depends on typer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentgate.report.render import Format


def default_base(root: Path) -> str:
    """``--base`` when it is not given (``gitio.default_base``, with the configured branch)."""
    from agentgate.core.config import load
    from agentgate.git import gitio

    return gitio.default_base(root, load(root).base_branch)


def plan(
    *, base: str | None, head: str, fmt: str, explain: str | None, repo: Path,
    verbose: bool = False,
) -> int:
    """Which tests the range must run, and why; exit code is the verdict."""
    from agentgate.flows import check as checkrun
    from agentgate.git import gitio
    from agentgate.report.render import emit

    root = gitio.repo_root(repo)
    result = checkrun.plan(root, base or default_base(root), head,
                           explain=repo_relative(root, explain))
    emit(result, Format(fmt), verbose=verbose)
    return result.exit_code


def hook_pre_commit(*, fmt: str, verbose: bool = False) -> int:
    from agentgate.flows import hooks

    return hooks.pre_commit(Format(fmt), verbose=verbose)


def hook_commit_msg(*, message_file: Path, fmt: str, verbose: bool = False) -> int:
    from agentgate.flows import hooks

    return hooks.commit_msg(message_file, Format(fmt), verbose=verbose)


def hook_prepare_commit_msg(
    *, message_file: Path, source: str | None, sha: str | None, fmt: str, verbose: bool = False
) -> int:
    """``source`` and ``sha`` are accepted because git passes them; the staged change and the
    message file say all that is needed (flows/hooks.py says why)."""
    from agentgate.flows import hooks

    return hooks.prepare_commit_msg(message_file, Format(fmt), verbose=verbose)


def hook_pre_push(
    *, remote: str | None, url: str | None, fmt: str, workers: str | None = None,
    verbose: bool = False,
) -> int:
    """``url`` is accepted because git passes it; the refs on stdin say all that is needed."""
    from agentgate.core.config import parse_workers
    from agentgate.flows import hooks

    count = None if workers is None else parse_workers(workers)
    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    return hooks.pre_push(Format(fmt), remote, stdin, workers=count, verbose=verbose)


def witness_record(**values: Any) -> int:
    """``agentgate witness record``: the witness area's own implementation, reached without
    typer (CI runs it on every merge to main, next to the plain suite)."""
    from agentgate.cli import witness

    return witness.COMMANDS[("witness", "record")](**values)


COMMANDS: dict[tuple[str, ...], Callable[..., int]] = {
    ("plan",): plan,
    ("hook", "pre-commit"): hook_pre_commit,
    ("hook", "prepare-commit-msg"): hook_prepare_commit_msg,
    ("hook", "commit-msg"): hook_commit_msg,
    ("hook", "pre-push"): hook_pre_push,
    ("witness", "record"): witness_record,
}


def repo_relative(root: Path, path: str | None) -> str | None:
    """``--explain`` accepts a path as typed from the current folder, or repo-relative (a
    node id's ``::name`` is kept)."""
    if path is None:
        return None
    path, sep, name = path.partition("::")
    candidate = Path(path)
    if candidate.exists():
        try:
            return candidate.resolve().relative_to(root.resolve()).as_posix() + sep + name
        except ValueError:
            pass
    return path + sep + name
