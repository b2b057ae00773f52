"""Temporary folders that neither Ctrl-C, SIGTERM nor a killed owner can leak for long.

The folder's name is chosen before it exists and created inside the ``try``, and the cleanup
runs with SIGINT and SIGTERM held off, so an interrupt at any moment leaves nothing behind.
A folder for a repository lives under its git dir (``holder``) next to a lock file held for
the folder's lifetime; the kernel drops the lock when the owner dies, however it dies, and
``worktrees.sweep`` removes every ``-tmp-`` folder whose lock is free. POSIX only
(``fcntl.flock``), like the git hooks.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentgate.git import gitio

TMP_MARK = "-tmp-"  # a private folder (scratch or worktree): never reused, swept when orphaned
_HELD = (signal.SIGINT, signal.SIGTERM)


def holder(root: Path) -> Path:
    """Where a repository's worktrees and scratch folders live (under the git dir)."""
    return gitio.state_dir(root) / "worktrees"


def lock_path(folder: Path) -> Path:
    return folder.with_name(folder.name + ".lock")


@contextmanager
def held_interrupts() -> Iterator[None]:
    """Defer Ctrl-C and SIGTERM while cleaning up; the signal is re-delivered afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, _f: pending.append(signum))
                for sig in _HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        for signum in dict.fromkeys(pending):
            os.kill(os.getpid(), signum)


class Lock:
    """An exclusive ``flock`` on a file; released (and optionally unlinked) exactly once."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    def release(self, *, unlink: bool = False) -> None:
        if self.fd < 0:
            return
        if unlink:  # unlink while still holding it, so no one can lock the dying inode
            self.path.unlink(missing_ok=True)
        os.close(self.fd)
        self.fd = -1


def try_lock(path: Path) -> Lock | None:
    """Take the lock without waiting; None when another live process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by children
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        if _same_file(fd, path):
            return Lock(fd, path)
        os.close(fd)  # the holder removed it between our open and lock: try the new file


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == path.stat().st_ino
    except FileNotFoundError:
        return False


@contextmanager
def scratch_dir(label: str, root: Path | None = None) -> Iterator[Path]:
    """A private folder for the block, always removed: under ``root``'s git dir (locked,
    so the next run sweeps it if this process is killed), else in the system temp folder
    (the demo, which has no repository yet)."""
    parent = holder(root) if root is not None else _system_temp()
    path = parent / f"{label}{TMP_MARK}{os.urandom(6).hex()}"
    lock: Lock | None = None
    try:
        if root is not None:
            lock = try_lock(lock_path(path))
            assert lock is not None, "a fresh random name cannot be locked by anyone else"
        path.mkdir(mode=0o700)
        yield path
    finally:
        with held_interrupts():
            delete_folder(path)
            if lock is not None:
                lock.release(unlink=True)


_ATTEMPTS = 50  # ~1 s in all: a writer that outlived its parent is given time to finish
_PAUSE = 0.02


def delete_folder(path: Path) -> None:
    """Delete a folder even while a straggler still writes into it (issue 13: a Ctrl-C left a
    demo scratch folder one run in eight: a killed ``git`` leaves children finishing a
    checkout, and one pass of ``rmtree`` fails on the files they add). Retried until it is
    gone, briefly; what cannot be removed then is left to ``worktrees.sweep``."""
    for _attempt in range(_ATTEMPTS):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return
        time.sleep(_PAUSE)


def _system_temp() -> Path:
    import tempfile  # here, not at the top: the commit hook imports this module and never it

    return Path(tempfile.gettempdir())
