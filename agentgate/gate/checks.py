"""The trust gate: one commit's staged change (commit time) and a pushed range (push, CI).

Data flows one way: git -> changes -> trust, scope and manifest checks -> reasons. The rules
that govern a patch are always read from before it: HEAD's at commit time, the merge-base's
for a range, so a patch can never widen its own scope or relax its own configuration.
"""

from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentgate.core.config import PYPROJECT, PYTEST_CONFIG_FILES, AgentPatterns, Config
from agentgate.core.errors import ConfigError, GitError
from agentgate.core.model import Change, Commit, Reason, Result, Verdict
from agentgate.core.paths import TestFiles, under
from agentgate.gate import agents, govern, manifest, trust
from agentgate.gate.rules import AgentOf, range_rules, staged_rules
from agentgate.gate.rules import config_at as config_at  # where the callers read the rules
from agentgate.gate.scope import Scope, from_bytes
from agentgate.git import gitio


@dataclass(frozen=True)
class RangeCheck:
    base: str
    head: str
    merge_base: str
    config: Config
    changes: list[Change]
    commits: list[Commit]
    reasons: list[Reason] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def scope_at(root: Path, config: Config, rev: str | None) -> Scope | None:
    if rev is None:
        return None
    data = gitio.read_at(root, rev, config.scope_file)
    at = "staged" if rev == ":" else f"at {rev[:10]}"
    return None if data is None else from_bytes(data, where=f"{config.scope_file} {at}")


# --- commit time ----------------------------------------------------------------------------


def check_staged(root: Path, env: Mapping[str, str] | None = None) -> Result:
    """Trust boundary, scope and manifest for the change being committed. No tests run."""
    env = os.environ if env is None else env
    head = gitio.head_sha(root)
    changes = gitio.staged_changes(root, head)
    agent_of = staged_agent(root, env)
    config, repair = staged_rules(root, head, changes, agent_of)
    result = Result(command="hook pre-commit", head=head, changed=changes)
    result.notes += [repair] if repair else []
    agent = agent_of(config.agents)
    result.reasons += staged_trust(root, config, changes, head=head, agent=agent)
    exempt = _trust_only(changes, old=lambda p: gitio.read_text_at(root, head, p) if head
                         else None, new=lambda p: gitio.read_text_at(root, ":", p))
    scope = scope_at(root, config, head)
    if agent:
        result.reasons += _scope_reasons(changes, config, scope, result.notes, exempt)
    elif scope is not None:
        result.notes.append(f"a human's commit: the declared scope ({scope.source}) holds "
                            "agents' commits only")
    result.reasons += _staged_manifest(root, config, changes)
    result.reasons += _staged_ledger(root, config, changes)
    result.reasons += _head_config(root, ":", changes, config.scope_file, what="the staged",
                                   after="this commit")
    if agent:
        result.notes.append(f"agent commit: {agent}")
    return result


def staged_agent(root: Path, env: Mapping[str, str],
                 trailers: tuple[tuple[str, str], ...] = ()) -> AgentOf:
    """The agent the commit being made is by, by the hook's environment, the identities
    it will carry and (once the message is known) its trailers, under given patterns."""
    idents = functools.cache(lambda: gitio.current_identity(root))  # two gits, on first use

    def agent_of(patterns: AgentPatterns) -> str | None:
        return (agents.from_env(env, patterns) or agents.from_identities(idents(), patterns)
                or agents.from_trailers(trailers, patterns))

    return agent_of


def staged_trust(
    root: Path, config: Config, changes: list[Change], *, head: str | None, agent: str | None
) -> list[Reason]:
    trusted = trust.trust_changes(
        changes,
        config,
        old=lambda p: gitio.read_text_at(root, head, p) if head else None,
        new=lambda p: gitio.read_text_at(root, ":", p),
    )
    return trust.commit_reasons(
        changes, trusted, config=config, agent=agent, commit=None, root_commit=head is None
    )


