"""The one way agentgate runs a project's test process: its own process group, killed whole,
and whatever left the group found and killed too.

Every run gets a new session (so a process group of its own and no controlling terminal),
stdin from ``/dev/null``, an optional time limit, and a random token of its own in its
environment (``AGENTGATE_RUN_TOKEN``). However the run ends -- it finished, hit its limit, or
agentgate was interrupted by Ctrl-C, SIGTERM or any exception -- the whole group is sent
SIGKILL and the leader reaped, so no pytest and nothing a test started outlives the run. A
test that leaves a server behind after passing loses it too: a run's group is its own.

A process that calls ``setsid`` (``start_new_session=True``, a double-forked daemon) leaves
the group; ``leftovers`` finds and kills it when the run ends (flake trial f10, f11). A
process handed to a service outside agentgate's tree (a systemd user unit, a tmux server
already running) is no descendant and is not reached.

SIGKILL directly, not SIGTERM and a grace period: nothing in the group holds state agentgate
keeps (the outcome is read from files the run already wrote, and the tree is reset or removed
after), a grace period would only delay every Ctrl-C, and a test that ignores SIGTERM would
delay it for the whole grace.

``Session`` runs several processes at once (attribution's thread pool): it tracks the live
groups, ``cancel`` kills them all, and leaving the ``with`` block kills and reaps whatever is
still alive. ``run`` is one process in a session of its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from agentgate.git.scratch import held_interrupts
from agentgate.run import leftovers

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path
    from types import TracebackType

# What subprocess accepts for stdout/stderr: a file, DEVNULL, or (for stderr) STDOUT.
Sink = int | IO[Any]
DEVNULL = subprocess.DEVNULL
STDOUT = subprocess.STDOUT
TOKEN_ENV = leftovers.TOKEN_ENV

# Every session's live runs, in this process: spawning a run and scanning for leftovers
# hold ``_SPAWNING``, so the scan never sees a leader before it is listed here.
_SPAWNING = threading.Lock()
_LEADERS: set[int] = set()
_TOKENS: set[str] = set()


@dataclass(frozen=True)
class Finished:
    returncode: int  # negative: killed by that signal (always, when timed out)
    timed_out: bool
    seconds: float
    stdout: bytes = b""  # only from ``capture``
    stderr: bytes = b""


class Session:
    """Runs processes, from any thread; every group still alive dies with the session."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[subprocess.Popen[bytes], str] = {}  # each run's token
        self._cancelled = False
        leftovers.become_subreaper()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cancel()
        for proc, token in self._snapshot():
            self._end(proc, token)

    def run(
        self, argv: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float | None = None, stdout: Sink = DEVNULL, stderr: Sink = DEVNULL,
        pass_fds: tuple[int, ...] = (),
    ) -> Finished:
        """Run ``argv`` to its end or its limit; OSError when it cannot start at all.
        ``pass_fds``: file descriptors the process inherits (a feed's pipe)."""
        start = time.monotonic()
        token = os.urandom(16).hex()
        proc: subprocess.Popen[bytes] | None = None
        try:
            proc = self._spawn(argv, cwd, {**(os.environ if env is None else env),
                                           TOKEN_ENV: token}, stdout, stderr, pass_fds)
            timed_out = _waited_out(proc, timeout)
        finally:
            if proc is not None:
                self._end(proc, token)
        assert proc is not None and proc.returncode is not None
        return Finished(proc.returncode, timed_out, time.monotonic() - start)

    def cancel(self) -> None:
        """Kill every live group; a run asked for afterwards raises KeyboardInterrupt."""
        with self._lock:
            self._cancelled = True
        for proc, _token in self._snapshot():
            _kill_group(proc)

    def _spawn(
        self, argv: Sequence[str], cwd: Path | None, env: dict[str, str],
        stdout: Sink, stderr: Sink, pass_fds: tuple[int, ...] = (),
    ) -> subprocess.Popen[bytes]:
        # Interrupts wait until the child is on the live list: between Popen returning and
        # the add, a Ctrl-C would leave a group nobody kills.
        with held_interrupts(), _SPAWNING, self._lock:
            if self._cancelled:
                raise KeyboardInterrupt
            proc = subprocess.Popen(
                list(argv), cwd=cwd, env=env, stdin=DEVNULL, stdout=stdout, stderr=stderr,
                start_new_session=True, pass_fds=pass_fds,
            )
            self._live[proc] = env[TOKEN_ENV]
            _LEADERS.add(proc.pid)
            _TOKENS.add(env[TOKEN_ENV])
        return proc

    def _end(self, proc: subprocess.Popen[bytes], token: str) -> None:
        _kill_group(proc)
        proc.wait()  # SIGKILL cannot be caught: this returns at once
        with held_interrupts(), _SPAWNING:
            _LEADERS.discard(proc.pid)
            _TOKENS.discard(token)
            leftovers.kill(token, _LEADERS, _TOKENS)
        with self._lock:
            self._live.pop(proc, None)

    def _snapshot(self) -> list[tuple[subprocess.Popen[bytes], str]]:
        with self._lock:
            return list(self._live.items())


def _waited_out(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return True
    return False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # Also after the leader exited: what it left running in its group dies with the run.
    # (Linux does not hand out a pid still in use as a group id, so the group is ours.)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run(
    argv: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
    timeout: float | None = None, stdout: Sink = DEVNULL, stderr: Sink = DEVNULL,
    pass_fds: tuple[int, ...] = (),
) -> Finished:
    """One process in a session of its own."""
    with Session() as session:
        return session.run(argv, cwd=cwd, env=env, timeout=timeout, stdout=stdout,
                           stderr=stderr, pass_fds=pass_fds)


def capture(
    argv: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> Finished:
    """``run`` with stdout and stderr kept. They go to files, not pipes: a process the run
    left behind holding a pipe open would make a finished run look hung."""
    import tempfile  # here: the CLI imports this module on every commit, for the handler

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        done = run(argv, cwd=cwd, env=env, timeout=timeout, stdout=out, stderr=err)
        out.seek(0)
        err.seek(0)
        return Finished(done.returncode, done.timed_out, done.seconds, out.read(), err.read())


class Interrupts:
    """Whether a Ctrl-C or SIGTERM arrived while ``interrupts_noted`` was in force."""

    def __init__(self) -> None:
        self.seen = False

    def handler(self, _signum: int, _frame: object) -> None:
        self.seen = True
        raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_noted() -> Iterator[Interrupts]:
    """Ctrl-C and SIGTERM (a CI job cancelled, ``kill``) unwind as KeyboardInterrupt: the same
    cleanup of worktrees, scratch folders and process groups, and the same exit 130.

    Each is also *noted*. Python drops an exception raised inside a callback (a weakref's, as
    importlib's module locks use, or a ``__del__``) with "Exception ignored in ...", and the
    run goes on as if no key was pressed: a Ctrl-C landing there ended the demo with exit 0
    and a traceback. The note keeps it (``Interrupts.seen``), and the dropped
    KeyboardInterrupt is not printed: the caller reports the interrupt itself, once."""
    noted = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    hook = sys.unraisablehook

    def dropped(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            noted.seen = True
            return
        hook(unraisable)

    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:  # started as a background job: Ctrl-C stays ignored
            signal.signal(sig, noted.handler)
    sys.unraisablehook = dropped
    try:
        yield noted
    finally:
        sys.unraisablehook = hook
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
