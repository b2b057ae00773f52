"""Commit time, end to end, once per driver: real ``git commit`` with agentgate's hooks
installed as plain ``hooks/`` scripts and through the pre-commit framework.

Each test makes a real commit and checks git's own exit code, the hook's exit code (from
git's trace2 events, not from agentgate's report of itself), and the lines the hook printed.
Scenarios that only one driver has are in test_commit_plain.py and test_precommit.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_project import (
    CLAUDE_TRAILER,
    CODE,
    FIXTURE,
    HOW_TO,
    SCOPE,
    TRUST_MOVES,
    bump_version,
    commit,
    edit_code,
    edit_fixture,
    loosen_pytest,
    stage_mixed,
    widen_scope,
)
from tests.support.git_repo import GitRepo
from tests.support.hook_drivers import Driver, assert_blocked, assert_committed

pytestmark = pytest.mark.e2e


# --- the trust boundary -----------------------------------------------------------------------


def test_trust_file_with_code_is_blocked_naming_rule_file_and_way_out(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    stage_mixed(project)
    outcome = commit(project, env, "widen scope and fix tax")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-mixed")
    assert line == (
        f"blocked: trust-mixed {SCOPE}: trust file {SCOPE} (changed) changed together with "
        f"{CODE}; {HOW_TO}"
    )
    assert "commit-msg" not in outcome.hooks  # git stops at the first failing hook


def test_trust_file_alone_by_a_human_is_allowed(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    widen_scope(project)
    assert_committed(commit(project, env, "widen scope"), project, before)


@pytest.mark.parametrize("variable", ["CLAUDECODE", "CODEX_SANDBOX", "GEMINI_CLI"])
def test_agent_env_changing_a_trust_file_alone_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str], variable: str
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", **{variable: "1"})
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-agent")
    assert line.startswith(
        f"blocked: trust-agent {SCOPE}: an agent may not change trust files "
        f"(environment variable {variable} is set); this file was changed"
    )


def test_agent_trailer_with_trust_change_is_blocked_once_the_message_is_known(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    """A message given with -F is in the file by prepare-commit-msg already; one typed in
    the editor is known only to commit-msg (tests/flows/test_hooks_prepare.py)."""
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, f"widen scope\n\n{CLAUDE_TRAILER}")
    assert_blocked(driver, outcome, project, before, "prepare-commit-msg", 4)
    assert outcome.hooks["pre-commit"] == [0]  # the message is not known to pre-commit
    [line] = outcome.lines("blocked: trust-agent")
    assert f"(trailer {CLAUDE_TRAILER!r} matches" in line


@pytest.mark.parametrize(
    ("name", "email"),
    [
        ("Paul Gauthier (aider)", "paul@example.com"),
        ("Copilot", "198982749+Copilot@users.noreply.github.com"),
    ],
)
def test_agent_identity_changing_a_trust_file_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str], name: str, email: str
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email)
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-agent")
    assert f"(identity '{name} <{email}>' matches" in line


def test_unrelated_pyproject_edit_with_code_is_allowed(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    bump_version(project)
    edit_code(project)
    assert_committed(commit(project, env, "release 1.1"), project, before)


def test_pytest_table_edit_with_code_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    loosen_pytest(project)
    edit_code(project)
    outcome = commit(project, env, "tune pytest")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-mixed")
    assert "trust file pyproject.toml (changed [tool.pytest])" in line
    assert f"together with {CODE};" in line


@pytest.mark.parametrize("how", sorted(TRUST_MOVES))
def test_trust_file_renamed_deleted_or_symlinked_with_code_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str], how: str
) -> None:
    before = project.sha()
    TRUST_MOVES[how](project)
    edit_code(project)
    outcome = commit(project, env, f"scope {how}")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-mixed")
    assert f"trust file {SCOPE} ({how})" in line


# --- fixture manifest and declared scope ------------------------------------------------------


def test_fixture_edited_without_manifest_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    edit_fixture(project)
    outcome = commit(project, env, "new rates")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: fixture-manifest")
    assert line.startswith(
        f"blocked: fixture-manifest {FIXTURE}: staged fixture content differs from its "
        "manifest entry; a human runs 'agentgate fixtures record'"
    )


def test_path_outside_the_scope_is_a_scope_escape(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    edit_code(project)
    project.write("docs/pricing notes.md", "why\n")
    project.add()
    outcome = commit(project, {**env, "CLAUDECODE": "1"}, "fix tax, add notes")
    assert_blocked(driver, outcome, project, before, "pre-commit", 3)
    assert "agentgate hook pre-commit: scope-escape (exit 3)" in outcome.out
    [line] = outcome.lines("scope-escape ")  # the rule is the kind: named once (issue 13)
    assert line.startswith("scope-escape docs/pricing notes.md: outside the declared")


# --- awkward paths and repository states ------------------------------------------------------


def test_paths_with_spaces_and_non_ascii(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    name = "app/prïcing rules/tärif 2.py"
    project.write(name, "X = 1\n")
    project.add()
    before = project.sha()
    assert_committed(commit(project, env, "add tariff"), project, before)
    before = project.sha()
    project.write(name, "X = 2\n")
    widen_scope(project)
    outcome = commit(project, env, "tariff and scope")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    assert f"changed together with {name};" in outcome.lines("blocked: trust-mixed")[0]


def test_first_commit_of_a_new_repository(
    driver: Driver, tmp_path: Path, env: dict[str, str]
) -> None:
    """The first commit has no boundary before it to widen: a human may create trust files
    with the code (rule a does not apply), an agent may not (rule b still does). With
    pre-commit the trust file is its own config, which it insists is staged."""
    repo, trust_file = driver.new_repo(tmp_path / "new")
    repo.write(CODE, "RATE = 0.2\n")
    repo.add()
    outcome = commit(repo, {**env, "CLAUDECODE": "1"}, "initial, by an agent")
    driver.assert_refused(outcome, "pre-commit", 4)
    assert "commit-msg" not in outcome.hooks
    assert repo.git("rev-list", "--all").strip() == ""  # still no commits
    assert outcome.lines(f"blocked: trust-agent {trust_file}")
    assert_committed(commit(repo, env, "initial"), repo, None)
    assert repo.git("rev-list", "--count", "HEAD").strip() == "1"


def test_detached_head(driver: Driver, project: GitRepo, env: dict[str, str]) -> None:
    project.git("checkout", "-q", "--detach")
    before = project.sha()
    stage_mixed(project)
    assert_blocked(driver, commit(project, env, "mixed"), project, before, "pre-commit", 4)
    project.git("reset", "-q", "--", SCOPE)
    project.git("checkout", "-q", "--", SCOPE)
    assert_committed(commit(project, env, "code"), project, before)
    assert project.git("symbolic-ref", "-q", "HEAD", check=False) == ""
