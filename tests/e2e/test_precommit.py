"""agentgate through the real pre-commit framework only: what the plain hooks do not have
or do otherwise (the hook ids pre-commit installs, PRE_COMMIT_FROM_REF for a new branch, its
first-ref-only pre-push, a freeze record committed with the test it hides).

The hook repository is this checkout as it is now, uncommitted files included (the session
fixture ``hook_repo`` in tests/e2e/conftest.py); pre-commit builds the hook's virtualenv from
it (``pip install .``) once per session, so the console script the hooks run is the packaged
one, as a user gets it. Scenarios both drivers share are in test_commit.py and test_push.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]  # pre-commit's own dependency

from tests.support.e2e_project import (
    CODE,
    bad_commit,
    commit,
    good_commit,
    push,
    push_new_branch_over_old_sin,
    remote_sha,
)
from tests.support.git_repo import GitRepo
from tests.support.hook_drivers import HOOK_IDS, Driver, assert_blocked
from tests.support.ledger import freeze_json

pytestmark = pytest.mark.e2e
DRIVERS = ("pre-commit",)


def test_hook_ids_installed_are_the_ones_the_hook_repo_declares(
    hook_repo: tuple[Path, str],
) -> None:
    """The config these tests install names every hook the hook repository declares."""
    declared = yaml.safe_load((hook_repo[0] / ".pre-commit-hooks.yaml").read_text("utf-8"))
    assert [hook["id"] for hook in declared] == list(HOOK_IDS)


# --- push time ----------------------------------------------------------------------------


def test_new_branch_is_judged_by_its_own_commits(
    driver: Driver, project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    """pre-commit passes the parent of the branch's first unpushed commit as FROM_REF."""
    fork, head, outcome = push_new_branch_over_old_sin(project, env)
    assert outcome.code == 0, outcome.out
    assert f"range: {fork[:10]}...{head[:10]}" in outcome.out
    project.git("checkout", "-q", "-b", "feature-2")
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "feature-2")
    driver.assert_refused(outcome, "pre-push", 4)
    assert [line.split(" ")[2] for line in outcome.lines("blocked:")] == [f"[{bad[:10]}]"]


def test_several_refs_pre_commit_checks_only_the_first(
    driver: Driver, project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    """pre-commit hands its hooks the first pushed ref only (hook_impl._pre_push_ns returns
    on the first line it can use): a bad second ref goes through. The README says so; the
    plain hooks/pre-push checks every ref (tests/e2e/test_push_plain.py), and CI re-checks."""
    project.git("checkout", "-q", "-b", "a")
    good = good_commit(project)
    project.git("checkout", "-q", "-b", "b", "main")
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "a", "b")
    assert outcome.code == 0, outcome.out
    # One report only, labelled with the first ref's local branch (PRE_COMMIT_LOCAL_BRANCH).
    assert good and outcome.lines("agentgate hook pre-push") == [
        "agentgate hook pre-push refs/heads/a: scoped (exit 0)"
    ]
    assert remote_sha(remote, "b") == bad  # the limitation, observed
    project.git("checkout", "-q", "-b", "c", "b")
    good_commit(project, "0.6", "more on c")
    project.git("checkout", "-q", "-b", "d", "main")
    bad_commit(project, "bad d")
    outcome = push(project, env, "origin", "d", "c")  # the bad ref first: it is the one checked
    driver.assert_refused(outcome, "pre-push", 4)
    assert remote_sha(remote, "c") is None and remote_sha(remote, "d") is None


def test_freeze_record_for_a_test_the_same_patch_breaks_is_blocked(
    driver: Driver, project: GitRepo, env: dict[str, str]
) -> None:
    """Issue 4: an agent breaks a test and freezes it in the same commit; the hook refuses,
    and the ledger record alone (by a human) must be valid to pass."""
    nodeid = "tests/test_tax.py::test_tax"
    before = project.sha()
    project.write(CODE, "RATE = 0.3\n\n\ndef tax(x):\n    return x * RATE\n")  # breaks test_tax
    project.write(".agentgate/freezes/test_tax.json", json.dumps(freeze_json(nodeid)))
    project.add()
    outcome = commit(project, env, "fix rate; freeze the flaky test", CLAUDECODE="1")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    assert outcome.lines("blocked: trust-agent .agentgate/freezes/test_tax.json")
    assert outcome.lines("blocked: trust-mixed .agentgate/freezes/test_tax.json")
    # The record on its own, by a human, is checked by the ledger rules: no owner, no freeze.
    project.git("reset", "-q", "--hard", before)
    bad = freeze_json(nodeid, owner="")
    project.write(".agentgate/freezes/test_tax.json", json.dumps(bad))
    project.add()
    outcome = commit(project, env, "freeze test_tax")
    assert_blocked(driver, outcome, project, before, "pre-commit", 4)
    assert outcome.lines("blocked: ledger-owner")
