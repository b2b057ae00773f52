"""Trust-only commits inside a range that govern the scope of the commits after them (issue
11 item 8): the seed workflow, where a human widens the scope in the same pull request and
the agent's commits after it use the wider scope.

A commit *governs* when it is not a merge, changes only trust files by the base's rules
(``pyproject.toml``, ``setup.cfg``, ``tox.ini`` only in their trust tables), touches the scope
(the scope file or ``pyproject.toml``), no agent is found in it by the base's patterns (its
identities and trailers: the hook's environment is gone by push time), and, with
``trust_signers`` at the base, carries a good SSH signature by a key that file lists. It
governs the declared scope only: the scope file its own configuration names, read at it.
The freeze ledger, the fixture manifest, the agent patterns and every other rule stay the
base's, so a freeze record added in the range still excuses nothing in it.

A commit is judged by the scope of the newest governing commit it descends from inside the
range (the base's when there is none); a merge of two branches that each have one must
satisfy both.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from graphlib import TopologicalSorter
from pathlib import Path

from agentgate.core.config import PYPROJECT, Config
from agentgate.core.errors import ConfigError
from agentgate.core.model import Change, Commit
from agentgate.gate import agents, trust
from agentgate.gate.rules import config_at
from agentgate.gate.scope import Scope, from_bytes
from agentgate.git import gitio, signature


@dataclass(frozen=True)
class CommitFacts:
    commit: Commit
    changes: list[Change]
    trusted: list[trust.TrustChange]

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(p for c in self.changes for p in c.paths)


@dataclass(frozen=True)
class Governor:
    sha: str
    scope: Scope | None  # None: no scope file at that commit, the scope rule is off after it


def facts(root: Path, config: Config, commit: Commit) -> CommitFacts:
    """One commit's changes and, by ``config``, its trust-file changes."""
    changes = gitio.commit_changes(root, commit)
    parent = commit.parents[0] if commit.parents else None
    trusted = trust.trust_changes(
        changes, config,
        old=lambda p: gitio.read_text_at(root, parent, p) if parent else None,
        new=lambda p: gitio.read_text_at(root, commit.sha, p))
    return CommitFacts(commit, changes, trusted)


def governors(root: Path, config: Config, merge_base: str, commits: Sequence[CommitFacts],
              notes: list[str], base: Scope | None = None) -> list[Governor]:
    """The range's governing commits, oldest first; ``notes`` says which govern and why a
    trust-only scope commit does not. ``base``: the merge-base's scope."""
    found: list[Governor] = []
    above = ancestors([f.commit for f in commits])
    for fact in (f for f in commits if _touches_scope(root, config, f)):
        why = (_why_not(root, config, merge_base, fact)
               or _laundered(root, fact.commit, above, found, base))
        sha = fact.commit.sha[:10]
        if why:
            notes.append(f"commit {sha} changes only trust files but governs nothing: {why}")
            continue
        governor, note = _governor(root, fact.commit.sha)
        notes.append(note)
        found += [governor] if governor else []
    return found


def vouched_for(root: Path, config: Config, merge_base: str, commit: Commit) -> bool:
    """Whether a human's trust-only commit in the range counts as a human decision: not a
    merge, no agent by the base's patterns and, with ``trust_signers``, a good signature by
    an allowed key (the same test a governing commit passes)."""
    return _why_not(root, config, merge_base, facts(root, config, commit)) is None


def _laundered(root: Path, commit: Commit, above: dict[str, frozenset[str]],
               found: Sequence[Governor], base: Scope | None) -> str | None:
    """A commit governs with the whole scope at it, so what it starts from must be the scope
    in force: else a widening by a commit that governs nothing (unsigned, say) would count
    as soon as a governing commit came after it (found in review)."""
    parent = commit.parents[0]
    if parent in above:  # inside the range: the newest governor it descends from, or itself
        by_sha = {g.sha: g for g in found}
        mine = [by_sha[parent]] if parent in by_sha else None
        in_force = [g.scope for g in mine] if mine else _in_force(parent, above, by_sha, base)
    else:
        in_force = [base]
    start, _note = _governor(root, parent)
    before = start.scope if start else None
    if any(_prefixes(s) != _prefixes(before) for s in in_force):
        return ("the scope it starts from was changed earlier in the range by a commit that "
                "governs nothing; a governing commit changes the scope in force, and only that")
    return None


