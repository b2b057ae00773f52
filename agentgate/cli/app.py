"""Entry point: the root typer app, and the one handler that maps failures to exit codes.

``plan``, the hook commands and ``witness record`` are dispatched before typer is imported at
all when their command line is well formed (``cli/fast.py``): the commit hook runs on every
commit and must feel instant (``import typer`` alone costs ~0.15 s). Anything else, a usage
error included, goes to the typer app, so its messages and exit 64 are the same for every
command.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from agentgate.core import errors
from agentgate.run.process import interrupts_noted

_DEBUG_ENV = "AGENTGATE_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or bool(os.environ.get(_DEBUG_ENV))
    args = [a for a in args if a != "--debug"]
    json_errors = _wants_json(args)
    # SIGTERM (a CI cancel) unwinds like Ctrl-C: worktrees, scratch and test processes are
    # cleaned up on the way out, and the exit is the same 130.
    with interrupts_noted() as interrupts:
        code = guarded(lambda: _dispatch(args, json_errors), debug=debug,
                       json_errors=json_errors)
    if interrupts.seen and code != errors.EXIT_INTERRUPTED:
        # A Ctrl-C Python dropped (raised in a callback) or code swallowed: the run went on,
        # but it was asked to stop, and a verdict from it is not what was asked for.
        return _fail("interrupted", errors.EXIT_INTERRUPTED, json_errors)
    return code


def guarded(func: Callable[[], int], *, debug: bool, json_errors: bool = False) -> int:
    """Run ``func``; expected errors print one line, Ctrl-C is 130, crashes are short. With
    ``json_errors`` (``--format json`` asked for) stdout gets the error as a JSON object too."""
    def fail(line: str, code: int) -> int:
        return _fail(line, code, json_errors)

    try:
        return func()
    except errors.AgentgateError as exc:
        return fail(exc.message, exc.exit_code)
    except KeyboardInterrupt:
        return fail("interrupted", errors.EXIT_INTERRUPTED)
    except OSError as exc:
        # The machine said no (a folder where a file should be, a full disk): bad input.
        where = f": {exc.filename}" if exc.filename else ""
        if debug:
            traceback.print_exc()
        return fail(f"{exc.strerror or exc}{where}; fix the path or permissions and retry",
                    errors.EXIT_USAGE)
    except Exception as exc:
        if _interrupted(exc):  # Ctrl-C inside an import, wrapped (``__set_name__``: RuntimeError)
            return fail("interrupted", errors.EXIT_INTERRUPTED)
        if debug:
            traceback.print_exc()
        return fail(f"internal error: {type(exc).__name__}: {exc} (re-run with --debug for "
                    "the traceback, and please report it)", errors.EXIT_INTERNAL)


def _interrupted(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt caused ``exc`` (Python wraps one raised in some hooks)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _fail(message: str, code: int, json_errors: bool) -> int:
    _say(f"agentgate: {message}")
    if json_errors:
        # A consumer of --format json reads stdout: it gets an object there even for a usage
        # error (issue 13), with the exit code that is agentgate's interface.
        sys.stdout.write(json.dumps({"error": message, "exit_code": code}) + "\n")
        sys.stdout.flush()
    return code


def _wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for ``--format json`` (click's spellings of it)."""
    pairs = zip(args, [*args[1:], ""], strict=True)
    return any(a in ("--format=json", "-fjson") or (a in ("--format", "-f") and b == "json")
               for a, b in pairs)


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _dispatch(args: list[str], json_errors: bool = False) -> int:
    # The spec and its parser are stdlib only; typer is imported only when it is needed.
    from agentgate.cli import fast, parse, spec

    found = spec.lookup(args)
    impl = fast.COMMANDS.get(found[0].path) if found else None
    if found and impl:
        values = parse.parse(found[0], found[1])
        if values is not None:
            return impl(**values)
    return _run_typer(args, json_errors)


def _run_typer(args: list[str], json_errors: bool = False) -> int:
    import typer

    from agentgate.cli.commands import build_app

    # typer >= 0.29 vendors click as typer._click; find its exception classes through
    # typer's public BadParameter so either packaging works.
    usage_error = _base_named(typer.BadParameter, "UsageError")
    click_exception = _base_named(typer.BadParameter, "ClickException")
    app = build_app()
    try:
        code = app(args=args, prog_name="agentgate", standalone_mode=False)
    except typer.Abort:
        return _fail("interrupted", errors.EXIT_INTERRUPTED, json_errors)
    except usage_error as exc:
        # click's usage errors exit 2, which here means "promote": map them to 64. A group
        # called with no subcommand has printed its help already and says nothing more.
        if not _message(exc).strip():
            return errors.EXIT_USAGE
        return _fail(f"{_message(exc)} (see: {_help_hint(exc, args)})", errors.EXIT_USAGE,
                     json_errors)
    except click_exception as exc:
        return _fail(_message(exc), errors.EXIT_USAGE, json_errors)
    if code == errors.EXIT_INTERRUPTED:
        _say("agentgate: interrupted")  # typer turns Ctrl-C into a silent exit 130
    return code if isinstance(code, int) else 0


def _base_named(cls: type, name: str) -> type[Exception]:
    found = next(c for c in cls.__mro__ if c.__name__ == name)
    assert issubclass(found, Exception)
    return found


def _message(exc: Exception) -> str:
    format_message = getattr(exc, "format_message", None)
    text = str(format_message()) if callable(format_message) else str(exc)
    # typer >= 0.29 checks values with pydantic, whose "Value error, " prefix says nothing
    # (issue 13: "--format yaml" answered "Value error, 'yaml' is not one of ...").
    return text.replace("Value error, ", "")


def _help_hint(exc: Exception, args: Sequence[str]) -> str:
    """The help of the command the error is in; click gives an option's error (a missing
    value) the root's context, so the spec says which command the line names."""
    from agentgate.cli import spec

    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", "agentgate") or "agentgate"
    found = spec.lookup(args) if path == "agentgate" else None
    return f"agentgate {' '.join(found[0].path)} --help" if found else f"{path} --help"
