"""Incremental recording (issue 12 item 6), end to end on a real repository: W has a full
recording; N, a merge on top of W, is recorded with ``witness record --incremental``, which
runs only the tests W's witness cannot vouch for at N and carries the rest. The witness of N
must select, patch for patch, exactly as a full recording of N does, and never carry a test
whose dependencies moved under it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentgate.witness import depgraph
from agentgate.witness.incremental import INFO
from agentgate.witness.select import IMPACTED, SKIP
from agentgate.witness.store import Store, default_path
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import patch as _patch
from tests.witness.recorded import plan as _plan
from tests.witness.recorded import recorded_repo
from tests.witness.test_select import ALL, CORE, FILES

EXTRA = "def _setup():\n    return 3\n\nLIMIT = _setup()\n\ndef limit():\n    return LIMIT\n"
FILES_W = {**FILES, "app/extra.py": EXTRA, "tests/test_extra.py":
           "from app.extra import limit\n\ndef test_limit():\n    assert limit() == 3\n"}
ALL_W = ALL | {"tests/test_extra.py::test_limit"}
# W...N: lookup now also calls other(); other's body grows, so every line below it moves;
# extra's import no longer runs _setup; a new test file; the data test file gains a test.
CORE_N = CORE.replace("    return TABLE[k]", "    return TABLE[k] * other() // 2").replace(
    "    return 2\n", "    two = 2\n    # lines below move\n    return two\n")
MERGE = {
    "app/core.py": CORE_N,
    "app/extra.py": EXTRA.replace("LIMIT = _setup()", "LIMIT = 3"),
    "tests/test_new.py": "from app.core import other\n\ndef test_new():\n    assert other() == 2\n",
    "tests/test_data.py": FILES["tests/test_data.py"] + "\ndef test_more():\n    assert 2\n",
}
# Patches on top of N, each asked of both witnesses of N.
PATCHES = {
    "lazy": {"app/lazy.py": "def compute():\n    return 41 + 1\n"},
    "other": {"app/core.py": CORE_N.replace("two = 2", "two = 1 + 1")},
    "lazy_user": {"app/core.py": CORE_N.replace("return lazy.compute()",
                                                "return lazy.compute() + 0")},
    "table": {"app/core.py": CORE_N.replace('{"a": 1}', '{"a": 1, "b": 2}')},
    "data": {"tests/fixtures/x.json": '{"v": 1, "w": 2}\n'},
    "fixture": {"tests/sub/conftest.py": FILES["tests/sub/conftest.py"].replace("5", "2 + 3")},
    "new": {"tests/test_new.py": MERGE["tests/test_new.py"].replace("== 2", "== 1 + 1")},
    # At N no test runs _setup: W's stored import of extra (which ran it) must not count.
    "setup": {"app/extra.py": MERGE["app/extra.py"].replace("return 3", "return 2 + 1")},
}


def _record(repo: GitRepo, *args: str, env: dict[str, str] | None = None) -> str:
    done = run_agentgate("witness", "record", *args, cwd=repo.path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return " ".join((done.stdout + done.stderr).split())  # the report wraps at 100 columns


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[GitRepo, str, str, str]]:
    """W fully recorded; N = W + MERGE recorded incrementally; the output of that run."""
    for repo, w in recorded_repo(tmp_path_factory, FILES_W):
        n = _patch(repo, w, "main-n", MERGE)
        out = _record(repo, "--incremental", "--rev", n)
        yield repo, w, n, out


def _witness(repo: GitRepo, sha: str) -> depgraph.Witness:
    found = Store.for_repo(repo.path).load(sha)
    assert found is not None
    return found


def _decisions(repo: GitRepo, n: str, name: str, change: dict[str, str]
               ) -> dict[str, tuple[str, bool]]:
    _patch(repo, n, f"incr-{name}", change)
    return {d.nodeid: (d.label, d.runs) for d in _plan(repo, n).decisions}


def test_only_what_the_witness_cannot_vouch_for_runs_again(
    merged: tuple[GitRepo, str, str, str],
) -> None:
    repo, w, n, out = merged
    assert f"from the witness of {w[:12]}, 1 commit(s) back: 3 of its 10 tests carried" in out
    witness = _witness(repo, n)
    new = {"tests/test_new.py::test_new", "tests/test_data.py::test_more"}
    assert set(witness.tests) == ALL_W | new
    # Carried: test_first, test_lazy, test_uses_sub. Again: lookup (its code changed),
    # other (impacted), limit (extra's module level changed), the io tests (incomplete),
    # test_data.py's (its module level changed: a test was added), the new ones.
    assert witness.info[INFO] == {"from": w, "carried": 3, "recorded": 9}
    assert witness.info[depgraph.WHOLE_SUITE] is True
    assert depgraph.unwatched(witness) is not None  # both parts watched module reads


def test_the_incremental_witness_selects_as_a_full_recording(
    merged: tuple[GitRepo, str, str, str],
) -> None:
    repo, _w, n, _out = merged
    store = default_path(repo.path)
    kept = store.with_suffix(".incremental")
    shutil.copyfile(store, kept)
    try:
        incremental = {k: _decisions(repo, n, k, change) for k, change in PATCHES.items()}
        _record(repo, "--rev", n)  # the full recording of N replaces the incremental one
        assert INFO not in _witness(repo, n).info
        full = {k: _decisions(repo, n, k, change) for k, change in PATCHES.items()}
        assert incremental == full
    finally:
        shutil.copyfile(kept, store)
    # Line numbers moved below other(): lazy_user's tests still point at lazy_user.
    assert full["lazy_user"]["tests/test_lazy.py::test_lazy"] == (IMPACTED, True)
    assert full["lazy_user"]["tests/test_lazy.py::test_first"] == (SKIP, False)
    assert full["setup"]["tests/test_extra.py::test_limit"] == (SKIP, False)


def test_a_test_whose_code_changed_is_not_carried_with_its_old_dependencies(
    merged: tuple[GitRepo, str, str, str],
) -> None:
    """At W test_lookup never ran other(); at N lookup calls it. Carried from W, a change
    to other() at N would skip it."""
    repo, _w, n, _out = merged
    lookup = _witness(repo, n).tests["tests/test_core.py::test_lookup"]
    assert ("app/core.py", "other") in depgraph.closure(_witness(repo, n), lookup)
    decided = _decisions(repo, n, "other-again", PATCHES["other"])
    assert decided["tests/test_core.py::test_lookup"] == (IMPACTED, True)


def test_without_a_stored_witness_of_an_ancestor_it_records_the_whole_suite(
    merged: tuple[GitRepo, str, str, str],
) -> None:
    repo, w, _n, _out = merged
    orphan = repo.git("commit-tree", "-m", "orphan", f"{w}^{{tree}}").strip()
    out = _record(repo, "--incremental", "--rev", orphan)
    assert "no witness recorded at an ancestor" in out and "recording the whole suite" in out
    assert INFO not in _witness(repo, orphan).info


def test_another_ambient_environment_records_the_whole_suite(
    merged: tuple[GitRepo, str, str, str],
) -> None:
    """Carried tests were recorded under W's ambient values: under others, the gate would
    run them all, so they are all recorded again."""
    repo, w, _n, _out = merged
    later = _patch(repo, w, "incr-ambient", {"app/lazy.py": FILES["app/lazy.py"] + "\n"})
    out = _record(repo, "--incremental", "--rev", later,
                  env={**os.environ, "SOURCE_DATE_EPOCH": "1"})
    assert "recorded in another ambient environment" in out
    assert INFO not in _witness(repo, later).info
    assert set(_witness(repo, later).tests) == ALL_W


@pytest.mark.parametrize(("change", "said"), [
    ({"info": {depgraph.WHOLE_SUITE: False}}, "is not a recording of the whole suite"),
    ({"env": ""}, "was recorded with another interpreter or other installed packages"),
])
def test_a_witness_that_cannot_be_a_basis_records_the_whole_suite(
    merged: tuple[GitRepo, str, str, str], change: dict[str, Any], said: str,
) -> None:
    """A recording narrowed by pytest arguments knows only some tests; one whose interpreter
    cannot be compared vouches for no environment: neither is carried from."""
    repo, w, _n, _out = merged
    store = default_path(repo.path)
    kept = store.with_suffix(".basis")
    shutil.copyfile(store, kept)
    try:
        Store.for_repo(repo.path).save(replace(_witness(repo, w), **change))
        later = _patch(repo, w, f"incr-basis-{len(said)}", {"app/lazy.py": "# later\n"
                                                              + FILES["app/lazy.py"]})
        out = _record(repo, "--incremental", "--rev", later)
        assert said in out and "recording the whole suite" in out
        assert INFO not in _witness(repo, later).info
    finally:
        shutil.copyfile(kept, store)


def test_incremental_does_not_go_with_shards(
    merged: tuple[GitRepo, str, str, str], tmp_path: Path,
) -> None:
    repo, _w, _n, _out = merged
    done = run_agentgate("witness", "record", "--incremental", "--shard", "1/2", "--out",
                         str(tmp_path / "s.json"), cwd=repo.path)
    assert done.returncode == 64 and "does not go with --shard" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
