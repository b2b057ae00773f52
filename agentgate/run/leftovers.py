"""What a run left running outside its process group, found and killed (Linux).

A process that calls ``setsid`` (``start_new_session=True``, a double-forked daemon) leaves
its run's group, and no process-group kill reaches it (flake trial f10: eight ``sleep``s
outlived an attribution; f11: one rewrote the base's reports while the base ran). After a
run's group is killed, one scan of ``/proc`` kills (SIGKILL) every process whose environment
carries the run's token (``process.TOKEN_ENV``), and every orphan re-parented to agentgate
that is neither in agentgate's own session (its git) nor a live run's leader nor carrying a
live run's token: a process that cleared its environment. Orphans come to agentgate, not to
init, because agentgate makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``) when its
first session starts. A process whose parent is still alive is reached once that parent is:
the scan repeats until it finds none, each killed child of agentgate reaped first, so what
it held re-parents before the next scan. Only processes it killed that are its children are
reaped: never a run leader another thread's ``Popen`` owns (``process`` holds spawning and
the scan apart), never its git. Without ``/proc`` or the subreaper (not Linux) only the
group is killed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass

TOKEN_ENV = "AGENTGATE_RUN_TOKEN"  # each run's own, in its environment (``process``)
_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_PROC = "/proc"
_SCANS = 100  # a bound, not a budget: each scan that finds something kills it
_DYING = 5.0  # seconds a SIGKILLed process is given to be gone: it is never caught


@functools.cache
def become_subreaper() -> bool:
    """Orphans of every run re-parent to agentgate, where the scan finds them. Once; a
    failure (not Linux, a sandbox refusing prctl) leaves the token scan alone."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here: the CLI imports this module on every commit, for the handler

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class _Proc:
    pid: int
    ppid: int
    sid: int
    environ: bytes  # b"\0NAME=value\0..."; empty when unreadable (a zombie, another user)


def kill(token: str, leaders: Collection[int], tokens: Collection[str]) -> None:
    """Kill what the run with ``token`` left running outside its group; ``leaders`` and
    ``tokens``: the live runs' (``process``), whose processes are theirs to end."""
    if not os.path.isdir(_PROC):
        return
    me, mine = os.getpid(), os.getsid(0)
    mark = f"\0{TOKEN_ENV}={token}\0".encode()
    for _scan in range(_SCANS):
        found = [p for p in _processes(mine) if _left_by(p, mark, me, leaders, tokens)]
        if not found:
            return
        for proc in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGKILL)
        for proc in found:
            _gone(proc.pid, reap=proc.ppid == me)


def _left_by(proc: _Proc, mark: bytes, me: int, leaders: Collection[int],
             tokens: Collection[str]) -> bool:
    if mark in proc.environ:
        return True
    if proc.ppid != me or proc.pid in leaders:
        return False
    # An orphan of ours; one still carrying a live run's token is that run's to end.
    said = proc.environ.split(f"\0{TOKEN_ENV}=".encode(), 1)
    return len(said) == 1 or said[1].split(b"\0", 1)[0].decode("ascii", "replace") not in tokens


def _processes(skip_sid: int) -> Iterator[_Proc]:
    """Every process outside session ``skip_sid`` (agentgate's own: its git is never ours)."""
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        try:
            with open(f"{_PROC}/{name}/stat", "rb") as f:
                # "pid (comm) state ppid pgrp session ...": comm may hold ")" and spaces
                fields = f.read().rsplit(b")", 1)[1].split()
            ppid, sid = int(fields[1]), int(fields[3])
            if sid == skip_sid:
                continue
            environ = b""
            with contextlib.suppress(OSError), open(f"{_PROC}/{name}/environ", "rb") as f:
                environ = b"\0" + f.read()
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        yield _Proc(int(name), ppid, sid, environ)


def _gone(pid: int, *, reap: bool) -> None:
    """Wait until a SIGKILLed process is dead: reaped, when it is our child (so what it
    held has re-parented to us before the next scan), else a zombie or gone."""
    deadline = time.monotonic() + _DYING
    while time.monotonic() < deadline:
        if reap:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            except ChildProcessError:
                return
        elif _dead(pid):
            return
        time.sleep(0.001)


def _dead(pid: int) -> bool:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True
