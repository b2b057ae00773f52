"""The GitHub Action (action.yml), its steps run locally as the runner runs them.

A real bare remote holds main and a pull request's refs as GitHub keeps them
(``refs/pull/1/head``, and ``refs/pull/1/merge``, the merge commit actions/checkout checks
out); the clone is made the way actions/checkout makes it (``fetch-depth: 0``, or its default
depth 1). The environment is the runner's: GITHUB_ACTIONS, GITHUB_OUTPUT per step,
GITHUB_STEP_SUMMARY, RUNNER_TEMP, and the ``github`` context of a pull_request or push event.
Install is skipped (the ``agentgate`` input): the agentgate under test runs.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import actions
from tests.support.e2e_project import CHECKOUT, FILES, plain_hook_env, populate
from tests.support.git_repo import GitRepo

pytestmark = pytest.mark.e2e

ACTION = CHECKOUT / "action.yml"
AGENTGATE = str(Path(sys.executable).parent / "agentgate")
UTIL = {"app/util.py": "def shout(s):\n    return s.upper()\n",
        "tests/test_util.py": "from app.util import shout\n\n\n"
        "def test_shout():\n    assert shout('a') == 'A'\n"}
DOCS = [f"docs/page{i:02}.md" for i in range(12)]  # outside the declared scope


@dataclass
class Remote:
    bare: GitRepo
    dev: GitRepo
    fork_point: str
    pr_head: str


def make_remote(tmp_path: Path, *, main_ahead: int = 0) -> Remote:
    """main: three commits, then ``main_ahead`` more after the pull request branched off."""
    bare = GitRepo.init(tmp_path / "remote.git", bare=True)
    dev = GitRepo.init(tmp_path / "dev")
    populate(dev)
    dev.files(UTIL)
    dev.commit("initial")
    fork_point = readme_commits(dev, "history", 2)
    dev.git("remote", "add", "origin", str(bare.path))
    readme_commits(dev, "main moves on", main_ahead)
    dev.git("push", "-q", "origin", "main")
    dev.git("checkout", "-q", "-b", "feature", fork_point)
    return Remote(bare, dev, fork_point, "")


def readme_commits(dev: GitRepo, message: str, count: int) -> str:
    for i in range(count):
        dev.write("README.md", f"{FILES['README.md']}{message} {i}\n")
        dev.commit(f"{message} {i}")
    return dev.sha()


BY_AGENT = "\n\nCo-authored-by: Claude <noreply@anthropic.com>"


def open_pull_request(remote: Remote, files: dict[str, str], commits: int = 1,
                      trailer: str = "") -> Remote:
    """The PR's commits, pushed as GitHub keeps them: refs/pull/1/head and the merge commit
    of head into main, refs/pull/1/merge."""
    dev = remote.dev
    for i in range(commits):
        dev.files({path: f"{text}# {i}\n" if commits > 1 else text
                   for path, text in files.items()})
        dev.commit(f"pull request {i}{trailer}")
    head = dev.sha()
    dev.git("checkout", "-q", "--detach", "origin/main")
    dev.git("merge", "-q", "--no-ff", "-m", "Merge pull request #1", head)
    dev.git("push", "-q", "origin", f"{head}:refs/pull/1/head", "HEAD:refs/pull/1/merge")
    return Remote(remote.bare, dev, remote.fork_point, head)


def checkout(remote: Remote, path: Path, *, depth: int | None) -> GitRepo:
    """What actions/checkout does on a pull_request event."""
    clone = GitRepo.init(path)
    clone.git("remote", "add", "origin", remote.bare.path.as_uri())
    merge = "+refs/pull/1/merge:refs/remotes/pull/1/merge"
    if depth is None:
        clone.git("fetch", "-q", "--no-tags", "origin", "+refs/heads/*:refs/remotes/origin/*",
                  merge)
    else:
        clone.git("fetch", "-q", "--no-tags", f"--depth={depth}", "origin", merge)
    clone.git("checkout", "-q", "--detach", "refs/remotes/pull/1/merge")
    return clone


def pull_request_event(remote: Remote) -> dict[str, Any]:
    return {
        "event_name": "pull_request", "base_ref": "main", "head_ref": "feature",
        "event": {"pull_request": {"head": {"sha": remote.pr_head}},
                  "repository": {"default_branch": "main"}},
    }


def run_action(clone: GitRepo, tmp_path: Path, github: dict[str, Any],
               **inputs: str) -> actions.ActionRun:
    env = plain_hook_env() | {"GITHUB_EVENT_NAME": github["event_name"],
                              "GITHUB_BASE_REF": github.get("base_ref", "")}
    return actions.run(ACTION, cwd=clone.path, work=tmp_path / "runner",
                       inputs={"agentgate": AGENTGATE, **inputs}, github=github, env=env)


def message(command: str) -> str:
    return command.split("::", 2)[2]


def test_pull_request_ranks_annotations_and_lists_the_rest_in_the_summary(
    tmp_path: Path,
) -> None:
    """Twelve files outside the scope and a broken test: thirteen errors. Every rule gets its
    first annotation before any gets a second, the most severe first; GitHub's ten, then
    the other three in the summary. The exit code is agentgate's."""
    broken = {"app/pricing/tax.py": FILES["app/pricing/tax.py"].replace("0.2", "0.5")}
    remote = open_pull_request(make_remote(tmp_path), broken | dict.fromkeys(DOCS, "doc\n"),
                               trailer=BY_AGENT)
    clone = checkout(remote, tmp_path / "clone", depth=None)
    done = run_action(clone, tmp_path, pull_request_event(remote))
    assert done.code == 3, done.stderr
    errors = done.commands("error")
    assert len(errors) == 10
    assert errors[0].startswith("::error file=docs/page00.md,title=agentgate%3A scope-escape::")
    assert errors[1].startswith("::error file=tests/test_tax.py,title=agentgate%3A failed "
                                "(tests-failed)::1 test(s) failed in the band")
    assert [e.split(",", 1)[0] for e in errors[2:]] == [
        f"::error file={p}" for p in DOCS[1:9]]
    not_annotated = done.summary.split("#### Not annotated (3 error(s))", 1)[1]
    assert [p for p in DOCS if f"`{p}`" in not_annotated] == DOCS[9:]
    assert "tests/test_tax.py" not in not_annotated
    # The check's own markdown came first, with every reason.
    assert done.summary.startswith("### agentgate check: `scope-escape` (exit 3)")
    assert all(f"| {p} |" in done.summary for p in DOCS)
    notices = done.commands("notice")
    assert "band 1 of 2 test file(s), band run: 0 passed, 1 failed, 0 errors" in notices[0]
    result = json.loads(Path(done.outputs["result"]).read_text(encoding="utf-8"))
    assert result["head"] == remote.pr_head  # the PR's own commits, not GitHub's merge
    assert done.outputs | {"result": ""} == {
        "verdict": "scope-escape", "exit-code": "3", "band-size": "1", "suite-size": "2",
        "verdict-plan": "scope-escape", "ran": "true", "tests-passed": "0",
        "tests-failed": "1", "merge-base": remote.fork_point, "result": "",
        "base": "origin/main", "head": remote.pr_head,
    }


