"""Every place that names agentgate's hook stages names the same ones: the hook repository
(``.pre-commit-hooks.yaml``), the plain ``hooks/`` scripts, the README's install snippets and
hooks table, ``agentgate init``'s snippet and what the end-to-end drivers install. A stage
missing from one of them is a hook a user never gets (issue 11, item 9: prepare-commit-msg)."""

from __future__ import annotations

import re

import yaml  # type: ignore[import-untyped]  # pre-commit's own dependency

from agentgate.flows.starter import PRE_COMMIT_SNIPPET
from tests.support.e2e_project import CHECKOUT
from tests.support.hook_drivers import HOOK_ID_OF, INSTALL_TYPES, config_yaml

README = (CHECKOUT / "README.md").read_text(encoding="utf-8")
DECLARED = yaml.safe_load((CHECKOUT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
STAGES = [stage for hook in DECLARED for stage in hook["stages"]]


def _install_types(text: str) -> list[list[str]]:
    found = re.findall(r"default_install_hook_types: \[([a-z, -]+)\]", text)
    return [[s.strip() for s in line.split(",")] for line in found]


def _install_commands(text: str) -> list[list[str]]:
    return [re.findall(r"-t ([a-z-]+)", line) for line in re.findall(r"install( -t .+)", text)]


def test_each_hook_id_runs_the_cli_command_of_its_one_stage() -> None:
    for hook in DECLARED:
        [stage] = hook["stages"]
        assert hook["entry"] == f"agentgate hook {stage}"
        assert HOOK_ID_OF[stage] == hook["id"]


def test_a_plain_hook_script_exists_for_every_stage_and_no_other() -> None:
    scripts = sorted(p.name for p in (CHECKOUT / "hooks").iterdir())
    assert scripts == sorted(STAGES)


def test_readme_and_init_install_every_stage() -> None:
    for text in (README, PRE_COMMIT_SNIPPET):
        assert _install_types(text) == [STAGES], text
        assert _install_commands(text) == [STAGES], text
        for hook in DECLARED:
            assert f"- id: {hook['id']}" in text


def test_the_readme_hooks_table_has_one_row_per_hook_in_order() -> None:
    rows = re.findall(r"^\| `(agentgate-[a-z-]+)` \| `([a-z-]+)` \|", README, flags=re.M)
    assert rows == [(hook["id"], hook["stages"][0]) for hook in DECLARED]


def test_the_drivers_install_what_the_readme_says() -> None:
    assert list(INSTALL_TYPES[1::2]) == STAGES
    assert _install_types(config_yaml((CHECKOUT, "0" * 40))) == [STAGES]


def test_the_message_stages_are_passed_the_message_file() -> None:
    """pre-commit hands prepare-commit-msg and commit-msg hooks the message file as their one
    filename (pre_commit/commands/run.py): ``pass_filenames: false`` would drop it."""
    for hook in DECLARED:
        message_stage = hook["stages"][0] in ("prepare-commit-msg", "commit-msg")
        assert hook.get("pass_filenames", True) is message_stage
