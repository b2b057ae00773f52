"""The interpreter never comes from the branch (issue 11): each attack next to its twin.

A committed ``.venv/bin/python`` that exits 0 would make every run green; the developer's
own untracked, git-ignored ``.venv`` is the ordinary case and must keep working.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from agentgate.core import config
from agentgate.core.errors import ConfigError
from agentgate.git import gitio
from agentgate.run import interp
from tests.support.git_repo import GitRepo

FAKE = "#!/bin/sh\nexit 0\n"  # the attack: an interpreter that says every test passed
REAL = f'#!/bin/sh\nexec "{sys.executable}" "$@"\n'  # the developer's: the real one


def _python(repo: GitRepo, rel: str, text: str) -> Path:
    path = repo.write(rel, text)
    path.chmod(0o755)
    return path


def _start(repo: GitRepo, files: dict[str, str] | None = None) -> str:
    repo.files({"app.py": "X = 1\n", ".gitignore": ".venv/\n", **(files or {})})
    return repo.commit("initial")


def test_a_committed_venv_python_is_refused(repo: GitRepo) -> None:
    _start(repo)
    _python(repo, ".venv/bin/python", FAKE)
    repo.git("add", "-f", ".venv/bin/python")
    repo.commit("bring my own interpreter")
    with pytest.raises(ConfigError, match=r"\.venv/bin/python is tracked.*\[tool\.agentgate\] "
                                          r"python"):
        interp.project_python(repo.path, config.load(repo.path))


def test_an_ignored_untracked_venv_is_the_interpreter(repo: GitRepo) -> None:
    _start(repo)
    made = _python(repo, ".venv/bin/python", REAL)
    assert gitio.is_clean(repo.path)  # ignored: the tree is still clean
    assert interp.project_python(repo.path, config.load(repo.path)) == str(made)


def test_a_committed_link_to_an_outside_program_is_refused(repo: GitRepo) -> None:
    """The link resolves outside the repository; the link itself is the branch's file."""
    _start(repo)
    (repo.path / ".venv/bin").mkdir(parents=True)
    (repo.path / ".venv/bin/python").symlink_to("/bin/true")
    repo.git("add", "-f", ".venv/bin/python")
    repo.commit("link")
    with pytest.raises(ConfigError, match="tracked"):
        interp.project_python(repo.path, config.load(repo.path))


def test_an_untracked_link_to_an_outside_interpreter_is_fine(repo: GitRepo) -> None:
    _start(repo)
    (repo.path / ".venv/bin").mkdir(parents=True)
    (repo.path / ".venv/bin/python").symlink_to(sys.executable)
    assert interp.project_python(repo.path, config.load(repo.path)).endswith(".venv/bin/python")


def test_a_committed_linked_folder_on_the_way_is_refused(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    _python(GitRepo(outside), "bin/python", REAL)
    _start(repo, {".gitignore": ""})
    (repo.path / ".venv").symlink_to(outside)
    repo.commit("link the env folder")  # ``.venv`` itself is the tracked entry
    with pytest.raises(ConfigError, match=r"\(\.venv\)"):
        interp.project_python(repo.path, config.load(repo.path))


def test_a_configured_python_tracked_in_the_repo_is_refused(repo: GitRepo) -> None:
    _start(repo, {"pyproject.toml": '[tool.agentgate]\npython = "tools/python"\n'})
    _python(repo, "tools/python", FAKE)
    repo.commit("a tool")
    with pytest.raises(ConfigError, match=r"tools/python is tracked.*\[tool\.agentgate\] python"):
        interp.project_python(repo.path, config.load(repo.path))


def test_a_configured_python_outside_the_repo_is_used(repo: GitRepo) -> None:
    _start(repo, {"pyproject.toml": f'[tool.agentgate]\npython = "{sys.executable}"\n'})
    assert interp.project_python(repo.path, config.load(repo.path)) == sys.executable


def test_a_python_the_range_added_then_untracked_is_refused(repo: GitRepo) -> None:
    """Committed in the range, then ``git rm --cached`` and ignored: untracked at HEAD, but
    the file on disk is still the one the branch wrote."""
    base = _start(repo, {".gitignore": ""})
    _python(repo, ".venv/bin/python", FAKE)
    repo.commit("add")
    repo.git("rm", "-q", "--cached", ".venv/bin/python")
    repo.write(".gitignore", ".venv/\n")
    head = repo.commit("untrack again")
    cfg = config.load(repo.path)
    assert interp.project_python(repo.path, cfg)  # HEAD and the index alone cannot tell
    with pytest.raises(ConfigError, match="changed by the range"):
        interp.project_python(repo.path, cfg, base=base, head=head)


def test_a_python_tracked_at_the_range_head_only_is_refused(repo: GitRepo) -> None:
    """``check --head`` another commit: the work tree is elsewhere, the file is the head's."""
    base = _start(repo)
    _python(repo, ".venv/bin/python", FAKE)
    repo.git("add", "-f", ".venv/bin/python")
    head = repo.commit("add")
    repo.git("rm", "-q", "--cached", ".venv/bin/python")
    repo.commit("drop again")
    with pytest.raises(ConfigError, match="tracked"):
        interp.project_python(repo.path, config.load(repo.path), base=base, head=head)


def test_an_interpreter_in_the_git_dir_is_refused(repo: GitRepo) -> None:
    """The trees under test (agentgate's worktrees) live under the git dir."""
    _start(repo)
    inside = _python(repo, ".git/agentgate/worktrees/x/.venv/bin/python", REAL)
    with pytest.raises(ConfigError, match="git dir"):
        interp.refuse_branch_python(repo.path, os.fspath(inside))
