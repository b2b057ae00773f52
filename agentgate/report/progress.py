"""Live counts on a terminal while pytest runs: "running band: 12/54 tests, 1 failed".

Only on a terminal (issue 13): standard error when it is a TTY; under the pre-commit
framework, which captures a hook's output until the hook ends, the controlling terminal
(``/dev/tty``) when it can be opened. Anything else gets nothing, so logs, pipes and
``--format json`` read exactly as before. ``AGENTGATE_PROGRESS=0`` turns it off. The line is
rich's ``Live`` display, transient: it is gone when the summary line is printed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, TextIO

from agentgate.run.progress import run_name

if TYPE_CHECKING:
    from rich.live import Live

    from agentgate.run.progress import Counts

OFF_ENV = "AGENTGATE_PROGRESS"


def line(counts: Counts) -> str:
    total = "?" if counts.total is None else str(counts.total)
    failed = f", {counts.failed} failed" if counts.failed else ""
    name = run_name(counts.label)
    return f"running {name}: {counts.done}/{total} tests{failed}"


class Terminal:
    """A ``run.progress.Display`` drawing one live line on ``stream``."""

    def __init__(self, stream: TextIO, *, owned: bool = False) -> None:
        self.stream = stream
        self.owned = owned  # opened here (/dev/tty): closed by ``close``
        self._live: Live | None = None

    def update(self, counts: Counts) -> None:
        from rich.text import Text

        if self._live is None:
            self._live = self._start()
        # Drawn on every change, not on rich's timer: each count is shown, however fast.
        self._live.update(Text(line(counts)), refresh=True)

    def finish(self, counts: Counts) -> None:
        self._stop()

    def close(self) -> None:
        self._stop()
        if self.owned:
            self.stream.close()

    def _stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _start(self) -> Live:
        from rich.console import Console
        from rich.live import Live

        console = Console(file=self.stream, force_terminal=True, highlight=False)
        live = Live(console=console, transient=True, auto_refresh=False,
                    redirect_stdout=False, redirect_stderr=False)
        live.start()
        return live


def on_terminal(env: Mapping[str, str] | None = None) -> Terminal | None:
    """The terminal to show progress on, or None (not a terminal, or turned off)."""
    env = os.environ if env is None else env
    if env.get(OFF_ENV) == "0" or env.get("TERM") == "dumb":
        return None
    if env.get("PRE_COMMIT") == "1":
        try:
            return Terminal(open("/dev/tty", "w", encoding="utf-8"), owned=True)
        except OSError:
            return None
    return Terminal(sys.stderr) if sys.stderr.isatty() else None


@contextlib.contextmanager
def shown(env: Mapping[str, str] | None = None) -> Iterator[Terminal | None]:
    """``on_terminal``, closed after the block (the live line gone, ``/dev/tty`` closed)."""
    terminal = on_terminal(env)
    try:
        yield terminal
    finally:
        if terminal is not None:
            terminal.close()
