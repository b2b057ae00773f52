"""agentgate through the real pre-commit framework: real commits and a real ``git push``.

The hook repository is this checkout as it is now, uncommitted files included: a session
fixture copies every tracked and untracked-not-ignored file into a fresh git repository and
commits it, and each test project's ``.pre-commit-config.yaml`` points at that repository and
commit. pre-commit builds the hook's virtualenv from it (``pip install .``) once per session
(PRE_COMMIT_HOME is shared by tests/conftest.py), so the console script the hooks run is the
packaged one, as a user gets it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]  # pre-commit's own dependency

from tests.support.e2e_project import (
    CHECKOUT,
    CLAUDE_TRAILER,
    CODE,
    FIXTURE,
    HOW_TO,
    SCOPE,
    TRUST_MOVES,
    Outcome,
    bad_commit,
    bump_version,
    commit,
    edit_code,
    edit_fixture,
    good_commit,
    loosen_pytest,
    populate,
    push,
    remote_sha,
    set_up_remote,
    stage_mixed,
    widen_scope,
)
from tests.support.git_repo import GitRepo, git_env

INSTALL_TYPES = ("-t", "pre-commit", "-t", "commit-msg", "-t", "pre-push")  # as the README says
HOOK_IDS = ("agentgate-trust", "agentgate-trust-msg", "agentgate-push")

pytestmark = pytest.mark.e2e


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
    out = subprocess.run(
        [
            "git",
            "-C",
            str(checkout),
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
        capture_output=True,
        check=True,
    ).stdout
    names = [os.fsdecode(n) for n in out.split(b"\0") if n]
    return [n for n in dict.fromkeys(names) if os.path.lexists(checkout / n)]


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(path, sha) of a git repository holding the checkout's current working files."""
    base = tmp_path_factory.mktemp("hook-repo")
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


