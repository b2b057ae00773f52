"""The typer commands, generated from ``cli/spec.py``.

Each command's implementation is a plain function taking the spec's parameters as keywords;
here a wrapper gets a signature built from the spec (``typer.Option``/``typer.Argument``
defaults), which typer reads as if it had been written by hand.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal

import typer

from agentgate.cli.spec import COMMANDS, GROUPS, Command, Param

Impl = Callable[..., int]
# click's own help layout, not rich's panels (issue 13): rich squeezed the help column of
# ``attribute`` to a few words a line and printed ``<bool>`` beside ``--help``. The listing
# of commands gets each command's whole help line (``short_help``), not click's first 45
# characters and "...".
PLAIN_HELP = None


def add_commands(app: typer.Typer, impls: Mapping[tuple[str, ...], Impl]) -> None:
    """Every spec'd command onto ``app``, each calling ``impls[path]``; groups first."""
    groups = {g.name: typer.Typer(help=g.help, short_help=g.help, rich_markup_mode=PLAIN_HELP,
                                  no_args_is_help=g.no_args_is_help) for g in GROUPS}
    for name, group in groups.items():
        app.add_typer(group, name=name)
    missing = {c.path for c in COMMANDS} - impls.keys()
    if missing:
        raise TypeError(f"no implementation for {sorted(missing)}")
    for command in COMMANDS:
        parent = groups[command.path[0]] if len(command.path) > 1 else app
        parent.command(command.path[-1], help=command.help, short_help=command.help)(
            _wrapper(command, impls[command.path]))


def _wrapper(command: Command, impl: Impl) -> Callable[..., int]:
    expected = sorted(p.name for p in command.params)
    taken = sorted(inspect.signature(impl).parameters)
    if taken != expected:
        raise TypeError(f"{command.path}: the spec names {expected}, the implementation {taken}")

    def run(**values: Any) -> int:
        return impl(**values)

    params = [_parameter(p) for p in command.params]
    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params} | {"return": int}
    return run


def _parameter(param: Param) -> inspect.Parameter:
    return inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY,
                             annotation=_annotation(param), default=_typer_default(param))


def _annotation(param: Param) -> Any:
    kind: Any = Literal.__getitem__(param.choices) if param.choices else param.kind
    if param.multiple:
        return list[kind] | None
    if param.default is None and not param.required:
        return kind | None
    return kind


def _typer_default(param: Param) -> Any:
    default = ... if param.required else param.default
    if param.positional:
        return typer.Argument(default, help=param.help, metavar=param.metavar)
    flags = list(param.flags)
    if param.off_flags:
        flags = [f"{flags[0]}/{param.off_flags[0]}", *flags[1:]]
    # A flag takes no value: no "<bool>" in the help's type column, and it is off unless given.
    flag = param.kind is bool
    return typer.Option(default, *flags, help=param.help, metavar="" if flag else param.metavar,
                        hidden=param.hidden, min=param.minimum, show_default=not flag)
