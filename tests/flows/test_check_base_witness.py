"""The base inventory from a witness recorded at the merge-base (issue 11 item 2): its tests
and outcomes name the base's tests, no collection of the base runs, and a suppression is
still caught. Without one (or with one recorded elsewhere) the base is collected."""

from __future__ import annotations

from pathlib import Path

from agentgate.git import gitio
from agentgate.run import inventory
from tests.flows.test_check_oracle import BROKEN_SHOUT, SHOUT, SKIPPED_TEST, check_json, codes
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo, run_agentgate

HIDE_THE_BREAK = {"app/util.py": BROKEN_SHOUT, "tests/test_util.py": SKIPPED_TEST}


def _record(repo: GitRepo) -> None:
    done = run_agentgate("witness", "record", cwd=repo.path)
    assert done.returncode == 0, done.stdout + done.stderr


def _collections(repo: GitRepo) -> list[Path]:
    """The inventory cache: one entry per collection of the base that ran."""
    return list((gitio.state_dir(repo.path) / "inventory").glob("*.json"))


def test_with_a_base_witness_nothing_is_collected_and_the_hidden_break_blocks(
    chain: GitRepo,
) -> None:
    _record(chain)
    commit(chain, HIDE_THE_BREAK)
    data = check_json(chain)
    assert data["exit_code"] == 4 and "suppressed-failure" in codes(data)
    assert _collections(chain) == []


def test_a_narrowed_base_witness_is_no_inventory(chain: GitRepo) -> None:
    """Attack: a witness recorded with ``-k`` leaves the hidden test out of its tests, so
    as an inventory it would excuse the skip. Only a whole-suite recording names the base's
    tests: this one is ignored and the base is collected."""
    done = run_agentgate("witness", "record", "--", "-k", "not shout", cwd=chain.path)
    assert done.returncode == 0, done.stdout + done.stderr
    commit(chain, HIDE_THE_BREAK)
    data = check_json(chain)
    assert data["exit_code"] == 4 and "suppressed-failure" in codes(data)
    assert len(_collections(chain)) == 1


def test_without_a_witness_the_base_is_collected(chain: GitRepo) -> None:
    commit(chain, HIDE_THE_BREAK)
    data = check_json(chain)
    assert data["exit_code"] == 4 and "suppressed-failure" in codes(data)
    assert len(_collections(chain)) == 1


def test_a_witness_recorded_before_the_base_is_no_inventory(chain: GitRepo) -> None:
    """Its tests are an older base's: the merge-base is collected."""
    _record(chain)
    commit(chain, {"tests/test_more.py": "def test_more():\n    pass\n"})
    chain.git("tag", "-f", "base")
    commit(chain, HIDE_THE_BREAK)
    data = check_json(chain)
    assert data["exit_code"] == 4 and "suppressed-failure" in codes(data)
    assert len(_collections(chain)) == 1


def test_the_recorded_inventory_names_the_asked_files_tests_only() -> None:
    outcomes = {SHOUT: "passed", "tests/test_b.py::test_b": "skipped"}
    found = inventory.from_recording(("tests/test_util.py",), outcomes,
                                     ["tests/test_util.py", "tests/test_b.py"], [])
    assert found is not None and found.nodeids == (SHOUT,)


def test_a_file_the_recording_did_not_collect_cleanly_is_collected_instead() -> None:
    """A recording that never collected the file, or failed to, cannot say it has no tests:
    an empty inventory would excuse every suppression in it."""
    files = ("tests/test_util.py",)
    assert inventory.from_recording(files, {}, ["tests/test_b.py"], []) is None
    assert inventory.from_recording(files, {}, list(files), list(files)) is None
