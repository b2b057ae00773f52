"""The fast start-up parser: reads a command line by the spec without importing typer.

It takes only what it is sure the typer app reads the same way (click's rules: ``--opt v``,
``--opt=v``, ``-o v``, ``-ov``, the last repeat wins, ``--`` ends the options) and refuses
everything else -- an unknown option, a bad value, ``--help``, combined short flags -- by
returning None, so the typer app parses that call and owns its help and usage messages (and
exit 64). tests/test_cli_spec.py checks that whatever is accepted here, typer reads alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from agentgate.cli.spec import Command, Param

Values = dict[str, object]
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?[0-9]+(\.[0-9]+)?")


class _Refuse(Exception):
    """Not sure how typer reads it: typer parses this call instead."""


def parse(command: Command, args: Sequence[str]) -> Values | None:
    """The implementation's keyword arguments for a well-formed call, or None."""
    try:
        return _parse(command, args)
    except _Refuse:
        return None


def _parse(command: Command, args: Sequence[str]) -> Values:
    values: Values = {p.name: p.default for p in command.params}
    seen: set[str] = set()
    positional: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            positional += rest
        elif arg.startswith("-") and arg != "-":
            param, value = _option(command, arg, rest)
            _store(values, param, value)
            seen.add(param.name)
        else:
            positional.append(arg)
    _positionals(command, positional, values, seen)
    if any(p.required and p.name not in seen for p in command.params):
        raise _Refuse
    return values


def _option(command: Command, arg: str, rest: Iterator[str]) -> tuple[Param, object]:
    name, attached = _split(arg)
    for param in command.params:
        if name in param.off_flags and attached is None:
            return param, False
        if name in param.flags:
            return param, _value(param, attached, rest)
    raise _Refuse


def _split(arg: str) -> tuple[str, str | None]:
    """``--name=value`` or ``-nvalue`` into name and attached value."""
    if arg.startswith("--"):
        name, eq, value = arg.partition("=")
        return name, value if eq else None
    return arg[:2], arg[2:] or None


def _value(param: Param, attached: str | None, rest: Iterator[str]) -> object:
    if param.kind is bool:
        if attached is not None:
            raise _Refuse  # --flag=x or combined short flags
        return True
    raw = attached if attached is not None else next(rest, None)
    if raw is None:
        raise _Refuse
    return _convert(param, raw)


def _convert(param: Param, raw: str) -> object:
    if param.choices and raw not in param.choices:
        raise _Refuse
    if param.kind is int and _INT.fullmatch(raw):
        number = int(raw)
        if param.minimum is not None and number < param.minimum:
            raise _Refuse
        return number
    if param.kind is float and _FLOAT.fullmatch(raw):
        return float(raw)
    if param.kind is Path and raw:
        return Path(raw)
    if param.kind is str:
        return raw
    raise _Refuse


def _store(values: Values, param: Param, value: object) -> None:
    if not param.multiple:
        values[param.name] = value  # click: the last repeat wins
        return
    previous = values[param.name]
    values[param.name] = [*(previous if isinstance(previous, list) else ()), value]


def _positionals(command: Command, given: list[str], values: Values, seen: set[str]) -> None:
    queue = list(given)
    for param in (p for p in command.params if p.positional):
        if param.multiple:
            taken, queue = queue, []
            values[param.name] = [_convert(param, raw) for raw in taken] or param.default
        elif queue:
            values[param.name] = _convert(param, queue.pop(0))
        else:
            continue
        seen.add(param.name)
    if queue:
        raise _Refuse  # more arguments than the command takes
