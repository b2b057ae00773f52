"""Changes to what the project installs: the import graph stops at the repository's edge.

A patch that bumps a requirement, regenerates a lock file or edits the dependency tables of
the packaging metadata can change what any module that imports a third-party package does,
and nothing in the graph says which. Such a change promotes, naming the file.

Pure, like the planner: paths, and the base and head texts of ``pyproject.toml`` and
``setup.cfg`` (which the planner reads anyway, as pytest configuration). Those two are
compared parsed, so an edit elsewhere in them is no change; a text that does not parse at
either end cannot be compared and promotes.
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from agentgate.core.model import Change, Reason, Verdict

# Files that are nothing but a statement of what gets installed.
FILES = frozenset({
    "Pipfile", "Pipfile.lock", "poetry.lock", "pdm.lock", "uv.lock", "setup.py",
    "environment.yml", "environment.yaml", "conda-lock.yml",
})
PATTERNS = ("requirements*.txt", "requirements*.in", "constraints*.txt", "pylock.toml",
            "pylock.*.toml")
REQUIREMENTS_FOLDERS = frozenset({"requirements", "reqs"})  # requirements/dev.txt and such
# The tables of pyproject.toml that say what gets installed (PEP 621, PEP 735, PEP 518, and
# the tools that keep their own lists).
PYPROJECT_KEYS: tuple[tuple[str, ...], ...] = (
    ("project", "dependencies"),
    ("project", "optional-dependencies"),
    ("dependency-groups",),
    ("build-system",),
    ("tool", "poetry", "dependencies"),
    ("tool", "poetry", "dev-dependencies"),
    ("tool", "poetry", "group"),
    ("tool", "pdm", "dev-dependencies"),
    ("tool", "uv"),
)
SETUP_CFG_KEYS = (("options", "install_requires"), ("options", "setup_requires"),
                  ("options", "tests_require"), ("options.extras_require", None))
Texts = tuple[str | None, str | None]  # base, head


def dependency_reasons(changes: Iterable[Change], texts: Mapping[str, Texts]) -> list[Reason]:
    """One promotion per change that touches what the project installs (a rename counts
    once). ``texts``: per changed ``pyproject.toml`` / ``setup.cfg`` path, its base and head
    text (absent: unknown, so a change)."""
    reasons = []
    for change in changes:
        detail = next(filter(None, (_why(path, texts) for path in change.paths)), None)
        if detail is None:
            continue
        reasons.append(Reason(
            "dependencies", Verdict.PROMOTE,
            f"{detail}: what the project installs may differ, and the import graph cannot "
            "tell which modules that reaches; full suite required (check runs the installed "
            "environment: install the new dependencies first)", path=change.path))
    return sorted(reasons, key=lambda r: r.path or "")


def _why(path: str, texts: Mapping[str, Texts]) -> str | None:
    name = posixpath.basename(path)
    if is_dependency_file(path):
        return f"{name} changed"
    if name in ("pyproject.toml", "setup.cfg"):
        return _declared_change(name, texts.get(path))
    return None


def is_dependency_file(path: str) -> bool:
    name = posixpath.basename(path)
    if name in FILES or any(fnmatch.fnmatchcase(name, p) for p in PATTERNS):
        return True
    folder = posixpath.basename(posixpath.dirname(path))
    return folder in REQUIREMENTS_FOLDERS and name.endswith((".txt", ".in"))


def _declared_change(name: str, pair: Texts | None) -> str | None:
    """Why the declared dependencies differ between base and head, or None if they do not."""
    if pair is None:
        return f"{name} changed and its text is not at hand"
    try:
        before, after = (_declared(name, text) for text in pair)
    except ValueError as exc:
        return f"{name} does not parse ({exc}), so its dependencies cannot be compared"
    if before == after:
        return None
    keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    return f"{name} changed its dependency tables ({', '.join(keys)})"


def _declared(name: str, text: str | None) -> dict[str, Any]:
    """The dependency tables of one file (a missing file declares none)."""
    if text is None:
        return {}
    if name == "pyproject.toml":
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(str(exc)) from None
        found = {}
        for keys in PYPROJECT_KEYS:
            value = data
            for key in keys:
                value = value.get(key) if isinstance(value, dict) else None
            if value is not None:
                found[".".join(keys)] = value
        return found
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    found = {}
    for section, option in SETUP_CFG_KEYS:
        if not parser.has_section(section):
            continue
        if option is None:
            found[section] = dict(parser.items(section))
        elif parser.has_option(section, option):
            found[f"{section}.{option}"] = parser.get(section, option)
    return found
