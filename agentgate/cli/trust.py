"""Commands of the trust gate: hooks (in ``cli/fast.py``), fixture manifest, init and demo.
Options are in ``cli/spec.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentgate.cli import fast
from agentgate.cli.common import finish, repo_and_config
from agentgate.report.render import Format


def _record(*, repo: Path, fmt: str) -> int:
    from agentgate.flows import fixtures as fixturescmd

    root, config = repo_and_config(repo)
    return finish(fixturescmd.record(root, config), fmt)


def _verify(*, repo: Path, fmt: str) -> int:
    from agentgate.flows import fixtures as fixturescmd

    root, config = repo_and_config(repo)
    return finish(fixturescmd.verify(root, config), fmt)


def _init(*, force: bool, repo: Path, fmt: str) -> int:
    from agentgate.flows import starter

    root, config = repo_and_config(repo)
    return finish(starter.init(root, config, force=force), fmt)


def _demo(*, keep: bool, fmt: str) -> int:
    from agentgate.flows import demo

    return demo.run(keep=keep, fmt=Format(fmt))


COMMANDS: dict[tuple[str, ...], Callable[..., int]] = {
    ("hook", "pre-commit"): fast.hook_pre_commit,
    ("hook", "prepare-commit-msg"): fast.hook_prepare_commit_msg,
    ("hook", "commit-msg"): fast.hook_commit_msg,
    ("hook", "pre-push"): fast.hook_pre_push,
    ("fixtures", "record"): _record,
    ("fixtures", "verify"): _verify,
    ("init",): _init,
    ("demo",): _demo,
}