def _prefixes(scope: Scope | None) -> tuple[str, ...] | None:
    return None if scope is None else scope.prefixes


def _touches_scope(root: Path, config: Config, fact: CommitFacts) -> bool:
    """Trust files only, the scope file or pyproject.toml among them."""
    trusted = {t.path for t in fact.trusted}
    if not fact.changes or not fact.paths <= trusted:
        return False
    tables = [c for c in fact.changes if posixpath.basename(c.path) in trust.TABLE_FILES]
    parent = fact.commit.parents[0] if fact.commit.parents else None
    if any(not _only_tables(root, c, parent, fact.commit.sha) for c in tables):
        return False
    return config.scope_file in fact.paths or PYPROJECT in fact.paths


def _only_tables(root: Path, change: Change, parent: str | None, sha: str) -> bool:
    """A table file changed in its trust tables and nothing else (added: from nothing)."""
    before = gitio.read_text_at(root, parent, change.old_path or change.path) if parent else None
    after = gitio.read_text_at(root, sha, change.path)
    return trust.only_trust_tables(change.path, before or "", after)


def _why_not(root: Path, config: Config, merge_base: str, fact: CommitFacts) -> str | None:
    if len(fact.commit.parents) != 1:
        return "a merge commit" if fact.commit.parents else "a root commit"
    agent = agents.from_commit(fact.commit, config.agents)
    if agent:
        return f"an agent's commit ({agent})"
    if config.trust_signers is None:
        return None
    allowed = gitio.read_at(root, merge_base, config.trust_signers)
    if allowed is None:
        return (f"trust_signers names {config.trust_signers}, which the base "
                f"{merge_base[:10]} does not have")
    signed = signature.verify(root, fact.commit.sha, allowed)
    return None if signed.good else f"{signed.status} (trust_signers: {config.trust_signers})"


def _governor(root: Path, sha: str) -> tuple[Governor | None, str]:
    """The scope at ``sha``, as its own configuration names it."""
    try:
        own = config_at(root, sha)
        data = gitio.read_at(root, sha, own.scope_file)
        where = f"{own.scope_file} at {sha[:10]}"
        scope = None if data is None else from_bytes(data, where=where)
    except ConfigError as exc:
        return None, f"commit {sha[:10]} changes only trust files but governs nothing: {exc}"
    said = scope.source if scope else f"no {own.scope_file} there: the scope rule is off"
    return Governor(sha, scope), (f"commit {sha[:10]}, a human's trust-only commit, governs "
                                  f"the scope of the commits after it ({said})")


# --- the scope in force at each commit -------------------------------------------------------


def refusals(paths: Iterable[str], commits: Sequence[CommitFacts], found: Sequence[Governor],
             base: Scope | None) -> list[tuple[str, Scope]]:
    """(path, the scope refusing it) for each of ``paths`` that a commit of the range changed
    outside the scope in force at that commit."""
    above = ancestors([f.commit for f in commits])
    by_sha = {g.sha: g for g in found}
    out: list[tuple[str, Scope]] = []
    for path in paths:
        touching = [f.commit.sha for f in commits if path in f.paths]
        scopes = [s for sha in touching for s in _in_force(sha, above, by_sha, base)] or [base]
        refusing = next((s for s in scopes if s is not None and not s.allows(path)), None)
        out += [(path, refusing)] if refusing else []
    return out


def _in_force(sha: str, above: dict[str, frozenset[str]], by_sha: dict[str, Governor],
              base: Scope | None) -> list[Scope | None]:
    """The scopes of the newest governing commits ``sha`` descends from, else the base's."""
    mine = [by_sha[a] for a in above[sha] if a in by_sha]
    newest = [g for g in mine if not any(g.sha in above[o.sha] for o in mine)]
    return [g.scope for g in newest] or [base]


def ancestors(commits: Sequence[Commit]) -> dict[str, frozenset[str]]:
    """Each commit's ancestors among ``commits``."""
    inside = {c.sha for c in commits}
    parents = {c.sha: [p for p in c.parents if p in inside] for c in commits}
    found: dict[str, frozenset[str]] = {}
    for sha in TopologicalSorter(parents).static_order():
        found[sha] = frozenset().union(*({p} | found[p] for p in parents[sha]))
    return found
