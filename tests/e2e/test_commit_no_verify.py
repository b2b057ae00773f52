"""``git commit --no-verify``, end to end, once per driver: git skips pre-commit and
commit-msg but still runs prepare-commit-msg (githooks(5)), where agentgate runs the same
commit-time gate. Each attack stands next to its legitimate twin.
"""

from __future__ import annotations

import pytest

from tests.support.e2e_project import (
    CLAUDE_TRAILER,
    CODE,
    SCOPE,
    Outcome,
    commit,
    edit_code,
    run_git,
    stage_mixed,
    widen_scope,
)
from tests.support.git_repo import GitRepo
from tests.support.hook_drivers import Driver, assert_blocked

pytestmark = pytest.mark.e2e


def _no_hooks_but_prepare(outcome_hooks: dict[str, list[int]]) -> None:
    assert "pre-commit" not in outcome_hooks and "commit-msg" not in outcome_hooks


def test_agent_env_mixing_trust_and_code_with_no_verify_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    stage_mixed(project)
    outcome = commit(project, env, "widen scope and fix tax", "--no-verify", CLAUDECODE="1")
    assert_blocked(driver, outcome, project, before, "prepare-commit-msg", 4)
    _no_hooks_but_prepare(outcome.hooks)
    [line] = outcome.lines(f"blocked: trust-agent {SCOPE}")
    assert "(environment variable CLAUDECODE is set)" in line
    assert outcome.lines(f"blocked: trust-mixed {SCOPE}")


def test_human_code_only_commit_with_no_verify_is_allowed(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    edit_code(project)
    outcome = commit(project, env, "fix tax", "--no-verify")
    assert outcome.code == 0, outcome.out
    assert outcome.hooks == {"prepare-commit-msg": [0]}, outcome.out
    assert project.sha() != before


def test_agent_identity_changing_trust_with_no_verify_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", "--no-verify",
                     GIT_AUTHOR_NAME="Paul Gauthier (aider)")
    assert_blocked(driver, outcome, project, before, "prepare-commit-msg", 4)
    assert outcome.lines(f"blocked: trust-agent {SCOPE}")


def test_human_mixing_trust_and_code_with_no_verify_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    """Rule 1 holds for everyone, --no-verify or not; the human's trust change alone passes."""
    before = project.sha()
    stage_mixed(project)
    outcome = commit(project, env, "widen scope and fix tax", "--no-verify")
    assert_blocked(driver, outcome, project, before, "prepare-commit-msg", 4)
    [line] = outcome.lines("blocked: trust-mixed")
    assert f"changed together with {CODE};" in line
    project.git("reset", "-q", "--", CODE)
    outcome = commit(project, env, "widen scope", "--no-verify")
    assert outcome.code == 0 and outcome.hooks == {"prepare-commit-msg": [0]}, outcome.out


def test_agent_trailer_given_with_m_and_no_verify_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    """commit-msg is skipped, so the trailers a message already carries are read here."""
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, f"widen scope\n\n{CLAUDE_TRAILER}", "--no-verify")
    assert_blocked(driver, outcome, project, before, "prepare-commit-msg", 4)
    [line] = outcome.lines("blocked: trust-agent")
    assert f"(trailer {CLAUDE_TRAILER!r} matches" in line
    outcome = commit(project, env, f"fix tax\n\n{CLAUDE_TRAILER}", "--no-verify", "--amend")
    assert outcome.code != 0  # the same change amended onto HEAD is refused alike
    project.git("reset", "-q", "--hard")
    edit_code(project)
    outcome = commit(project, env, f"fix tax\n\n{CLAUDE_TRAILER}", "--no-verify")
    assert outcome.code == 0, outcome.out  # an agent's code-only commit is everyday work


def test_agent_amend_no_edit_adding_a_trust_file_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    """``--amend --no-edit`` passes SOURCE "commit": what is staged is judged all the same."""
    edit_code(project)
    assert commit(project, env, "fix tax", "--no-verify").code == 0
    before = project.sha()
    widen_scope(project)
    outcome = _agent(project, env, "commit", "-q", "--amend", "--no-edit", "--no-verify")
    assert_blocked(driver, outcome, project, before, "prepare-commit-msg", 4)
    assert outcome.lines(f"blocked: trust-agent {SCOPE}")


def test_a_merge_is_judged_by_its_own_edits_not_by_what_it_brings_in(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    """A merge passes SOURCE "merge"; against HEAD alone, merging a branch that holds a
    human's trust-only commit and code would look like trust mixed with code. Only what
    differs from every parent is the merge's own, as at push (gitio.commit_changes)."""
    project.git("checkout", "-q", "-b", "side")
    widen_scope(project)
    project.commit("widen scope", add=False)  # past every hook: a human's, made elsewhere
    project.write("app/extra.py", "X = 1\n")
    project.commit("extra")
    project.git("checkout", "-q", "main")
    edit_code(project)
    assert commit(project, env, "fix tax", "--no-verify").code == 0
    before = project.sha()
    outcome = _agent(project, env, "merge", "-q", "--no-ff", "--no-edit", "--no-verify", "side")
    assert outcome.code == 0 and outcome.hooks == {"prepare-commit-msg": [0]}, outcome.out
    project.git("reset", "-q", "--hard", before)
    # The evil merge: the agent's own trust edit inside the merge is still refused.
    assert _agent(project, env, "merge", "-q", "--no-ff", "--no-commit", "side").code == 0
    widen_scope(project)
    outcome = _agent(project, env, "commit", "-q", "--no-edit", "--no-verify")
    assert_blocked(driver, outcome, project, before, "prepare-commit-msg", 4)
    assert outcome.lines(f"blocked: trust-agent {SCOPE}")


def _agent(project: GitRepo, env: dict[str, str], *args: str) -> Outcome:
    return run_git(project, *args, env={**env, "CLAUDECODE": "1"})
