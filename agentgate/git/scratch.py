"""Temporary folders that Ctrl-C cannot leak.

The folder's name is chosen before it exists and created inside the ``try``, and the cleanup
runs with SIGINT held off, so an interrupt at any moment leaves nothing behind.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def held_interrupts() -> Iterator[None]:
    """Defer Ctrl-C while cleaning up; the interrupt is re-delivered afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pending:
            os.kill(os.getpid(), signal.SIGINT)


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    path = Path(tempfile.gettempdir()) / f"{prefix}{secrets.token_hex(6)}"
    try:
        path.mkdir(mode=0o700)
        yield path
    finally:
        with held_interrupts():
            shutil.rmtree(path, ignore_errors=True)
