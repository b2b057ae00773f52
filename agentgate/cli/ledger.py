"""CLI commands for the freeze ledger: ``ledger check``, ``ledger list``, ``freeze``,
``unfreeze``, ``thaw``. Thin: parse options, call one function, print its ``Result``.

Every command takes a hidden ``--today YYYY-MM-DD`` so tests can move the calendar. It is an
option, not an environment variable, on purpose: a variable would also reach the ledger check
inside ``plan``/``check`` and the hooks, where a patch's environment could then postpone its
own expiry.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from agentgate.cli.common import FormatOption, RepoOption, finish, repo_and_config
from agentgate.flows import thaw as ledger_drill
from agentgate.ledger import ops as ledger_ops
from agentgate.ledger.rules import parse_date
from agentgate.report.render import Format

TodayOption = Annotated[
    str | None, typer.Option("--today", hidden=True, help="Pretend today is YYYY-MM-DD.")
]
NodeId = Annotated[str, typer.Argument(help="The test's pytest node id (path::name).")]


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


def ledger_check(
    repo: RepoOption = Path("."), fmt: FormatOption = Format.TEXT, today: TodayOption = None
) -> int:
    """Audit every freeze record (exit 0, or 4 with one line per bad record)."""
    root, config = repo_and_config(repo)
    return finish(ledger_ops.check_result(root, config, today=_day(today)), fmt)


def ledger_list(
    repo: RepoOption = Path("."), fmt: FormatOption = Format.TEXT, today: TodayOption = None
) -> int:
    """Every freeze record with state, owner, days left and last drill."""
    root, config = repo_and_config(repo)
    return finish(ledger_ops.list_result(root, config, today=_day(today)), fmt)


def freeze(
    test: NodeId,
    owner: Annotated[str, typer.Option(help="Who answers for the freeze.")],
    reason: Annotated[str, typer.Option(help="Why the test is frozen.")],
    base_fail: Annotated[str, typer.Option(help="Seeds that failed on the base, e.g. 3,7.")],
    head_fail: Annotated[str, typer.Option(help="Seeds that failed on the patch tree.")],
    seeds: Annotated[str, typer.Option(help="Every seed run on both trees, e.g. 0,1,2,3.")],
    until: Annotated[str | None, typer.Option(help="Last frozen day, YYYY-MM-DD.")] = None,
    mode: Annotated[str, typer.Option(help="How the evidence was gathered.")] = "manual",
    tz: Annotated[str | None, typer.Option(help="TZ of the runs (default: config tz).")] = None,
    rev: Annotated[str, typer.Option("--sha", help="Revision frozen at.")] = "HEAD",
    recheck: Annotated[str | None, typer.Option(help="Command that re-checks it.")] = None,
    drill: Annotated[str | None, typer.Option(help="Drill command (default: pytest).")] = None,
    k: Annotated[int, typer.Option(min=1, help="Drill iterations that must all pass.")] = 20,
    repo: RepoOption = Path("."),
    fmt: FormatOption = Format.TEXT,
    today: TodayOption = None,
) -> int:
    """Freeze a test by hand, with the same evidence a PRE_EXISTING attribution gives."""
    root, config = repo_and_config(repo)
    evidence = {"base_fail": _seeds(base_fail, "--base-fail"),
                "head_fail": _seeds(head_fail, "--head-fail"),
                "mode": mode, "seeds": _seeds(seeds, "--seeds"), "tz": tz or config.tz}
    result = ledger_ops.freeze(
        root, config, test=test, owner=owner, reason=reason, evidence=evidence,
        until=_day(until, "--until"), rev=rev, recheck=recheck, drill_command=drill, drill_k=k,
        today=_day(today),
    )
    return finish(result, fmt)


def unfreeze(test: NodeId, repo: RepoOption = Path("."), fmt: FormatOption = Format.TEXT) -> int:
    """Remove a test's freeze record: its failures count again."""
    root, config = repo_and_config(repo)
    return finish(ledger_ops.unfreeze(root, config, test), fmt)


def thaw(
    test: Annotated[str | None, typer.Argument(help="The frozen test's node id.")] = None,
    due: Annotated[bool, typer.Option("--due", help="Drill every lease that is due.")] = False,
    cause: Annotated[
        str | None, typer.Option(help="If the drill fails: the ambient input or reason.")
    ] = None,
    repo: RepoOption = Path("."),
    fmt: FormatOption = Format.TEXT,
    today: TodayOption = None,
) -> int:
    """Run the record's drill k times: k/k passes -> probation; a failure renews with --cause."""
    root, config = repo_and_config(repo)
    result = ledger_drill.thaw(root, config, test=test, due=due, cause=cause, today=_day(today))
    return finish(result, fmt)


def register(app: typer.Typer) -> None:
    """``ledger check|list`` as a group; ``freeze``, ``unfreeze`` and ``thaw`` at the top."""
    ledger_app = typer.Typer(help="The freeze ledger.", no_args_is_help=True)
    ledger_app.command("check")(ledger_check)
    ledger_app.command("list")(ledger_list)
    app.add_typer(ledger_app, name="ledger")
    app.command("freeze")(freeze)
    app.command("unfreeze")(unfreeze)
    app.command("thaw")(thaw)
