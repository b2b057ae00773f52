"""CLI commands for the freeze ledger: ``ledger check``, ``ledger list``, ``freeze``,
``unfreeze``, ``thaw``. Thin: call one function, print its ``Result``; options are in
``cli/spec.py``.

Every command takes a hidden ``--today YYYY-MM-DD`` so tests can move the calendar. It is an
option, not an environment variable, on purpose: a variable would also reach the ledger check
inside ``plan``/``check`` and the hooks, where a patch's environment could then postpone its
own expiry.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import typer

from agentgate.cli.common import finish, repo_and_config
from agentgate.flows import thaw as ledger_drill
from agentgate.ledger import ops as ledger_ops
from agentgate.ledger.rules import parse_date


def _day(value: str | None, option: str = "--today") -> date | None:
    if value is None:
        return None
    day = parse_date(value)
    if day is None:
        raise typer.BadParameter(f"{value!r} is not a date YYYY-MM-DD", param_hint=option)
    return day


def _seeds(value: str, option: str) -> list[int]:
    try:
        return [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a comma-separated list of integer seeds",
                                 param_hint=option) from None


def _ambient(value: str | None) -> dict[str, str]:
    """``TZ=Asia/Tokyo,PYTHONHASHSEED=3``; the ledger's rules judge the names and values."""
    pairs = [part.partition("=") for part in (value or "").split(",") if part.strip()]
    if any(not sep or not name.strip() for name, sep, _ in pairs):
        raise typer.BadParameter(f"{value!r} is not a comma-separated list of NAME=VALUE",
                                 param_hint="--ambient")
    return {name.strip(): val for name, _, val in pairs}


def ledger_check(*, repo: Path, fmt: str, today: str | None) -> int:
    root, config = repo_and_config(repo)
    return finish(ledger_ops.check_result(root, config, today=_day(today)), fmt)


def ledger_list(*, repo: Path, fmt: str, today: str | None) -> int:
    root, config = repo_and_config(repo)
    return finish(ledger_ops.list_result(root, config, today=_day(today)), fmt)


def freeze(
    *, test: str, owner: str, reason: str, base_fail: str, head_fail: str, seeds: str,
    until: str | None, mode: str, tz: str | None, rev: str, recheck: str | None,
    ambient: str | None, k: int, repo: Path, fmt: str, today: str | None,
) -> int:
    root, config = repo_and_config(repo)
    evidence = {"base_fail": _seeds(base_fail, "--base-fail"),
                "head_fail": _seeds(head_fail, "--head-fail"),
                "mode": mode, "seeds": _seeds(seeds, "--seeds"), "tz": tz or config.tz}
    result = ledger_ops.freeze(
        root, config, test=test, owner=owner, reason=reason, evidence=evidence,
        until=_day(until, "--until"), rev=rev, recheck=recheck,
        drill_ambient=_ambient(ambient), drill_k=k, today=_day(today),
    )
    return finish(result, fmt)


def unfreeze(*, test: str, repo: Path, fmt: str) -> int:
    root, config = repo_and_config(repo)
    return finish(ledger_ops.unfreeze(root, config, test), fmt)


def thaw(
    *, test: str | None, due: bool, cause: str | None, repo: Path, fmt: str, today: str | None
) -> int:
    root, config = repo_and_config(repo)
    result = ledger_drill.thaw(root, config, test=test, due=due, cause=cause, today=_day(today))
    return finish(result, fmt)


COMMANDS: dict[tuple[str, ...], Callable[..., int]] = {
    ("ledger", "check"): ledger_check,
    ("ledger", "list"): ledger_list,
    ("freeze",): freeze,
    ("unfreeze",): unfreeze,
    ("thaw",): thaw,
}
