"""Ambient drift: the patch, or the machine, changed what every test runs under.

A witness says which code and files a test used, all under one ambient environment (the
configured variables: TZ, LANG, LC_ALL, PYTHONHASHSEED, SOURCE_DATE_EPOCH by default; the
interpreter; the installed distributions). When a patch changes that environment -- sets
``os.environ["TZ"]`` in a conftest, adds a pytest-env setting, calls ``time.tzset()`` -- or
the band would run under different values than the recording did, no per-test witness
holds and the whole suite runs.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

from agentgate.core.config import PYTEST_CONFIG_FILES

_ENV_WRITE = re.compile(r"environ|setenv|putenv|unsetenv|delenv")
_PROCESS_WIDE = re.compile(r"\b(tzset|setlocale)\s*\(")
_LOCALE_NAMES = ("LANG", "LANGUAGE")


def _names_in(line: str, names: Iterable[str]) -> list[str]:
    return [n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", line)]


def changed_lines(old: str | None, new: str | None) -> set[str]:
    """Lines present on one side only (a moved line is no change)."""
    before = set((old or "").splitlines())
    after = set((new or "").splitlines())
    return {line.strip() for line in before ^ after if line.strip()}


def patch_drift(
    texts: Mapping[str, tuple[str | None, str | None]], names: tuple[str, ...]
) -> list[str]:
    """Why the changed files alter the ambient environment (``path -> (old, new)`` texts)."""
    reasons: list[str] = []
    for path, (old, new) in sorted(texts.items()):
        base = posixpath.basename(path)
        for line in sorted(changed_lines(old, new)):
            found = _line_drift(base, line, names)
            if found:
                reasons.append(f"{path}: {found}")
                break
    return reasons


def _line_drift(base: str, line: str, names: tuple[str, ...]) -> str | None:
    mentioned = _names_in(line, names)
    if mentioned and (base in PYTEST_CONFIG_FILES or base == "conftest.py"):
        return f"changes {mentioned[0]} for the test run"
    if base.endswith(".py"):
        if mentioned and _ENV_WRITE.search(line):
            return f"sets {mentioned[0]} in the environment"
        match = _PROCESS_WIDE.search(line)
        if match:
            return f"calls {match.group(1)}() (process-wide time zone or locale)"
    return None


def relevant(path: str) -> bool:
    """Files whose text ``patch_drift`` needs."""
    base = posixpath.basename(path)
    return base.endswith(".py") or base in PYTEST_CONFIG_FILES


def env_drift(recorded: Mapping[str, str | None], now: Mapping[str, str | None]) -> list[str]:
    """Variables whose value differs between the recording and the run to come."""
    reasons = []
    lc_all = recorded.get("LC_ALL")
    for name in sorted(set(recorded) | set(now)):
        if recorded.get(name) == now.get(name):
            continue
        if lc_all and now.get("LC_ALL") == lc_all and (
            name in _LOCALE_NAMES or name.startswith("LC_")
        ):
            continue  # LC_ALL overrides LANG and every LC_* category
        reasons.append(
            f"{name} was {recorded.get(name)!r} when recorded, is {now.get(name)!r} now"
        )
    return reasons


def expected(env: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str | None]:
    """The ambient values a run with environment ``env`` sees."""
    return {name: env.get(name) for name in names}
