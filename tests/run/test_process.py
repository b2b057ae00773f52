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


# Leaves a sleeper outside its process group, writes "<own pid> <sleeper pid>" to argv[1] and
# exits: "session" starts it with start_new_session=True (it keeps the run's environment),
# "forked" double-forks and calls setsid (a server's --daemonize), "daemon" does that too and
# execs it with no environment at all.
DETACHER = textwrap.dedent("""
    import os, subprocess, sys
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    if sys.argv[2] == "session":
        pid = subprocess.Popen(sleeper, start_new_session=True).pid
    else:
        read, write = os.pipe()
        if os.fork() == 0:
            os.setsid()
            daemon = os.fork()
            if daemon == 0:
                env = {} if sys.argv[2] == 'daemon' else os.environ
                os.execve(sys.executable, sleeper, env)
            os.write(write, str(daemon).encode())
            os._exit(0)
        os.close(write)
        pid = int(os.read(read, 64))
        os.wait()
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(f"{os.getpid()} {pid}")
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
""")


@pytest.mark.parametrize("how", ["session", "daemon"])
def test_a_process_that_left_the_group_dies_with_the_run(tmp_path: Path, how: str) -> None:
    """Flake trial f10: a new session or a double fork escapes the group kill. The run's
    token finds the first; the second, with no environment left, re-parents to us."""
    done = process.run([sys.executable, "-c", DETACHER, str(tmp_path / "pids"), how],
                       timeout=30)
    _, sleeper = wait_pids(tmp_path / "pids")
    try:
        assert (done.returncode, done.timed_out) == (0, False)
        assert not alive(sleeper), f"the {how} sleeper outlived the run"
    finally:
        kill(sleeper)


def test_without_the_subreaper_the_token_still_finds_what_kept_its_environment(
    tmp_path: Path,
) -> None:
    """Where prctl is refused (a sandbox), the orphan goes to init, not to us; the run's
    token in its environment still finds it."""
    driver = textwrap.dedent("""
        import ctypes, sys
        from agentgate.run import process
        with process.Session() as session:
            ctypes.CDLL(None).prctl(36, 0, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER off again
            session.run([sys.executable, "-c", sys.argv[1], sys.argv[2], "session"])
    """)
    subprocess.run([sys.executable, "-c", driver, DETACHER, str(tmp_path / "pids")],
                   check=True, timeout=60)
    _, sleeper = wait_pids(tmp_path / "pids")
    try:
        assert not alive(sleeper), "the sleeper outlived the run"
    finally:
        kill(sleeper)


def test_a_run_ending_leaves_our_own_children_alone(tmp_path: Path) -> None:
    """The scan spares agentgate's session (its git): a child of ours that never left it."""
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        process.run([sys.executable, "-c", DETACHER, str(tmp_path / "pids"), "daemon"])
        assert alive(ours.pid) and ours.poll() is None
    finally:
        ours.kill()
        ours.wait()


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


def test_a_run_ending_leaves_the_runs_still_going_alone(tmp_path: Path) -> None:
    """Another session's live run, and the daemon it started (an orphan of ours by now, as
    a server's ``--daemonize`` leaves one), are that run's to end: the scan of a run that
    ends beside it spares them, or parallel runs would kill each other's servers."""
    finished: list[process.Finished] = []
    with process.Session() as other:
        thread = _start(other, [sys.executable, "-c", DETACHER + "\nimport time\n"
                                "time.sleep(60)\n", str(tmp_path / "pids"), "forked"],
                        finished)
        leader, sleeper = wait_pids(tmp_path / "pids")
        process.run([sys.executable, "-c", DETACHER, str(tmp_path / "own"), "daemon"])
        assert alive(leader) and alive(sleeper)
        other.cancel()
        thread.join(timeout=10)
    assert gone(leader) and gone(sleeper)


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
