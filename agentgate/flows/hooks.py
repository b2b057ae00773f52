"""What the hooks call: ``agentgate hook pre-commit | prepare-commit-msg | commit-msg |
pre-push``.

The commit-time paths import neither typer nor rich: they run on every commit and must feel
instant.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentgate.core.errors import AgentgateError, GitError
from agentgate.core.model import Reason, Result, worst
from agentgate.gate import agents, rules
from agentgate.gate import checks as gate
from agentgate.git import gitio
from agentgate.report.render import Format, emit

if TYPE_CHECKING:
    from agentgate.run.progress import Display


def pre_commit(fmt: Format, *, verbose: bool = False) -> int:
    root = gitio.repo_root(Path.cwd())
    result = gate.check_staged(root, os.environ)
    emit(result, fmt, verbose=verbose)
    return result.exit_code


def prepare_commit_msg(
    message_file: Path, fmt: Format, env: Mapping[str, str] | None = None, *,
    verbose: bool = False,
) -> int:
    """The whole commit-time gate again, because ``git commit --no-verify`` skips pre-commit
    and commit-msg but not this hook (githooks(5)); and the trailer check, for a message the
    file already holds (``-m``, ``-F``, ``--trailer``, a reused or merge message).

    git's SOURCE and SHA arguments are not read: whatever the source (message, template,
    merge, squash, commit), what is committed is the staged change, judged as pre-commit
    judges it (a merge by what differs from every parent: ``gitio.staged_changes``). git
    gives ``--amend`` and ``-C HEAD`` the same SOURCE and SHA, so neither can safely widen or
    narrow the check; an amended commit is judged whole at push.
    """
    env = os.environ if env is None else env
    root = gitio.repo_root(Path.cwd())
    result = gate.check_staged(root, env)
    result.command = "hook prepare-commit-msg"
    agent, reasons = _trailer_check(root, result.head, message_file)
    _add_new(result, reasons)
    if agent and not any(n.startswith("agent commit:") for n in result.notes):
        result.notes.append(f"agent commit: {agent}")
    emit(result, fmt, verbose=verbose)
    return result.exit_code


def commit_msg(message_file: Path, fmt: Format, *, verbose: bool = False) -> int:
    """The message is known only here: its trailers can name an agent the env did not."""
    root = gitio.repo_root(Path.cwd())
    head = gitio.head_sha(root)
    result = Result(command="hook commit-msg", head=head)
    agent, result.reasons = _trailer_check(root, head, message_file)
    if agent:
        result.notes.append(f"agent commit: {agent}")
    emit(result, fmt, verbose=verbose)
    return result.exit_code


def _trailer_check(
    root: Path, head: str | None, message_file: Path
) -> tuple[str | None, list[Reason]]:
    """The agent the message's trailers name, and what the staged trust change owes it."""
    trailers = gitio.message_trailers(root, message_file)
    changes = gitio.staged_changes(root, head)
    # The rules as pre-commit reads them; a repair of an invalid config must be a human's by
    # the trailers too (gate/rules.py).
    config, _repair = rules.staged_rules(
        root, head, changes, gate.staged_agent(root, os.environ, trailers))
    agent = agents.from_trailers(trailers, config.agents)
    if not agent:
        return None, []
    return agent, gate.staged_trust(root, config, changes, head=head, agent=agent)


def _add_new(result: Result, reasons: list[Reason]) -> None:
    """One reason per rule and file: an agent named by both the environment and a trailer
    is the same refusal, reported once."""
    seen = {(r.code, r.path) for r in result.reasons}
    result.reasons += [r for r in reasons if (r.code, r.path) not in seen]


# --- pre-push -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PushedRef:
    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str


def parse_push_lines(text: str) -> list[PushedRef]:
    """Lines git gives a pre-push hook: ``<local ref> <local sha> <remote ref> <remote sha>``."""
    refs = []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise AgentgateError(f"pre-push: cannot read the ref line {line!r} from git")
        refs.append(PushedRef(*parts))
    return refs


@dataclass(frozen=True)
class PushRange:
    base: str | None  # None: nothing to compare against, check all of head's history
    head: str
    label: str
    note: str | None = None


def push_ranges(
    root: Path, env: Mapping[str, str], stdin_text: str, remote: str | None
) -> list[PushRange]:
    if env.get("PRE_COMMIT_TO_REF") or env.get("PRE_COMMIT") == "1":
        return [_pre_commit_range(root, env)]
    ranges = []
    for ref in parse_push_lines(stdin_text):
        if gitio.is_zero_id(ref.local_sha):
            continue  # a deletion: nothing of ours is pushed
        ranges.append(_ref_range(root, ref, remote))
    return ranges


def _pre_commit_range(root: Path, env: Mapping[str, str]) -> PushRange:
    # pre-commit passes only the first pushed ref on; the plain hooks/pre-push checks all.
    head = env.get("PRE_COMMIT_TO_REF") or env.get("PRE_COMMIT_LOCAL_BRANCH") or "HEAD"
    base = env.get("PRE_COMMIT_FROM_REF")
    remote = env.get("PRE_COMMIT_REMOTE_NAME")
    # The headline names the pushed branch, as the plain hook does (new-user trial: a 40-hex
    # sha under pre-commit, refs/heads/main under git).
    label = env.get("PRE_COMMIT_LOCAL_BRANCH") or head
    if base and gitio.ref_exists(root, base):
        return _existing_branch(root, base, head, env.get("PRE_COMMIT_REMOTE_BRANCH", ""),
                                remote, label)
    fallback, note = _base_branch_fallback(root, head, remote)
    return PushRange(fallback, head, label, note)


