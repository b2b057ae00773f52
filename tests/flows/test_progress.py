"""Progress (issue 13): the outcome plugin's feed, the thread that follows it, and check, the
pre-push hook and witness record under a real pseudo-terminal. Nothing here waits on a
clock: the follower reads whatever the run wrote once it has ended, so every count shows."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentgate.flows import check as checkrun
from agentgate.run import outcomes, progress
from agentgate.run.progress import Counts
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo
from tests.support.terminal import on_a_terminal, progress_env

pytest_plugins = ["pytester"]

BROKEN_RATES = "RATE = 0.5\n"  # tests/test_session.py and tests/test_report.py fail


@dataclass
class Recorder:
    """A ``progress.Display`` that keeps what it was shown."""

    shown: list[Counts] = field(default_factory=list)
    finished: list[Counts] = field(default_factory=list)

    def update(self, counts: Counts) -> None:
        self.shown.append(counts)

    def finish(self, counts: Counts) -> None:
        self.finished.append(counts)


def test_the_plugin_feeds_one_line_per_finished_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it="import pytest\n\ndef test_ok():\n    pass\n\n"
                        "def test_bad():\n    assert 0\n\n"
                        "@pytest.fixture\ndef broken():\n    raise RuntimeError\n\n"
                        "def test_error(broken):\n    pass\n")
    feed = pytester.path / "feed.jsonl"
    pytester.runpytest_subprocess("-p", "agentgate.run.outcomes", f"--agentgate-progress={feed}")
    events = [json.loads(line) for line in feed.read_text().splitlines()]
    assert events == [{"collected": 3},
                      {"test": "test_it.py::test_ok", "outcome": "passed"},
                      {"test": "test_it.py::test_bad", "outcome": "failed"},
                      {"test": "test_it.py::test_error", "outcome": "error"}]
    assert progress.PROGRESS_OPTION == outcomes.PROGRESS_OPTION  # the band passes this one


def test_the_feed_counts_under_xdist(pytester: pytest.Pytester) -> None:
    """Under xdist the controller collects nothing: the total comes from the workers, and
    each test is fed once, by the controller (workers register no feed)."""
    pytest.importorskip("xdist")
    pytester.makepyfile(test_it="def test_a():\n    pass\n\ndef test_b():\n    assert 0\n\n"
                        "def test_c():\n    pass\n")
    feed = pytester.path / "feed.jsonl"
    pytester.runpytest_subprocess("-p", "agentgate.run.outcomes", "-n", "2",
                                  f"--agentgate-progress={feed}")
    events = [json.loads(line) for line in feed.read_text().splitlines()]
    assert events[0] == {"collected": 3}
    assert sorted((e["test"], e["outcome"]) for e in events[1:]) == [
        ("test_it.py::test_a", "passed"), ("test_it.py::test_b", "failed"),
        ("test_it.py::test_c", "passed")]


def test_counts_ignore_what_is_not_the_plugins() -> None:
    counts = Counts("band")
    for line in ('{"collected": 4}', "not json", "[1]", '{"test": "a::t", "outcome": "failed"}',
                 '{"other": 1}', '{"test": "a::u", "outcome": "passed"}'):
        counts = progress.count(counts, line)
    assert counts == Counts("band", done=2, total=4, failed=1)


def test_the_follower_reads_what_was_written_before_the_run_ended(tmp_path: Path) -> None:
    shown = Recorder()
    feed = tmp_path / "feed.jsonl"
    with progress.following(feed, "band", shown), feed.open("a") as out:
        out.write('{"collected": 2}\n{"test": "a::t", "outcome": "error"}\n{"test": "a')
    assert shown.finished == [Counts("band", done=1, total=2, failed=1)]  # a partial line waits
    assert shown.shown[0] == Counts("band")


def test_check_feeds_the_bands_real_counts(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    shown = Recorder()
    result = checkrun.check(chain.path, "base", display=shown)
    assert result.exit_code == 1
    assert shown.finished == [Counts("band", done=2, total=2, failed=2)]


# --- under a pseudo-terminal ----------------------------------------------------------------


def _env(**extra: str) -> dict[str, str]:
    return progress_env(dict(os.environ), **extra)


def test_check_on_a_terminal_shows_live_counts(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    cmd = [sys.executable, "-m", "agentgate", "check", "--base", "base"]
    code, screen, _ = on_a_terminal(cmd, chain.path, _env(), terminal_stdio=True)
    assert code == 1
    assert b"running band: 2/2 tests, 2 failed" in screen, screen
    assert b"ran 2 tests from 2 of the suite's 3 test files" in screen
    # Not a terminal: nothing but the report.
    piped = subprocess.run(cmd, cwd=chain.path, env=_env(), capture_output=True)
    assert b"running band" not in piped.stdout + piped.stderr and piped.stderr == b""
    # Turned off on a terminal.
    _, quiet, _ = on_a_terminal(cmd, chain.path, _env(AGENTGATE_PROGRESS="0"),
                                 terminal_stdio=True)
    assert b"running band" not in quiet


def test_json_on_a_terminal_is_only_json(chain: GitRepo) -> None:
    """stdout a pipe, stderr the terminal: the counts go to the terminal, stdout is JSON."""
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    master, slave = pty.openpty()
    proc = subprocess.run([sys.executable, "-m", "agentgate", "check", "--base", "base",
                           "--format", "json"], cwd=chain.path, env=_env(), stdout=subprocess.PIPE,
                          stderr=slave)
    os.close(slave)
    screen = os.read(master, 65536)
    os.close(master)
    assert json.loads(proc.stdout)["results"]["failed"] == 2
    assert b"running band: 2/2 tests, 2 failed" in screen


def test_under_pre_commit_the_counts_go_to_the_controlling_terminal(chain: GitRepo) -> None:
    """pre-commit holds a hook's output until the hook ends: the live counts go to
    /dev/tty, and what pre-commit captures is the report alone."""
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    env = _env(PRE_COMMIT="1", PRE_COMMIT_FROM_REF=chain.sha("base"),
               PRE_COMMIT_TO_REF=chain.sha())
    cmd = [sys.executable, "-m", "agentgate", "hook", "pre-push"]
    code, screen, captured = on_a_terminal(cmd, chain.path, env, terminal_stdio=False)
    assert code == 1, captured
    assert b"running band: 2/2 tests, 2 failed" in screen, screen
    assert b"running band" not in captured
    assert captured.decode().splitlines()[-1].startswith("  ran 2 tests from 2 of the suite's")


def test_witness_record_on_a_terminal_shows_live_counts(repo: GitRepo) -> None:
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/core.py": "def one():\n    return 1\n",
                "tests/test_core.py": "from app.core import one\n\n\n"
                "def test_one():\n    assert one() == 1\n\n\ndef test_two():\n    assert one()\n"})
    repo.commit("initial")
    cmd = [sys.executable, "-m", "agentgate", "witness", "record"]
    code, screen, _ = on_a_terminal(cmd, repo.path, _env(), terminal_stdio=True)
    assert code == 0, screen
    assert b"running full suite, recording the witness: 2/2 tests" in screen, screen
    assert b"ok (exit 0)" in screen and b"scoped" not in screen  # the verdict in colour
