"""The two ways a project runs agentgate's hooks, behind one interface.

``PlainHooks``: copies of this checkout's ``hooks/`` scripts through ``core.hooksPath``, as
the README tells a user without pre-commit. ``PreCommitFramework``: the real pre-commit
framework, installed with ``pre-commit install`` from a snapshot of this checkout as its hook
repository (its ``.pre-commit-hooks.yaml``, built into a virtualenv with ``pip install .``).

An end-to-end scenario is written once against ``Driver`` and runs once per driver; what
differs between the two is only how a project is set up and how a hook's failure shows:
a plain hook exits with agentgate's own code, pre-commit exits 1 and prints a report.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path

from tests.support.e2e_project import (
    CHECKOUT,
    SCOPE,
    Outcome,
    copy_hooks,
    hooked,
    hooked_project,
    plain_hook_env,
    populate,
)
from tests.support.git_repo import GitRepo, git_env

# As the README says.
INSTALL_TYPES = ("-t", "pre-commit", "-t", "prepare-commit-msg", "-t", "commit-msg",
                 "-t", "pre-push")  # fmt: skip
HOOK_ID_OF = {"pre-commit": "agentgate-trust", "prepare-commit-msg": "agentgate-trust-prepare",
              "commit-msg": "agentgate-trust-msg", "pre-push": "agentgate-push"}  # fmt: skip
HOOK_IDS = tuple(HOOK_ID_OF.values())
COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg")  # the order git runs them


class Driver(ABC):
    """How a project gets its hooks, and how a refusal by one of them is told apart."""

    name: str

    @abstractmethod
    def env(self) -> dict[str, str]:
        """The environment git runs under, so that its hooks run the code under test."""

    @abstractmethod
    def project(self, path: Path) -> GitRepo:
        """The example project, committed once (past the hooks) and hooked."""

    @abstractmethod
    def new_repo(self, path: Path) -> tuple[GitRepo, str]:
        """A hooked repository with no commits, and the trust file it stages for its first."""

    @abstractmethod
    def assert_refused(self, outcome: Outcome, stage: str, code: int) -> None:
        """git failed because the hook of ``stage`` refused with agentgate's exit ``code``."""

    @abstractmethod
    def push_label(self, ref: str, sha: str) -> str:
        """How the pre-push report names a pushed ref whose local tip is ``sha``."""


class PlainHooks(Driver):
    name = "hooks"

    def __init__(self, tmp_path: Path) -> None:
        self.hooks_dir = copy_hooks(tmp_path)

    def env(self) -> dict[str, str]:
        return plain_hook_env()

    def project(self, path: Path) -> GitRepo:
        return hooked_project(path, self.hooks_dir)

    def new_repo(self, path: Path) -> tuple[GitRepo, str]:
        repo = hooked(path, self.hooks_dir)
        repo.write(SCOPE, "app\n")
        return repo, SCOPE

    def assert_refused(self, outcome: Outcome, stage: str, code: int) -> None:
        # The hook's own exit code is agentgate's verdict, read from git's trace2 events.
        assert outcome.code != 0, outcome.out
        assert outcome.hooks.get(stage) == [code], (outcome.hooks, outcome.out)
        assert f"agentgate hook {stage}" in outcome.out and f"(exit {code})" in outcome.out

    def push_label(self, ref: str, sha: str) -> str:
        return ref  # hooks/pre-push reads the ref names git gives it


class PreCommitFramework(Driver):
    name = "pre-commit"

    def __init__(self, hook_repo: tuple[Path, str]) -> None:
        self.hook_repo = hook_repo

    def env(self) -> dict[str, str]:
        return git_env()  # pre-commit runs the console script from its own hook virtualenv

    def project(self, path: Path) -> GitRepo:
        repo = GitRepo.init(path)
        populate(repo)
        repo.write(".pre-commit-config.yaml", config_yaml(self.hook_repo))
        repo.commit("initial")  # --no-verify: the project's first commit mixes trust and code
        install(repo)
        return repo

    def new_repo(self, path: Path) -> tuple[GitRepo, str]:
        # pre-commit insists its config is staged, and the config is a trust file.
        repo = GitRepo.init(path)
        repo.write(".pre-commit-config.yaml", config_yaml(self.hook_repo))
        install(repo)
        return repo, ".pre-commit-config.yaml"

    def assert_refused(self, outcome: Outcome, stage: str, code: int) -> None:
        assert outcome.code != 0, outcome.out
        # ``verbose: true`` adds a duration line between the two.
        report = rf"- hook id: {HOOK_ID_OF[stage]}\n(- duration: [0-9.]+s\n)?- exit code: {code}\n"
        assert re.search(report, outcome.out), outcome.out
        assert outcome.hooks.get(stage) == [1], outcome.hooks  # pre-commit's own exit code

    def push_label(self, ref: str, sha: str) -> str:
        return ref  # PRE_COMMIT_LOCAL_BRANCH, the local ref git names (as hooks/pre-push)


