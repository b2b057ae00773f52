from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentgate.core.errors import GitError
from agentgate.git import gitio
from tests.support.git_repo import GitRepo, run_agentgate

ODD = "dir with space/naïve ünïcode.py"
RAW = b"bytes\xff\xfename.py"  # not valid UTF-8


def _by_status(changes: list) -> dict[str, list]:
    out: dict[str, list] = {}
    for change in changes:
        out.setdefault(change.status, []).append(change)
    return out


def test_range_reports_every_kind_of_change(repo: GitRepo) -> None:
    repo.files(
        {
            "keep.py": "x = 1\n",
            "gone.py": "y = 2\n",
            "old name.py": "".join(f"line {i}\n" for i in range(30)),
        }
    )
    base = repo.commit("base")
    repo.write("keep.py", "x = 2\n")
    repo.write("added.py", "z = 3\n")
    repo.rm("gone.py")
    repo.git("mv", "old name.py", "new name.py")
    repo.write(ODD, "odd = True\n")
    head = repo.commit("head")
    by = _by_status(gitio.range_changes(repo.path, base, head))
    assert [c.path for c in by["M"]] == ["keep.py"]
    assert sorted(c.path for c in by["A"]) == ["added.py", ODD]
    assert [c.path for c in by["D"]] == ["gone.py"]
    renamed = by["R"][0]
    assert (renamed.old_path, renamed.path) == ("old name.py", "new name.py")
    assert renamed.paths == ("old name.py", "new name.py")
    assert by["D"][0].new_blob is None and by["D"][0].old_blob


def test_copies_are_reported_with_both_paths(repo: GitRepo) -> None:
    body = "".join(f"value_{i} = {i}\n" for i in range(40))
    repo.write("orig.py", body)
    base = repo.commit("base")
    repo.write("orig.py", body + "extra = 1\n")
    repo.write("copy.py", body)
    head = repo.commit("copy")
    out = gitio.parse_raw(
        gitio.run(repo.path, "diff", "--raw", "-z", "-C", "-C", "--no-abbrev", base, head)
    )
    copy = next(c for c in out if c.status == "C")
    assert (copy.old_path, copy.path) == ("orig.py", "copy.py")


def test_non_utf8_path_round_trips(repo: GitRepo) -> None:
    repo.write("a.py", "")
    base = repo.commit("base")
    (repo.path / os.fsdecode(RAW)).write_text("raw = 1\n")
    head = repo.commit("raw")
    [change] = gitio.range_changes(repo.path, base, head)
    assert os.fsencode(change.path) == RAW
    assert gitio.read_at(repo.path, head, change.path) == b"raw = 1\n"


def test_staged_changes_in_repo_without_commits(repo: GitRepo) -> None:
    repo.write("first.py", "a = 1\n")
    repo.add()
    assert not gitio.has_commits(repo.path)
    [change] = gitio.staged_changes(repo.path, gitio.head_sha(repo.path))
    assert (change.status, change.path) == ("A", "first.py")


def test_staged_changes_are_the_index_not_the_disk(app_repo: GitRepo) -> None:
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n")
    app_repo.add("app/pricing/tax.py")
    app_repo.write("README.md", "unstaged edit\n")
    staged = gitio.staged_changes(app_repo.path, gitio.head_sha(app_repo.path))
    assert [c.path for c in staged] == ["app/pricing/tax.py"]
    assert gitio.read_at(app_repo.path, ":", "app/pricing/tax.py") == b"RATE = 0.3\n"


def test_detached_head(app_repo: GitRepo) -> None:
    sha = app_repo.sha()
    app_repo.git("checkout", "-q", "--detach", sha)
    app_repo.write("app/pricing/tax.py", "RATE = 0.1\n")
    head = app_repo.commit("detached work")
    assert gitio.head_sha(app_repo.path) == head
    assert [c.path for c in gitio.range_changes(app_repo.path, sha, "HEAD")] == [
        "app/pricing/tax.py"
    ]
    assert [c.sha for c in gitio.commits_in_range(app_repo.path, sha, "HEAD")] == [head]


def test_commits_in_range_oldest_first_with_trailers(app_repo: GitRepo) -> None:
    base = app_repo.sha()
    app_repo.write("a.py", "1\n")
    first = app_repo.commit("one\n\nCo-authored-by: Bot <noreply@anthropic.com>")
    app_repo.write("a.py", "2\n")
    second = app_repo.commit("two", author="Someone (aider)", email="s@example.com")
    commits = gitio.commits_in_range(app_repo.path, base, second)
    assert [c.sha for c in commits] == [first, second]
    assert commits[0].trailers == (("Co-authored-by", "Bot <noreply@anthropic.com>"),)
    assert commits[1].author == "Someone (aider) <s@example.com>"


def test_missing_base_says_what_to_do(app_repo: GitRepo) -> None:
    with pytest.raises(GitError, match="does not exist here; fetch it"):
        gitio.resolve(app_repo.path, "origin/nowhere", what="base revision")


