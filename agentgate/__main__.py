"""The console entry point: Ctrl-C is handled from the first moment (issue 13).

Importing the CLI takes tens of milliseconds before its one error handler (``cli.app``) is in
place; a Ctrl-C then printed a Python traceback. Until the handler is, an interrupt prints one
line and exits 130 at once: nothing has been created yet that would need cleaning up. Only
the standard library's already-loaded modules are imported before the handler is installed,
which happens on import: importing this module is starting agentgate.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

EXIT_INTERRUPTED = 130  # as core.errors, which is not imported before the handler is set
_LINE = b"agentgate: interrupted\n"


def _interrupted_early(signum: int, frame: FrameType | None) -> None:
    os.write(2, _LINE)
    os._exit(EXIT_INTERRUPTED)


# Installed as this module is imported, which is agentgate starting: the console script's
# first line imports it, ``python -m agentgate`` runs it. Started with Ctrl-C ignored (a
# background job), it stays ignored.
_PREVIOUS = signal.getsignal(signal.SIGINT)
if _PREVIOUS is not signal.SIG_IGN:
    signal.signal(signal.SIGINT, _interrupted_early)


def main() -> int:
    previous = _PREVIOUS
    from agentgate.cli import app

    # From here on Ctrl-C is a KeyboardInterrupt again, which ``app.main`` turns into 130
    # after cleaning up; one landing around it is caught here. Once the exit code is decided
    # Ctrl-C is ignored: a late one must not end the interpreter's shutdown with a traceback.
    code = EXIT_INTERRUPTED
    try:
        try:
            signal.signal(signal.SIGINT, signal.default_int_handler if previous is None
                          else previous)
            code = app.main()
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:
        sys.stderr.write(_LINE.decode())
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """Exit at once, the cleanup done. CPython 3.11 marks a Ctrl-C raised inside ``exec`` of a
    string (every dataclass definition, at import) as unhandled even once it was caught, and
    then ends the process by SIGINT instead of with the code (strace: exit status -2 after
    "agentgate: interrupted"); ``os._exit`` keeps the 130."""
    import contextlib

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken pipe
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
