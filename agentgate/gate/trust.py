"""Trust files and the per-commit trust-boundary rules.

A trust file is one that decides how much checking a patch gets: the scope file, the
fixture manifest, the freeze ledger, agentgate's and pytest's configuration, the hook
configuration. A patch may not change those together with code, and an agent may not change
them at all.
"""

from __future__ import annotations

import configparser
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentgate.core import config as config_mod
from agentgate.core.config import Config
from agentgate.core.errors import ConfigError
from agentgate.core.model import Change, Reason, Verdict
from agentgate.core.paths import is_test_file, under_any
from agentgate.core.text import listed
from agentgate.gate import manifest

# Files whose whole content is trust. pytest reads its own configuration files at any depth
# (``-c``, a rootdir below the top, ``tests/pytest.ini``), so those count wherever they are
# (issue 11); the root conftest, the hook configuration and the CI definitions -- the
# backstop when hooks are skipped -- count at the top. ``trust_paths`` in the config adds more.
ANY_DEPTH_FILES = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml")
ROOT_FILES = (".pre-commit-config.yaml", "conftest.py", ".gitlab-ci.yml")
ROOT_DIRS = ("hooks", ".github/workflows")
# Node ids of rewritten tests a human accepted (issue 11 item 5): a trust file, so an agent
# can neither write it nor slip it into a commit with code.
ACCEPTED_FILE = ".agentgate/accepted"
# Shared files (at any depth): only their pytest, agentgate and pytest11 tables are trust,
# compared parsed below.
TABLE_FILES = ("pyproject.toml", "setup.cfg", "tox.ini")

Reader = Callable[[str], "str | None"]


@dataclass(frozen=True)
class TrustChange:
    path: str
    why: str
    entries: frozenset[str] | None = None  # the manifest: the paths whose entry changed


def trust_prefixes(config: Config) -> tuple[str, ...]:
    signers = (config.trust_signers,) if config.trust_signers else ()
    return (config.scope_file, config.manifest, config.ledger, ACCEPTED_FILE, *ROOT_DIRS,
            *ROOT_FILES, *config.trust_paths, *signers)


def is_trust_path(path: str, config: Config) -> bool:
    """Whether ``path`` is trust by its name alone (table files need their contents)."""
    return posixpath.basename(path) in ANY_DEPTH_FILES or under_any(
        path, trust_prefixes(config))


def trust_changes(
    changes: list[Change], config: Config, *, old: Reader, new: Reader
) -> list[TrustChange]:
    """The trust-file changes among ``changes``; ``old``/``new`` read a path's text before and
    after. A rename, a deletion, or a replacement by a symlink counts as changing the file."""
    found: list[TrustChange] = []
    for change in changes:
        for path in change.paths:
            why = _why_trust(change, path, config, old, new)
            if why:
                entries = _entries(change, path, old, new) if path == config.manifest else None
                found.append(TrustChange(path, why, entries))
    return found


