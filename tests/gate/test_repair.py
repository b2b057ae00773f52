"""A committed config typo used to block the commit that fixes it (issue 13 item 6): a human's
trust-only commit repairing an invalid config is judged by the rules it restores, at commit
time and at push time. Each way to abuse that is played next to the repair that must pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgate.core.errors import ConfigError
from agentgate.core.model import Verdict
from agentgate.flows import hooks
from agentgate.gate import checks as gate
from agentgate.report.render import Format
from tests.support.e2e_project import (
    commit,
    copy_hooks,
    hooked_project,
    plain_hook_env,
    push,
    remote_sha,
    set_up_remote,
)
from tests.support.git_repo import GitRepo, run_agentgate

TYPO = '[tool.agentgate]\nscop_file = ".agentgate/scope"\n'
FIXED = '[tool.agentgate]\nscope_file = ".agentgate/scope"\n'
BROKEN = "pyproject.toml [tool.agentgate]: unknown key 'scop_file' (did you mean 'scope_file'?)"
WAY_OUT = "a human repairs it in a commit of its own that changes only trust files"
CLAUDE = "Co-authored-by: Claude <noreply@anthropic.com>"


@pytest.fixture
def broken(app_repo: GitRepo) -> str:
    """The app with a typo committed in its config (past the hooks); its id."""
    app_repo.write(".agentgate/scope", "app\ntests\n")
    app_repo.write("pyproject.toml", TYPO)
    return app_repo.commit("config with a typo")


# --- commit time ----------------------------------------------------------------------------


def test_a_humans_trust_only_repair_is_judged_by_the_config_it_restores(
    app_repo: GitRepo, broken: str
) -> None:
    app_repo.write("pyproject.toml", FIXED)
    app_repo.add()
    result = gate.check_staged(app_repo.path, {})
    assert result.reasons == [] and result.verdict is Verdict.SCOPED
    assert result.notes[0] == (
        f"the configuration at HEAD is invalid ({BROKEN}); this commit, a human's trust-only "
        "repair, is judged by the configuration it restores")
    proc = run_agentgate("hook", "pre-commit", cwd=app_repo.path)
    assert proc.returncode == 0, proc.stderr


def test_the_repair_is_judged_by_the_restored_rules_not_waved_through(
    app_repo: GitRepo, broken: str
) -> None:
    # The repair also stages a manifest that does not match the fixtures.
    app_repo.write("pyproject.toml", FIXED)
    app_repo.write(".agentgate/fixtures.sha256", "0" * 64 + "  tests/fixtures/a.json\n")
    app_repo.add()
    reasons = gate.check_staged(app_repo.path, {}).reasons
    assert [(r.code, r.path) for r in reasons] == [("fixture-manifest", "tests/fixtures/a.json")]


def test_without_a_repair_every_hook_is_64_and_names_the_way_out(
    app_repo: GitRepo, broken: str
) -> None:
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n")
    app_repo.add()
    proc = run_agentgate("hook", "pre-commit", cwd=app_repo.path)
    assert proc.returncode == 64
    assert proc.stderr.splitlines() == [
        f"agentgate: {BROKEN} (the configuration at HEAD); the staged configuration is still "
        f"invalid: {WAY_OUT}"
    ]


def test_an_agents_repair_is_refused(app_repo: GitRepo, broken: str) -> None:
    app_repo.write("pyproject.toml", FIXED)
    app_repo.add()
    with pytest.raises(ConfigError, match=r"an agent's commit cannot repair it \(environment "
                       "variable CLAUDECODE is set\\)"):
        gate.check_staged(app_repo.path, {"CLAUDECODE": "1"})


def test_an_agents_repair_cannot_switch_agent_detection_off(
    app_repo: GitRepo, broken: str
) -> None:
    app_repo.write("pyproject.toml", FIXED + "[tool.agentgate.agents]\ndefaults = false\n")
    app_repo.add()
    assert gate.check_staged(app_repo.path, {}).reasons == []  # a human may do that...
    with pytest.raises(ConfigError, match="an agent's commit cannot repair it"):
        gate.check_staged(app_repo.path, {"CLAUDECODE": "1"})  # ...an agent may not


def test_an_agent_named_only_by_its_trailer_cannot_repair(
    app_repo: GitRepo, broken: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app_repo.write("pyproject.toml", FIXED)
    app_repo.add()
    message = tmp_path / "MSG"
    monkeypatch.chdir(app_repo.path)
    message.write_text("fix the config\n")
    assert hooks.commit_msg(message, Format.TEXT) == 0
    message.write_text(f"fix the config\n\n{CLAUDE}\n")
    with pytest.raises(ConfigError, match=r"an agent's commit cannot repair it \(trailer"):
        hooks.commit_msg(message, Format.TEXT)


def test_a_repair_mixing_code_is_refused(app_repo: GitRepo, broken: str) -> None:
    app_repo.write("pyproject.toml", FIXED)
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n")
    app_repo.add()
    with pytest.raises(ConfigError, match=r"it also changes app/pricing/tax\.py, which is "
                       "not a trust file"):
        gate.check_staged(app_repo.path, {})


def test_a_repair_cannot_declare_its_own_code_a_trust_file(
    app_repo: GitRepo, broken: str
) -> None:
    app_repo.write("pyproject.toml", FIXED + 'trust_paths = ["app"]\n')
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n")
    app_repo.add()
    with pytest.raises(ConfigError, match=r"it also changes app/pricing/tax\.py"):
        gate.check_staged(app_repo.path, {})


# --- push time ----------------------------------------------------------------------------


def test_a_range_starting_with_a_humans_repair_is_judged_by_the_restored_rules(
    app_repo: GitRepo, broken: str
) -> None:
    app_repo.write("pyproject.toml", FIXED + 'ledger = ".agentgate/ledger"\n')
    repair = app_repo.commit("fix the config")
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n")
    head = app_repo.commit("tax")
    checked = gate.check_range(app_repo.path, broken, head)
    assert checked.reasons == [] and checked.config.ledger == ".agentgate/ledger"
    assert checked.notes[0] == (
        f"the configuration at the merge-base {broken[:10]} is invalid ({BROKEN}); commit "
        f"{repair[:10]}, a human's trust-only repair, is judged by the configuration it restores")
    proc = run_agentgate("plan", "--base", broken, cwd=app_repo.path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_repair_may_take_several_trust_only_commits(app_repo: GitRepo, broken: str) -> None:
    app_repo.write("pytest.ini", "not an ini file\n")
    app_repo.write("pyproject.toml", TYPO)
    base = app_repo.commit("break pytest.ini too")
    app_repo.write("pytest.ini", "[pytest]\n")
    app_repo.commit("fix pytest.ini")
    app_repo.write("pyproject.toml", FIXED)
    head = app_repo.commit("fix pyproject")
    assert gate.check_range(app_repo.path, base, head).reasons == []


def test_an_agents_repair_in_a_range_is_refused(app_repo: GitRepo, broken: str) -> None:
    app_repo.write("pyproject.toml", FIXED)
    head = app_repo.commit(f"fix the config\n\n{CLAUDE}")
    with pytest.raises(ConfigError, match=f"commit {head[:10]}: an agent's commit cannot"):
        gate.check_range(app_repo.path, broken, head)


def test_a_repair_mixing_code_in_a_range_is_refused(app_repo: GitRepo, broken: str) -> None:
    app_repo.write("pyproject.toml", FIXED)
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n")
    head = app_repo.commit("fix the config and the tax")
    proc = run_agentgate("plan", "--base", broken, cwd=app_repo.path)
    assert proc.returncode == 64
    assert proc.stderr.splitlines() == [
        f"agentgate: {BROKEN} (the configuration at the merge-base {broken[:10]}); commit "
        f"{head[:10]}: it also changes app/pricing/tax.py, which is not a trust file: {WAY_OUT}"
    ]


def test_a_repair_after_code_does_not_count(app_repo: GitRepo, broken: str) -> None:
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n")
    first = app_repo.commit("tax first")
    app_repo.write("pyproject.toml", FIXED)
    head = app_repo.commit("then the config")
    with pytest.raises(ConfigError, match=f"commit {first[:10]}: it also changes"):
        gate.check_range(app_repo.path, broken, head)


def test_an_invalid_base_config_with_no_repair_is_64(app_repo: GitRepo, broken: str) -> None:
    app_repo.write(".agentgate/scope", "app\n")
    head = app_repo.commit("narrow the scope")
    with pytest.raises(ConfigError, match="; no commit repairs it: a human repairs it"):
        gate.check_range(app_repo.path, broken, head)


# --- through git's own hooks ----------------------------------------------------------------


def test_through_the_real_hooks_the_repair_commits_and_pushes(tmp_path: Path) -> None:
    """git runs the plain hooks: before, the fixing commit was refused at every stage."""
    project = hooked_project(tmp_path / "shop", copy_hooks(tmp_path))
    env = plain_hook_env()
    remote = set_up_remote(project, env)
    text = (project.path / "pyproject.toml").read_text()
    project.write("pyproject.toml", text + TYPO)
    broken = project.commit("a typo, past the hooks")
    project.git("push", "-q", "--no-verify", "origin", "main", env=env)
    project.write("pyproject.toml", text + FIXED)
    project.add()
    refused = commit(project, env, "fix the config", CLAUDECODE="1")
    assert refused.code != 0 and refused.hooks.get("pre-commit") == [64], refused.out
    done = commit(project, env, "fix the config")
    assert done.code == 0 and project.sha() != broken, done.out
    assert done.hooks == {"pre-commit": [0], "prepare-commit-msg": [0], "commit-msg": [0]}
    pushed = push(project, env, "-q", "origin", "main")
    assert pushed.code == 0 and pushed.hooks == {"pre-push": [0]}, pushed.out
    assert remote_sha(remote, "main") == project.sha()


def test_with_trust_signers_at_the_base_only_a_signed_repair_counts(
    app_repo: GitRepo, tmp_path: Path,
) -> None:
    """Attack (found in review): the base's broken config names trust_signers; an unsigned
    "human" repair that also drops trust_signers would switch every signature off. It is
    refused (64); the same repair signed by an allowed key is judged by what it restores."""
    from tests.gate.test_govern import SIGNERS, _allowed, _key, _signed

    key = _key(tmp_path, "human")
    app_repo.write(".agentgate/scope", "app\ntests\n")
    app_repo.write(SIGNERS, _allowed(key))
    app_repo.write("pyproject.toml", TYPO + f'trust_signers = "{SIGNERS}"\n')
    base = app_repo.commit("config with a typo")
    app_repo.write("pyproject.toml", FIXED)
    unsigned = app_repo.commit("fix the config")
    with pytest.raises(ConfigError, match="trust_signers"):
        gate.check_range(app_repo.path, base, unsigned)
    app_repo.git("reset", "-q", "--hard", base)
    app_repo.write("pyproject.toml", FIXED + f'trust_signers = "{SIGNERS}"\n')
    signed = _signed(app_repo, "fix the config", key)
    assert gate.check_range(app_repo.path, base, signed).reasons == []
