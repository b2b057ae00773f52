"""The plain ``hooks/`` commit-time scripts, end to end: real ``git commit``.

The hooks are copies of this checkout's ``hooks/`` in a folder outside the repository, used
through ``git config core.hooksPath``, exactly as the README tells a user to. Each test makes
a real commit and checks three things: git's own exit code, the hook's exit code (from
git's trace2 events, not from agentgate's report of itself), and the lines the hook printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.e2e_project import (
    CLAUDE_TRAILER,
    CODE,
    FIXTURE,
    HOW_TO,
    MANIFEST,
    SCOPE,
    TRUST_MOVES,
    Outcome,
    bump_version,
    commit,
    copy_hooks,
    edit_code,
    edit_fixture,
    hooked,
    hooked_project,
    loosen_pytest,
    manifest_text,
    plain_hook_env,
    stage_mixed,
    widen_scope,
)
from tests.support.git_repo import GitRepo

pytestmark = pytest.mark.e2e


@pytest.fixture
def env() -> dict[str, str]:
    return plain_hook_env()


@pytest.fixture
def hooks_dir(tmp_path: Path) -> Path:
    return copy_hooks(tmp_path)


@pytest.fixture
def project(tmp_path: Path, hooks_dir: Path) -> GitRepo:
    return hooked_project(tmp_path / "shop repo", hooks_dir)


def assert_blocked(outcome: Outcome, repo: GitRepo, before: str, hook: str, code: int) -> None:
    assert outcome.code != 0, outcome.out
    assert outcome.hooks[hook] == [code], (outcome.hooks, outcome.out)
    assert f"agentgate hook {hook}: " in outcome.out and f"(exit {code})" in outcome.out
    assert repo.sha() == before, "a blocked commit must not be created"


def assert_committed(outcome: Outcome, repo: GitRepo, before: str | None) -> None:
    assert outcome.code == 0, outcome.out
    assert outcome.hooks == {"pre-commit": [0], "commit-msg": [0]}, outcome.out
    assert repo.sha() != before


# --- commit time: the trust boundary --------------------------------------------------------


def test_trust_file_with_code_is_blocked_naming_rule_file_and_way_out(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    stage_mixed(project)
    outcome = commit(project, env, "widen scope and fix tax")
    assert_blocked(outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-mixed")
    assert line == (
        f"blocked: trust-mixed {SCOPE}: trust file {SCOPE} (changed) changed together with "
        f"{CODE}; {HOW_TO}"
    )
    assert "commit-msg" not in outcome.hooks  # git stops at the first failing hook


def test_trust_file_alone_by_a_human_is_allowed(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope")
    assert_committed(outcome, project, before)
    assert "agentgate hook pre-commit: scoped (exit 0)" in outcome.out


@pytest.mark.parametrize("variable", ["CLAUDECODE", "CODEX_SANDBOX", "GEMINI_CLI"])
def test_agent_env_changing_a_trust_file_alone_is_blocked(
    project: GitRepo, env: dict[str, str], variable: str
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", **{variable: "1"})
    assert_blocked(outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-agent")
    assert line.startswith(
        f"blocked: trust-agent {SCOPE}: an agent may not change trust files "
        f"(environment variable {variable} is set); this file was changed"
    )


def test_agent_env_code_only_commit_is_allowed(project: GitRepo, env: dict[str, str]) -> None:
    """Identification only tightens the trust rules: an agent may still commit code."""
    before = project.sha()
    edit_code(project)
    assert_committed(commit(project, env, "fix tax", CLAUDECODE="1"), project, before)


def test_agent_trailer_with_trust_change_is_blocked_by_commit_msg(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, f"widen scope\n\n{CLAUDE_TRAILER}")
    assert_blocked(outcome, project, before, "commit-msg", 4)
    assert outcome.hooks["pre-commit"] == [0]  # the message is known only to commit-msg
    [line] = outcome.lines("blocked: trust-agent")
    assert f"(trailer {CLAUDE_TRAILER!r} matches" in line


def test_agent_trailer_passed_with_git_commit_trailer_option_is_blocked(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", "--trailer", CLAUDE_TRAILER)
    assert_blocked(outcome, project, before, "commit-msg", 4)


def test_agent_trailer_is_found_when_git_appends_its_comment_block(
    project: GitRepo, env: dict[str, str]
) -> None:
    """With an editor (here the no-op ``true``), git hands commit-msg the message *before*
    stripping its ``# Please enter the commit message`` block."""
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, f"widen scope\n\n{CLAUDE_TRAILER}", "-e", GIT_EDITOR="true")
    assert_blocked(outcome, project, before, "commit-msg", 4)