def _staged_ledger(root: Path, config: Config, changes: list[Change]) -> list[Reason]:
    """A commit that touches the freeze ledger must leave it valid (checked only then: the
    ledger reads JSON and test files, and the commit path must stay instant)."""
    if not any(under(p, config.ledger) for c in changes for p in c.paths):
        return []
    from agentgate.ledger import records as ledger

    return ledger.check(root, config)


def _staged_manifest(root: Path, config: Config, changes: list[Change]) -> list[Reason]:
    touched = any(
        manifest.is_fixture(p, config) or p == config.manifest for c in changes for p in c.paths
    )
    if not touched:
        return []  # verified when the fixtures or the manifest last changed
    listed_data = gitio.read_at(root, ":", config.manifest)
    blobs = gitio.index_blobs(root, config.fixtures)
    listed = _listed_elsewhere(config, listed_data)
    if listed:
        blobs.update(gitio.index_blobs(root, listed))
    return _manifest_reasons(config, listed_data, _digests(root, blobs), where="staged")


def _listed_elsewhere(config: Config, listed: bytes | None) -> tuple[str, ...]:
    """The paths a manifest lists outside the fixture folders the configuration in force
    names: a human's adoption commit brings the configuration that names new fixture
    folders and the manifest of their files at once, and each was "listed but does not
    exist" (new-user trial round 7: ``tests/manylinux``, ``tests/metadata``). Such a file is
    read where it is and compared with its digest like any other."""
    if listed is None:
        return ()
    try:
        entries = manifest.parse(listed, where=config.manifest)
    except ConfigError:
        return ()  # ``_manifest_reasons`` says what is wrong with it
    return tuple(sorted(p for p in entries if not manifest.is_fixture(p, config)))


def _digests(root: Path, blobs: dict[str, str]) -> dict[str, str]:
    """sha256 of each fixture blob, read in one batch (a blob git lacks is left out, so the
    manifest comparison reports the file as missing)."""
    contents = gitio.cat_blobs(root, list(blobs.values()))
    return {p: manifest.digest(contents[b]) for p, b in blobs.items() if b in contents}


def _manifest_reasons(
    config: Config, listed: bytes | None, actual: dict[str, str], *, where: str
) -> list[Reason]:
    if listed is None:
        if not actual:
            return []
        return [_manifest_missing(config, where)]
    try:
        entries = manifest.parse(listed, where=f"{where} {config.manifest}")
    except ConfigError as exc:
        return [Reason("fixture-manifest", Verdict.BLOCKED, exc.message, path=config.manifest)]
    return [
        Reason(
            code="fixture-manifest",
            verdict=Verdict.BLOCKED,
            path=problem.path,
            detail=f"{where} fixture {problem.describe()}; a human runs 'agentgate fixtures "
            "record' and commits the fixtures with the manifest",
        )
        for problem in manifest.compare(entries, actual)
    ]


def _manifest_missing(config: Config, where: str) -> Reason:
    return Reason(
        code="fixture-manifest",
        verdict=Verdict.BLOCKED,
        path=config.manifest,
        detail=f"{where} fixtures exist but there is no manifest; a human runs "
        "'agentgate fixtures record' and commits it",
    )


def _trust_only(changes: list[Change], *, old: trust.Reader, new: trust.Reader) -> set[str]:
    """Shared files (pyproject.toml, setup.cfg, tox.ini) whose edit changed only their trust
    tables: trust changes, which the trust rules govern and the scope does not."""
    return {
        c.path for c in changes
        if c.status == "M" and posixpath.basename(c.path) in trust.TABLE_FILES
        and trust.only_trust_tables(c.path, old(c.path), new(c.path))
    }


