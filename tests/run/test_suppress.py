"""What head did with each base test, and how the base form's outcome reads (pure)."""

from __future__ import annotations

from typing import Any

from agentgate.run import suppress
from agentgate.run.inventory import Inventory
from agentgate.run.oracle import OracleInput, candidates

HEAD: dict[str, Any] = suppress.merged([
    {"collected": ["t/a.py::ok", "t/a.py::skip", "t/a.py::xf", "t/new.py::moved"],
     "deselected": ["t/a.py::gone"],
     "tests": {"t/a.py::ok": {"call": "passed", "reported": "passed"},
               "t/a.py::skip": {"setup": "skipped", "reported": "skipped"},
               "t/a.py::xf": {"call": "failed", "reported": "xfailed"},
               "t/new.py::moved": {"call": "passed", "reported": "passed"}}},
    None,  # a run that wrote nothing adds nothing
])
RENAMES = {"t/old.py": "t/new.py", "t/dead.py": ""}


def test_each_way_head_can_leave_a_base_test_without_a_result() -> None:
    status = {n: suppress.head_status(n, RENAMES, HEAD) for n in (
        "t/a.py::ok", "t/a.py::skip", "t/a.py::xf", "t/a.py::gone", "t/a.py::absent",
        "t/dead.py::x", "t/old.py::moved")}
    assert status == {"t/a.py::ok": "ran", "t/a.py::skip": "skipped", "t/a.py::xf": "xfailed",
                      "t/a.py::gone": "deselected", "t/a.py::absent": "not collected",
                      "t/dead.py::x": "deleted", "t/old.py::moved": "ran"}


def test_a_renamed_file_keeps_its_tests_under_the_new_name() -> None:
    assert suppress.head_name("t/old.py::moved[1]", RENAMES) == "t/new.py::moved[1]"
    assert suppress.head_passed("t/old.py::moved", RENAMES, HEAD)
    assert not suppress.head_passed("t/a.py::skip", RENAMES, HEAD)


def test_the_base_forms_outcome_fails_closed() -> None:
    data = {"tests": {"a::f": {"call": "failed", "reported": "passed"},  # a rewrite is a fail
                      "a::p": {"call": "passed", "reported": "passed"},
                      "a::s": {"setup": "skipped", "reported": "skipped"}}}
    outcomes = {n: suppress.oracle_outcome(n, data) for n in ("a::f", "a::p", "a::s", "a::x")}
    assert outcomes == {"a::f": "failed", "a::p": "passed", "a::s": "skipped",
                        "a::x": "failed"}  # not even collected in its base form: failed


def test_the_failure_line_is_pytests_summary_for_that_test() -> None:
    tail = ["x", "FAILED a.py::t - assert 1 == 2", "FAILED a.py::u - boom", "== 2 failed =="]
    assert suppress.failure_line("a.py::u", tail) == "FAILED a.py::u - boom"
    assert suppress.failure_line("a.py::v", tail) == "== 2 failed =="
    assert suppress.failure_line("a.py::v", []) == "no output"
    # A case whose own line the tail lost: another case of its function, never another test.
    cases = ["FAILED a.py::w[2] - assert 2 == 3", "== 60 failed, 102 passed =="]
    assert suppress.failure_line("a.py::w[1]", cases) == "FAILED a.py::w[2] - assert 2 == 3"
    assert suppress.failure_line("a.py::wx[1]", cases) == "== 60 failed, 102 passed =="


def test_only_a_failure_head_did_not_report_is_hidden_by_the_harness() -> None:
    head = {"tests": {"a::red": {"reported": "failed"}, "a::green": {"reported": "passed"}}}
    assert suppress.harness_hidden(["a::red", "a::green", "a::gone"], head) == [
        "a::gone", "a::green"]


def test_accepted_ids_read_comments_and_blanks() -> None:
    text = "# accepted by a human\nt/a.py::x  # new contract\n\n  t/b.py::y\n"
    assert suppress.accepted_ids(text) == {"t/a.py::x", "t/b.py::y"}
    assert suppress.accepted_ids(None) == frozenset()


def test_the_oracle_runs_suppressed_tests_and_edited_tests_that_pass_at_head() -> None:
    nodes = ("t/a.py::ok", "t/a.py::skip", "t/dead.py::x", "t/old.py::moved", "t/b.py::ok")
    inp = OracleInput("b" * 40, "h" * 40, Inventory(("t/a.py",), nodes), RENAMES,
                      frozenset({"t/a.py", "t/old.py"}), (), False, None)
    head = {**HEAD, "tests": {**HEAD["tests"], "t/b.py::ok": {"reported": "passed"}}}
    assert candidates(inp, head) == (["t/a.py::skip", "t/dead.py::x"],
                                     ["t/a.py::ok", "t/old.py::moved"])