def test_annotations_input_lowers_the_cap(tmp_path: Path) -> None:
    remote = open_pull_request(make_remote(tmp_path), dict.fromkeys(DOCS[:3], "doc\n"),
                               trailer=BY_AGENT)
    clone = checkout(remote, tmp_path / "clone", depth=None)
    done = run_action(clone, tmp_path, pull_request_event(remote), annotations="2")
    assert done.code == 3
    assert len(done.commands("error")) == 2
    assert "#### Not annotated (1 error(s), 2 notice(s))" in done.summary
    assert f"`{DOCS[2]}`" in done.summary.split("#### Not annotated", 1)[1]


def test_shallow_checkout_is_deepened_until_the_merge_base_is_reachable(
    tmp_path: Path,
) -> None:
    """actions/checkout's default depth 1: neither main nor the PR's head is in the clone.
    The range step fetches both and deepens them, a commit a round, until they meet."""
    remote = open_pull_request(make_remote(tmp_path, main_ahead=3),
                               {"app/util.py": UTIL["app/util.py"]}, commits=2)
    clone = checkout(remote, tmp_path / "clone", depth=1)
    assert clone.git("merge-base", "origin/main", remote.pr_head, check=False) == ""
    done = run_action(clone, tmp_path, pull_request_event(remote), deepen="1")
    assert done.code == 0, done.stdout + done.stderr
    assert (done.outputs["verdict"], done.outputs["merge-base"]) == ("scoped", remote.fork_point)
    assert (done.outputs["band-size"], done.outputs["tests-passed"]) == ("1", "1")
    assert clone.git("rev-parse", "--is-shallow-repository").strip() == "true"
    assert done.commands("error") == done.commands("warning") == []