def _ref_range(root: Path, ref: PushedRef, remote: str | None) -> PushRange:
    if not gitio.is_zero_id(ref.remote_sha) and gitio.ref_exists(root, ref.remote_sha):
        return _existing_branch(root, ref.remote_sha, ref.local_sha, ref.remote_ref, remote,
                                ref.local_ref)
    base, note = _base_branch_fallback(root, ref.local_sha, remote)
    if not gitio.is_zero_id(ref.remote_sha):
        note = f"remote {ref.remote_ref} is at {ref.remote_sha[:10]}, unknown here; {note}"
    return PushRange(base, ref.local_sha, ref.local_ref, note)


def _existing_branch(root: Path, tip: str, head: str, remote_ref: str, remote: str | None,
                     label: str) -> PushRange:
    """A push to a branch the remote has. Pushed to the base branch, the remote's tip is the
    contract. Pushed to any other branch, the contract is the branch's merge-base with the
    base branch, as CI judges it (``check --base origin/main``): the remote's tip of the
    branch holds what earlier pushes made, and one of them may have skipped a test that
    passed then, so that this push can break what it covered. A force push compares against
    what the remote had, the merge-base being taken later."""
    found = _base_branch(root, head, remote)
    if found is None or _branch_of(root, found) == _short(remote_ref):
        return PushRange(tip, head, label)
    return PushRange(found, head, label,
                     f"compared against its merge-base with {found}, as CI compares it")


def _base_branch(root: Path, head: str, remote: str | None) -> str | None:
    config = gate.config_at(root, gitio.head_sha(root))
    for candidate in _base_candidates(config.base_branch, remote):
        if gitio.ref_exists(root, candidate) and gitio.ok(root, "merge-base", candidate, head):
            return candidate
    return None


def _branch_of(root: Path, ref: str) -> str:
    """The branch name a base-branch ref stands for (``refs/remotes/origin/HEAD`` -> main)."""
    out = gitio.run(root, "rev-parse", "--symbolic-full-name", ref, check=False)
    full = out.decode("utf-8", "replace").strip() or ref
    return _short(full)


def _short(ref: str) -> str:
    for prefix in ("refs/heads/", "refs/remotes/"):
        if ref.startswith(prefix):
            rest = ref[len(prefix):]
            return rest.split("/", 1)[1] if prefix == "refs/remotes/" and "/" in rest else rest
    return ref.split("/", 1)[1] if "/" in ref and not ref.startswith("refs/") else ref


def _base_branch_fallback(root: Path, head: str, remote: str | None) -> tuple[str | None, str]:
    """A new branch is compared against its merge-base with the base branch."""
    config = gate.config_at(root, gitio.head_sha(root))
    for candidate in _base_candidates(config.base_branch, remote):
        if not gitio.ref_exists(root, candidate):
            continue
        if gitio.ok(root, "merge-base", candidate, head):
            return candidate, f"new branch: compared against its merge-base with {candidate}"
        if gitio.is_shallow(root):
            raise GitError(
                f"no merge-base with {candidate} in this shallow clone; fetch full history "
                "(git fetch --unshallow) and push again"
            )
    return None, "no base branch to compare against: every commit of the branch is checked"


def _base_candidates(configured: str | None, remote: str | None) -> list[str]:
    if configured:
        return [configured]
    names = [remote] if remote else []
    names += ["origin"]
    found = []
    for name in dict.fromkeys(names):
        found += [
            f"refs/remotes/{name}/HEAD",
            f"refs/remotes/{name}/main",
            f"refs/remotes/{name}/master",
        ]
    return found


def pre_push(
    fmt: Format, remote: str | None, stdin_text: str, env: Mapping[str, str] | None = None,
    workers: int | str | None = None, *, verbose: bool = False,
) -> int:
    """``remote`` as git passes it; under pre-commit, which passes none, its variable."""
    env = os.environ if env is None else env
    root = gitio.repo_root(Path.cwd())
    remote = remote if remote is not None else env.get("PRE_COMMIT_REMOTE_NAME")
    codes = []
    for push in push_ranges(root, env, stdin_text, remote):
        from agentgate.report import progress  # live counts while the band runs (issue 13)

        with progress.shown(env) as display:
            result = check_push(root, push, workers, display)
        emit(result, fmt, verbose=verbose)
        codes.append(result.verdict)
    return worst(codes).exit_code if codes else 0


def check_push(root: Path, push: PushRange, workers: int | str | None = None,
               display: Display | None = None) -> Result:
    """Every pushed commit against the trust boundary, then the planned band on the pushed
    code (the full suite when promoted or when there is nothing to compare against)."""
    from agentgate.flows import (
        check as checkrun,  # the push path may pay for the planner and the band
    )

    result = checkrun.check(root, push.base, push.head, workers=workers, display=display)
    result.command = f"hook pre-push {push.label}"
    if push.note:
        result.notes.insert(0, push.note)
    return result