@pytest.mark.parametrize(
    ("name", "email"),
    [
        ("Paul Gauthier (aider)", "paul@example.com"),
        ("Copilot", "198982749+Copilot@users.noreply.github.com"),
    ],
)
def test_agent_identity_changing_a_trust_file_is_blocked(
    project: GitRepo, env: dict[str, str], name: str, email: str
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email)
    assert_blocked(outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-agent")
    assert f"(identity '{name} <{email}>' matches" in line


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
    assert_blocked(outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-mixed")
    assert "trust file pyproject.toml (changed [tool.pytest])" in line
    assert f"together with {CODE};" in line


@pytest.mark.parametrize("how", sorted(TRUST_MOVES))
def test_trust_file_renamed_deleted_or_symlinked_with_code_is_blocked(
    project: GitRepo, env: dict[str, str], how: str
) -> None:
    before = project.sha()
    TRUST_MOVES[how](project)
    edit_code(project)
    outcome = commit(project, env, f"scope {how}")
    assert_blocked(outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: trust-mixed")
    assert f"trust file {SCOPE} ({how})" in line


def test_agent_renaming_a_trust_file_alone_is_blocked(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    TRUST_MOVES["renamed"](project)
    outcome = commit(project, env, "move scope", CLAUDECODE="1")
    assert_blocked(outcome, project, before, "pre-commit", 4)
    assert "this file was renamed" in outcome.lines("blocked: trust-agent")[0]


# --- commit time: fixture manifest and declared scope --------------------------------------


def test_fixture_edited_without_manifest_is_blocked(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    edit_fixture(project)
    outcome = commit(project, env, "new rates")
    assert_blocked(outcome, project, before, "pre-commit", 4)
    [line] = outcome.lines("blocked: fixture-manifest")
    assert line.startswith(
        f"blocked: fixture-manifest {FIXTURE}: staged fixture content differs from its "
        "manifest entry; a human runs 'agentgate fixtures record'"
    )


def test_fixture_with_its_manifest_entry_is_allowed(project: GitRepo, env: dict[str, str]) -> None:
    """The one exception to rule (a): the manifest with exactly the fixtures it lists."""
    before = project.sha()
    edit_fixture(project)
    project.write(MANIFEST, manifest_text({FIXTURE: (project.path / FIXTURE).read_bytes()}))
    project.add()
    assert_committed(commit(project, env, "new rates"), project, before)


def test_path_outside_the_scope_is_a_scope_escape(project: GitRepo, env: dict[str, str]) -> None:
    before = project.sha()
    edit_code(project)
    project.write("docs/pricing notes.md", "why\n")
    project.add()
    outcome = commit(project, env, "fix tax, add notes")
    assert_blocked(outcome, project, before, "pre-commit", 3)
    assert "agentgate hook pre-commit: scope-escape (exit 3)" in outcome.out
    [line] = outcome.lines("scope-escape:")
    assert line.startswith("scope-escape: scope-escape docs/pricing notes.md: outside the declared")


def test_scope_widened_in_the_same_commit_does_not_cover_its_code(
    project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    widen_scope(project)  # adds docs/
    project.write("docs/notes.md", "why\n")
    project.add()
    outcome = commit(project, env, "widen scope for docs")
    assert_blocked(outcome, project, before, "pre-commit", 4)
    assert outcome.lines("scope-escape: scope-escape docs/notes.md")
    assert outcome.lines("blocked: trust-mixed")


# --- commit time: awkward paths and repository states ----------------------------------------


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
    assert_blocked(outcome, project, before, "pre-commit", 4)
    assert f"changed together with {name};" in outcome.lines("blocked: trust-mixed")[0]


def test_non_utf8_file_name(project: GitRepo, env: dict[str, str]) -> None:
    raw = b"app/caf\xe9.py"
    try:
        project.write(raw, "X = 1\n")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses non-UTF-8 file names")
    project.add()
    before = project.sha()
    assert_committed(commit(project, env, "add cafe"), project, before)
    before = project.sha()
    project.write(raw, "X = 2\n")
    widen_scope(project)
    outcome = commit(project, env, "cafe and scope")
    assert_blocked(outcome, project, before, "pre-commit", 4)
    assert "changed together with app/caf\\xe9.py;" in outcome.lines("blocked: trust-mixed")[0]


def test_first_commit_of_a_new_repository(
    tmp_path: Path, hooks_dir: Path, env: dict[str, str]
) -> None:
    """The first commit has no boundary before it to widen: a human may create trust files
    with the code (rule a does not apply), an agent may not (rule b still does)."""
    repo = hooked(tmp_path / "new", hooks_dir)
    repo.write(SCOPE, "app\n")
    repo.write(CODE, "RATE = 0.2\n")
    repo.add()
    outcome = commit(repo, {**env, "CLAUDECODE": "1"}, "initial, by an agent")
    assert outcome.code != 0 and outcome.hooks == {"pre-commit": [4]}, outcome.out
    assert repo.git("rev-list", "--all").strip() == ""  # still no commits
    assert outcome.lines(f"blocked: trust-agent {SCOPE}")
    assert_committed(commit(repo, env, "initial"), repo, None)
    assert repo.git("rev-list", "--count", "HEAD").strip() == "1"


def test_detached_head(project: GitRepo, env: dict[str, str]) -> None:
    project.git("checkout", "-q", "--detach")
    before = project.sha()
    stage_mixed(project)
    assert_blocked(commit(project, env, "mixed"), project, before, "pre-commit", 4)
    project.git("reset", "-q", "--", SCOPE)
    project.git("checkout", "-q", "--", SCOPE)
    assert_committed(commit(project, env, "code"), project, before)
    assert project.git("symbolic-ref", "-q", "HEAD", check=False) == ""


def test_hook_fails_closed_when_agentgate_is_missing(project: GitRepo, env: dict[str, str]) -> None:
    git_dir = str(Path(shutil.which("git") or "git").parent)
    bare_path = os.pathsep.join([git_dir, "/bin"]) if git_dir != "/bin" else git_dir
    if shutil.which("agentgate", path=bare_path):
        pytest.skip("agentgate is installed beside git here")
    before = project.sha()
    edit_code(project)
    outcome = commit(project, {**env, "PATH": bare_path}, "fix tax")
    assert outcome.code != 0 and outcome.hooks == {"pre-commit": [64]}, outcome.out
    assert "agentgate: not installed or not on PATH" in outcome.out
    assert project.sha() == before


_PROBE = """
import sys
from agentgate.cli.app import main
sys.argv = ["agentgate", "hook", "pre-commit"]
code = main()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {"typer", "click", "rich", "git"})
print("PROBE", code, heavy)
"""


def test_commit_hook_path_imports_no_typer_rich_or_gitpython(
    project: GitRepo, env: dict[str, str]
) -> None:
    """The commit-time path must stay light: ``import typer`` and ``import git`` alone cost
    more than the rest of the hook (figures in bench/commit_hook.md)."""
    stage_mixed(project)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=project.path, env=env, capture_output=True, text=True
    )
    assert proc.stdout.splitlines()[-1] == "PROBE 4 []", proc.stdout + proc.stderr
