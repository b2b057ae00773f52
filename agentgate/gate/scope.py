"""The declared scope: path prefixes, one a line, that say where a patch may go."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from agentgate.core.errors import ConfigError
from agentgate.core.paths import under_any

_GLOB = set("*?[")


@dataclass(frozen=True)
class Scope:
    prefixes: tuple[str, ...]
    source: str

    def allows(self, path: str) -> bool:
        """A prefix matches whole path components: ``app/pay`` never matches ``app/payments``."""
        return under_any(path, self.prefixes)


def parse(text: str, *, where: str) -> Scope:
    prefixes: list[str] = []
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        prefix, problem = _normalise(line)
        if problem:
            problems.append(f"line {number}: {problem}")
        else:
            prefixes.append(prefix)
    if problems:
        raise ConfigError(f"{where}: " + "; ".join(problems))
    return Scope(prefixes=tuple(dict.fromkeys(prefixes)), source=where)


def _normalise(line: str) -> tuple[str, str | None]:
    text = line.replace("\\", "/")
    if _GLOB & set(text):
        return "", f"{line!r} is a glob; write a plain path prefix (app/pricing)"
    parts = [p for p in PurePosixPath(text.lstrip("/")).parts if p != "."]
    if ".." in parts:
        return "", f"{line!r} leaves the repository; write a path inside it"
    return "/".join(parts) or ".", None


def from_bytes(data: bytes, *, where: str) -> Scope:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not valid UTF-8; re-save it as UTF-8") from None
    return parse(text, where=where)
