"""The text report's layout (issue 13): 100 columns, continuation lines indented, paths
never split, a rule said once, "scoped" only from the gate's commands."""

from __future__ import annotations

from agentgate.core.model import Reason, Result, Verdict
from agentgate.report.render import WIDTH, fit, text_lines
from tests.support.text import unwrap

DETAIL = "outside the declared scope; keep the patch inside it, or have a human widen the " \
         "scope in a commit of its own first"


def test_a_long_reason_wraps_with_its_path_whole() -> None:
    path = "app/a folder with spaces/and a long name/module.py"
    result = Result(command="hook pre-commit", head="c" * 40, reasons=[
        Reason("scope-escape", Verdict.SCOPE_ESCAPE, DETAIL, path=path)])
    lines = text_lines(result)
    assert all(len(line) <= WIDTH for line in lines), lines
    assert lines[2] == f"  scope-escape {path}: outside the declared scope; keep"
    assert lines[3] == ("      the patch inside it, or have a human widen the scope in a commit "
                        "of its own first")
    assert unwrap("\n".join(lines)).splitlines()[2] == f"  scope-escape {path}: {DETAIL}"


def test_the_rule_is_named_once_only_when_it_is_the_kind() -> None:
    result = Result(command="check", reasons=[
        Reason("scope-escape", Verdict.SCOPE_ESCAPE, "out", path="x.py"),
        Reason("fixture-without-test", Verdict.SCOPE_ESCAPE, "moved", path="f.json"),
        Reason("scope-escape", Verdict.SCOPE_ESCAPE, "no path")])
    assert text_lines(result)[1:] == ["  scope-escape x.py: out",
                                      "  scope-escape: fixture-without-test f.json: moved",
                                      "  scope-escape: no path"]


def test_a_word_longer_than_a_line_stays_whole() -> None:
    long = "/tmp/" + "x" * 120
    assert fit(f"  | E   FileNotFoundError: {long}") == [
        "  | E   FileNotFoundError:", f"  |     {long}"]


def test_scoped_is_the_gates_word() -> None:
    for command in ("attribute", "witness record", "init", "ledger list", "fixtures record"):
        assert text_lines(Result(command=command))[0] == f"agentgate {command}: ok (exit 0)"
    for command in ("plan", "check", "hook pre-push main", "hook pre-commit"):
        assert text_lines(Result(command=command))[0] == f"agentgate {command}: scoped (exit 0)"
    no_repro = Result(command="attribute", reasons=[
        Reason("attribute-no-repro", Verdict.SCOPED, "never failed", path="t.py::t")])
    assert text_lines(no_repro)[1] == "  ok: attribute-no-repro t.py::t: never failed"
    in_plan = Result(command="plan", reasons=[
        Reason("dynamic-import", Verdict.SCOPED, "computed", path="app/x.py")])
    assert text_lines(in_plan)[1] == "  scoped: dynamic-import app/x.py: computed"
    failed = Result(command="attribute", forced=Verdict.FAILED)
    assert text_lines(failed)[0] == "agentgate attribute: failed (exit 1)"


def test_the_reason_that_decides_the_verdict_comes_first() -> None:
    """New-user trial: three ``promote`` lines came before the ``blocked`` ones that made
    the verdict; the most severe come first, each kind in its own order."""
    result = Result(command="check", reasons=[
        Reason("marker-added", Verdict.PROMOTE, "one", path="a.py"),
        Reason("suppressed-failure", Verdict.BLOCKED, "two", path="b.py"),
        Reason("marker-added", Verdict.PROMOTE, "three", path="c.py"),
        Reason("tests-failed", Verdict.FAILED, "four", path="d.py"),
        Reason("suppressed-failure", Verdict.BLOCKED, "five", path="e.py")])
    assert [line.rsplit(": ", 1)[1] for line in text_lines(result)[1:]] == [
        "two", "five", "four", "one", "three"]
