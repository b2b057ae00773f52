"""agentgate.worktrees: real ``git worktree``s under the git dir, reused, never leaked."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentgate.core.errors import GitError
from agentgate.git import gitio, worktrees
from tests.support.git_repo import GitRepo


def _registered(repo: GitRepo) -> list[Path]:
    return [p.resolve() for p in gitio.worktrees(repo.path)]


def _leftovers(repo: GitRepo) -> list[str]:
    folder = worktrees.worktrees_dir(repo.path)
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.fixture
def two_commits(app_repo: GitRepo) -> tuple[GitRepo, str, str]:
    first = app_repo.sha()
    app_repo.write("app/pricing/tax.py", "RATE = 0.25\n\ndef tax(x):\n    return x * RATE\n")
    second = app_repo.commit("raise the rate")
    return app_repo, first, second


def test_worktree_is_detached_under_the_git_dir_and_reused_clean(
    two_commits: tuple[GitRepo, str, str],
) -> None:
    repo, first, _ = two_commits
    with worktrees.using_worktree(repo.path, first) as tree:
        # Named as the checkout is, in a folder named after the revision.
        assert tree == gitio.state_dir(repo.path) / "worktrees" / first / repo.path.name
        assert "RATE = 0.2\n" in (tree / "app/pricing/tax.py").read_text()
        assert tree.resolve() in _registered(repo)
        (tree / "debris.txt").write_text("left by a test")
        (tree / "app/pricing/tax.py").write_text("broken by a test")
        (tree / "app/__pycache__").mkdir()
        (tree / "app/__pycache__/keep.pyc").write_bytes(b"")
    assert worktrees.cached(repo.path) == [first]
    with worktrees.using_worktree(repo.path, first) as again:
        assert again == tree
        assert not (again / "debris.txt").exists()
        assert "RATE = 0.2\n" in (again / "app/pricing/tax.py").read_text()
        assert (again / "app/__pycache__/keep.pyc").exists()  # bytecode survives the clean
    assert repo.git("status", "--porcelain") == ""  # the main checkout is untouched


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_an_exception_in_the_block_removes_the_worktree(
    two_commits: tuple[GitRepo, str, str], exc: type[BaseException]
) -> None:
    repo, first, _ = two_commits
    with pytest.raises(exc), worktrees.using_worktree(repo.path, first):
        raise exc()
    assert _registered(repo) == [repo.path.resolve()]
    assert _leftovers(repo) == []


def test_a_busy_worktree_gives_a_private_one_that_is_removed(
    two_commits: tuple[GitRepo, str, str],
) -> None:
    repo, first, _ = two_commits
    with worktrees.using_worktree(repo.path, first) as held:
        with worktrees.using_worktree(repo.path, first) as private:
            assert private != held
            assert "-tmp-" in private.parent.name and private.name == repo.path.name
            assert (private / "app/pricing/tax.py").exists()
        assert private.resolve() not in _registered(repo)
        assert not private.exists()
        with pytest.raises(GitError, match="in use"):
            worktrees.ensure_worktree(repo.path, first)
    assert worktrees.ensure_worktree(repo.path, first) == held


def test_a_half_made_worktree_is_rebuilt(two_commits: tuple[GitRepo, str, str]) -> None:
    repo, first, _ = two_commits
    tree = worktrees.path_for(repo.path, first)
    tree.mkdir(parents=True)
    (tree / "junk").write_text("an interrupted checkout")  # no .ready marker
    path = worktrees.ensure_worktree(repo.path, first)
    assert not (path / "junk").exists()
    assert (path / "app/pricing/tax.py").exists()
    assert worktrees.remove_worktree(repo.path, first)
    assert _leftovers(repo) == []
    assert _registered(repo) == [repo.path.resolve()]


def test_a_killed_owner_leaves_nothing_the_next_run_keeps(
    two_commits: tuple[GitRepo, str, str],
) -> None:
    repo, first, second = two_commits
    script = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from agentgate.git import scratch, worktrees
        root = Path({os.fspath(repo.path)!r})
        with worktrees.using_worktree(root, {second!r}):
            with worktrees.temporary_worktree(root, {first!r}):
                with scratch.scratch_dir("attribute", root) as folder:
                    (folder / "run.xml").write_text("half")
                    os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert proc.returncode == -9
    assert any("-tmp-" in name for name in _leftovers(repo))
    removed = worktrees.sweep(repo.path)
    assert len(removed) == 2  # the private worktree and the scratch folder
    assert all("-tmp-" not in name for name in _leftovers(repo))
    # The cached tree the killed run was using is handed out again, reset.
    with worktrees.using_worktree(repo.path, second) as tree:
        assert "RATE = 0.25" in (tree / "app/pricing/tax.py").read_text()
    assert {p.name for p in _registered(repo)} == {repo.path.name}
    assert {p.parent.name for p in _registered(repo)} == {repo.path.parent.name, second}


def test_a_revision_that_cannot_be_checked_out_raises_and_leaves_nothing(repo: GitRepo) -> None:
    repo.files({".gitattributes": "data.bin filter=boom\n", "data.bin": "x\n", "ok.txt": "y\n"})
    repo.git("config", "filter.boom.clean", "cat")
    sha = repo.commit("with a filtered file")
    repo.git("config", "filter.boom.smudge", "false")
    repo.git("config", "filter.boom.required", "true")
    with pytest.raises(GitError, match="smudge filter boom failed"), \
            worktrees.using_worktree(repo.path, sha):
        pass
    assert _registered(repo) == [repo.path.resolve()]
    assert _leftovers(repo) == []


def test_prune_keeps_the_most_recently_used_and_skips_busy_ones(app_repo: GitRepo) -> None:
    shas = [app_repo.sha()]
    for n in range(2):
        app_repo.write("README.md", f"version {n}\n")
        shas.append(app_repo.commit(f"v{n}"))
    for sha in shas:
        worktrees.ensure_worktree(app_repo.path, sha)
    os.utime(worktrees.worktrees_dir(app_repo.path) / f"{shas[1]}.ready", (1, 1))  # oldest
    with worktrees.using_worktree(app_repo.path, shas[0]):  # used again: now the newest
        pass
    assert worktrees.cached(app_repo.path)[0] == shas[0]
    assert worktrees.prune(app_repo.path, keep=2) == [shas[1]]
    assert sorted(worktrees.cached(app_repo.path)) == sorted([shas[0], shas[2]])
    assert {p.parent.name for p in _registered(app_repo)} == {
        app_repo.path.parent.name, shas[0], shas[2]}
    with worktrees.using_worktree(app_repo.path, shas[2]):
        assert worktrees.prune(app_repo.path, keep=0) == [shas[0]]  # the busy one stays
    assert worktrees.cached(app_repo.path) == [shas[2]]


# --- clean_checkout: which ignored files could change the run (issue 11, item 7) ------------

SRC_LAYOUT = worktrees.Layout(sources=("src",), tests=("tests",))
FLAT = worktrees.Layout(sources=(".",), tests=("tests",))


@pytest.mark.parametrize(
    "path",
    [
        "tests/conftest.py",  # pytest loads it for every test below
        "tests/unit/data/expected.json",  # a test may read any file in a test root
        "src/app/local_settings.py",  # a tracked module may import it
        "src/app/_speedups.so",
        "src/app/_speedups.pyd",
        "src/app/legacy.pyc",  # a sourceless pyc outside __pycache__ is importable
        "src/local.pth",
        "src/sitecustomize.py",
        "pytest.ini",  # pytest reads configuration upward from the tests
        "conftest.py",
        "tox.ini",
        ".pytest.toml",
        "local_settings.py",  # the run's working folder is on sys.path
    ],
)
def test_files_that_change_a_run_count(path: str) -> None:
    assert worktrees.run_changing([path], SRC_LAYOUT) == [path]


@pytest.mark.parametrize(
    "path",
    [
        ".venv/lib/python3.11/site-packages/conftest.py",
        "src/app/__pycache__/tax.cpython-311.pyc",
        "src/app.egg-info/top_level.txt",
        "build/lib/app/tax.py",
        "src/build/lib/app/tax.py",
        "tests/.pytest_cache/v/cache/lastfailed",
        "tests/.hypothesis/examples/x",
        "node_modules/x/index.py",
        "src/app/notes.txt",  # data in a source root is not imported
        "docs/conf.py",  # outside every root
        "docs/pytest.ini",  # configuration in a folder that holds no root
        "run.log",
    ],
)
def test_tool_folders_and_files_outside_the_roots_do_not_count(path: str) -> None:
    assert worktrees.run_changing([path], SRC_LAYOUT) == []


def test_flat_layout_counts_code_anywhere_but_in_tool_folders() -> None:
    paths = ["app/local.py", ".venv/bin/activate_this.py", "venv/x.py", ".tox/py/x.py", "x.log"]
    assert worktrees.run_changing(paths, FLAT) == ["app/local.py"]


def test_the_whole_repository_counts_every_file_but_tool_folders() -> None:
    paths = ["notes.txt", "docs/x.md", "__pycache__/x.pyc", ".mypy_cache/x.json"]
    assert worktrees.run_changing(paths, worktrees.WHOLE_REPO) == ["docs/x.md", "notes.txt"]


def test_ignored_folders_are_walked_only_when_they_may_hold_what_counts(repo: GitRepo) -> None:
    repo.write(".gitignore", ".venv/\nsrc/app/gen/\ndocs/_build/\n")
    repo.write("src/app/__init__.py", "")
    repo.write("tests/test_x.py", "def test_x():\n    pass\n")
    repo.commit("initial")
    for rel in (".venv/lib/conftest.py", "src/app/gen/models.py", "src/app/gen/.venv/x.py",
                "docs/_build/conf.py"):
        repo.write(rel, "X = 1\n")
    assert worktrees.ignored_inputs(repo.path, SRC_LAYOUT) == ["src/app/gen/models.py"]


def test_clean_checkout_takes_the_checkout_only_when_no_ignored_input(app_repo: GitRepo) -> None:
    app_repo.write(".gitignore", "*.log\ntests/conftest.py\n")
    head = app_repo.commit("ignore")
    app_repo.write("run.log", "x\n")
    with worktrees.clean_checkout(app_repo.path, head, FLAT) as tree:
        assert tree == app_repo.path
    app_repo.write("tests/conftest.py", "")
    with worktrees.clean_checkout(app_repo.path, head, FLAT) as tree:
        assert tree != app_repo.path and not (tree / "tests" / "conftest.py").exists()
