"""Push time through the plain ``hooks/pre-push`` script only: scenarios the pre-commit
driver does not have or handles otherwise (every ref of a multi-ref push, the new-branch note,
shallow clones, SHA-256 repositories). Shared push scenarios are in test_push.py.

The hooks are copies of this checkout's ``hooks/`` used through ``core.hooksPath``; each test
checks git's exit code, the hook's exit code (git's trace2 events) and the hook's lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_project import (
    CLAUDE_TRAILER,
    bad_commit,
    good_commit,
    populate,
    push,
    push_new_branch_over_old_sin,
    remote_sha,
    widen_scope,
)
from tests.support.git_repo import GitRepo
from tests.support.hook_drivers import Driver, PlainHooks

pytestmark = pytest.mark.e2e
DRIVERS = ("hooks",)


@pytest.fixture
def hooks_dir(driver: Driver) -> Path:
    assert isinstance(driver, PlainHooks)
    return driver.hooks_dir


@pytest.mark.parametrize("agent", ["identity", "trailer"])
def test_push_of_an_agent_trust_commit_is_blocked(
    project: GitRepo, remote: GitRepo, env: dict[str, str], agent: str
) -> None:
    widen_scope(project)
    if agent == "identity":
        project.commit("widen scope", author="Paul (aider)", add=False)
    else:
        project.commit(f"widen scope\n\n{CLAUDE_TRAILER}", add=False)
    outcome = push(project, env, "origin", "main")
    assert outcome.code != 0 and outcome.hooks == {"pre-push": [4]}, outcome.out
    assert outcome.lines("blocked: trust-agent")


def test_new_branch_is_compared_with_its_merge_base(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    """main already holds a mixed commit (pushed past the hooks): a new branch is judged
    only by its own commits, from the merge-base with origin/main."""
    fork, head, outcome = push_new_branch_over_old_sin(project, env)
    assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out
    assert f"range: {fork[:10]}...{head[:10]}" in outcome.out
    assert "note: new branch: compared against its merge-base with refs/remotes/origin/main" in (
        outcome.out
    )
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "feature")  # the remote now has feature: not new
    assert outcome.code != 0 and outcome.hooks == {"pre-push": [4]}, outcome.out
    # Only the new commit: the old one on main is behind the remote's feature.
    assert [line.split(" ")[2] for line in outcome.lines("blocked:")] == [f"[{bad[:10]}]"]


def test_new_branch_with_a_bad_commit_is_blocked(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    project.git("checkout", "-q", "-b", "feature")
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "feature")
    assert outcome.code != 0 and outcome.hooks == {"pre-push": [4]}, outcome.out
    assert outcome.lines(f"blocked: trust-mixed [{bad[:10]}]")
    assert remote_sha(remote, "feature") is None


def test_new_branch_at_the_tip_of_main_passes(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    """``git switch -c feature && git push -u origin feature``: nothing new is pushed."""
    project.git("checkout", "-q", "-b", "feature")
    outcome = push(project, env, "origin", "feature")
    assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out


def test_force_push_over_a_remote_tip_unknown_here(
    project: GitRepo, remote: GitRepo, env: dict[str, str], tmp_path: Path
) -> None:
    """Someone else pushed; this clone never fetched it. The hook falls back to the base
    branch it knows instead of failing on an object it does not have."""
    other = GitRepo(tmp_path / "other")
    project.git("clone", "-q", str(remote.path), str(other.path))
    theirs = good_commit(other, "0.9", "their change")
    other.git("push", "-q", "--no-verify", "origin", "main", env=env)
    good_commit(project, "0.31")
    outcome = push(project, env, "--force", "origin", "main")
    assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out
    assert f"note: remote refs/heads/main is at {theirs[:10]}, unknown here" in outcome.out


def test_several_refs_in_one_push_are_all_checked(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    """Only the second ref is bad; pre-commit would pass only the first on, the plain hook
    reads every line git gives it."""
    project.git("checkout", "-q", "-b", "a")
    good_commit(project)
    project.git("checkout", "-q", "-b", "b", "main")
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "a", "b")
    assert outcome.code != 0 and outcome.hooks == {"pre-push": [4]}, outcome.out
    assert "agentgate hook pre-push refs/heads/a: scoped (exit 0)" in outcome.out
    assert "agentgate hook pre-push refs/heads/b: blocked (exit 4)" in outcome.out
    assert outcome.lines(f"blocked: trust-mixed [{bad[:10]}]")
    assert remote_sha(remote, "a") is None and remote_sha(remote, "b") is None


def _shallow_clone_off_main(
    tmp_path: Path, project: GitRepo, hooks_dir: Path, *, fork_has_commit: bool
) -> GitRepo:
    """A depth-1 clone of main plus a depth-1 fetch of a branch that forked from an older
    main: the clone holds no merge-base of the two. With ``fork_has_commit`` the branch has
    a commit of its own, whose parent the clone lacks; without, its tip is the root commit."""
    project.git("checkout", "-q", "-b", "feature")
    if fork_has_commit:
        good_commit(project, "0.33", "feature work")
    project.git("checkout", "-q", "main")
    good_commit(project, "0.4", "main moves on")
    project.git("push", "-q", "--no-verify", "origin", "main", "feature")
    shallow = GitRepo(tmp_path / "shallow")
    url = (tmp_path / "remote.git").as_uri()
    project.git("clone", "-q", "--depth", "1", url, str(shallow.path))
    shallow.git("config", "core.hooksPath", str(hooks_dir))
    shallow.git("fetch", "-q", "--depth", "1", "origin", "feature:feature")
    shallow.git("checkout", "-q", "feature")
    good_commit(shallow, "0.5", "work on the shallow branch")
    return shallow


def test_shallow_clone_without_the_base_is_one_line_exit_64(
    tmp_path: Path, project: GitRepo, remote: GitRepo, hooks_dir: Path, env: dict[str, str]
) -> None:
    shallow = _shallow_clone_off_main(tmp_path, project, hooks_dir, fork_has_commit=True)
    outcome = push(shallow, env, "origin", "feature:feature-2")
    assert outcome.code != 0 and outcome.hooks == {"pre-push": [64]}, outcome.out
    said = outcome.lines("agentgate")
    assert len(said) == 1 and said[0].startswith("agentgate: "), outcome.out
    assert "Traceback" not in outcome.out
    assert remote_sha(remote, "feature-2") is None


@pytest.mark.parametrize("fork_has_commit", [True, False], ids=["missing-parent", "root"])
def test_shallow_clone_without_the_base_says_fetch_full_history(
    tmp_path: Path,
    project: GitRepo,
    remote: GitRepo,
    hooks_dir: Path,
    env: dict[str, str],
    fork_has_commit: bool,
) -> None:
    shallow = _shallow_clone_off_main(tmp_path, project, hooks_dir, fork_has_commit=fork_has_commit)
    outcome = push(shallow, env, "origin", "feature:feature-2")
    assert outcome.hooks == {"pre-push": [64]}, outcome.out
    [line] = outcome.lines("agentgate")
    assert "shallow clone" in line and "git fetch --unshallow" in line


# --- SHA-256 repositories -------------------------------------------------------------------


@pytest.fixture
def sha256_project(tmp_path: Path, hooks_dir: Path, env: dict[str, str]) -> tuple[GitRepo, GitRepo]:
    repo = GitRepo(tmp_path / "sha256")
    remote = GitRepo(tmp_path / "sha256.git")
    for path, bare in ((repo.path, ()), (remote.path, ("--bare",))):
        path.mkdir()
        GitRepo(path).git("init", "-q", *bare, "--object-format=sha256", "-b", "main")
    repo.git("config", "core.hooksPath", str(hooks_dir))
    populate(repo)
    repo.commit("initial")
    repo.git("remote", "add", "origin", str(remote.path))
    repo.git("push", "-q", "--no-verify", "origin", "main", "main:feature", env=env)
    return repo, remote


def test_sha256_deletion_with_64_zero_id_passes(
    sha256_project: tuple[GitRepo, GitRepo], env: dict[str, str]
) -> None:
    repo, remote = sha256_project
    outcome = push(repo, env, "origin", ":feature")
    assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out
    assert remote_sha(remote, "feature") is None


def test_sha256_push_is_checked(
    sha256_project: tuple[GitRepo, GitRepo], env: dict[str, str]
) -> None:
    repo, _remote = sha256_project
    bad_commit(repo)
    outcome = push(repo, env, "origin", "main")
    assert outcome.hooks == {"pre-push": [4]}, outcome.out
