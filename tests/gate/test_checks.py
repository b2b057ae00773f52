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


@pytest.mark.parametrize(("files", "codes"), [
    ({"pyproject.toml": '[tool.agentgate]\nscop_file = ".agentgate/scope"\n'},
     ["config-invalid"]),
    ({".agentgate/scope": "app\ntests/*.py\n"}, ["config-invalid"]),  # a glob
    ({"pyproject.toml": '[tool.agentgate]\nscope_file = ".agentgate/scope"\n',
      ".agentgate/scope": "app\ntests\n"}, []),
], ids=["unknown-key", "scope-glob", "valid"])
def test_a_commit_that_breaks_the_configuration_is_blocked_when_staged(
    app_repo: GitRepo, files: dict[str, str], codes: list[str],
) -> None:
    """New-user trial (marshmallow): a human's config typo and a glob in the scope file
    passed every commit hook, and every commit after them exited 64. pre-commit's own
    check-toml refuses the commit that breaks the file; so does this now."""
    app_repo.files(files)
    app_repo.add()
    result = gate.check_staged(app_repo.path, {})
    assert [r.code for r in result.reasons] == codes
    if codes:
        assert result.verdict is Verdict.BLOCKED
        assert "every agentgate command after this commit would exit 64" in (
            result.reasons[0].detail)
    # The range sees it as well.
    base = app_repo.sha()
    head = app_repo.commit("configure agentgate")
    found = [r.code for r in gate.check_range(app_repo.path, base, head).reasons]
    assert [c for c in found if c == "config-invalid"] == codes
