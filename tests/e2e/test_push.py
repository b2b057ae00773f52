"""Push time, end to end, once per driver: a real ``git push`` to a local bare remote with
agentgate's pre-push hook installed as a plain ``hooks/`` script and through pre-commit.

Bad commits are made past every commit hook (``GitRepo.commit``: ``--no-verify`` alone no
longer skips agentgate, which runs at prepare-commit-msg too): the push is where they are
caught. Scenarios that only one driver has are in test_push_plain.py and
test_precommit.py.
"""

from __future__ import annotations

import re

import pytest

from tests.support.e2e_project import (
    CODE,
    HOW_TO,
    SCOPE,
    bad_commit,
    good_commit,
    push,
    remote_sha,
)
from tests.support.git_repo import GitRepo
from tests.support.hook_drivers import Driver

pytestmark = pytest.mark.e2e


def test_push_of_a_no_verify_mixed_commit_is_blocked(
    driver: Driver, project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    before = remote_sha(remote, "main")
    bad = bad_commit(project)
    outcome = push(project, env, "origin", "main")
    driver.assert_refused(outcome, "pre-push", 4)
    label = driver.push_label("refs/heads/main", bad)
    assert f"agentgate hook pre-push {label}: blocked (exit 4)" in outcome.out
    [line] = outcome.lines("blocked: trust-mixed")
    assert line.startswith(f"blocked: trust-mixed [{bad[:10]}] {SCOPE}: trust file {SCOPE}")
    assert HOW_TO in line
    assert remote_sha(remote, "main") == before


def test_push_of_clean_commits_passes(
    driver: Driver, project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    base = project.sha()
    head = good_commit(project)
    outcome = push(project, env, "origin", "main")
    assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out
    label = driver.push_label("refs/heads/main", head)
    assert f"agentgate hook pre-push {label}: scoped (exit 0)" in outcome.out
    assert f"range: {base[:10]}...{head[:10]}" in outcome.out
    assert remote_sha(remote, "main") == head


def test_deleting_a_remote_branch_passes(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    project.git("checkout", "-q", "-b", "feature")
    bad_commit(project)  # the branch itself would be blocked, but deleting it pushes nothing
    project.git("push", "-q", "--no-verify", "origin", "feature", env=env)
    outcome = push(project, env, "origin", ":feature")
    assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out
    assert "agentgate" not in outcome.out  # nothing to check, nothing to say
    assert remote_sha(remote, "feature") is None


def test_force_push_is_compared_with_what_the_remote_had(
    driver: Driver, project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    fork = project.sha()
    first = good_commit(project, "0.3")
    project.git("push", "-q", "--no-verify", "origin", "main", env=env)
    project.git("reset", "-q", "--hard", fork)
    bad_commit(project)
    driver.assert_refused(push(project, env, "--force", "origin", "main"), "pre-push", 4)
    assert remote_sha(remote, "main") == first
    project.git("reset", "-q", "--hard", fork)
    head = good_commit(project, "0.35", "fix tax differently")
    outcome = push(project, env, "--force", "origin", "main")
    assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out
    # A...B: from their merge-base (fork), whichever of the two the report names as base.
    assert re.search(rf"range: ({fork[:10]}|{first[:10]})\.\.\.{head[:10]}", outcome.out)
    assert remote_sha(remote, "main") == head


SKIPPED_TEST = ("import pytest\n\nfrom app.pricing.tax import tax\n\n\n"
                "@pytest.mark.skip(reason='flaky')\ndef test_tax():\n    assert tax(10) == 2\n")


@pytest.mark.parametrize("second", ["breaks-the-code", "keeps-it-green"])
def test_a_skip_pushed_earlier_on_the_branch_is_judged_at_every_push(
    driver: Driver, project: GitRepo, remote: GitRepo, env: dict[str, str], second: str
) -> None:
    """Two-push laundering: push 1 skips a test that still passes (its base form passes on
    head: harmless), push 2 breaks what it covered. Judged against the remote's tip of the
    branch, push 2 finds the test skipped at its base already and lets it through; the
    contract is the branch's merge-base with the base branch, as CI's."""
    project.git("checkout", "-q", "-b", "feature")
    project.write("tests/test_tax.py", SKIPPED_TEST)
    project.commit("skip a flaky test")
    first = push(project, env, "origin", "feature")
    assert first.code == 0 and first.hooks == {"pre-push": [0]}, first.out
    if second == "breaks-the-code":
        project.write(CODE, "RATE = 0.3\n\n\ndef tax(x):\n    return x * RATE\n")
        project.commit("raise the rate")
    else:
        good_commit(project, "0.4")
    outcome = push(project, env, "origin", "feature")
    assert "compared against its merge-base with refs/remotes/origin/" in outcome.out
    if second == "breaks-the-code":
        driver.assert_refused(outcome, "pre-push", 4)
        assert outcome.lines("blocked:"), outcome.out
    else:
        assert outcome.code == 0 and outcome.hooks == {"pre-push": [0]}, outcome.out