def _scope_reasons(
    changes: list[Change], config: Config, scope: Scope | None, notes: list[str],
    exempt: set[str],
) -> list[Reason]:
    if scope is None:
        notes.append(f"no declared scope ({config.scope_file} absent at base): scope rule off")
        return []
    escaped = [p for p in _scope_paths(changes, config, exempt) if not scope.allows(p)]
    return [_escape(path, scope) for path in escaped]


def _scope_paths(changes: list[Change], config: Config, exempt: set[str]) -> list[str]:
    """The changed paths the scope judges: trust files are the trust rules' to judge."""
    paths = (p for change in changes for p in change.paths)
    return list(dict.fromkeys(
        p for p in paths if not trust.is_trust_path(p, config) and p not in exempt))


def _escape(path: str, scope: Scope) -> Reason:
    return Reason(
        code="scope-escape",
        verdict=Verdict.SCOPE_ESCAPE,
        path=path,
        detail=f"outside the declared scope ({scope.source}); keep the patch inside it, "
        "or have a human widen the scope in a commit of its own first",
    )


def _governed_scope(
    changes: list[Change], config: Config, scope: Scope | None, exempt: set[str],
    commits: list[govern.CommitFacts], governors: list[govern.Governor],
) -> list[Reason]:
    """Each changed path against the scope in force at every commit that changed it: the
    base's, or that of the newest governing trust-only commit before it (issue 11 item 8)."""
    paths = _scope_paths(changes, config, exempt)
    return [_escape(p, s) for p, s in govern.refusals(paths, commits, governors, scope)]


# --- ranges ------------------------------------------------------------------------------


def check_range(root: Path, base: str | None, head: str) -> RangeCheck:
    """Every commit of ``base...head`` against the trust rules; the whole range against the
    base's scope and fixture manifest. ``base=None`` checks head's whole history (a first
    push with nothing to compare against)."""
    head_sha = gitio.resolve(root, head, what="head revision")
    if base is None and gitio.is_shallow(root):
        # The oldest fetched commit would look like it adds the whole tree.
        raise GitError(
            "nothing to compare against in a shallow clone; fetch full history "
            "(git fetch --unshallow, or actions/checkout with fetch-depth: 0) and retry"
        )
    if base is None:
        base_sha = mb = gitio.empty_tree(root)
        config, scope_rev, repair = config_at(root, None), None, None
        changes = gitio.diff_changes(root, mb, head_sha)
        commits = gitio.commits_in_range(root, None, head_sha)
    else:
        base_sha = gitio.resolve(root, base, what="base revision")
        mb = scope_rev = gitio.merge_base(root, base_sha, head_sha)
        changes = gitio.range_changes(root, mb, head_sha)
        commits = gitio.commits_in_range(root, mb, head_sha)
        config, repair = range_rules(root, mb, commits)
    notes = [repair] if repair else []
    facts = [govern.facts(root, config, c) for c in commits]
    reasons = [r for f in facts for r in _commit_reasons(config, f)]
    exempt = _trust_only(changes, old=lambda p: gitio.read_text_at(root, mb, p),
                         new=lambda p: gitio.read_text_at(root, head_sha, p))
    scope = scope_at(root, config, scope_rev)
    # The scope is the agent's task: what only humans' commits changed is not held to it
    # (new-user trials: a maintainer's README or tox.ini commit was a scope escape).
    exempt |= _humans_only(config, facts)
    # A human's trust-only commit in the range governs the scope after it (issue 11 item 8).
    governors = govern.governors(root, config, mb, facts, notes, scope) if scope_rev else []
    reasons += (_governed_scope(changes, config, scope, exempt, facts, governors) if governors
                else _scope_reasons(changes, config, scope, notes, exempt))
    reasons += _range_fixtures(root, config, scope_rev, head_sha, changes)
    reasons += _head_config(root, head_sha, changes, config.scope_file)
    return RangeCheck(base_sha, head_sha, mb, config, changes, commits, reasons, notes)


