"""The fixture manifest: ``sha256sum``-format lines, sorted, so ``sha256sum -c`` accepts it."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentgate.core.config import Config
from agentgate.core.errors import ConfigError
from agentgate.core.paths import under_any

_SKIP_DIRS = {"__pycache__", ".pytest_cache"}


@dataclass(frozen=True)
class Problem:
    path: str
    kind: str  # "changed" | "unlisted" | "missing"

    def describe(self) -> str:
        return {
            "changed": "content differs from its manifest entry",
            "unlisted": "is not in the manifest",
            "missing": "is listed in the manifest but does not exist",
        }[self.kind]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _escape(path: str) -> tuple[str, str]:
    if "\\" in path or "\n" in path or "\r" in path:
        escaped = path.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        return "\\", escaped
    return "", path


def render(entries: Mapping[str, str]) -> bytes:
    """Manifest text for ``{path: sha256}``, sorted by path bytes, as GNU sha256sum writes it."""
    lines = []
    for path in sorted(entries, key=os.fsencode):
        flag, shown = _escape(path)
        lines.append(f"{flag}{entries[path]}  {shown}\n")
    return os.fsencode("".join(lines))


def parse(data: bytes, *, where: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    for number, raw in enumerate(os.fsdecode(data).splitlines(), start=1):
        if not raw.strip():
            continue
        path, sha = _parse_line(raw, where=where, number=number)
        entries[path] = sha
    return entries


def _parse_line(raw: str, *, where: str, number: int) -> tuple[str, str]:
    escaped = raw.startswith("\\")
    line = raw[1:] if escaped else raw
    sha, sep, path = line.partition("  ")
    if not sep:
        sha, sep, path = line.partition(" *")
    if not sep or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha.lower()):
        raise ConfigError(
            f"{where}: line {number} is not '<sha256>  <path>'; regenerate it with "
            "'agentgate fixtures record'"
        )
    if escaped:
        path = path.replace("\\n", "\n").replace("\\r", "\r").replace("\\\\", "\\")
    return path, sha.lower()


def fixture_files_on_disk(root: Path, config: Config) -> dict[str, bytes]:
    """Every fixture file in the work tree (missing fixture folders are fine)."""
    found: dict[str, bytes] = {}
    for folder in config.fixtures:
        base = root / folder
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            for name in filenames:
                full = Path(dirpath) / name
                rel = full.relative_to(root).as_posix()
                if name.endswith(".pyc"):
                    continue
                found[rel] = full.read_bytes()
    return found


def is_fixture(path: str, config: Config) -> bool:
    return under_any(path, config.fixtures)


def compare(listed: Mapping[str, str], actual: Mapping[str, str]) -> list[Problem]:
    """Per-file differences between manifest entries and actual digests, sorted by path."""
    problems = [
        Problem(path, "changed")
        for path in listed.keys() & actual.keys()
        if listed[path] != actual[path]
    ]
    problems += [Problem(p, "unlisted") for p in actual.keys() - listed.keys()]
    problems += [Problem(p, "missing") for p in listed.keys() - actual.keys()]
    return sorted(problems, key=lambda p: p.path)


def digests(files: Mapping[str, bytes]) -> dict[str, str]:
    return {path: digest(data) for path, data in files.items()}


def record(root: Path, config: Config) -> tuple[Path, int]:
    """Write the manifest from the work tree's fixtures; returns its path and entry count."""
    entries = digests(fixture_files_on_disk(root, config))
    target = root / config.manifest
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(render(entries))
    tmp.replace(target)
    return target, len(entries)


def verify_tree(root: Path, config: Config) -> list[Problem] | None:
    """Problems in the work tree; None when there is no manifest at all."""
    path = root / config.manifest
    if not path.is_file():
        return None
    listed = parse(path.read_bytes(), where=config.manifest)
    return compare(listed, digests(fixture_files_on_disk(root, config)))
