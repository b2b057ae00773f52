"""The README is part of the interface: its commands, hook ids and agent list must be true."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from agentgate.core.config import DEFAULT_AGENT_ENV

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start_commands() -> list[str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section)


def test_quick_start_is_two_commands_that_ci_runs() -> None:
    commands = _quick_start_commands()
    assert len(commands) == 2
    assert "agentgate demo" in commands[0]
    assert "[test]" in commands[1] and "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for command in commands:
        assert command in ci, f"{command!r} is not what .ci/run runs"


def test_readme_and_hook_repo_list_the_same_hook_ids() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    ids = {hook["id"] for hook in hooks}
    documented = set(re.findall(r"^\| `(agentgate-[a-z-]+)` \|", README, flags=re.M))
    assert ids == documented
    for hook in hooks:
        assert f"id: {hook['id']}" in README


def test_readme_names_every_default_agent_variable() -> None:
    for name in DEFAULT_AGENT_ENV:
        assert f"`{name}`" in README


def test_hook_scripts_call_the_cli_and_hold_no_logic() -> None:
    for name in ("pre-commit", "prepare-commit-msg", "commit-msg", "pre-push"):
        script = (ROOT / "hooks" / name).read_text(encoding="utf-8")
        assert f'exec agentgate hook {name} "$@"' in script
        assert (ROOT / "hooks" / name).stat().st_mode & 0o111
