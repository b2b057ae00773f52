"""What pytest collects and how it is configured, as the planner needs to know it.

Pure, like the planner: pytest's ``python_files`` from the configuration texts, whether a path
is a test file, and whether a change to a pytest configuration file changed pytest's table
(compared parsed, so an edit elsewhere in ``pyproject.toml`` is no change).
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any

from agentgate.core.config import PYTEST_CONFIG_FILES, Config, pytest_tables_from_texts
from agentgate.core.errors import ConfigError
from agentgate.core.model import Reason, Verdict

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")


def python_files(pytest_texts: Mapping[str, str | None]) -> tuple[str, ...]:
    """pytest's ``python_files`` from the first config file that has a pytest section."""
    try:
        tables = pytest_tables_from_texts(dict(pytest_texts))
    except ConfigError:
        return DEFAULT_PYTHON_FILES  # the pytest-config reason promotes this plan anyway
    for table in _in_precedence(tables):
        options = table.get("ini_options", table)
        value = options.get("python_files") if isinstance(options, dict) else None
        if isinstance(value, str) and value.split():
            return tuple(value.split())
        if isinstance(value, list) and value:
            return tuple(str(v) for v in value)
        return DEFAULT_PYTHON_FILES
    return DEFAULT_PYTHON_FILES


def _in_precedence(tables: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [tables[name] for name in PYTEST_CONFIG_FILES if name in tables]


def under(path: str, prefix: str) -> bool:
    return prefix in (".", "") or path == prefix or path.startswith(prefix.rstrip("/") + "/")


def is_test_file(path: str, config: Config, patterns: tuple[str, ...]) -> bool:
    """A file pytest collects: under a test root, named as ``python_files`` says, not a fixture."""
    return TestFiles(config, patterns).match(path)


class TestFiles:
    """``is_test_file`` compiled once per plan: it runs on every module of the graph."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, config: Config, patterns: tuple[str, ...]) -> None:
        self.roots = _prefixes(config.tests)
        self.fixtures = _prefixes(config.fixtures)
        names = [fnmatch.translate(p) for p in patterns if "/" not in p]
        paths = [fnmatch.translate(p) for p in patterns if "/" in p]
        self.name_re = re.compile("|".join(names)) if names else None
        self.path_re = re.compile("|".join(f"(?:.*/)?{p}" for p in paths)) if paths else None

    def match(self, path: str) -> bool:
        if not path.endswith(".py") or not _starts(path, self.roots):
            return False
        if self.fixtures and _starts(path, self.fixtures):
            return False
        name = path.rpartition("/")[2]
        return bool((self.name_re and self.name_re.match(name))
                    or (self.path_re and self.path_re.match(path)))


def _prefixes(folders: Iterable[str]) -> tuple[str, ...] | None:
    """Folder prefixes for ``str.startswith``; None means the whole repository."""
    folders = list(folders)
    if any(f in (".", "") for f in folders):
        return None
    return tuple(f.rstrip("/") + "/" for f in folders)


def _starts(path: str, prefixes: tuple[str, ...] | None) -> bool:
    return prefixes is None or path.startswith(prefixes)


def pytest_config_reasons(
    changed: Mapping[str, tuple[str | None, str | None]],
) -> list[Reason]:
    """Compare parsed pytest tables, so a pyproject edit outside [tool.pytest] is no change;
    a configuration that does not parse at either end cannot be compared and promotes."""
    reasons = []
    for path in sorted(changed):
        base_text, head_text = changed[path]
        name = posixpath.basename(path)
        before, base_problem = _table(name, base_text)
        after, head_problem = _table(name, head_text)
        problem = head_problem or base_problem
        if problem:
            end = "head" if head_problem else "base"
            detail = f"pytest configuration does not parse at {end} ({problem}), so it " \
                     "cannot be compared; full suite required"
        elif before != after:
            detail = "pytest configuration changed (it decides what is collected and how); " \
                     "full suite required"
        else:
            continue
        reasons.append(_promote("pytest-config", detail, path))
    return reasons


def _table(name: str, text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    try:
        return pytest_tables_from_texts({name: text}).get(name), None
    except ConfigError as exc:
        return None, exc.message




def _promote(code: str, detail: str, path: str | None = None) -> Reason:
    return Reason(code=code, verdict=Verdict.PROMOTE, detail=detail, path=path)
