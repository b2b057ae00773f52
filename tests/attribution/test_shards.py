"""Sharded attribution (issue 13 item 3), end to end: the CI matrix played by running
``attribute NODEID --shard I/N --evidence-out FILE`` as separate processes, then
``attribute NODEID --merge``: the verdict and every run's outcome are those of one
attribution; evidence that was not asked for the same thing is refused (exit 64)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.attribution.test_attribute import (
    BASE_CODE,
    NODE,
    SET_FIRST,
    SET_ORDER_CODE,
    TEST_PICK,
    patch_repo,
    seeds_where,
)
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import isolate

RUNS, N = "4", 2
ASKED = ("--base", "main", "--runs", RUNS, "--repeats", "2")


def _agentgate(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return run_agentgate(*args, cwd=repo.path)


def _shard(repo: GitRepo, index: int, out: Path, *args: str) -> None:
    done = _agentgate(repo, "attribute", NODE, *ASKED, *args, "--shard", f"{index}/{N}",
                      "--evidence-out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr


def _merge(repo: GitRepo, *files: Path, nodeid: str = NODE) -> subprocess.CompletedProcess[str]:
    merges = [a for f in files for a in ("--merge", str(f))]
    return _agentgate(repo, "attribute", nodeid, *merges, "--format", "json")


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[GitRepo, str, list[Path], dict[str, Any]]]:
    """A patch that makes the test depend on set order; one whole attribution of it, and
    the N shards of the same attribution, each its own process."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory)
        mp.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        repo = GitRepo.init(tmp_path_factory.mktemp("attr") / "repo")
        _base, head = patch_repo(repo, {"app/core.py": BASE_CODE, "tests/test_core.py": TEST_PICK},
                                 {"app/core.py": SET_ORDER_CODE})
        whole = _agentgate(repo, "attribute", NODE, *ASKED, "--head", head, "--format", "json")
        assert whole.returncode == 1, whole.stdout + whole.stderr
        folder = tmp_path_factory.mktemp("evidence")
        files = [folder / f"shard{i}.json" for i in range(1, N + 1)]
        for i, file in enumerate(files, 1):
            _shard(repo, i, file, "--head", head)
        yield repo, head, files, json.loads(whole.stdout)


def test_the_merged_shards_give_the_whole_attribution(
    matrix: tuple[GitRepo, str, list[Path], dict[str, Any]],
) -> None:
    repo, _head, files, whole = matrix
    assert seeds_where(repo, SET_FIRST, "apple")  # the scenario has failing seeds at all
    done = _merge(repo, files[0].parent)  # a folder: every shard's file in it
    assert done.returncode == 1, done.stdout + done.stderr
    merged = json.loads(done.stdout)
    assert merged["verdict"] == whole["verdict"] == "PATCH_INDUCED"
    for key in ("seeds", "fisher_p", "mode", "repeats", "freeze_allowed", "gate"):
        assert merged[key] == whole[key], key
    for tree in ("base", "head"):
        assert merged["trees"][tree] == whole["trees"][tree], tree
    assert merged["recheck"] == whole["recheck"]
    shares = [{r["seed"] for r in json.loads(f.read_text())["records"]} for f in files]
    assert shares == [{0, 2}, {1, 3}]  # seed s runs in shard s % N + 1, every stage of it


def test_a_missing_or_doubled_shard_is_refused(
    matrix: tuple[GitRepo, str, list[Path], dict[str, Any]],
) -> None:
    repo, _head, files, _whole = matrix
    done = _merge(repo, files[0])
    assert done.returncode == 64 and "shard 2/2 is missing" in done.stdout + done.stderr
    done = _merge(repo, *files, files[0])
    assert done.returncode == 64 and "shard 1/2 given twice" in done.stdout + done.stderr


def test_evidence_of_an_earlier_head_is_no_verdict_on_this_one(
    matrix: tuple[GitRepo, str, list[Path], dict[str, Any]],
) -> None:
    """Flake trial round 3: evidence of an earlier head merged into a freeze of this one."""
    repo, head, files, _whole = matrix
    done = _agentgate(repo, "attribute", NODE, "--merge", str(files[0].parent), "--head",
                      "main", "--format", "json")
    assert done.returncode == 64, done.stdout + done.stderr
    assert f"the evidence is of head {head[:12]}" in done.stdout + done.stderr


def test_evidence_for_another_test_is_refused(
    matrix: tuple[GitRepo, str, list[Path], dict[str, Any]],
) -> None:
    repo, _head, files, _whole = matrix
    done = _merge(repo, *files, nodeid="tests/test_core.py::test_other")
    assert done.returncode == 64 and f"is evidence for {NODE}" in done.stdout + done.stderr


