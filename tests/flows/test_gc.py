"""``agentgate gc`` and the pruning after each run (issue 13, item 7): real repositories, real
``git worktree``s, the real CLI. What gc may remove is bounded by ``.git/agentgate`` and by the
locks of the runs in flight; each bound is played as an attack next to the legitimate case."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from agentgate.git import gitio, worktrees
from agentgate.git.scratch import lock_path, try_lock
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo, run_agentgate

OLD = time.time() - 30 * 86400  # a fixed age, well past the default cache_days (14)


def _config(repo: GitRepo, **keys: int) -> None:
    lines = "".join(f"{k} = {v}\n" for k, v in keys.items())
    repo.write("pyproject.toml", f"[tool.agentgate]\n{lines}")


def _revisions(repo: GitRepo, count: int) -> list[str]:
    shas = []
    for n in range(count):
        commit(repo, {"app/util.py": f"def shout(s):\n    return s.upper()  # {n}\n"})
        shas.append(repo.sha())
    return shas


def _cached(repo: GitRepo) -> set[str]:
    return set(worktrees.cached(repo.path))


def _gc(repo: GitRepo, *args: str) -> tuple[int, dict[str, Any]]:
    proc = run_agentgate("gc", *args, "--format", "json", cwd=repo.path)
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _registered(repo: GitRepo) -> list[Path]:
    return list(gitio.worktrees(repo.path))


def test_checks_on_several_revisions_keep_only_keep_worktrees(chain: GitRepo) -> None:
    """Issue 13 saw five worktrees pile up in an afternoon. Each check needs a worktree of its
    head (the checkout is dirty); after four checks, only ``keep_worktrees`` remain, the most
    recently used ones."""
    _config(chain, keep_worktrees=2)
    chain.commit("config")
    chain.git("tag", "-f", "base")
    heads = _revisions(chain, 4)
    chain.write("untracked.txt", "the checkout is dirty: every check needs a worktree\n")
    for sha in heads:
        proc = run_agentgate("check", "-v", "--base", "base", "--head", sha, cwd=chain.path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "temporary worktree of head" in proc.stdout
    assert _cached(chain) == set(heads[-2:])
    assert len(_registered(chain)) == 3  # the checkout and the two kept


def test_gc_dry_run_lists_with_sizes_and_removes_nothing(chain: GitRepo) -> None:
    shas = _revisions(chain, 3)
    for sha in shas:
        worktrees.ensure_worktree(chain.path, sha)
    ready = worktrees.path_for(chain.path, shas[0]).with_name(shas[0] + ".ready")
    os.utime(ready, (OLD, OLD))  # the oldest: unused for 30 days
    code, data = _gc(chain, "--dry-run")
    assert code == 0 and data["dry_run"] is True
    assert [(r["kind"], r["name"], r["why"]) for r in data["would_remove"]] == [
        ("worktree", f"worktrees/{shas[0]}", "unused for 30 days")]
    assert data["would_remove"][0]["bytes"] > 0 and data["bytes"] > 0
    assert _cached(chain) == set(shas)
    text = run_agentgate("gc", "--dry-run", cwd=chain.path)
    lines = text.stdout.splitlines()
    assert lines[1].startswith("  would remove 1 item(s), ") and lines[1].endswith(
        " B, from .git/agentgate")
    assert lines[2].startswith(f"    worktree worktrees/{shas[0]} (") and lines[2].endswith(
        " B): unused for 30 days")
    code, data = _gc(chain)
    assert [r["name"] for r in data["removed"]] == [f"worktrees/{shas[0]}"]
    assert _cached(chain) == set(shas[1:])
    assert not worktrees.path_for(chain.path, shas[0]).exists()
    assert len(_registered(chain)) == 3  # git forgot the removed one too


def test_gc_never_removes_a_worktree_a_run_is_using(chain: GitRepo) -> None:
    """The attack: a run holds the lock of its cached tree (or of a tree still being made) and
    ``gc --all`` runs meanwhile. Both stay, listed as in use; once free, ``--all`` removes
    them and everything else agentgate kept."""
    used, making = _revisions(chain, 2)
    worktrees.ensure_worktree(chain.path, used)
    in_flight = worktrees.path_for(chain.path, making)
    held = [try_lock(lock_path(worktrees.path_for(chain.path, used))),
            try_lock(lock_path(in_flight))]
    in_flight.mkdir()  # a checkout under way: locked, no ready marker yet
    code, data = _gc(chain, "--all")
    assert code == 0
    assert sorted(r["name"] for r in data["in_use"]) == sorted(
        [f"worktrees/{used}", f"worktrees/{making}"])
    assert worktrees.path_for(chain.path, used).is_dir() and in_flight.is_dir()
    for lock in held:
        assert lock is not None
        lock.release()
    code, data = _gc(chain, "--all")
    assert data["in_use"] == [] and len(data["removed"]) >= 2
    assert not gitio.state_dir(chain.path).exists()
    assert _registered(chain) == [chain.path.resolve()]


def test_gc_removes_nothing_outside_the_state_dir(chain: GitRepo, tmp_path: Path) -> None:
    """The attack: links inside ``.git/agentgate`` to a file and a folder outside, and the
    user's own worktree outside it. ``gc --all`` removes the links, never what they name,
    and leaves the user's worktree registered and whole."""
    outside = tmp_path / "precious"
    (outside / "folder").mkdir(parents=True)
    (outside / "file.txt").write_text("keep me\n")
    (outside / "folder" / "inner.txt").write_text("keep me too\n")
    state = gitio.state_dir(chain.path)
    (state / "inventory").mkdir(parents=True)
    (state / "inventory" / "file-link.json").symlink_to(outside / "file.txt")
    (state / "graph").mkdir()
    (state / "graph" / "folder-link").symlink_to(outside / "folder")
    (state / "worktrees").mkdir()
    tree_link = state / "worktrees" / "x.tmp-abc"
    tree_link.symlink_to(outside / "folder")
    mine = tmp_path / "my-worktree"
    chain.git("worktree", "add", "-q", "--detach", str(mine), "HEAD")
    code, data = _gc(chain, "--all")
    assert code == 0
    assert {r["name"] for r in data["removed"]} >= {"inventory/file-link.json",
                                                   "graph/folder-link"}
    assert not tree_link.is_symlink()  # reported removed, and removed (review)
    assert (outside / "file.txt").read_text() == "keep me\n"
    assert (outside / "folder" / "inner.txt").is_file()
    assert mine.resolve() in _registered(chain) and (mine / "app/util.py").is_file()


