"""``check`` excuses failures with the merge-base's freeze ledger, never the range's (issue 11).

A freeze record is a trust file: committed alone by a human it passes the trust rules, but
within the range that adds it it excuses nothing. The same record at the base does.
"""

from __future__ import annotations

import json
from typing import Any

from agentgate.flows import check as checkrun
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.ledger import SESSION, freeze_json, write_freeze

# total(10) no longer 12.0: test_session::test_total fails, test_report still passes.
BREAKS_TOTAL = {"app/checkout/session.py": "from ..pricing import tax as tax_mod\n\n"
                "def total(x):\n    return x + tax_mod.tax(x) + 0.0001\n"}


def _check(repo: GitRepo) -> dict[str, Any]:
    return checkrun.check(repo.path, "base", "HEAD").to_json()


def _cli_check(repo: GitRepo) -> tuple[int, dict[str, Any]]:
    proc = run_agentgate("check", "--base", "base", "--format", "json", cwd=repo.path)
    return proc.returncode, json.loads(proc.stdout)


def test_a_record_committed_in_the_range_excuses_nothing(chain: GitRepo) -> None:
    """The attack: a human-looking, standalone freeze commit passes the trust rules, then the
    break. Read at head, the ledger would excuse the failure it was written for."""
    write_freeze(chain, SESSION)
    chain.commit("freeze test_total")  # alone, by a human: the trust rules allow it
    commit(chain, BREAKS_TOTAL)
    code, data = _cli_check(chain)
    assert (code, data["verdict"]) == (1, "failed")
    assert data["results"]["failed_ids"] == [SESSION]
    assert data["results"]["frozen_failed_ids"] == []
    assert [r["code"] for r in data["reasons"]] == ["tests-failed"]
    assert (f"freeze record added or changed in the range excuses nothing until it is in "
            f"the base: {SESSION}") in data["notes"]


def test_the_same_record_at_the_base_excuses_the_failure(chain: GitRepo) -> None:
    write_freeze(chain, SESSION)
    chain.commit("freeze test_total")
    chain.git("tag", "-f", "base")
    commit(chain, BREAKS_TOTAL)
    code, data = _cli_check(chain)
    assert (code, data["verdict"]) == (0, "scoped")
    assert data["results"]["frozen_failed_ids"] == [SESSION]
    assert data["results"]["failed_ids"] == []
    assert f"frozen test failed (excused by its freeze): {SESSION}" in data["notes"]


def test_a_base_record_changed_in_the_range_excuses_nothing(chain: GitRepo) -> None:
    """Renewing or rewriting a record inside the range is a trust change too: the base's form
    is what excuses, and only where head left it as it was."""
    path = write_freeze(chain, SESSION)
    chain.commit("freeze test_total")
    chain.git("tag", "-f", "base")
    changed = freeze_json(SESSION, reason="fails under PYTHONHASHSEED=3 on main, still")
    path.write_text(json.dumps(changed, indent=2) + "\n", encoding="utf-8")
    chain.commit("reword the freeze")
    commit(chain, BREAKS_TOTAL)
    data = _check(chain)
    assert (data["exit_code"], data["results"]["failed_ids"]) == (1, [SESSION])


def test_a_base_record_removed_in_the_range_excuses_nothing(chain: GitRepo) -> None:
    """Unfreezing is the safe direction: head's ledger can take an excuse away."""
    path = write_freeze(chain, SESSION)
    chain.commit("freeze test_total")
    chain.git("tag", "-f", "base")
    path.unlink()
    chain.commit("unfreeze test_total")
    commit(chain, BREAKS_TOTAL)
    data = _check(chain)
    assert (data["exit_code"], data["results"]["failed_ids"]) == (1, [SESSION])


def test_an_invalid_ledger_at_head_still_blocks(chain: GitRepo) -> None:
    """Excused by the base, validated at head: a broken record added in the range blocks."""
    write_freeze(chain, SESSION)
    chain.commit("freeze test_total")
    chain.git("tag", "-f", "base")
    commit(chain, {".agentgate/freezes/broken.json": "{"}, "ledger")
    commit(chain, BREAKS_TOTAL)
    data = _check(chain)
    assert (data["exit_code"], data["results"]) == (4, {"ran": False})


def test_an_invalid_record_at_the_base_excuses_nothing(chain: GitRepo) -> None:
    """A base record with no owner is not honoured; head fixes it in the range (a trust
    change), and the fixed form excuses nothing until it is in the base."""
    write_freeze(chain, SESSION, owner="")
    chain.commit("freeze test_total without an owner")
    chain.git("tag", "-f", "base")
    write_freeze(chain, SESSION)
    chain.commit("name the owner")
    commit(chain, BREAKS_TOTAL)
    data = _check(chain)
    assert (data["exit_code"], data["results"]["failed_ids"]) == (1, [SESSION])


def _plan_and_check(repo: GitRepo) -> tuple[tuple[int, str], tuple[int, str]]:
    verdicts = []
    for command in ("plan", "check"):
        proc = run_agentgate(command, "--base", "base", "--format", "json", cwd=repo.path)
        verdicts.append((proc.returncode, json.loads(proc.stdout)["verdict"]))
    return verdicts[0], verdicts[1]


def test_plan_and_check_ignore_an_untracked_record_alike(chain: GitRepo) -> None:
    """Issue 13: an untracked file in the ledger folder made plan say blocked while check said
    scoped. It is not part of the range: both judge the ledger head commits."""
    commit(chain, {"app/report.py": chain.path.joinpath("app/report.py").read_text() + "#\n"})
    chain.write(".agentgate/freezes/stray.json", "{not json")
    assert _plan_and_check(chain) == ((0, "scoped"), (0, "scoped"))


def test_plan_and_check_block_a_committed_bad_record_alike(chain: GitRepo) -> None:
    """The counterpart: a bad record head commits blocks both, even when the work tree has
    deleted it since (an uncommitted deletion is not part of the range either)."""
    chain.write(".agentgate/freezes/bad.json", json.dumps(freeze_json(SESSION, owner="")))
    chain.commit("a bad freeze record")
    (chain.path / ".agentgate/freezes/bad.json").unlink()
    assert _plan_and_check(chain) == ((4, "blocked"), (4, "blocked"))