def test_option_like_revision_is_refused(app_repo: GitRepo) -> None:
    with pytest.raises(GitError, match="looks like an option"):
        gitio.resolve(app_repo.path, "--all")


def test_shallow_clone_missing_base(app_repo: GitRepo, tmp_path: Path) -> None:
    base = app_repo.sha()
    for i in range(3):
        app_repo.write("a.py", f"{i}\n")
        app_repo.commit(f"c{i}")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{app_repo.path}", str(clone)], check=True
    )
    assert gitio.is_shallow(clone)
    with pytest.raises(GitError, match="shallow clone; fetch full history"):
        gitio.resolve(clone, base, what="base revision")


def test_merge_counts_only_what_differs_from_every_parent(app_repo: GitRepo) -> None:
    app_repo.git("checkout", "-q", "-b", "feature")
    app_repo.write("feature.py", "f = 1\n")
    app_repo.commit("feature work")
    app_repo.git("checkout", "-q", "main")
    app_repo.write("mainline.py", "m = 1\n")
    app_repo.commit("main work")
    app_repo.git("checkout", "-q", "feature")
    app_repo.git("merge", "-q", "--no-edit", "main")
    [merge] = [
        c for c in gitio.commits_in_range(app_repo.path, "main", "HEAD") if len(c.parents) > 1
    ]
    assert gitio.commit_changes(app_repo.path, merge) == []
    # An evil merge: an edit no parent has shows up.
    app_repo.write("evil.py", "e = 1\n")
    app_repo.add()
    app_repo.git("commit", "-q", "--amend", "--no-edit")
    [merge] = [
        c for c in gitio.commits_in_range(app_repo.path, "main", "HEAD") if len(c.parents) > 1
    ]
    assert [c.path for c in gitio.commit_changes(app_repo.path, merge)] == ["evil.py"]


def test_root_commit_changes(repo: GitRepo) -> None:
    repo.write("a.py", "")
    repo.commit("root")
    [root] = gitio.commits_in_range(repo.path, None, "HEAD")
    assert [c.path for c in gitio.commit_changes(repo.path, root)] == ["a.py"]


def test_blobs_and_trees(app_repo: GitRepo) -> None:
    tree = gitio.ls_tree(app_repo.path, "HEAD")
    assert "app/pricing/tax.py" in tree
    blob = tree["app/pricing/tax.py"]
    contents = gitio.cat_blobs(app_repo.path, [blob, "0" * 40, blob])
    assert contents == {blob: gitio.read_at(app_repo.path, "HEAD", "app/pricing/tax.py")}
    assert gitio.read_at(app_repo.path, "HEAD", "nope.py") is None


def test_state_dir_is_shared_by_worktrees(app_repo: GitRepo, tmp_path: Path) -> None:
    other = tmp_path / "wt"
    gitio.worktree_add(app_repo.path, other, "HEAD")
    try:
        assert gitio.state_dir(other) == gitio.state_dir(app_repo.path)
        assert gitio.state_dir(app_repo.path) == (app_repo.path / ".git" / "agentgate").resolve()
    finally:
        gitio.worktree_remove(app_repo.path, other)
    assert not other.exists()


def test_outside_a_repository_is_one_line_exit_64(tmp_path: Path) -> None:
    proc = run_agentgate("fixtures", "verify", cwd=tmp_path)
    assert proc.returncode == 64
    assert proc.stderr.strip().endswith("is not inside a git work tree; run agentgate in a repo")
    assert "Traceback" not in proc.stderr


def test_zero_ids_for_both_hash_functions() -> None:
    assert gitio.is_zero_id("0" * 40) and gitio.is_zero_id("0" * 64)
    assert not gitio.is_zero_id("0" * 39 + "1")


def test_read_many_at_one_revision(app_repo: GitRepo) -> None:
    texts = gitio.read_many_at(app_repo.path, "HEAD", ["README.md", "nope.ini", "app/__init__.py"])
    assert texts == {"README.md": "demo app\n", "nope.ini": None, "app/__init__.py": ""}


def test_ignored_untracked_lists_an_ignored_folder_once(app_repo: GitRepo) -> None:
    app_repo.write(".gitignore", ".venv/\n*.log\n")
    app_repo.commit("ignore")
    for rel in (".venv/lib/a.py", ".venv/lib/b.py", "run.log", "notes.txt"):
        app_repo.write(rel, "x\n")
    (app_repo.path / ".git" / "info").mkdir(exist_ok=True)
    (app_repo.path / ".git" / "info" / "exclude").write_text("app/local.py\n")
    app_repo.write("app/local.py", "X = 1\n")
    # Not descended into .venv/; the untracked, not ignored notes.txt is is_clean's business.
    assert gitio.ignored_untracked(app_repo.path) == [".venv/", "app/local.py", "run.log"]
