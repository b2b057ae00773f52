"""``agentgate hook prepare-commit-msg``: the commit-time gate at the one commit hook that
``git commit --no-verify`` does not skip. Real repositories, the hook function in process
(the end-to-end runs through git are in tests/e2e/test_commit_no_verify.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgate.flows import hooks
from agentgate.report.render import Format
from tests.support.git_repo import GitRepo, run_agentgate

SCOPE = ".agentgate/scope"
TRAILER = "Co-authored-by: Claude <noreply@anthropic.com>"


@pytest.fixture
def project(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    repo.files({"app/__init__.py": "", "app/tax.py": "RATE = 0.2\n", SCOPE: "app\n"})
    repo.commit("initial")
    monkeypatch.chdir(repo.path)
    return repo


def _message(repo: GitRepo, text: str) -> Path:
    path = repo.path.parent / "MSG"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def _run(repo: GitRepo, message: str, env: dict[str, str] | None = None,
         capsys: pytest.CaptureFixture[str] | None = None) -> tuple[int, dict[str, object]]:
    if capsys:
        capsys.readouterr()
    code = hooks.prepare_commit_msg(_message(repo, message), Format.JSON, env or {})
    out = capsys.readouterr().out if capsys else "{}"
    return code, json.loads(out)


def _codes(report: dict[str, object]) -> list[tuple[str, str]]:
    reasons = report["reasons"]
    assert isinstance(reasons, list)
    return [(r["code"], r["path"]) for r in reasons]


def test_a_trailer_in_the_message_blocks_an_agents_trust_change(
    project: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(SCOPE, "app\ndocs\n")
    project.add()
    code, report = _run(project, f"widen scope\n\n{TRAILER}", capsys=capsys)
    assert code == 4
    assert report["command"] == "hook prepare-commit-msg"
    assert _codes(report) == [("trust-agent", SCOPE)]


def test_the_same_trust_change_without_an_agent_passes(
    project: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(SCOPE, "app\ndocs\n")
    project.add()
    code, report = _run(project, "widen scope", capsys=capsys)
    assert (code, _codes(report)) == (0, [])


def test_an_agents_code_only_commit_passes_with_its_trailer(
    project: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write("app/tax.py", "RATE = 0.25\n")
    project.add()
    code, report = _run(project, f"fix tax\n\n{TRAILER}", {"CLAUDECODE": "1"}, capsys)
    assert (code, _codes(report)) == (0, [])


def test_the_staged_gate_runs_here_too_mixed_trust_and_code(
    project: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """What pre-commit would refuse is refused here, for a human too."""
    project.write(SCOPE, "app\ndocs\n")
    project.write("app/tax.py", "RATE = 0.25\n")
    project.add()
    code, report = _run(project, "widen scope and fix tax", capsys=capsys)
    assert (code, _codes(report)) == (4, [("trust-mixed", SCOPE)])


def test_the_staged_gate_runs_here_too_scope_escape(
    project: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write("lib/other.py", "X = 1\n")
    project.add()
    code, _report = _run(project, "outside the scope", {"CLAUDECODE": "1"}, capsys)
    assert code == 3


def test_an_agent_named_by_env_and_trailer_is_one_refusal_per_file(
    project: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(SCOPE, "app\ndocs\n")
    project.add()
    code, report = _run(project, f"widen scope\n\n{TRAILER}", {"CLAUDECODE": "1"}, capsys)
    assert (code, _codes(report)) == (4, [("trust-agent", SCOPE)])
    notes = report["notes"]
    assert isinstance(notes, list)
    assert [n for n in notes if n.startswith("agent commit:")] == [
        "agent commit: environment variable CLAUDECODE is set"
    ]


def test_a_repository_with_no_commits_yet(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first commit: a human may create trust files with code, an agent may not."""
    monkeypatch.chdir(repo.path)
    repo.files({"app/tax.py": "RATE = 0.2\n", SCOPE: "app\n"})
    repo.add()
    assert _run(repo, "initial", capsys=capsys)[0] == 0
    code, report = _run(repo, f"initial\n\n{TRAILER}", capsys=capsys)
    assert (code, _codes(report)) == (4, [("trust-agent", SCOPE)])


def test_commit_msg_still_judges_the_trailers_alone(
    project: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """commit-msg runs no staged gate (pre-commit did): a mixed human commit is not its
    business, an agent's trailer on a trust change is."""
    project.write(SCOPE, "app\ndocs\n")
    project.add()
    assert hooks.commit_msg(_message(project, "widen scope"), Format.TEXT) == 0
    assert hooks.commit_msg(_message(project, f"widen\n\n{TRAILER}"), Format.TEXT) == 4


@pytest.mark.parametrize("extra", [[], ["message"], ["commit", "0" * 40], ["merge"]])
def test_the_cli_takes_what_git_passes(project: GitRepo, extra: list[str]) -> None:
    """git passes MSGFILE [SOURCE [SHA]]; the verdict does not depend on them."""
    project.write(SCOPE, "app\ndocs\n")
    project.add()
    message = _message(project, f"widen scope\n\n{TRAILER}")
    proc = run_agentgate("hook", "prepare-commit-msg", str(message), *extra, cwd=project.path)
    assert proc.returncode == 4, proc.stderr
    assert proc.stdout.startswith("agentgate hook prepare-commit-msg: blocked (exit 4)")


def test_a_missing_message_file_fails_closed(project: GitRepo) -> None:
    proc = run_agentgate("hook", "prepare-commit-msg", "no-such-file", cwd=project.path)
    assert proc.returncode == 64, (proc.stdout, proc.stderr)
    [line] = proc.stderr.splitlines()
    assert line.startswith("agentgate: ")