def test_shallow_checkout_too_far_apart_is_unshallowed(tmp_path: Path) -> None:
    """Five rounds of deepening do not reach the merge-base: the full history is fetched."""
    remote = open_pull_request(make_remote(tmp_path, main_ahead=8),
                               {"app/util.py": UTIL["app/util.py"]})
    clone = checkout(remote, tmp_path / "clone", depth=1)
    done = run_action(clone, tmp_path, pull_request_event(remote), deepen="1")
    assert done.code == 0, done.stdout + done.stderr
    assert done.outputs["merge-base"] == remote.fork_point
    assert clone.git("rev-parse", "--is-shallow-repository").strip() == "false"


def test_push_event_compares_with_the_commit_before_the_push(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    dev = remote.dev
    dev.git("checkout", "-q", "main")
    dev.files({"app/util.py": "def shout(s):\n    return s.upper()  # loud\n"})
    dev.commit("a push to main")
    dev.git("push", "-q", "origin", "main")
    GitRepo(tmp_path).git("clone", "-q", remote.bare.path.as_uri(), "clone")
    clone = GitRepo(tmp_path / "clone")
    github = {"event_name": "push", "event": {"before": remote.fork_point,
                                              "repository": {"default_branch": "main"}}}
    done = run_action(clone, tmp_path, github)
    assert done.code == 0, done.stdout + done.stderr
    assert (done.outputs["base"], done.outputs["head"]) == (remote.fork_point, "HEAD")
    assert (done.outputs["verdict"], done.outputs["band-size"]) == ("scoped", "1")


def test_check_that_stops_without_a_result_reports_its_exit_code(tmp_path: Path) -> None:
    """A usage error (exit 64) writes no result: the step still fails with 64, the outputs
    say ``error``, and one annotation points at the log."""
    remote = open_pull_request(make_remote(tmp_path), {"app/util.py": UTIL["app/util.py"]})
    clone = checkout(remote, tmp_path / "clone", depth=None)
    done = run_action(clone, tmp_path, pull_request_event(remote), args="--no-such-option")
    assert done.code == 64
    assert (done.outputs["verdict"], done.outputs["exit-code"]) == ("error", "64")
    assert [message(e) for e in done.commands("error")] == [
        "agentgate check exited 64 before writing a result; its one-line message is in the "
        "step's log"]
    assert "no such option" in done.stderr.lower()
    assert "### agentgate check: no result (exit 64)" in done.summary


def test_default_install_is_this_checkout_never_the_pypi_name() -> None:
    """'agentgate' on PyPI is an unrelated project (issue 13): the install step installs the
    action's own checkout unless told otherwise."""
    action = actions.load(ACTION)
    install = next(s for s in action["runs"]["steps"] if s["id"] == "install")
    assert '"${AG_INSTALL:-$AG_ACTION_PATH}"' in install["run"]
    assert install["env"]["AG_ACTION_PATH"] == "${{ github.action_path }}"
    assert action["inputs"]["install"]["default"] == ""


def test_a_base_that_cannot_be_fetched_is_agentgates_exit_64(tmp_path: Path) -> None:
    """The range step does not stop on a failed fetch: agentgate names the missing base."""
    remote = open_pull_request(make_remote(tmp_path), {"app/util.py": UTIL["app/util.py"]})
    clone = checkout(remote, tmp_path / "clone", depth=1)
    done = run_action(clone, tmp_path, pull_request_event(remote), base="origin/no-such-branch")
    assert done.code == 64, done.stdout + done.stderr
    assert "agentgate: could not fetch origin/no-such-branch" in done.stderr
    assert "base revision 'origin/no-such-branch' is not in this shallow clone" in done.stderr
    assert (done.outputs["verdict"], done.outputs["base"]) == ("error", "origin/no-such-branch")
