"""Sharded witness recording (issue 13 item 3), end to end: the CI matrix played by running
``witness record --shard I/N --out FILE`` as separate processes, then ``witness merge``. The
merged witness must select exactly as one full recording does; shards that do not make one
whole (another revision, another N, one missing or given twice, another ambient
environment) are refused with one line, exit 64."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgate.witness import depgraph, shards
from agentgate.witness.store import Store, default_path
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import patch as _patch
from tests.witness.recorded import plan as _plan
from tests.witness.recorded import recorded_repo
from tests.witness.test_select import FILES

N = 3
PATCHES = {
    "lazy": {"app/lazy.py": "def compute():\n    return 41 + 1\n"},
    "other": {"app/core.py": FILES["app/core.py"].replace("return 2", "return 1 + 1")},
    "data": {"tests/fixtures/x.json": '{"v": 1, "w": 2}\n'},
    "fixture": {"tests/sub/conftest.py": FILES["tests/sub/conftest.py"].replace("5", "2 + 3")},
}


def _shard(repo: GitRepo, index: int, out: Path, *, of: int = N, rev: str | None = None,
           env: dict[str, str] | None = None) -> None:
    done = run_agentgate("witness", "record", "--shard", f"{index}/{of}", "--out", str(out),
                         *(("--rev", rev) if rev else ()), cwd=repo.path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[GitRepo, str, list[Path], depgraph.Witness]]:
    """The full recording at W (kept aside), and the N shard files of W, each its own
    process, as the jobs of a CI matrix."""
    for repo, w in recorded_repo(tmp_path_factory, FILES):
        full = Store.for_repo(repo.path).load(w)
        assert full is not None
        out = tmp_path_factory.mktemp("shards")
        files = [out / f"shard{i}.json" for i in range(1, N + 1)]
        for i, file in enumerate(files, 1):
            _shard(repo, i, file)
        yield repo, w, files, full


def _merge(repo: GitRepo, *files: Path) -> tuple[int, str]:
    done = run_agentgate("witness", "merge", *map(str, files), "--format", "json", cwd=repo.path)
    return done.returncode, done.stdout + done.stderr


def test_each_shard_holds_its_files_tests_and_all_of_them_together(
    matrix: tuple[GitRepo, str, list[Path], depgraph.Witness],
) -> None:
    _repo, w, files, full = matrix
    parts = [shards.read(f) for f in files]
    assert [(p.index, p.count, p.witness.sha) for p in parts] == [(i, N, w) for i in (1, 2, 3)]
    owned = [set(p.witness.tests) for p in parts]
    assert set().union(*owned) == set(full.tests) and sum(map(len, owned)) == len(full.tests)
    assert owned[2] == set()  # no file hashes to shard 3 here: an empty share is valid
    for p in parts:
        assert all(shards.in_shard(n, p.index, N) for n in p.witness.tests)


def test_the_merged_witness_selects_as_the_full_recording(
    matrix: tuple[GitRepo, str, list[Path], depgraph.Witness],
) -> None:
    repo, w, files, full = matrix
    store = default_path(repo.path)
    kept = store.with_suffix(".full")
    shutil.copyfile(store, kept)
    try:
        before = {name: _decisions(repo, w, name, change) for name, change in PATCHES.items()}
        store.unlink()  # the merge alone must make the witness
        code, out = _merge(repo, *reversed(files))  # any order
        assert code == 0, out
        assert json.loads(out)["witness"] == w and json.loads(out)["tests"] == len(full.tests)
        merged = Store.for_repo(repo.path).load(w)
        assert merged is not None
        # Every shard watched module reads: so does the whole (else rebind is not used).
        assert depgraph.unwatched(merged) == depgraph.unwatched(full) is not None
        for nodeid, test in full.tests.items():
            assert depgraph.closure(merged, merged.tests[nodeid]) == depgraph.closure(full, test)
            assert merged.tests[nodeid].incomplete == test.incomplete
        after = {name: _decisions(repo, w, name, change) for name, change in PATCHES.items()}
        assert after == before
    finally:
        shutil.copyfile(kept, store)


def _decisions(repo: GitRepo, w: str, name: str, change: dict[str, str]
               ) -> dict[str, tuple[str, bool]]:
    _patch(repo, w, f"shard-{name}", change)
    return {d.nodeid: (d.label, d.runs) for d in _plan(repo, w).decisions}


def test_a_missing_shard_is_refused(
    matrix: tuple[GitRepo, str, list[Path], depgraph.Witness],
) -> None:
    repo, _w, files, _full = matrix
    code, out = _merge(repo, files[0], files[2])
    assert code == 64 and "shard 2/3 is missing" in out and "Traceback" not in out


def test_a_shard_given_twice_is_refused(
    matrix: tuple[GitRepo, str, list[Path], depgraph.Witness],
) -> None:
    repo, _w, files, _full = matrix
    code, out = _merge(repo, *files, files[1])
    assert code == 64 and "shard 2/3 given twice" in out


def test_shards_of_another_count_are_refused(
    matrix: tuple[GitRepo, str, list[Path], depgraph.Witness], tmp_path: Path,
) -> None:
    repo, w, files, _full = matrix
    other = tmp_path / "half.json"
    _shard(repo, 1, other, of=2, rev=w)
    code, out = _merge(repo, *files, other)
    assert code == 64 and "shard count N = 2" in out


def test_shards_of_another_revision_are_refused(
    matrix: tuple[GitRepo, str, list[Path], depgraph.Witness], tmp_path: Path,
) -> None:
    repo, w, files, _full = matrix
    later = _patch(repo, w, "shard-later", {"app/lazy.py": "def compute():\n    return 42\n\n"})
    stale = tmp_path / "later.json"
    _shard(repo, 2, stale, rev=later)
    code, out = _merge(repo, files[0], stale, files[2])
    assert code == 64 and f"has revision {later[:12]}" in out


def test_a_shard_recorded_under_other_ambient_values_is_refused(
    matrix: tuple[GitRepo, str, list[Path], depgraph.Witness], tmp_path: Path,
) -> None:
    repo, w, files, _full = matrix
    drifted = tmp_path / "drifted.json"
    _shard(repo, 2, drifted, rev=w, env={**os.environ, "SOURCE_DATE_EPOCH": "1"})
    code, out = _merge(repo, files[0], drifted, files[2])
    assert code == 64 and "ambient fingerprint" in out


def test_shard_options_are_checked(
    matrix: tuple[GitRepo, str, list[Path], depgraph.Witness], tmp_path: Path,
) -> None:
    repo, _w, _files, _full = matrix
    for args, line in ((("--shard", "0/3", "--out", "x"), "I must be from 1 to N"),
                       (("--shard", "1/3"), "--shard I/N and --out FILE go together"),
                       (("--shard", "one", "--out", "x"), "give I/N")):
        done = run_agentgate("witness", "record", *args, cwd=repo.path)
        assert done.returncode == 64 and line in done.stdout + done.stderr, args
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    code, out = _merge(repo, junk)
    assert code == 64 and "not a witness shard" in out