def test_gc_refuses_a_state_dir_that_is_a_link(chain: GitRepo, tmp_path: Path) -> None:
    """The attack: ``.git/agentgate`` itself links to someone else's folder. gc refuses in one
    line (64) and the folder is untouched; the legitimate state dir is covered above."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "graph").mkdir(parents=True)
    (elsewhere / "graph" / "graph.bin").write_text("not agentgate's\n")
    gitio.state_dir(chain.path).symlink_to(elsewhere, target_is_directory=True)
    proc = run_agentgate("gc", "--all", cwd=chain.path)
    assert proc.returncode == 64 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("agentgate gc removes nothing through a link "
                                        "(remove the link yourself)")
    assert (elsewhere / "graph" / "graph.bin").is_file()


def test_gc_removes_old_caches_and_witnesses_beyond_keep(chain: GitRepo) -> None:
    """Graph caches and base inventories older than cache_days go, fresh ones stay; witness
    sets beyond keep_witnesses go, newest first kept."""
    _config(chain, keep_witnesses=2)
    chain.commit("config")
    recorded = run_agentgate("witness", "record", cwd=chain.path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    store = gitio.state_dir(chain.path) / "witness" / "witness.sqlite3"
    _copy_witness(store, chain.sha(), ["a" * 40, "b" * 40, "c" * 40])
    run_agentgate("plan", "--base", "base", cwd=chain.path)  # builds the graph's cache
    graph = sorted((gitio.state_dir(chain.path) / "graph").iterdir())
    assert graph, "the recording built the import graph's cache"
    os.utime(graph[0], (OLD, OLD))
    code, data = _gc(chain)
    assert code == 0
    names = [r["name"] for r in data["removed"]]
    assert f"graph/{graph[0].name}" in names
    assert all(p.exists() for p in graph[1:]) and not graph[0].exists()
    assert sorted(n for n in names if "/" not in n) == ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]
    assert _witness_shas(store) == {chain.sha(), "c" * 40}


def _copy_witness(store: Path, sha: str, others: list[str]) -> None:
    """More recorded revisions, older than the real one, oldest first."""
    with sqlite3.connect(store) as con:
        row = con.execute("SELECT * FROM witness WHERE sha=?", (sha,)).fetchone()
        for n, other in enumerate(others):
            con.execute("INSERT INTO witness VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (other, row[1] - 100 + n, row[2] - 100 + n, *row[3:]))
    con.close()


def _witness_shas(store: Path) -> set[str]:
    with sqlite3.connect(store) as con:
        found = {r[0] for r in con.execute("SELECT sha FROM witness")}
    con.close()
    return found


def test_witness_record_keeps_only_keep_witnesses(chain: GitRepo) -> None:
    """Pruning after each recording: with keep_witnesses = 1, recording a second revision
    leaves only the newest witness."""
    _config(chain, keep_witnesses=1)
    first = chain.commit("config")
    assert run_agentgate("witness", "record", cwd=chain.path).returncode == 0
    (second,) = _revisions(chain, 1)
    assert run_agentgate("witness", "record", cwd=chain.path).returncode == 0
    store = gitio.state_dir(chain.path) / "witness" / "witness.sqlite3"
    assert _witness_shas(store) == {second} and first != second
