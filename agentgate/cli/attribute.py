"""``agentgate attribute``: thin -- parse options, call ``attribution.attribute``, print.

Exit codes: 0 PRE_EXISTING or NO_REPRO, 1 PATCH_INDUCED, 2 HARNESS_ENV, PATCH_MASKS,
NOT_COLLECTED or BASE_UNAVAILABLE (a human or the full suite decides), 4 a refused
``--freeze``, 64 usage, 130 Ctrl-C.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from agentgate.cli.common import FormatOption, RepoOption, finish, repo_and_config
from agentgate.report.render import Format


def _date(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date YYYY-MM-DD", param_hint=option) from None


def attribute(
    nodeid: Annotated[str, typer.Argument(help="The test's node id, path::name.")],
    base: Annotated[str | None, typer.Option(help="Base branch or commit (default: "
                                             "config base_branch, origin/HEAD, main).")] = None,
    head: Annotated[str, typer.Option(help="The patch's commit.")] = "HEAD",
    runs: Annotated[int, typer.Option("--runs", "-n", help="Seeds swept: 0..N-1.")] = 10,
    repeats: Annotated[int, typer.Option(help="Re-runs of each matched seed per tree.")] = 3,
    seed: Annotated[list[int] | None, typer.Option(
        "--seed", help="A seed for --mode matched (repeatable; default: config seed).")] = None,
    mode: Annotated[str, typer.Option(help="both (default), swept or matched.")] = "both",
    context: Annotated[str, typer.Option(
        help="alone (default), or file: inside its whole file, in seeded orders.")] = "alone",
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", help="Parallel runs (default: the machine's cores).")] = None,
    serial: Annotated[bool, typer.Option(
        help="One run at a time, base's before head's (timing-sensitive tests).")] = False,
    timeout: Annotated[float | None, typer.Option(
        help="Seconds per run before it is killed (default: config timeout).")] = None,
    revert_code: Annotated[bool, typer.Option(
        help="If the test is new, also run it against the base's code.")] = False,
    freeze: Annotated[bool, typer.Option(
        help="Write a freeze record (only when the verdict allows it).")] = False,
    owner: Annotated[str | None, typer.Option(help="Who answers for the freeze.")] = None,
    until: Annotated[str | None, typer.Option(help="Freeze expiry, YYYY-MM-DD.")] = None,
    reason: Annotated[str, typer.Option(help="Why it is frozen (default: the evidence).")] = "",
    today: Annotated[str | None, typer.Option(hidden=True, help="Pretend today is.")] = None,
    repo: RepoOption = Path("."),
    fmt: FormatOption = Format.TEXT,
) -> int:
    """Did the patch cause this test's failure, or find it? Runs it on base and head under
    controlled seeds and says which (PATCH_INDUCED, PRE_EXISTING, HARNESS_ENV, NO_REPRO,
    PATCH_MASKS, NOT_COLLECTED, BASE_UNAVAILABLE)."""
    # lazy: every other command's start-up stays light
    from agentgate.attribution.attribute import attribute
    from agentgate.attribution.request import FreezeRequest, Request

    freeze_request = None
    if freeze:
        if not owner or until is None:
            raise typer.BadParameter("--freeze needs --owner NAME and --until YYYY-MM-DD",
                                     param_hint="--freeze")
        until_day = _date(until, "--until")
        assert until_day is not None
        freeze_request = FreezeRequest(owner=owner, until=until_day, reason=reason)
    request = Request(
        nodeid=nodeid, base=base, head=head, runs=runs, repeats=repeats,
        seeds=tuple(seed or ()), mode=mode, context=context, jobs=jobs, serial=serial,
        timeout=timeout, revert_code=revert_code, freeze=freeze_request,
        today=_date(today, "--today"),
    )
    root, config = repo_and_config(repo)
    return finish(attribute(root, config, request), fmt)


def register(app: typer.Typer) -> None:
    """Adds this area's commands to the root app."""
    app.command("attribute")(attribute)
