"""Running a command with a pseudo-terminal of its own as its controlling terminal, for the
tests of what agentgate shows only on a terminal (issue 13: progress)."""

from __future__ import annotations

import fcntl
import os
import pty
import subprocess
import termios
from pathlib import Path

from agentgate.report.progress import OFF_ENV


def on_a_terminal(args: list[str], cwd: Path, env: dict[str, str], *,
                   terminal_stdio: bool) -> tuple[int, bytes, bytes]:
    """Run ``args`` with a new pseudo-terminal as its controlling terminal: its stdout and
    stderr are the terminal too (``terminal_stdio``), or pipes as pre-commit gives a hook.
    Returns the exit code, what reached the terminal, and what reached the pipes."""
    master, slave = pty.openpty()

    def own_terminal() -> None:
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    sink = slave if terminal_stdio else subprocess.PIPE
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                            stderr=sink, preexec_fn=own_terminal, pass_fds=(slave,))
    os.close(slave)
    screen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: every process holding the terminal has ended
            break
        if not chunk:
            break
        screen += chunk
    out, err = proc.communicate()
    os.close(master)
    return proc.returncode, screen, (out or b"") + (err or b"")


def progress_env(env: dict[str, str], **extra: str) -> dict[str, str]:
    """``env`` with the live counts on (the suite turns them off: tests/conftest.py)."""
    return {**{k: v for k, v in env.items() if k != OFF_ENV}, "TERM": "xterm", **extra}
