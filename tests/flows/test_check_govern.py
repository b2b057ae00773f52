"""``check`` on the seed workflow (issue 11 item 8): a human widens the scope in the pull
request, the agent's commit after it uses the wider scope. The widening governs the scope
only: a freeze record committed with it still excuses nothing in the range."""

from __future__ import annotations

import json
from typing import Any

from tests.flows.test_check_ledger import BREAKS_TOTAL
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.ledger import SESSION, write_freeze

SCOPE = ".agentgate/scope"
AGENT = "bot (aider)"
UTIL = {"app/util.py": "def shout(s):\n    return s.upper()  # same behaviour\n"}


def _scoped(chain: GitRepo) -> None:
    chain.write(SCOPE, "app/pricing\ntests\n")
    chain.commit("declare scope")
    chain.git("tag", "-f", "base")


def _check(chain: GitRepo) -> tuple[int, dict[str, Any]]:
    proc = run_agentgate("check", "--base", "base", "--format", "json", cwd=chain.path)
    return proc.returncode, json.loads(proc.stdout)


def _agent_commit(chain: GitRepo, files: dict[str, str]) -> None:
    chain.files(files)
    chain.commit("agent's change", author=AGENT)


def test_a_humans_widening_lets_the_agents_commit_after_it_pass(chain: GitRepo) -> None:
    _scoped(chain)
    commit(chain, {SCOPE: "app\ntests\n"}, "widen the scope for util")
    _agent_commit(chain, UTIL)
    code, data = _check(chain)
    assert (code, data["verdict"]) == (0, "scoped")
    assert any("a human's trust-only commit, governs the scope" in n for n in data["notes"])


def test_the_same_widening_by_an_agent_is_refused(chain: GitRepo) -> None:
    _scoped(chain)
    _agent_commit(chain, {SCOPE: "app\ntests\n"})
    _agent_commit(chain, UTIL)
    code, data = _check(chain)
    assert (code, data["verdict"]) == (4, "blocked")
    assert [(r["code"], r["path"]) for r in data["reasons"]] == [
        ("trust-agent", SCOPE), ("scope-escape", "app/util.py")]


def test_a_freeze_record_in_the_governing_commit_excuses_nothing(chain: GitRepo) -> None:
    """The attack: the human-looking widening also freezes the test the agent then breaks.
    The widening governs the scope (no scope escape), never the ledger."""
    _scoped(chain)
    write_freeze(chain, SESSION)
    commit(chain, {SCOPE: "app\ntests\n"}, "widen the scope, freeze test_total")
    _agent_commit(chain, BREAKS_TOTAL)
    code, data = _check(chain)
    assert (code, data["verdict"]) == (1, "failed")
    assert [r["code"] for r in data["reasons"]] == ["tests-failed"]
    assert data["results"]["failed_ids"] == [SESSION]
    assert (f"freeze record added or changed in the range excuses nothing until it is in "
            f"the base: {SESSION}") in data["notes"]


def test_a_passing_checks_text_still_names_the_governing_commit(chain: GitRepo) -> None:
    """A passing check keeps only its routine notes for -v (issue 13); which commit widened
    the scope is what a human reviewing the pull request must see (found in review)."""
    _scoped(chain)
    commit(chain, {SCOPE: "app\ntests\n"}, "widen the scope for util")
    _agent_commit(chain, UTIL)
    proc = run_agentgate("check", "--base", "base", cwd=chain.path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = " ".join(proc.stdout.split())  # wrapped at 100 columns
    assert "a human's trust-only commit, governs the scope" in text
    assert "no witness recorded" not in text  # how the band was chosen: a detail
