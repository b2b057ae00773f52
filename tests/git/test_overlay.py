"""Laying the base's files over a worktree of head, on a real repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentgate.core.errors import AgentgateError
from agentgate.git import gitio, overlay
from tests.support.git_repo import GitRepo


@pytest.fixture
def moved(repo: GitRepo, tmp_path: Path) -> tuple[GitRepo, Path]:
    repo.files({"tests/test_a.py": "def test_a():\n    assert 1\n",
                "tests/conftest.py": "BASE = 1\n", "run.sh": "#!/bin/sh\n"})
    os.chmod(repo.path / "run.sh", 0o755)
    repo.commit("base")
    repo.git("tag", "base")
    repo.files({"tests/test_a.py": "def test_a():\n    assert 2\n",
                "tests/sub/conftest.py": "HEAD = 1\n"})
    repo.rm("tests/conftest.py")
    repo.commit("head")
    tree = tmp_path / "tree"
    gitio.worktree_add(repo.path, tree, "HEAD")
    return repo, tree


def test_base_files_are_laid_over_head(moved: tuple[GitRepo, Path]) -> None:
    repo, tree = moved
    laid = overlay.lay_over(repo.path, "base", tree, [
        "tests/test_a.py", "tests/conftest.py", "tests/sub/conftest.py", "run.sh"])
    assert laid.written == ("run.sh", "tests/conftest.py", "tests/test_a.py")
    assert laid.removed == ("tests/sub/conftest.py",)
    assert (tree / "tests/test_a.py").read_text() == "def test_a():\n    assert 1\n"
    assert (tree / "tests/conftest.py").read_text() == "BASE = 1\n"
    assert not (tree / "tests/sub/conftest.py").exists()
    assert os.access(tree / "run.sh", os.X_OK)


def test_paths_not_named_stay_heads(moved: tuple[GitRepo, Path]) -> None:
    repo, tree = moved
    overlay.lay_over(repo.path, "base", tree, ["tests/conftest.py"])
    assert (tree / "tests/test_a.py").read_text() == "def test_a():\n    assert 2\n"
    assert (tree / "tests/sub/conftest.py").exists()


def test_a_path_outside_the_tree_is_refused(moved: tuple[GitRepo, Path]) -> None:
    repo, tree = moved
    with pytest.raises(AgentgateError, match="outside"):
        overlay.lay_over(repo.path, "base", tree, ["../escape.py"])
