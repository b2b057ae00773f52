"""The rough edges a new user hit (issue 13 item 8), each played on the real CLI."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from agentgate.cli import spec
from agentgate.cli.app import main
from tests.support.git_repo import GitRepo, git_env, run_agentgate


def test_an_unknown_format_is_one_line_listing_the_choices(app_repo: GitRepo) -> None:
    proc = run_agentgate("plan", "--base", "HEAD", "--format", "yaml", cwd=app_repo.path)
    assert proc.returncode == 64 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "agentgate: Invalid value for '--format' / '-f': 'yaml' is not one of 'text', 'json', "
        "'markdown'. (see: agentgate plan --help)"
    ]


@pytest.mark.parametrize("args", [
    ("plan", "--format", "json"),  # a usage error, from the typer app
    ("plan", "--base", "no-such-rev", "-fjson"),  # an expected error, from the fast path
    ("ledger", "list", "--format=json", "--bogus"),
])
def test_a_usage_error_under_format_json_prints_a_json_object(
    app_repo: GitRepo, args: tuple[str, ...]
) -> None:
    proc = run_agentgate(*args, cwd=app_repo.path)
    assert proc.returncode == 64
    data = json.loads(proc.stdout)
    assert data == {"error": proc.stderr.strip().removeprefix("agentgate: "), "exit_code": 64}


def test_a_usage_error_in_text_prints_nothing_on_stdout(app_repo: GitRepo) -> None:
    proc = run_agentgate("plan", cwd=app_repo.path)
    assert (proc.returncode, proc.stdout) == (64, "")
    assert proc.stderr == "agentgate: Missing option '--base'. (see: agentgate plan --help)\n"


def test_an_option_missing_its_value_points_at_its_commands_help(app_repo: GitRepo) -> None:
    proc = run_agentgate("plan", "--base", cwd=app_repo.path)
    assert proc.stderr.endswith("(see: agentgate plan --help)\n")


HELP_PAGES = [[], *([g.name] for g in spec.GROUPS), *(list(c.path) for c in spec.COMMANDS)]


@pytest.mark.parametrize("path", HELP_PAGES, ids=" ".join)
def test_no_help_page_shows_a_flags_type(
    path: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*path, "--help"]) == 0
    page = capsys.readouterr().out
    assert "--help" in page and "<bool>" not in page


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_attribute_help_keeps_each_sentence_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["attribute", "--help"]) == 0
    page = _words(capsys.readouterr().out)
    assert _words(spec.ATTRIBUTE.help) in page
    for param in spec.ATTRIBUTE.params:
        if not param.hidden:
            assert _words(param.help) in page, param.name
    # The command list shows each command's whole line, not 45 characters and "...".
    assert main(["--help"]) == 0
    assert _words(spec.ATTRIBUTE.help) in _words(capsys.readouterr().out)


def test_a_blob_or_tree_given_as_base_says_what_it_is(app_repo: GitRepo) -> None:
    blob = app_repo.git("rev-parse", "HEAD:README.md").strip()
    tree = app_repo.git("rev-parse", "HEAD^{tree}").strip()
    for rev, kind in ((blob[:12], "blob"), (tree, "tree")):
        proc = run_agentgate("plan", "--base", rev, cwd=app_repo.path)
        assert proc.returncode == 64
        assert proc.stderr == (f"agentgate: base revision {rev!r} is a {kind}, not a commit; "
                               "name a commit, branch or tag\n")
    proc = run_agentgate("plan", "--base", "0" * 12, cwd=app_repo.path)
    assert "'000000000000' does not exist here" in proc.stderr


def test_a_repository_git_refuses_for_its_owner_says_so_and_the_way_out(
    app_repo: GitRepo,
) -> None:
    # git >= 2.35.2 honours this test variable as if another user owned the repository.
    env = git_env(GIT_TEST_ASSUME_DIFFERENT_OWNER="1")
    where = str(app_repo.path.resolve())
    proc = run_agentgate("plan", "--base", "HEAD", cwd=app_repo.path, env=env)
    assert proc.returncode == 64
    assert proc.stderr == (
        f"agentgate: git refuses the repository at {where}: detected dubious ownership "
        "(another user owns it); if you trust it, run: git config --global --add "
        f"safe.directory {where}\n")
    # The way out it names works (the global config is the test's own $HOME).
    way_out = re.search(r"run: (git config .*)$", proc.stderr.strip())
    assert way_out is not None
    subprocess.run(way_out[1].split(), check=True, env=env)
    assert run_agentgate("plan", "--base", "HEAD", cwd=app_repo.path, env=env).returncode == 0


def test_outside_any_repository_is_still_said_so(tmp_path: Path) -> None:
    proc = run_agentgate("plan", "--base", "HEAD", cwd=tmp_path)
    assert proc.stderr == (f"agentgate: {tmp_path.resolve()} is not inside a git work tree; "
                           "run agentgate in a repo\n")
