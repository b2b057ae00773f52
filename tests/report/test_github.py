"""GitHub's view of a check: ranked and capped annotations, workflow commands, outputs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agentgate.core.errors import AgentgateError
from agentgate.core.model import Reason, Result, Verdict
from agentgate.flows import github as publishing
from agentgate.report import github
from agentgate.report.render import to_json
from tests.support.actions import parse_outputs


@dataclass(frozen=True)
class Data:
    """A check detail whose JSON is what the test needs (the real one needs a real plan)."""

    kind: ClassVar[str] = "plan"
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data


def result_json(*reasons: Reason, notes: tuple[str, ...] = (), **detail: Any) -> dict[str, Any]:
    """What 'check --format json' writes, read back."""
    result = Result(command="check", reasons=list(reasons), notes=list(notes))
    if detail:
        result.detail = Data(detail)
    data: dict[str, Any] = json.loads(to_json(result))
    return data


def escape(path: str) -> Reason:
    return Reason("scope-escape", Verdict.SCOPE_ESCAPE, "outside the declared scope", path=path)


def test_every_rule_gets_one_annotation_before_any_gets_a_second() -> None:
    reasons = [escape(f"docs/{i}.md") for i in range(3)]
    reasons.insert(1, Reason("tests-failed", Verdict.FAILED, "1 test(s) failed", path="t.py"))
    reasons.append(Reason("trust-mixed", Verdict.BLOCKED, "mixed", path="pyproject.toml"))
    found = github.rank(result_json(*reasons))
    errors = [(a.title, a.file) for a in found.shown if a.level == "error"]
    assert errors == [
        ("agentgate: blocked (trust-mixed)", "pyproject.toml"),
        ("agentgate: scope-escape", "docs/0.md"),
        ("agentgate: failed (tests-failed)", "t.py"),
        ("agentgate: scope-escape", "docs/1.md"),
        ("agentgate: scope-escape", "docs/2.md"),
    ]


def test_each_type_is_capped_and_the_rest_kept_in_rank_order() -> None:
    promote = [Reason(f"rule-{i}", Verdict.PROMOTE, "full suite required") for i in range(3)]
    data = result_json(*(escape(f"docs/{i}.md") for i in range(12)), *promote,
                       notes=("one", "two"))
    found = github.rank(data)
    levels = [a.level for a in found.shown]
    assert (levels.count("error"), levels.count("warning"), levels.count("notice")) == (10, 3, 3)
    assert [a.file for a in found.rest] == ["docs/10.md", "docs/11.md"]
    lowered = github.rank(data, limit=1)
    assert [a.level for a in lowered.shown] == ["error", "warning", "notice"]
    assert [a.message for a in lowered.rest if a.level == "notice"] == ["one", "two"]


def test_a_limit_above_githubs_is_githubs() -> None:
    found = github.rank(result_json(*(escape(f"d/{i}.md") for i in range(12))), limit=50)
    assert len([a for a in found.shown if a.level == "error"]) == github.LIMIT


def test_summary_lists_what_did_not_fit_and_nothing_when_all_fit() -> None:
    data = result_json(*(escape(f"docs/{i}.md") for i in range(12)))
    text = github.summary(github.rank(data))
    assert text.startswith("#### Not annotated (2 error(s))\n")
    assert text.endswith("- error: agentgate: scope-escape `docs/10.md`: outside the declared "
                         "scope\n- error: agentgate: scope-escape `docs/11.md`: outside the "
                         "declared scope\n")
    assert github.summary(github.rank(result_json(escape("docs/a.md")))) == ""


def test_workflow_commands_escape_data_and_properties() -> None:
    """As actions/toolkit escapes them: a newline or '%' in a message, ':' or ',' in a file
    name would otherwise end the command or start a new property."""
    item = github.Annotation(level="warning", title="a: b, c", message="50% done\nnext",
                             file="odd,name:x.py")
    assert github.command(item) == (
        "::warning file=odd%2Cname%3Ax.py,title=a%3A b%2C c::50%25 done%0Anext")
    assert github.command(github.Annotation(level="notice", title="t", message="m")) == (
        "::notice title=t::m")


def test_commit_of_a_reason_is_named_in_its_message() -> None:
    reason = Reason("trust-agent", Verdict.BLOCKED, "an agent changed a trust file",
                    path=".agentgate/scope", commit="c" * 40)
    (first, *_) = github.rank(result_json(reason)).shown
    assert first.message == f"an agent changed a trust file [commit {'c' * 10}]"


def test_outputs_of_a_promoted_witnessed_check() -> None:
    """A witnessed band names node ids: band-size counts their files; a promoted check runs
    the whole suite, so its band is the suite."""
    results = {"ran": True, "scope": "band", "passed": 3, "failed": 1, "errors": 1}
    data = result_json(
        Reason("tests-failed", Verdict.FAILED, "2 test(s) failed"),
        tests=["tests/test_a.py::test_x", "tests/test_a.py::test_y", "tests/test_b.py"],
        suite_size=7, run="band", verdict_plan="scoped", results=results, merge_base="m" * 40,
    )
    assert github.outputs(data, 1, "r.json") == {
        "verdict": "failed", "exit-code": "1", "result": "r.json", "verdict-plan": "scoped",
        "band-size": "2", "suite-size": "7", "ran": "true", "tests-passed": "3",
        "tests-failed": "2", "merge-base": "m" * 40,
    }
    assert github.band_size(data | {"run": "full"}) == 7
    assert github.headline(data) == ("agentgate check: failed (exit 1): band 2 of 7 test "
                                      "file(s), band run: 3 passed, 1 failed, 1 errors")


def test_outputs_without_a_result_say_error() -> None:
    found = github.outputs(None, 64, "r.json")
    assert (found["verdict"], found["exit-code"], found["band-size"]) == ("error", "64", "")


def test_output_lines_are_one_line_each() -> None:
    text = github.output_text({"verdict": "failed", "merge-base": "a\nb=c"})
    assert parse_outputs(text) == {"verdict": "failed", "merge-base": "a b=c"}


# --- publishing: the files the runner reads -----------------------------------------------


def runner_files(tmp_path: Path) -> dict[str, str]:
    for name in ("out", "summary"):
        (tmp_path / name).touch()
    return {"GITHUB_OUTPUT": str(tmp_path / "out"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}


def test_publish_exits_with_the_checks_code(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result_json(escape("docs/a.md"))), encoding="utf-8")
    env = runner_files(tmp_path)
    assert publishing.publish(path, 3, 10, env=env) == 3
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("::error file=docs/a.md,")
    assert printed[-1] == f"agentgate check: scope-escape (exit 3) (result: {path})"
    outputs = parse_outputs((tmp_path / "out").read_text(encoding="utf-8"))
    assert (outputs["verdict"], outputs["exit-code"]) == ("scope-escape", "3")
    assert (tmp_path / "summary").read_text(encoding="utf-8") == ""  # everything fit


def test_a_missing_result_after_exit_zero_fails_closed(tmp_path: Path) -> None:
    empty = tmp_path / "result.json"
    empty.touch()
    with pytest.raises(AgentgateError, match="holds no check result"):
        publishing.publish(empty, 0, 10, env=runner_files(tmp_path))
    assert (tmp_path / "out").read_text(encoding="utf-8") == ""


def test_a_missing_result_after_a_failure_is_that_failure(tmp_path: Path, capsys: Any) -> None:
    env = runner_files(tmp_path)
    assert publishing.publish(tmp_path / "absent.json", 64, 10, env=env) == 64
    assert capsys.readouterr().out.startswith("::error title=agentgate%3A no result::")
    assert "no result (exit 64)" in (tmp_path / "summary").read_text(encoding="utf-8")


def test_the_headline_is_never_the_notice_dropped() -> None:
    dynamic = [Reason("dynamic-import", Verdict.SCOPED, "computed import", path=f"m{i}.py")
               for i in range(12)]
    found = github.rank(result_json(*dynamic))
    notices = [a for a in found.shown if a.level == "notice"]
    assert notices[0].message == "agentgate check: scoped (exit 0)"
    assert [a.file for a in notices[1:]] == [f"m{i}.py" for i in range(9)]