@pytest.mark.parametrize(("args", "said"), [
    (("--mode", "swept"), "has mode swept"),
    (("--runs", "6"), "has runs 6"),
    (("--repeats", "3"), "has repeats 3"),
    (("--context", "file"), "has context file"),
])
def test_evidence_asked_for_something_else_is_refused(
    matrix: tuple[GitRepo, str, list[Path], dict[str, Any]], tmp_path: Path,
    args: tuple[str, ...], said: str,
) -> None:
    repo, head, files, _whole = matrix
    other = tmp_path / "other.json"
    cheap = ("--seed", "0") if "--mode" in args else ()
    done = _agentgate(repo, "attribute", NODE, *ASKED, *args, "--head", head, *cheap,
                      "--shard", "2/2",
                      "--evidence-out", str(other))
    assert done.returncode == 0, done.stdout + done.stderr
    done = _merge(repo, files[0], other)
    assert done.returncode == 64 and said in done.stdout + done.stderr, done.stdout


def test_evidence_of_another_head_is_refused(
    matrix: tuple[GitRepo, str, list[Path], dict[str, Any]], tmp_path: Path,
) -> None:
    repo, head, files, _whole = matrix
    repo.files({"README.md": "later\n"})
    later = repo.commit("later")
    other = tmp_path / "later.json"
    done = _agentgate(repo, "attribute", NODE, *ASKED, "--head", later, "--shard", "2/2",
                      "--evidence-out", str(other))
    assert done.returncode == 0, done.stdout + done.stderr
    done = _merge(repo, files[0], other)
    assert done.returncode == 64 and f"has head {later[:12]}" in done.stdout + done.stderr
    assert head != later


@pytest.mark.parametrize(("args", "said"), [
    (("--shard", "1/2"), "--shard I/N and --evidence-out FILE go together"),
    (("--shard", "3/2", "--evidence-out", "x.json"), "I must be from 1 to N"),
    (("--shard", "1/2", "--merge", "x.json"), "drop --shard"),
    (("--merge", "nothing-here.json"), "not attribution evidence"),
])
def test_shard_usage_errors_exit_64(
    matrix: tuple[GitRepo, str, list[Path], dict[str, Any]], args: tuple[str, ...], said: str,
) -> None:
    repo, _head, _files, _whole = matrix
    done = _agentgate(repo, "attribute", NODE, "--base", "main", *args)
    out = done.stdout + done.stderr
    assert done.returncode == 64 and said in out and "Traceback" not in out, out


def test_a_merge_can_freeze_what_the_shards_found_on_both_trees(
    repo: GitRepo, tmp_path: Path,
) -> None:
    patch_repo(repo, {"app/core.py": SET_ORDER_CODE, "tests/test_core.py": TEST_PICK},
               {"README.md": "unrelated docs change\n"})
    failing = seeds_where(repo, SET_FIRST, "apple")
    until = (datetime.now(UTC).date() + timedelta(days=14)).isoformat()
    freeze = ("--freeze", "--owner", "Test Human", "--until", until)
    refused = _agentgate(repo, "attribute", NODE, *ASKED, *freeze, "--shard", "1/2",
                         "--evidence-out", str(tmp_path / "x.json"))
    assert refused.returncode == 64 and "--freeze goes with --merge" in refused.stderr
    # A freeze needs the test run inside its file: the shards say --context file.
    for i in (1, 2):
        _shard(repo, i, tmp_path / f"e{i}.json", "--context", "file")
    done = _agentgate(repo, "attribute", NODE, "--merge", str(tmp_path), *freeze,
                      "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert (data["verdict"], data["freeze_allowed"]) == ("PRE_EXISTING", True)
    record = json.loads((repo.path / data["freeze"]["path"]).read_text(encoding="utf-8"))
    assert record["evidence"]["base_fail"] == record["evidence"]["head_fail"] == failing
    assert run_agentgate("ledger", "check", cwd=repo.path).returncode == 0


@pytest.mark.parametrize(("key", "value"), [
    ("runs", "many"), ("env", ["A"]), ("seeds", ["x"]), ("revert_code", 1), ("repeats", True),
])
def test_mistyped_evidence_is_a_usage_error_not_a_crash(
    matrix: tuple[GitRepo, str, list[Path], dict[str, Any]], tmp_path: Path,
    key: str, value: Any,
) -> None:
    """Found in review: ``"runs": "many"`` was an internal error (exit 70)."""
    repo, _head, files, _whole = matrix
    data = json.loads(files[1].read_text())
    data[key] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    done = _merge(repo, files[0], bad)
    assert done.returncode == 64, done.stdout + done.stderr
    assert "not attribution evidence agentgate can read" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
