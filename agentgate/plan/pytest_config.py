"""What pytest collects and how it is configured, as the planner needs to know it.

Pure, like the planner: whether a change to a pytest configuration file changed pytest's
table (compared parsed, so an edit elsewhere in ``pyproject.toml`` is no change). pytest's
``python_files``, the test-file rule and ``under`` live in ``core`` (one rule for every
stage, issue 10) and are re-exported here for the planner's callers.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from agentgate.core.config import pytest_python_files as python_files
from agentgate.core.config import pytest_tables_from_texts
from agentgate.core.errors import ConfigError
from agentgate.core.model import Reason, Verdict
from agentgate.core.paths import TestFiles, is_test_file, under

__all__ = [
    "TestFiles",
    "is_test_file",
    "pytest_config_reasons",
    "python_files",
    "under",
]


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