# --- what a commit's hooks did, whichever driver ran them ---------------------------------


def assert_blocked(
    driver: Driver, outcome: Outcome, repo: GitRepo, before: str, stage: str, code: int
) -> None:
    driver.assert_refused(outcome, stage, code)
    assert repo.sha() == before, "a blocked commit must not be created"


def assert_committed(outcome: Outcome, repo: GitRepo, before: str | None) -> None:
    assert outcome.code == 0, outcome.out
    assert outcome.hooks == {stage: [0] for stage in COMMIT_HOOKS}, outcome.out
    assert "agentgate hook pre-commit: scoped (exit 0)" in outcome.out
    assert repo.sha() != before


# --- pre-commit's hook repository: this checkout as it is now -------------------------------


def config_yaml(hook_repo: tuple[Path, str]) -> str:
    """The README's snippet pointed at the snapshot. ``verbose`` makes passing hooks print
    too, so a test can read the range a push was judged over."""
    path, sha = hook_repo
    hooks = "".join(f"      - id: {hook_id}\n        verbose: true\n" for hook_id in HOOK_IDS)
    return (
        "default_install_hook_types: [pre-commit, prepare-commit-msg, commit-msg, pre-push]\n"
        "repos:\n"
        f"  - repo: {json.dumps(str(path))}\n"
        f"    rev: {sha}\n"
        "    hooks:\n" + hooks
    )


def install(repo: GitRepo) -> None:
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install", *INSTALL_TYPES],
        cwd=repo.path,
        check=True,
        capture_output=True,
    )


def snapshot_checkout(base: Path) -> tuple[Path, str]:
    """(path, sha) of a new git repository holding the checkout's current working files,
    uncommitted ones included, so pre-commit installs the code under test."""
    (base / "home" / "templates").mkdir(parents=True)
    env = _snapshot_env(base / "home")
    target = base / "agentgate"
    for name in _working_files(CHECKOUT):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / name, target / name, follow_symlinks=False)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", "-C", str(target), *args], env=env, check=True)
    sha = subprocess.run(
        ["git", "-C", str(target), "rev-parse", "HEAD"], env=env, check=True, capture_output=True
    ).stdout.decode()
    return target, sha.strip()


def _snapshot_env(home: Path) -> dict[str, str]:
    """Session fixtures run before conftest's per-test isolation: pin git here by hand."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TEMPLATE_DIR=str(home / "templates"),
        GIT_AUTHOR_NAME="Snapshot",
        GIT_AUTHOR_EMAIL="snapshot@example.com",
        GIT_COMMITTER_NAME="Snapshot",
        GIT_COMMITTER_EMAIL="snapshot@example.com",
    )
    return env


def _working_files(checkout: Path) -> list[str]:
    """The files git would commit from the checkout: its index and what its ignore rules let
    through. An unpacked source archive has no .git (issue 13: 23 errors there): an empty git
    dir of our own over it lists every file its .gitignore does not exclude."""
    with tempfile.TemporaryDirectory() as scratch:
        git = ["git", "-C", str(checkout)]
        if not _own_work_tree(checkout):
            subprocess.run(["git", "init", "-q", "--bare", "--template=", scratch], check=True)
            git += [f"--git-dir={scratch}", f"--work-tree={checkout}"]
        args = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        out = subprocess.run([*git, *args], capture_output=True, check=True).stdout
    names = [os.fsdecode(n) for n in out.split(b"\0") if n]
    return [n for n in dict.fromkeys(names) if os.path.lexists(checkout / n)]


def _own_work_tree(checkout: Path) -> bool:
    """Whether the checkout is the top of a git work tree (not an archive unpacked into some
    other repository's folder, whose index knows nothing of it)."""
    proc = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--show-toplevel"],
                          capture_output=True, text=True)
    return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == checkout.resolve()
