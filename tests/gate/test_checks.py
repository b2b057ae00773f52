"""The freeze ledger at commit time: touched records must leave the ledger valid."""

from __future__ import annotations

import json

import pytest

from agentgate.core.model import Verdict
from agentgate.gate import checks as gate
from tests.support.git_repo import GitRepo
from tests.support.ledger import TAX, freeze_json


def test_a_valid_record_committed_alone_by_a_human_passes(app_repo: GitRepo) -> None:
    app_repo.write(".agentgate/freezes/tax.json", json.dumps(freeze_json(TAX)))
    app_repo.add()
    assert gate.check_staged(app_repo.path, {}).reasons == []


def test_an_invalid_record_is_blocked_at_commit_time(app_repo: GitRepo) -> None:
    app_repo.write(".agentgate/freezes/tax.json", json.dumps(freeze_json(TAX, owner="")))
    app_repo.add()
    result = gate.check_staged(app_repo.path, {})
    assert result.verdict is Verdict.BLOCKED
    assert [r.code for r in result.reasons] == ["ledger-owner"]


def test_a_record_with_the_test_it_excuses_is_blocked(app_repo: GitRepo) -> None:
    app_repo.write(".agentgate/freezes/tax.json", json.dumps(freeze_json(TAX)))
    app_repo.write("tests/test_tax.py", "def test_tax():\n    assert False\n")
    app_repo.add()
    codes = [r.code for r in gate.check_staged(app_repo.path, {}).reasons]
    assert codes == ["trust-mixed"]


@pytest.mark.parametrize(("section", "codes"), [
    ('[tool.agentgate]\nscop_file = ".agentgate/scope"\n', ["config-invalid"]),  # a typo
    ('[tool.agentgate]\nscope_file = ".agentgate/scope"\n', []),
], ids=["unknown-key", "valid"])
def test_a_range_that_breaks_heads_configuration_is_blocked(
    app_repo: GitRepo, section: str, codes: list[str],
) -> None:
    """New-user trial: a human's commit misspelt a key; the range passed, and every command
    after it exited 64."""
    base = app_repo.sha()
    app_repo.write("pyproject.toml", section)
    head = app_repo.commit("configure agentgate")
    found = [r.code for r in gate.check_range(app_repo.path, base, head).reasons]
    assert [c for c in found if c == "config-invalid"] == codes
