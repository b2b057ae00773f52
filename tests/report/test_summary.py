"""The end of the summary line: how the band went, from its runs' own counts (issue 13)."""

from __future__ import annotations

from agentgate.report.summary import outcome, suite_ids
from agentgate.run.band import RunResult


def _run(code: int, **counts: int) -> RunResult:
    return RunResult("band", 2, code, 1.0, **counts)


def test_how_the_band_went() -> None:
    assert outcome([_run(0, passed=3)]) == "all passed"
    assert outcome([_run(0, passed=3, skipped=1)]) == "3 passed, 1 skipped"
    assert outcome([_run(0, passed=3, skipped=3, xfailed=2)]) == "3 passed, 1 skipped, 2 xfailed"
    assert outcome([_run(1, passed=1, failed=1, errors=2)]) == "1 failed, 2 errors"
    assert outcome([_run(5)]) == "no tests collected"
    timed_out = RunResult("band", 2, -1, 9.0, passed=1, timed_out=True)
    assert outcome([timed_out]) == "timed out"


def test_a_red_exit_with_nothing_failed_is_not_all_passed() -> None:
    """A conftest that reports every failure as a pass still leaves pytest's exit status."""
    assert outcome([_run(1, passed=2)]) == "pytest exited 1"
    frozen = RunResult("band", 2, 1, 1.0, passed=1, failed=1,
                       frozen_failed_ids=("tests/test_a.py::test_x",))
    assert outcome([frozen]) == "1 failed but excused by its freeze"
    more = RunResult("band", 4, 1, 1.0, passed=1, failed=3,
                     frozen_failed_ids=("tests/test_a.py::test_x",))
    assert outcome([more]) == "2 failed, 1 failed but excused by its freeze"


def test_the_suite_counts_a_case_whose_id_changed_once() -> None:
    known = {"t.py::test_a", "t.py::test_at[22:25:35]", "t.py::test_at[x]", "t.py::test_b[1]"}
    # test_at ran whole, one case under a new id: its cases are the ones that ran
    ran = ["t.py::test_at[22:25:36]", "t.py::test_at[x]"]
    assert suite_ids(known, ran) == {"t.py::test_a", "t.py::test_at[22:25:36]",
                                     "t.py::test_at[x]", "t.py::test_b[1]"}
    # a new test adds to the suite; known ids that ran change nothing
    assert len(suite_ids(known, ["t.py::test_new", "t.py::test_b[1]"])) == 5
