"""``run.process``: real child processes, each of which starts a grandchild that would outlive
a plain kill of the child. Every defence is played next to the plain ``subprocess`` call it
replaces, so a test that could not see a survivor would fail its attack half."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from agentgate.run import process

# Starts a grandchild that sleeps, writes "<own pid> <grandchild pid>" to argv[1] (atomically),
# then sleeps too ("sleep") or exits at once and leaves the grandchild behind ("leave").
PARENT = textwrap.dedent("""
    import os, subprocess, sys, time
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(f"{os.getpid()} {grandchild.pid}")
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    if sys.argv[2] == "sleep":
        time.sleep(60)
""")


def parent_argv(pids: Path, mode: str = "sleep") -> list[str]:
    return [sys.executable, "-c", PARENT, str(pids), mode]


def wait_pids(pids: Path, within: float = 30.0) -> tuple[int, int]:
    deadline = time.monotonic() + within
    while not pids.exists():
        assert time.monotonic() < deadline, "the child never started its grandchild"
        time.sleep(0.02)
    child, grandchild = pids.read_text().split()
    return int(child), int(grandchild)


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent that may never reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def kill(*pids: int) -> None:
    """Clean up what an attack half left running."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# --- one run ------------------------------------------------------------------------------

def test_capture_returns_the_exit_code_and_both_outputs(tmp_path: Path) -> None:
    code = "import sys; print('out'); sys.stderr.write('err'); sys.exit(3)"
    done = process.capture([sys.executable, "-c", code], cwd=tmp_path)
    assert (done.returncode, done.timed_out, done.stdout, done.stderr) == (3, False, b"out\n",
                                                                          b"err")


def test_the_child_has_its_own_session_and_no_stdin(tmp_path: Path) -> None:
    code = "import os, sys; print(os.getsid(0) == os.getpid(), repr(sys.stdin.read()))"
    done = process.capture([sys.executable, "-c", code], cwd=tmp_path, timeout=30)
    assert done.stdout.decode().split() == ["True", "''"]  # stdin is /dev/null: never blocks


def test_a_command_that_does_not_exist_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        process.run([str(tmp_path / "no-such-python")], cwd=tmp_path)


def test_a_timeout_kills_the_grandchild_too(tmp_path: Path) -> None:
    done = process.run(parent_argv(tmp_path / "pids"), timeout=3)
    child, grandchild = wait_pids(tmp_path / "pids")
    assert done.timed_out and done.returncode == -signal.SIGKILL
    assert gone(child) and gone(grandchild)


def test_attack_a_plain_timeout_leaves_the_grandchild_running(tmp_path: Path) -> None:
    """What the runner replaces: subprocess's timeout kills the child alone."""
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(parent_argv(tmp_path / "pids"), timeout=3)
    child, grandchild = wait_pids(tmp_path / "pids")
    try:
        assert not alive(child) and alive(grandchild)
    finally:
        kill(grandchild)


def test_a_grandchild_left_behind_by_a_finished_run_dies(tmp_path: Path) -> None:
    done = process.run(parent_argv(tmp_path / "pids", "leave"), timeout=30)
    _, grandchild = wait_pids(tmp_path / "pids")
    assert (done.returncode, done.timed_out) == (0, False)
    assert gone(grandchild)


# --- parallel runs ------------------------------------------------------------------------

def _start(session: process.Session, argv: list[str], into: list[process.Finished]) -> (
        threading.Thread):
    thread = threading.Thread(target=lambda: into.append(session.run(argv, timeout=60)))
    thread.start()
    return thread


def test_cancel_kills_every_parallel_run_and_refuses_new_ones(tmp_path: Path) -> None:
    finished: list[process.Finished] = []
    with process.Session() as session:
        threads = [_start(session, parent_argv(tmp_path / f"pids{i}"), finished)
                   for i in range(2)]
        pids = [pid for i in range(2) for pid in wait_pids(tmp_path / f"pids{i}")]
        started = time.monotonic()
        session.cancel()
        for thread in threads:
            thread.join(timeout=10)
        assert time.monotonic() - started < 10
        with pytest.raises(KeyboardInterrupt):
            session.run([sys.executable, "-c", "pass"])
    assert [f.returncode for f in finished] == [-signal.SIGKILL] * 2
    assert all(gone(pid) for pid in pids)


def test_leaving_a_session_on_an_exception_kills_what_it_still_runs(tmp_path: Path) -> None:
    finished: list[process.Finished] = []
    with pytest.raises(RuntimeError), process.Session() as session:
        thread = _start(session, parent_argv(tmp_path / "pids"), finished)
        pids = wait_pids(tmp_path / "pids")
        raise RuntimeError("the caller failed while a run was going")
    thread.join(timeout=10)
    assert all(gone(pid) for pid in pids) and finished[0].returncode == -signal.SIGKILL


# --- signals to agentgate -----------------------------------------------------------------

DRIVER = textwrap.dedent("""
    import sys
    from agentgate.run import process
    argv = [sys.executable, "-c", sys.argv[1], sys.argv[2], "sleep"]
    try:
        if sys.argv[3] == "guarded":
            with process.interrupts_noted():
                process.run(argv)
        else:
            process.run(argv)
    except KeyboardInterrupt:
        sys.exit(130)
""")


def _drive(tmp_path: Path, mode: str, signum: int) -> tuple[int, int, int]:
    pids = tmp_path / "pids"
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, PARENT, str(pids), mode])
    child, grandchild = wait_pids(pids)
    driver.send_signal(signum)
    return driver.wait(timeout=30), child, grandchild


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_to_the_caller_kills_the_whole_group(
    tmp_path: Path, signum: int
) -> None:
    code, child, grandchild = _drive(tmp_path, "guarded", signum)
    assert code == 130
    assert gone(child) and gone(grandchild)


def test_attack_sigterm_without_the_handler_orphans_the_test(tmp_path: Path) -> None:
    """Python's default SIGTERM ends the caller on the spot: no finally runs, and the test
    process keeps running. This is why the CLI turns SIGTERM into an interrupt."""
    code, child, grandchild = _drive(tmp_path, "plain", signal.SIGTERM)
    try:
        assert code == -signal.SIGTERM
        assert alive(child) and alive(grandchild)
    finally:
        kill(child, grandchild)
