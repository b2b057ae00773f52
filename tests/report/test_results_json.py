"""``--format json`` carries data, never display lines (issue 10).

Each command's own text lines (the test list and chains, the band's run lines, the ledger
table, the hook snippet, the attribution's report) appear in its text output and in none of
its JSON: no ``text`` or ``markdown`` key at any depth, and no string equal to such a line.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentgate.attribution.runs import Run, RunRecord
from agentgate.attribution.summary import Summary, build_result
from agentgate.attribution.verdict import TreeEvidence, decide
from agentgate.core.model import Result
from agentgate.report.render import detail_lines, text_lines, to_json
from agentgate.run.junit import Outcome
from tests.support.git_repo import GitRepo, run_agentgate

DISPLAY_KEYS = {"text", "markdown"}


def _keys_and_strings(value: Any) -> tuple[set[str], set[str]]:
    keys: set[str] = set()
    strings: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys |= set(item)
            stack += item.values()
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str):
            strings.add(item.strip())
    return keys, strings


def assert_data_only(data: dict[str, Any], shown: list[str]) -> None:
    """``shown``: the command's own text lines, which must not be in its JSON."""
    keys, strings = _keys_and_strings(data)
    assert not keys & DISPLAY_KEYS, f"display keys in JSON: {keys & DISPLAY_KEYS}"
    leaked = [line for line in shown if line.strip() and line.strip() in strings]
    assert not leaked, f"pre-rendered lines in JSON: {leaked}"


def _cli(repo: GitRepo, *args: str) -> tuple[str, dict[str, Any]]:
    text = run_agentgate(*args, cwd=repo.path)
    data = run_agentgate(*args, "--format", "json", cwd=repo.path)
    assert text.returncode == data.returncode, text.stderr + data.stderr
    return text.stdout, json.loads(data.stdout)


@pytest.fixture
def patched(app_repo: GitRepo) -> GitRepo:
    app_repo.git("tag", "base")
    app_repo.write("app/pricing/tax.py", "RATE = 0.2\n\ndef tax(x):\n    return x * RATE * 1\n")
    app_repo.commit("tax: same value")
    return app_repo


@pytest.mark.parametrize(("args", "own_line"), [
    (("plan", "--base", "base"), "tests: "),
    (("plan", "--base", "base", "--explain", "tests/test_session.py"), "why "),
    (("check", "--base", "base"), "ran "),  # its summary line
])
def test_plan_and_check_json_has_no_display_lines(
    patched: GitRepo, args: tuple[str, ...], own_line: str
) -> None:
    text, data = _cli(patched, *args)
    shown = text.splitlines()[1:]
    assert any(line.strip().startswith(own_line) for line in shown), text  # not vacuous
    assert_data_only(data, shown)
    assert {"tests", "why", "merge_base", "suite_size", "run"} <= data.keys()


def test_ledger_list_json_has_rows_not_a_table(patched: GitRepo) -> None:
    done = run_agentgate(
        "freeze", "tests/test_session.py::test_total", "--owner", "alice", "--reason",
        "flaky clock", "--base-fail", "3", "--head-fail", "3", "--seeds", "0,1,2,3",
        "--today", "2026-01-10", cwd=patched.path)
    assert done.returncode == 0, done.stderr
    text, data = _cli(patched, "ledger", "list", "--today", "2026-01-12")
    table = [line for line in text.splitlines() if "last drill" in line or "never" in line]
    assert len(table) == 2, text
    assert_data_only(data, table)
    assert data["records"][0]["owner"] == "alice"


def test_init_json_has_the_snippet_once_as_data(app_repo: GitRepo) -> None:
    text, data = _cli(app_repo, "init")
    snippet = data["pre_commit_config"]
    assert "        - id: agentgate-push" in text.splitlines()  # the text shows it line by line
    assert_data_only(data, snippet.splitlines())


def _tree(name: str, outcomes: list[Outcome]) -> TreeEvidence:
    records = [RunRecord(Run(name, seed, "swept"), o, "", 0.0) for seed, o in enumerate(outcomes)]
    return TreeEvidence(name, name * 5, tuple(records))


def test_attribution_json_has_no_display_lines() -> None:
    ok, bad = Outcome.PASSED, Outcome.FAILED
    base, head = _tree("base", [ok, ok, ok, ok]), _tree("head", [ok, bad, ok, ok])
    summary = Summary(
        nodeid="tests/test_a.py::test_x", mode="swept", context="alone", seeds=(0, 1, 2, 3),
        runs=4, repeats=1, stage="swept", jobs=1, serial=False, python="python3",
        env={"TZ": "UTC"}, base=base, head=head, reverted=None, base_problem="",
        base_sha=base.sha, head_sha=head.sha, wall_seconds=1.0,
    )
    result = build_result(summary, decide(base, head, stage="swept"), "agentgate attribute x")
    own = detail_lines(result.detail, "text") + detail_lines(result.detail, "markdown")
    assert any(line.startswith("recheck: ") for line in own)
    assert_data_only(json.loads(to_json(result)), own)
    assert json.loads(to_json(result))["recheck"] == "agentgate attribute x"


def test_a_display_line_in_the_json_is_caught() -> None:
    """The check itself: a detail that carries its rendered lines fails it."""

    class Leaky:
        kind = "plan"

        def to_json(self) -> dict[str, Any]:
            return {"tests": ["tests/test_a.py"], "lines": ["tests: 1 of 1 test file(s)"]}

    result = Result(command="plan", detail=Leaky())
    with pytest.raises(AssertionError, match="pre-rendered"):
        assert_data_only(result.to_json(), ["  tests: 1 of 1 test file(s)"])
    with pytest.raises(AssertionError, match="display keys"):
        assert_data_only({"text": []}, [])
    assert text_lines(Result(command="plan"))[0] == "agentgate plan: scoped (exit 0)"
