"""A real ``git push`` to a local bare remote: the pre-push hook runs the band on the pushed
code and blocks the push when the band fails."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import agentgate
from tests.support.chain_app import CHAIN_APP
from tests.support.e2e_project import push, remote_sha, set_up_remote
from tests.support.git_repo import GitRepo, git_env

CHECKOUT = Path(agentgate.__file__).resolve().parent.parent
BROKEN = "RATE = 0.5\n"  # total(10) == 15: tests/test_session.py and tests/test_report.py fail

pytestmark = pytest.mark.e2e


@pytest.fixture
def env() -> dict[str, str]:
    """This interpreter's ``agentgate`` first on PATH, so the hook runs the code under test."""
    bindir = Path(sys.executable).parent
    return git_env(PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.fixture
def shop(tmp_path: Path, env: dict[str, str]) -> tuple[GitRepo, GitRepo]:
    hooks = tmp_path / "git hooks"
    shutil.copytree(CHECKOUT / "hooks", hooks)
    repo = GitRepo.init(tmp_path / "shop repo")
    repo.git("config", "core.hooksPath", str(hooks))
    repo.files(CHAIN_APP)
    repo.commit("initial")
    return repo, set_up_remote(repo, env)


def test_push_is_blocked_when_the_band_fails(
    shop: tuple[GitRepo, GitRepo], env: dict[str, str]
) -> None:
    repo, remote = shop
    before = remote_sha(remote, "main")
    repo.write("app/pricing/rates.py", BROKEN)
    repo.commit("raise the rate")
    outcome = push(repo, env, "origin", "main")
    assert outcome.code != 0
    assert outcome.hooks["pre-push"] == [1]
    assert remote_sha(remote, "main") == before
    assert "agentgate hook pre-push" in outcome.out and "failed (exit 1)" in outcome.out
    assert "FAILED tests/test_session.py::test_total" in outcome.out
    assert "test_util" not in outcome.out  # the band: only the impacted tests ran


def test_uncommitted_fix_does_not_let_a_broken_push_through(
    shop: tuple[GitRepo, GitRepo], env: dict[str, str]
) -> None:
    repo, remote = shop
    before = remote_sha(remote, "main")
    repo.write("app/pricing/rates.py", BROKEN)
    repo.commit("raise the rate")
    repo.write("app/pricing/rates.py", CHAIN_APP["app/pricing/rates.py"])  # fixed on disk only
    outcome = push(repo, env, "origin", "main")
    assert outcome.hooks["pre-push"] == [1]
    assert remote_sha(remote, "main") == before


def test_push_goes_through_when_the_band_passes(
    shop: tuple[GitRepo, GitRepo], env: dict[str, str]
) -> None:
    repo, remote = shop
    repo.write("app/pricing/rates.py", "RATE = 0.2  # documented\n")
    head = repo.commit("document the rate")
    outcome = push(repo, env, "origin", "main")
    assert outcome.code == 0, outcome.out
    assert outcome.hooks["pre-push"] == [0]
    assert remote_sha(remote, "main") == head
