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
    ("plan", "--format", "json", "--bogus"),  # a usage error, from the typer app
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
    proc = run_agentgate("plan", "--bogus", cwd=app_repo.path)
    assert (proc.returncode, proc.stdout) == (64, "")
    assert proc.stderr.startswith("agentgate: No such option: --bogus")
    assert proc.stderr.endswith("(see: agentgate plan --help)\n") and proc.stderr.count("\n") == 1


def test_without_base_plan_and_check_use_the_base_branch(app_repo: GitRepo) -> None:
    """New-user trial: ``plan`` and ``check`` required ``--base`` though ``base_branch`` is a
    setting. Without it they use the configured branch, else the first of origin/HEAD,
    origin/main, origin/master, main, master; none found is one line, exit 64."""
    branch = app_repo.git("branch", "--show-current").strip()
    app_repo.git("checkout", "-q", "-b", "feature")
    app_repo.files({"app/pricing/tax.py": "RATE = 0.2\n\ndef tax(x):\n    return x * RATE * 1\n"})
    app_repo.commit("agent change")
    app_repo.git("branch", "-m", branch, "trunk")
    proc = run_agentgate("plan", cwd=app_repo.path)
    assert (proc.returncode, proc.stdout) == (64, "")
    assert proc.stderr.startswith("agentgate: no base branch found (tried origin/HEAD, ")
    app_repo.files({"pyproject.toml": "[tool.agentgate]\nbase_branch = \"trunk\"\n"})
    app_repo.commit("config")  # read at the checkout, as the CLI does
    plan = json.loads(run_agentgate("plan", "-fjson", cwd=app_repo.path).stdout)
    assert plan["base"] == app_repo.sha("trunk") and "tests/test_tax.py" in plan["tests"]
    check = run_agentgate("check", "-fjson", cwd=app_repo.path)
    assert check.returncode in (0, 2), check.stdout + check.stderr


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
