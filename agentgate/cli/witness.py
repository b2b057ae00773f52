"""CLI commands for the witness area (thin: call one function, print); options are in
``cli/spec.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentgate.cli.common import finish, repo_and_config
from agentgate.core.errors import ConfigError


def _record(*, pytest_args: list[str] | None, rev: str | None, repo: Path, fmt: str,
            shard: str | None, out: Path | None, incremental: bool = False) -> int:
    from agentgate.report import progress
    from agentgate.witness import record

    root, config = repo_and_config(repo)
    if incremental and (shard is not None or out is not None):
        raise ConfigError("witness record: --incremental records into the store; it does not "
                          "go with --shard/--out")
    with progress.shown() as display:  # live counts on a terminal (issue 13)
        if incremental:
            from agentgate.witness import incremental as incr

            result = incr.record(root, config, rev=rev, pytest_args=pytest_args or (),
                                 display=display)
        else:
            result = record.record(root, config, rev=rev, pytest_args=pytest_args or (),
                                   shard=shard, out=out, display=display)
    return finish(result, fmt)


def _merge(*, files: list[Path] | None, repo: Path, fmt: str) -> int:
    from agentgate.witness import record

    root, _config = repo_and_config(repo)
    return finish(record.merge(root, files or []), fmt)


def _export(*, file: Path, rev: str | None, every: bool, repo: Path, fmt: str) -> int:
    from agentgate.witness import manage

    root, _config = repo_and_config(repo)
    return finish(manage.export(root, file, rev=rev, every=every), fmt)


def _import(*, file: Path, replace: bool, repo: Path, fmt: str) -> int:
    from agentgate.witness import manage

    root, _config = repo_and_config(repo)
    return finish(manage.import_(root, file, replace=replace), fmt)


def _show(*, rev: str | None, test: str | None, repo: Path, fmt: str) -> int:
    from agentgate.witness import manage

    root, _config = repo_and_config(repo)
    return finish(manage.show(root, rev=rev, test=test), fmt)


COMMANDS: dict[tuple[str, ...], Callable[..., int]] = {
    ("witness", "record"): _record,
    ("witness", "export"): _export,
    ("witness", "import"): _import,
    ("witness", "show"): _show,
    ("witness", "merge"): _merge,
}
