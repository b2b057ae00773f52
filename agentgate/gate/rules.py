"""The rules a commit or a range is judged by: the configuration in force before it.

When that configuration is invalid, every hook used to exit 64, the commit fixing it
included (issue 13). So a configuration is *repaired* by a commit that a human makes of
trust files only: that commit, and a range that starts with such commits, is judged by the
configuration the repair restores. Nothing else is: an agent's commit (by the default
patterns or the restored ones), a commit that changes any file which is not a trust file
(by the default trust files and by the restored ones), a merge, or a range whose first
commits repair nothing keep the exit 64 and its message says what the way out is.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

from agentgate.core import config as config_mod
from agentgate.core.config import AgentPatterns, Config
from agentgate.core.errors import ConfigError
from agentgate.core.model import Change, Commit
from agentgate.gate import agents, trust
from agentgate.git import gitio, signature

AgentOf = Callable[[AgentPatterns], "str | None"]  # the agent a commit's signals name, if any
WAY_OUT = "a human repairs it in a commit of its own that changes only trust files"


def config_at(root: Path, rev: str | None) -> Config:
    """The configuration in force at ``rev`` (``:`` for the index; defaults where it has no
    pyproject), pytest's ``python_files`` there included."""
    if rev is None:
        return config_mod.load(root, "", read=lambda _name: None)
    # Every file the config may read, fetched in one git process rather than one each.
    texts = gitio.read_many_at(root, rev, list(config_mod.PYTEST_CONFIG_FILES))

    def read(name: str) -> str | None:
        return texts[name] if name in texts else gitio.read_text_at(root, rev, name)

    return config_mod.load(root, read=read)


def staged_rules(
    root: Path, head: str | None, changes: list[Change], agent_of: AgentOf
) -> tuple[Config, str | None]:
    """HEAD's configuration; when it is invalid, the staged one if the staged change is a
    human's trust-only repair (with a note saying so), else the exit-64 error."""
    try:
        return config_at(root, head), None
    except ConfigError as exc:
        broken = exc
    config = _restored(root, ":")
    if config is None:
        raise _unrepaired(broken, "HEAD", "the staged configuration is still invalid")
    why = not_a_repair(root, config, changes, old=head, new=":", agent_of=agent_of)
    if why:
        raise _unrepaired(broken, "HEAD", why)
    return config, _repair_note(broken, "HEAD", "this commit")


def range_rules(root: Path, merge_base: str, commits: Sequence[Commit]
                ) -> tuple[Config, str | None]:
    """The merge-base's rules; when they are invalid, those restored by the range's first
    commits if each is a human's trust-only commit on the one before (a note says which)."""
    try:
        return config_at(root, merge_base), None
    except ConfigError as exc:
        broken = exc
    parent = merge_base
    for commit in commits:
        rules = _restored(root, commit.sha)
        why = (_not_a_range_repair(root, commit, parent, rules)
               or _unsigned_repair(root, merge_base, commit))
        if why:
            raise _unrepaired(broken, f"the merge-base {merge_base[:10]}", why)
        if rules is not None:
            return rules, _repair_note(broken, f"the merge-base {merge_base[:10]}",
                                       f"commit {commit.sha[:10]}")
        parent = commit.sha
    raise _unrepaired(broken, f"the merge-base {merge_base[:10]}", "no commit repairs it")


def _unsigned_repair(root: Path, merge_base: str, commit: Commit) -> str | None:
    """A base whose broken configuration names ``trust_signers`` is repaired only by a commit
    signed by a key its signers file lists (found in review: an unsigned repair could drop
    ``trust_signers`` and, with it, every signature the range would need)."""
    text = gitio.read_text_at(root, merge_base, config_mod.PYPROJECT) or ""
    if "trust_signers" not in text:
        return None
    try:
        table = tomllib.loads(text).get("tool", {}).get("agentgate", {})
        named = table.get("trust_signers") if isinstance(table, dict) else None
    except tomllib.TOMLDecodeError:
        named = None
    allowed = gitio.read_at(root, merge_base, named) if isinstance(named, str) and named else None
    if allowed is None:
        return (f"commit {commit.sha[:10]}: the base's configuration names trust_signers, which "
                "cannot be read from it, so no repair in a range can be vouched for")
    signed = signature.verify(root, commit.sha, allowed)
    return None if signed.good else (f"commit {commit.sha[:10]}: the base names trust_signers "
                                     f"and the repair is {signed.status}")


def _not_a_range_repair(root: Path, commit: Commit, parent: str, rules: Config | None
                        ) -> str | None:
    if commit.parents != (parent,):
        return f"commit {commit.sha[:10]} does not repair it on its own"
    why = not_a_repair(root, rules, gitio.commit_changes(root, commit),
                       old=parent, new=commit.sha,
                       agent_of=lambda patterns: agents.from_commit(commit, patterns))
    return f"commit {commit.sha[:10]}: {why}" if why else None


def not_a_repair(
    root: Path, restored: Config | None, changes: list[Change], *, old: str | None, new: str,
    agent_of: AgentOf,
) -> str | None:
    """Why a commit from ``old`` to ``new`` cannot repair the configuration, or None.

    Both the default patterns and the restored ones must find no agent, and every changed
    path must be a trust file by the default trust files and by the restored ones: a repair
    can neither switch agent detection off nor declare code a trust file for itself.
    """
    judges = (Config(root=root), *((restored,) if restored else ()))
    agent = next(filter(None, (agent_of(c.agents) for c in judges)), None)
    if agent:
        return f"an agent's commit cannot repair it ({agent})"
    for judge in judges:
        others = _not_trust(root, judge, changes, old, new)
        if others:
            return f"it also changes {others[0]}, which is not a trust file"
    return None


def _not_trust(root: Path, judge: Config, changes: list[Change], old: str | None, new: str
               ) -> list[str]:
    trusted = {t.path for t in trust.trust_changes(
        changes, judge,
        old=lambda p: gitio.read_text_at(root, old, p) if old else None,
        new=lambda p: gitio.read_text_at(root, new, p))}
    return [p for c in changes for p in c.paths if p not in trusted]


def _restored(root: Path, rev: str) -> Config | None:
    try:
        return config_at(root, rev)
    except ConfigError:
        return None


def _unrepaired(broken: ConfigError, where: str, why: str) -> ConfigError:
    return ConfigError(f"{broken.message} (the configuration at {where}); {why}: {WAY_OUT}")


def _repair_note(broken: ConfigError, where: str, repair: str) -> str:
    return (f"the configuration at {where} is invalid ({broken.message}); {repair}, a human's "
            "trust-only repair, is judged by the configuration it restores")
