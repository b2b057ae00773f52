"""Is this commit an agent's? Patterns on identities, trailers and the hook's environment.

Every signal can be stripped, so identification only ever tightens the rules: the rule that
a trust-file change must stand alone holds for everyone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from agentgate.core.config import AgentPatterns
from agentgate.core.model import Commit


def _match(value: str, patterns: Iterable[str]) -> str | None:
    lowered = value.lower()
    return next((p for p in patterns if fnmatchcase(lowered, p.lower())), None)


def from_identities(idents: Iterable[str], patterns: AgentPatterns) -> str | None:
    for ident in idents:
        hit = _match(ident, patterns.identities)
        if hit:
            return f"identity {ident!r} matches {hit!r}"
    return None


def from_trailers(trailers: Iterable[tuple[str, str]], patterns: AgentPatterns) -> str | None:
    for key, value in trailers:
        line = f"{key.strip()}: {value.strip()}"
        hit = _match(line, patterns.trailers)
        if hit:
            return f"trailer {line!r} matches {hit!r}"
    return None


def from_env(env: Mapping[str, str], patterns: AgentPatterns) -> str | None:
    for name in patterns.env:
        if env.get(name, "").strip():
            return f"environment variable {name} is set"
    return None


def from_commit(commit: Commit, patterns: AgentPatterns) -> str | None:
    return from_identities([commit.author, commit.committer], patterns) or from_trailers(
        commit.trailers, patterns
    )