def _head_config(root: Path, head: str, changes: list[Change], scope_file: str, *,
                 what: str = "head's", after: str = "this range") -> list[Reason]:
    """A range (or the staged change: ``head=":"``) that leaves head's ``[tool.agentgate]``
    or its scope file unreadable (new-user trials: a human's ``scop_file`` typo, a glob in
    the scope file, passed, and every command after them exited 64)."""
    paths = {p for c in changes for p in c.paths}
    if not paths & set(PYTEST_CONFIG_FILES) and scope_file not in paths:
        return []  # the files ``config_at`` reads (pyproject.toml, pytest's) and the scope
    try:
        config = config_at(root, head)
        if config.scope_file in paths:
            scope_at(root, config, head)
    except ConfigError as exc:
        return [Reason("config-invalid", Verdict.BLOCKED, f"{what} configuration does not "
                       f"load: {exc}; every agentgate command after {after} would exit 64",
                       path=PYPROJECT)]
    return []


def commit_trust(root: Path, config: Config, commit: Commit) -> list[Reason]:
    """Rules (a)-(c) for one commit, with the agent read off its identities and trailers."""
    return _commit_reasons(config, govern.facts(root, config, commit))


def _humans_only(config: Config, facts: list[govern.CommitFacts]) -> set[str]:
    """The paths only commits by no agent changed, in the range."""
    agents_touched: set[str] = set()
    touched: set[str] = set()
    for fact in facts:
        touched |= fact.paths
        if agents.from_commit(fact.commit, config.agents):
            agents_touched |= fact.paths
    return touched - agents_touched


def _commit_reasons(config: Config, fact: govern.CommitFacts) -> list[Reason]:
    commit = fact.commit
    return trust.commit_reasons(
        fact.changes,
        fact.trusted,
        config=config,
        agent=agents.from_commit(commit, config.agents),
        commit=commit.sha,
        root_commit=not commit.parents,
    )


def _range_fixtures(
    root: Path,
    config: Config,
    base: str | None,
    head: str,
    changes: list[Change],
) -> list[Reason]:
    """The head's fixtures against its manifest, and fixtures that moved with no test file
    (by the base's ``python_files``: a patch cannot widen pytest's patterns to make a file of
    its own count as the test that excuses a fixture change)."""
    tree = gitio.ls_tree(root, head, config.fixtures) if config.fixtures else {}
    head_fixtures = {p: b for p, b in tree.items() if manifest.is_fixture(p, config)}
    listed_data = gitio.read_at(root, head, config.manifest)
    elsewhere = _listed_elsewhere(config, listed_data)
    head_listed = {**head_fixtures, **(gitio.ls_tree(root, head, elsewhere) if elsewhere else {})}
    actual = _digests(root, head_listed)
    reasons = _manifest_reasons(config, listed_data, actual, where="head")
    actual = {p: d for p, d in actual.items() if p in head_fixtures}  # the base's manifest
    moved = _moved_fixtures(root, config, base, actual, changes)
    tests = TestFiles(config)
    if moved and not any(tests.match(p) for c in changes for p in c.paths):
        reasons += [
            Reason(
                code="fixture-without-test",
                verdict=Verdict.SCOPE_ESCAPE,
                path=path,
                detail="fixture changed with no test-file change in the range; a fixture moves "
                "with the test that needs it, or not at all",
            )
            for path in moved
        ]
    return reasons


def _moved_fixtures(
    root: Path,
    config: Config,
    base: str | None,
    actual: dict[str, str],
    changes: list[Change],
) -> list[str]:
    """Fixtures that differ from the *base's* manifest (a regenerated manifest proves nothing),
    plus fixture paths the range touched."""
    moved = {p for c in changes for p in c.paths if manifest.is_fixture(p, config)}
    base_listed = gitio.read_at(root, base, config.manifest) if base else None
    if base_listed is not None:
        entries = manifest.parse(base_listed, where=f"{config.manifest} at base")
        moved |= {problem.path for problem in manifest.compare(entries, actual)}
    return sorted(moved)
