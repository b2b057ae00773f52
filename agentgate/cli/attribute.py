"""``agentgate attribute``: thin -- call ``attribution.attribute``, print; options are in
``cli/spec.py``.

Exit codes: 0 PRE_EXISTING or NO_REPRO, 1 PATCH_INDUCED, 2 HARNESS_ENV, INCONCLUSIVE,
PATCH_MASKS, NOT_COLLECTED or BASE_UNAVAILABLE (a human or the full suite decides), 4 a refused
``--freeze``, 64 usage, 130 Ctrl-C.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import typer

from agentgate.cli.common import finish, repo_and_config


def _date(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date YYYY-MM-DD", param_hint=option) from None


def attribute(
    *, nodeid: str, base: str | None, head: str, runs: int, repeats: int,
    seed: list[int] | None, mode: str, context: str | None, jobs: int | None, serial: bool,
    timeout: float | None, revert_code: bool, freeze: bool, owner: str | None,
    until: str | None, reason: str, today: str | None, repo: Path, fmt: str,
    shard: str | None = None, evidence_out: Path | None = None, merge: list[Path] | None = None,
) -> int:
    # lazy: every other command's start-up stays light
    from agentgate.attribution.attribute import attribute, attribute_merge
    from agentgate.attribution.request import FreezeRequest, Request
    from agentgate.core.config import parse_shard

    freeze_request = None
    if freeze:
        if not owner or until is None:
            raise typer.BadParameter("--freeze needs --owner NAME and --until YYYY-MM-DD",
                                     param_hint="--freeze")
        until_day = _date(until, "--until")
        assert until_day is not None
        freeze_request = FreezeRequest(owner=owner, until=until_day, reason=reason)
    # A freeze needs the test run inside its file (``attribute._verdict``): its default then.
    context = context or ("file" if freeze else "alone")
    request = Request(
        nodeid=nodeid, base=base, head=head, runs=runs, repeats=repeats,
        seeds=tuple(seed or ()), mode=mode, context=context, jobs=jobs, serial=serial,
        timeout=timeout, revert_code=revert_code, freeze=freeze_request,
        today=_date(today, "--today"),
        shard=parse_shard(shard) if shard is not None else None, evidence_out=evidence_out,
    )
    root, config = repo_and_config(repo)
    if merge:
        if shard is not None:
            raise typer.BadParameter("--merge gives the verdict over every shard; drop "
                                     "--shard", param_hint="--merge")
        return finish(attribute_merge(root, config, request, merge), fmt)
    return finish(attribute(root, config, request), fmt)


COMMANDS: dict[tuple[str, ...], Callable[..., int]] = {("attribute",): attribute}