def _entries(change: Change, path: str, old: Reader, new: Reader) -> frozenset[str] | None:
    """The fixture paths whose manifest entry a change added, removed or changed; None when
    the manifest is renamed, deleted, a link, or does not parse."""
    if change.status not in ("A", "M") or change.makes_symlink:
        return None
    try:
        before = manifest.parse(_bytes(old(path)), where=path)
        after = manifest.parse(_bytes(new(path)), where=path)
    except ConfigError:
        return None
    return frozenset(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def _bytes(text: str | None) -> bytes:
    return (text or "").encode("utf-8", "surrogateescape")


def _why_trust(change: Change, path: str, config: Config, old: Reader, new: Reader) -> str | None:
    if is_trust_path(path, config):
        if change.makes_symlink:
            return "replaced by a symlink"
        return {"D": "deleted", "R": "renamed"}.get(change.status, "changed")
    name = posixpath.basename(path)
    if name not in TABLE_FILES:
        return None
    if change.makes_symlink:
        return "replaced by a symlink"
    before = old(change.old_path or path) if path == change.path else old(path)
    after = new(path) if path == change.path else None
    return _table_change(name, before, after)


def _table_change(name: str, before: str | None, after: str | None) -> str | None:
    try:
        old_tables = _tables(name, before)
    except ConfigError:
        old_tables = {"<unparsable>": {}}
    try:
        new_tables = _tables(name, after)
    except ConfigError:
        return f"{name} does not parse, so its pytest/agentgate tables may have changed"
    if old_tables != new_tables:
        changed = sorted(
            k
            for k in old_tables.keys() | new_tables.keys()
            if old_tables.get(k) != new_tables.get(k)
        )
        return "changed " + ", ".join(changed)
    return None


def _tables(name: str, text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    tables: dict[str, Any] = {}
    if name == "pyproject.toml":
        data = config_mod.parse_toml(text, where=name)
        tool = data.get("tool", {})
        tool = tool if isinstance(tool, dict) else {"<tool>": tool}
        tables = {f"[tool.{k}]": tool[k] for k in ("agentgate", "pytest") if k in tool}
    else:
        parsed = config_mod.pytest_tables_from_texts({name: text}).get(name)
        section = "[pytest]" if name == "tox.ini" else "[tool:pytest]"
        tables = {} if parsed is None else {section: parsed}
    plugins = entry_points(name, text)
    if plugins is not None:
        tables["pytest11 entry points"] = plugins
    return tables


def only_trust_tables(name: str, before: str | None, after: str | None) -> bool:
    """Whether an edit of a shared file changed its trust tables and nothing else: such an
    edit is governed by the trust rules alone, never by the declared scope (issue 11: a
    human's ``[tool.agentgate]`` change was refused as a scope escape)."""
    if before is None or after is None or posixpath.basename(name) not in TABLE_FILES:
        return False
    try:
        return _rest(name, before) == _rest(name, after) and _tables(
            posixpath.basename(name), before) != _tables(posixpath.basename(name), after)
    except ConfigError:
        return False


def _rest(name: str, text: str) -> object:
    """A shared file without its trust tables, parsed."""
    if posixpath.basename(name) == "pyproject.toml":
        data = config_mod.parse_toml(text, where=name)
        tool, project = data.get("tool"), data.get("project")
        if isinstance(tool, dict):
            data["tool"] = {k: v for k, v in tool.items() if k not in ("agentgate", "pytest")}
        points = project.get("entry-points") if isinstance(project, dict) else None
        if isinstance(points, dict):
            points.pop("pytest11", None)
        return data
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=name)
    except configparser.Error as exc:
        raise ConfigError(f"{name}: malformed INI ({exc})") from None
    rest = {s: dict(parser.items(s)) for s in parser.sections() if s not in _INI_TRUST}
    rest.get("options.entry_points", {}).pop("pytest11", None)
    return rest


_INI_TRUST = ("pytest", "tool:pytest")


def entry_points(name: str, text: str | None) -> object:
    """The ``pytest11`` entry points a packaging file declares, parsed (None for none): a
    plugin the project installs runs inside every test session. A file that does not parse
    raises ConfigError, which callers treat as a change."""
    if text is None or name not in ("pyproject.toml", "setup.cfg"):
        return None
    if name == "pyproject.toml":
        project = config_mod.parse_toml(text, where=name).get("project", {})
        points = project.get("entry-points", {}) if isinstance(project, dict) else {}
        return points.get("pytest11") if isinstance(points, dict) else points
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=name)
    except configparser.Error as exc:
        raise ConfigError(f"{name}: malformed INI ({exc})") from None
    value = parser.get("options.entry_points", "pytest11", fallback=None)
    return " ".join(value.split()) if value else None


def commit_reasons(
    changes: list[Change],
    trusted: list[TrustChange],
    *,
    config: Config,
    agent: str | None,
    commit: str | None,
    root_commit: bool = False,
) -> list[Reason]:
    """Rules (a) and (b) for one commit's change set.

    A repository's first commit creates its trust files together with its code: there is no
    boundary before it to widen, so rule (a) does not apply to it. Rule (b) still does.
    """
    if not trusted:
        return []
    trust_paths = {t.path for t in trusted}
    others = [p for c in changes for p in c.paths if p not in trust_paths]
    snapshot = snapshot_update(trusted, others, config)
    mixed_ok = root_commit or snapshot
    others_reason = [] if mixed_ok else _mixed(trusted, others, commit)
    agent_reason = _agent(trusted, agent, commit) if agent and not snapshot else []
    return agent_reason + others_reason


def snapshot_update(trusted: list[TrustChange], others: list[str], config: Config) -> bool:
    """Fixtures, test files and exactly those fixtures' manifest entries, changed together:
    a snapshot update, everyday work for anyone, agents included (issue 11). The manifest
    entries must be exactly the fixtures the commit changes; the base oracle and the
    rewritten-tests policy judge what the new snapshots make the tests assert."""
    if len(trusted) != 1 or trusted[0].path != config.manifest or trusted[0].entries is None:
        return False
    fixtures = {p for p in others if under_any(p, config.fixtures)}
    rest = [p for p in others if p not in fixtures]
    return fixtures == trusted[0].entries and all(is_test_file(p, config) for p in rest)


def _mixed(trusted: list[TrustChange], others: list[str], commit: str | None) -> list[Reason]:
    if not others:
        return []
    named = ", ".join(f"{t.path} ({t.why})" for t in trusted)
    shown = listed(others)
    return [
        Reason(
            code="trust-mixed",
            verdict=Verdict.BLOCKED,
            path=trusted[0].path,
            commit=commit,
            detail=f"trust file {named} changed together with {shown}; commit the trust "
            "change on its own, as a human, and the code in another commit",
        )
    ]


def _agent(trusted: list[TrustChange], agent: str, commit: str | None) -> list[Reason]:
    return [
        Reason(
            code="trust-agent",
            verdict=Verdict.BLOCKED,
            path=t.path,
            commit=commit,
            detail=f"an agent may not change trust files ({agent}); this file was {t.why}: "
            "leave it to a human, who commits it on its own",
        )
        for t in trusted
    ]
