"""Commit time through the plain ``hooks/`` scripts only: scenarios the pre-commit driver
does not have (its own virtualenv makes "agentgate not on PATH" and the import probe moot).

The hooks are copies of this checkout's ``hooks/`` in a folder outside the repository, used
through ``git config core.hooksPath``, exactly as the README tells a user to.
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
    FIXTURE,
    MANIFEST,
    TRUST_MOVES,
    commit,
    edit_code,
    edit_fixture,
    manifest_text,
    run_git,
    stage_mixed,
    widen_scope,
)
from tests.support.git_repo import GitRepo
from tests.support.hook_drivers import Driver, assert_blocked, assert_committed

pytestmark = pytest.mark.e2e
DRIVERS = ("hooks",)


def test_agent_env_code_only_commit_is_allowed(project: GitRepo, env: dict[str, str]) -> None:
    """Identification only tightens the trust rules: an agent may still commit code."""
    before = project.sha()
    edit_code(project)
    assert_committed(commit(project, env, "fix tax", CLAUDECODE="1"), project, before)


def test_agent_trailer_passed_with_git_commit_trailer_option_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    widen_scope(project)
    outcome = commit(project, env, "widen scope", "--trailer", CLAUDE_TRAILER)
    # git writes --trailer into the message file before prepare-commit-msg runs.
    assert_blocked(driver, outcome, project, before, "prepare-commit-msg", 4)


def test_agent_trailer_typed_in_the_editor_is_found_by_commit_msg(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    """A message typed in the editor exists only after prepare-commit-msg; git hands
    commit-msg the message *before* stripping its ``# Please enter the commit message`` block,
    which the editor here leaves below what it typed."""
    editor = project.path.parent / "editor.sh"
    editor.write_text(
        '#!/bin/sh\n{ printf "widen scope\\n\\n%s\\n" "$TRAILER"; cat "$1"; } > "$1.new"\n'
        'mv "$1.new" "$1"\n', encoding="utf-8")
    editor.chmod(0o755)
    before = project.sha()
    widen_scope(project)
    outcome = run_git(project, "commit", "-q", env={
        **env, "GIT_EDITOR": f"'{editor}'", "TRAILER": CLAUDE_TRAILER})
    assert_blocked(driver, outcome, project, before, "commit-msg", 4)
    assert outcome.hooks["prepare-commit-msg"] == [0]  # nothing typed yet


def test_agent_renaming_a_trust_file_alone_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    TRUST_MOVES["renamed"](project)
    outcome = commit(project, env, "move scope", CLAUDECODE="1")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    assert "this file was renamed" in outcome.lines("blocked: trust-agent")[0]


def test_fixture_with_its_manifest_entry_is_allowed(project: GitRepo, env: dict[str, str]) -> None:
    """The one exception to rule (a): the manifest with exactly the fixtures it lists."""
    before = project.sha()
    edit_fixture(project)
    project.write(MANIFEST, manifest_text({FIXTURE: (project.path / FIXTURE).read_bytes()}))
    project.add()
    assert_committed(commit(project, env, "new rates"), project, before)


def test_scope_widened_in_the_same_commit_does_not_cover_its_code(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    before = project.sha()
    widen_scope(project)  # adds docs/
    project.write("docs/notes.md", "why\n")
    project.add()
    outcome = commit(project, {**env, "CLAUDECODE": "1"}, "widen scope for docs")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    assert outcome.lines("scope-escape docs/notes.md:")
    assert outcome.lines("blocked: trust-")


def test_non_utf8_file_name(driver: Driver, project: GitRepo, env: dict[str, str]) -> None:
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
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    assert "changed together with app/caf\\xe9.py;" in outcome.lines("blocked: trust-mixed")[0]


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
