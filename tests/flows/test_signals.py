"""Ctrl-C and SIGTERM (a CI cancel) to a running ``agentgate check`` or ``witness record``:
the real CLI on a real repository whose test writes its pid and sleeps. agentgate must exit
130 at once, the pytest it started must be gone, and no temporary worktree or scratch folder
may be left (attribution has the same test in test_attribution.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentgate.git import gitio, worktrees
from tests.support.git_repo import GitRepo

SLEEPY_TEST = (
    "import os, time\n\nfrom app.core import VALUE\n\n"
    "def test_sleepy():\n"
    "    with open(os.environ['AG_PID_FILE'] + '.tmp', 'w') as out:\n"
    "        out.write(str(os.getpid()))\n"
    "    os.replace(os.environ['AG_PID_FILE'] + '.tmp', os.environ['AG_PID_FILE'])\n"
    "    time.sleep(60)\n"
    "    assert VALUE\n"
)
SIGNALS = [signal.SIGINT, signal.SIGTERM]


@pytest.fixture(autouse=True)
def _no_plugin_autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's pytest plugins only slow these runs down."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def sleepy(repo: GitRepo) -> GitRepo:
    """``base``: a test that sleeps; HEAD: a change to the code it imports; and an untracked
    file, so the checkout is not clean and every run needs a worktree of its revision."""
    repo.files({"app/__init__.py": "", "app/core.py": "VALUE = 1\n",
                "tests/test_sleepy.py": SLEEPY_TEST, ".gitignore": "__pycache__/\n"})
    repo.commit("base")
    repo.git("tag", "base")
    repo.files({"app/core.py": "VALUE = 2\n"})
    repo.commit("change the code the test imports")
    repo.write("untracked.txt", "makes the checkout dirty\n")
    return repo


def interrupt(repo: GitRepo, pid_file: Path, signum: int, *args: str,
              temp: Path | None = None) -> tuple[int, str, int]:
    """Start ``agentgate ARGS``, send ``signum`` once its test runs; (exit, stderr, test pid).
    ``temp``: the system temp folder its processes see (``TMPDIR``)."""
    env = {**os.environ, "AG_PID_FILE": str(pid_file)}
    if temp is not None:
        temp.mkdir()
        env["TMPDIR"] = str(temp)
    proc = subprocess.Popen([sys.executable, "-m", "agentgate", *args], cwd=repo.path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not pid_file.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the test never started"
        time.sleep(0.05)
    proc.send_signal(signum)
    started = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - started < 15, "agentgate did not stop promptly"
    return proc.returncode, err, int(pid_file.read_text())


def gone(pid: int, within: float = 5.0) -> bool:
    """Not running (a zombie whose parent is gone counts as gone)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False


def assert_nothing_left(repo: GitRepo) -> None:
    assert list(gitio.worktrees(repo.path)) == [repo.path.resolve()]
    folder = worktrees.worktrees_dir(repo.path)
    assert not folder.exists() or list(folder.iterdir()) == []


@pytest.mark.e2e
@pytest.mark.parametrize("signum", SIGNALS)
def test_check_interrupted_kills_its_pytest_and_leaves_no_worktree(
    sleepy: GitRepo, tmp_path: Path, signum: int
) -> None:
    code, err, pid = interrupt(sleepy, tmp_path / "pid", signum, "check", "--base", "base")
    assert (code, err.strip().splitlines()[-1]) == (130, "agentgate: interrupted"), err
    assert "Traceback" not in err
    assert gone(pid), "the band's pytest outlived agentgate"
    assert_nothing_left(sleepy)


@pytest.mark.e2e
@pytest.mark.parametrize("signum", SIGNALS)
def test_witness_record_interrupted_kills_its_pytest_and_leaves_no_worktree(
    sleepy: GitRepo, tmp_path: Path, signum: int
) -> None:
    code, err, pid = interrupt(sleepy, tmp_path / "pid", signum, "witness", "record",
                               temp=tmp_path / "temp")
    # pytest's own output shares stderr with agentgate's last line.
    assert code == 130 and err.endswith("agentgate: interrupted\n"), err
    assert "Traceback" not in err
    assert gone(pid), "the recording pytest outlived agentgate"
    assert_nothing_left(sleepy)
    # The recorder's folder for its children's fragments went with the scratch folder.
    assert [p.name for p in (tmp_path / "temp").iterdir()] == []


@pytest.mark.e2e
def test_check_not_interrupted_runs_the_same_test_to_its_end(
    sleepy: GitRepo, tmp_path: Path
) -> None:
    """The legitimate counterpart: the same repository, a test that sleeps briefly, passes."""
    sleepy.files({"tests/test_sleepy.py": SLEEPY_TEST.replace("time.sleep(60)", "pass")})
    sleepy.commit("a quick test")
    sleepy.write("untracked.txt", "still dirty\n")
    env = {**os.environ, "AG_PID_FILE": str(tmp_path / "pid")}
    done = subprocess.run([sys.executable, "-m", "agentgate", "check", "--base", "base"],
                          cwd=sleepy.path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    # The worktree of head stays cached for the next run; nothing private is left.
    names = [p.name for p in worktrees.worktrees_dir(sleepy.path).iterdir()]
    assert all("-tmp-" not in n for n in names) and sleepy.sha() in names
