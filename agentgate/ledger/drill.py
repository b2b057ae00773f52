"""The rules for a record's drill: a spec agentgate runs itself, never a command.

``flows.thaw`` turns a valid drill into ``python -m pytest -- NODEID``, k times, under the
pinned environment plus ``ambient``; the names it may pin are the config's ``ambient`` list.
"""

from __future__ import annotations

from typing import Any

from agentgate.ledger.problem import Problem

DRILL_KEYS = ("k", "ambient")
_MAX_SEED = 4294967295  # PYTHONHASHSEED's range


def drill_problems(value: Any, allowed: tuple[str, ...]) -> list[Problem]:
    """A drill is a spec agentgate runs itself (python -m pytest on the record's test), never a
    command: issue 11 found ``drill.command`` could be anything, and thaw ran it."""
    if value is None:
        return []  # missing: reported as such
    if isinstance(value, dict) and "command" in value:
        return [Problem("ledger-drill-command", "drill.command is the old free-command form and "
                        "is never run; migrate: replace the drill with {\"k\": K, \"ambient\": "
                        "{}} (agentgate runs python -m pytest on the record's test itself)")]
    wrong = _drill_shape(value) or _ambient(value["ambient"], allowed)
    return [Problem("ledger-field", f"drill {wrong}; fix the field")] if wrong else []


def _drill_shape(value: Any) -> str | None:
    if not isinstance(value, dict) or sorted(value) != sorted(DRILL_KEYS):
        return "must be an object with exactly 'k' and 'ambient'"
    k = value["k"]
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return "k must be a positive integer (the drill's iteration count)"
    return None


def _ambient(value: Any, allowed: tuple[str, ...]) -> str | None:
    if not isinstance(value, dict):
        return "ambient must be an object of NAME: value strings"
    stray = sorted(str(n) for n in value if n not in allowed)
    if stray:
        return (f"ambient may pin only the config's ambient inputs ({', '.join(allowed)}), "
                f"not {', '.join(stray)}")
    if not all(isinstance(v, str) and "\0" not in v for v in value.values()):
        return "ambient values must be strings"
    seed = value.get("PYTHONHASHSEED")
    if seed is not None and not (seed.isascii() and seed.isdigit() and int(seed) <= _MAX_SEED):
        return f"ambient PYTHONHASHSEED must be an integer 0..{_MAX_SEED}"
    return None