def config_yaml(hook_repo: tuple[Path, str]) -> str:
    """The README's snippet pointed at the snapshot. ``verbose`` makes passing hooks print
    too, so a test can read the range a push was judged over."""
    path, sha = hook_repo
    hooks = "".join(f"      - id: {hook_id}\n        verbose: true\n" for hook_id in HOOK_IDS)
    return (
        "default_install_hook_types: [pre-commit, commit-msg, pre-push]\n"
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


@pytest.fixture
def env() -> dict[str, str]:
    return git_env()


@pytest.fixture
def project(tmp_path: Path, hook_repo: tuple[Path, str]) -> GitRepo:
    repo = GitRepo.init(tmp_path / "shop repo")
    populate(repo)
    repo.write(".pre-commit-config.yaml", config_yaml(hook_repo))
    repo.commit("initial")  # --no-verify: the project's own first commit mixes trust and code
    install(repo)
    return repo


def assert_failed(outcome: Outcome, hook_id: str, code: int) -> None:
    """pre-commit's report of one failing hook, and the hook's own verdict line under it."""
    assert outcome.code != 0, outcome.out
    # ``verbose: true`` adds a duration line between the two.
    report = rf"- hook id: {hook_id}\n(- duration: [0-9.]+s\n)?- exit code: {code}\n"
    assert re.search(report, outcome.out), outcome.out


def assert_blocked(outcome: Outcome, repo: GitRepo, before: str, hook_id: str, code: int) -> None:
    assert_failed(outcome, hook_id, code)
    stage = {"agentgate-trust": "pre-commit", "agentgate-trust-msg": "commit-msg"}[hook_id]
    assert outcome.hooks[stage] == [1], outcome.hooks  # pre-commit's own exit code
    assert repo.sha() == before, "a blocked commit must not be created"


def assert_committed(outcome: Outcome, repo: GitRepo, before: str | None) -> None:
    assert outcome.code == 0, outcome.out
    assert outcome.hooks == {"pre-commit": [0], "commit-msg": [0]}, outcome.out
    assert "agentgate hook pre-commit: scoped (exit 0)" in outcome.out
    assert repo.sha() != before


# --- commit time --------------------------------------------------------------------------


def test_hook_ids_installed_are_the_ones_the_hook_repo_declares(
    hook_repo: tuple[Path, str],
) -> None:
    """The config these tests install names every hook the hook repository declares."""
    declared = yaml.safe_load((hook_repo[0] / ".pre-commit-hooks.yaml").read_text("utf-8"))
    assert [hook["id"] for hook in declared] == list(HOOK_IDS)


def test_trust_file_with_code_is_blocked(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    stage_mixed(project)
    outcome = commit(project, env, "widen scope and fix tax")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    [line] = outcome.lines("blocked: trust-mixed")
    assert line == (
        f"blocked: trust-mixed {SCOPE}: trust file {SCOPE} (changed) changed together with "
        f"{CODE}; {HOW_TO}"
    )


def test_trust_file_alone_by_a_human_is_allowed(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    widen_scope(project)
    assert_committed(commit(project, env, "widen scope"), project, before)


def test_agent_env_changing_a_trust_file_is_blocked(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", CLAUDECODE="1")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    assert "(environment variable CLAUDECODE is set)" in outcome.lines("blocked: trust-agent")[0]


def test_agent_trailer_is_blocked_by_the_commit_msg_hook(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, f"widen scope\n\n{CLAUDE_TRAILER}")
    assert_blocked(outcome, project, before, "agentgate-trust-msg", 4)
    assert outcome.hooks["pre-commit"] == [0]
    assert f"(trailer {CLAUDE_TRAILER!r} matches" in outcome.lines("blocked: trust-agent")[0]


def test_aider_author_changing_a_trust_file_is_blocked(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", GIT_AUTHOR_NAME="Paul Gauthier (aider)")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    assert "(identity 'Paul Gauthier (aider) <" in outcome.lines("blocked: trust-agent")[0]


def test_unrelated_pyproject_edit_with_code_is_allowed(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    bump_version(project)
    edit_code(project)
    assert_committed(commit(project, env, "release 1.1"), project, before)


def test_pytest_table_edit_with_code_is_blocked(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    loosen_pytest(project)
    edit_code(project)
    outcome = commit(project, env, "tune pytest")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    assert "pyproject.toml (changed [tool.pytest])" in outcome.lines("blocked: trust-mixed")[0]


@pytest.mark.parametrize("how", sorted(TRUST_MOVES))
def test_trust_file_renamed_deleted_or_symlinked_with_code_is_blocked(
    project: GitRepo, env: dict[str, str], how: str
) -> None:
    before = project.sha()
    TRUST_MOVES[how](project)
    edit_code(project)
    outcome = commit(project, env, f"scope {how}")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    assert f"trust file {SCOPE} ({how})" in outcome.lines("blocked: trust-mixed")[0]


def test_fixture_edited_without_manifest_is_blocked(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    edit_fixture(project)
    outcome = commit(project, env, "new rates")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    assert outcome.lines(f"blocked: fixture-manifest {FIXTURE}: staged fixture content differs")


def test_path_outside_the_scope_is_a_scope_escape(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    edit_code(project)
    project.write("docs/notes.md", "why\n")
    project.add()
    outcome = commit(project, env, "fix tax, add notes")
    assert_blocked(outcome, project, before, "agentgate-trust", 3)
    assert outcome.lines("scope-escape: scope-escape docs/notes.md: outside the declared scope")


def test_paths_with_spaces_and_non_ascii(project: GitRepo, env: dict[str, str]) -> None:
    name = "app/prïcing rules/tärif 2.py"
    project.write(name, "X = 1\n")
    project.add()
    before = project.sha()
    assert_committed(commit(project, env, "add tariff"), project, before)
    before = project.sha()
    project.write(name, "X = 2\n")
    widen_scope(project)
    outcome = commit(project, env, "tariff and scope")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    assert f"changed together with {name};" in outcome.lines("blocked: trust-mixed")[0]


def test_first_commit_of_a_new_repository(
    tmp_path: Path, hook_repo: tuple[Path, str], env: dict[str, str]
) -> None:
    """pre-commit insists its config is staged, and the config is a trust file: the first
    commit may hold it with the code (no boundary before it to widen), unless an agent makes
    it."""
    repo = GitRepo.init(tmp_path / "new")
    repo.write(".pre-commit-config.yaml", config_yaml(hook_repo))
    repo.write(CODE, "RATE = 0.2\n")
    install(repo)
    repo.add()
    outcome = commit(repo, {**env, "CLAUDECODE": "1"}, "initial, by an agent")
    assert_failed(outcome, "agentgate-trust", 4)
    assert outcome.lines("blocked: trust-agent .pre-commit-config.yaml")
    assert repo.git("rev-list", "--all").strip() == ""
    assert_committed(commit(repo, env, "initial"), repo, None)


def test_detached_head(project: GitRepo, env: dict[str, str]) -> None:
    project.git("checkout", "-q", "--detach")
    before = project.sha()
    stage_mixed(project)
    assert_blocked(commit(project, env, "mixed"), project, before, "agentgate-trust", 4)
    project.git("reset", "-q", "--", SCOPE)
    project.git("checkout", "-q", "--", SCOPE)
    assert_committed(commit(project, env, "code"), project, before)


# --- push time ----------------------------------------------------------------------------


@pytest.fixture
def remote(project: GitRepo, env: dict[str, str]) -> GitRepo:
    return set_up_remote(project, env)


def test_push_of_a_no_verify_mixed_commit_is_blocked(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    before = remote_sha(remote, "main")
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "main")
    assert_failed(outcome, "agentgate-push", 4)
    assert outcome.lines(f"blocked: trust-mixed [{bad[:10]}] {SCOPE}")
    assert remote_sha(remote, "main") == before


def test_push_of_clean_commits_passes(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    base = project.sha()
    head = good_commit(project)
    outcome = push(project, env, "origin", "main")
    assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out
    assert f"range: {base[:10]}...{head[:10]}" in outcome.out
    assert remote_sha(remote, "main") == head


def test_new_branch_is_judged_by_its_own_commits(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    """pre-commit passes the parent of the branch's first unpushed commit as FROM_REF."""
    bad_commit(project, "old sin on main")
    project.git("push", "-q", "--no-verify", "origin", "main", env=env)
    fork = project.sha()
    project.git("checkout", "-q", "-b", "feature")
    head = good_commit(project)
    outcome = push(project, env, "origin", "feature")
    assert outcome.code == 0, outcome.out
    assert f"range: {fork[:10]}...{head[:10]}" in outcome.out
    project.git("checkout", "-q", "-b", "feature-2")
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "feature-2")
    assert_failed(outcome, "agentgate-push", 4)
    assert [line.split(" ")[2] for line in outcome.lines("blocked:")] == [f"[{bad[:10]}]"]


def test_deleting_a_remote_branch_passes(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    project.git("checkout", "-q", "-b", "feature")
    bad_commit(project)
    project.git("push", "-q", "--no-verify", "origin", "feature", env=env)
    outcome = push(project, env, "origin", ":feature")
    assert outcome.code == 0, outcome.out
    assert "agentgate" not in outcome.out  # pre-commit runs no hook for a pure deletion
    assert remote_sha(remote, "feature") is None


def test_force_push(project: GitRepo, remote: GitRepo, env: dict[str, str]) -> None:
    fork = project.sha()
    first = good_commit(project, "0.3")
    project.git("push", "-q", "--no-verify", "origin", "main", env=env)
    project.git("reset", "-q", "--hard", fork)
    bad_commit(project)
    assert_failed(push(project, env, "--force", "origin", "main"), "agentgate-push", 4)
    assert remote_sha(remote, "main") == first
    project.git("reset", "-q", "--hard", fork)
    head = good_commit(project, "0.35", "fix tax differently")
    outcome = push(project, env, "--force", "origin", "main")
    assert outcome.code == 0, outcome.out
    # A...B: from their merge-base (fork), whichever of the two the report names as base.
    assert re.search(rf"range: ({fork[:10]}|{first[:10]})\.\.\.{head[:10]}", outcome.out)
    assert remote_sha(remote, "main") == head


def test_several_refs_pre_commit_checks_only_the_first(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    """pre-commit hands its hooks the first pushed ref only (hook_impl._pre_push_ns returns
    on the first line it can use): a bad second ref goes through. The README says so; the
    plain hooks/pre-push checks every ref (tests/test_hooks_e2e.py), and CI re-checks."""
    project.git("checkout", "-q", "-b", "a")
    good = good_commit(project)
    project.git("checkout", "-q", "-b", "b", "main")
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "a", "b")
    assert outcome.code == 0, outcome.out
    # One report only, labelled with PRE_COMMIT_TO_REF (a sha: pre-commit passes no ref name).
    assert outcome.lines("agentgate hook pre-push") == [
        f"agentgate hook pre-push {good}: scoped (exit 0)"
    ]
    assert remote_sha(remote, "b") == bad  # the limitation, observed
    project.git("checkout", "-q", "-b", "c", "b")
    good_commit(project, "0.6", "more on c")
    project.git("checkout", "-q", "-b", "d", "main")
    bad_commit(project, "bad d")
    outcome = push(project, env, "origin", "d", "c")  # the bad ref first: it is the one checked
    assert_failed(outcome, "agentgate-push", 4)
    assert remote_sha(remote, "c") is None and remote_sha(remote, "d") is None


def test_freeze_record_for_a_test_the_same_patch_breaks_is_blocked(
    project: GitRepo, env: dict[str, str]
) -> None:
    """Issue 4: an agent breaks a test and freezes it in the same commit; the hook refuses,
    and the ledger record alone (by a human) must be valid to pass."""
    from tests.support.ledger import freeze_json

    nodeid = "tests/test_tax.py::test_tax"
    before = project.sha()
    project.write(CODE, "RATE = 0.3\n\n\ndef tax(x):\n    return x * RATE\n")  # breaks test_tax
    project.write(".agentgate/freezes/test_tax.json", json.dumps(freeze_json(nodeid)))
    project.add()
    outcome = commit(project, env, "fix rate; freeze the flaky test", CLAUDECODE="1")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    assert outcome.lines("blocked: trust-agent .agentgate/freezes/test_tax.json")
    assert outcome.lines("blocked: trust-mixed .agentgate/freezes/test_tax.json")
    # The record on its own, by a human, is checked by the ledger rules: no owner, no freeze.
    project.git("reset", "-q", "--hard", before)
    bad = freeze_json(nodeid, owner="")
    project.write(".agentgate/freezes/test_tax.json", json.dumps(bad))
    project.add()
    outcome = commit(project, env, "freeze test_tax")
    assert_blocked(outcome, project, before, "agentgate-trust", 4)
    assert outcome.lines("blocked: ledger-owner")
