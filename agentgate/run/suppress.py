"""Suppressions and their judgement (issue 11 items 2, 3, 5), pure.

A base test (a node id in the base inventory) is *suppressed* when head did not run it to a
pass or a fail: skipped, xfailed, deselected, not collected, or its file gone. The base
oracle runs each suppressed test's base form on head's code; its outcome there decides: a
failure was hidden by the patch, a pass means the suppression was harmless. A test the patch
edited whose base form fails on head while its new form passes had its expectation rewritten.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentgate.core.paths import function_id

RAN = "ran"
DELETED = "deleted"
_FAILED = ("failed", "error")
SKIPPED, XFAILED = "skipped", "xfailed"
_HEAD_SKIPS = {"skipped": SKIPPED, "xfailed": XFAILED}
NOT_COLLECTED, DESELECTED = "not collected", "deselected"
# What head did with a base test that is gone, not skipped: no outcome at all.
VANISHED = frozenset({NOT_COLLECTED, DESELECTED})


@dataclass(frozen=True)
class Judged:
    nodeid: str  # as the base names it
    head: str  # what head did with it: skipped, xfailed, deselected, not collected, deleted, ran
    oracle: str  # "passed", "failed", or "skipped" (skipped at base too) under the base's form
    failure: str = ""  # the oracle's last words on it
    # The case that stood for it: its id differs in every collection of the base (a pid, a
    # random value), so the base form's run collected it under this id (oracle._unstable_ids).
    stand_in: str = ""


def merged(seen: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """The outcome files of several runs as one: collected, deselected and per-test entries."""
    out: dict[str, Any] = {"collected": set(), "deselected": set(), "tests": {}}
    for data in seen:
        if not data:
            continue
        out["collected"].update(data.get("collected") or ())
        out["deselected"].update(data.get("deselected") or ())
        out["tests"].update(data.get("tests") or {})
    return out


def head_name(nodeid: str, renames: Mapping[str, str]) -> str | None:
    """The node id at head of a base test: the same, under its file's new name when the file
    was renamed, None when the file is gone."""
    path, sep, rest = nodeid.partition("::")
    if path in renames:
        new = renames[path]
        return None if not new else new + sep + rest
    return nodeid


def head_status(nodeid: str, renames: Mapping[str, str], head: Mapping[str, Any]) -> str:
    """What head did with a base test, from the band's merged outcome data."""
    name = head_name(nodeid, renames)
    if name is None:
        return DELETED
    reported = (head["tests"].get(name) or {}).get("reported")
    if reported in _HEAD_SKIPS:
        return _HEAD_SKIPS[reported]
    if reported is not None:
        return RAN
    return DESELECTED if name in head["deselected"] else NOT_COLLECTED


def head_passed(nodeid: str, renames: Mapping[str, str], head: Mapping[str, Any]) -> bool:
    name = head_name(nodeid, renames)
    entry = head["tests"].get(name) or {} if name else {}
    return entry.get("reported") in ("passed", "xpassed")


def oracle_outcome(nodeid: str, data: Mapping[str, Any]) -> str:
    """The base form's outcome on head's code; a test it cannot even collect there failed."""
    entry: Mapping[str, str] = (data.get("tests") or {}).get(nodeid) or {}
    if entry.get("reported") == "xfailed":
        # The base form's own xfail marker expects its failure: the base's verdict, as a
        # skip is (new-user trial: every xfail test in an edited file blocked the patch).
        return "xfailed"
    if any(entry.get(p) == "failed" for p in ("setup", "call", "teardown")) or (
            entry.get("reported") in _FAILED):
        return "failed"
    if entry.get("reported") in ("passed", "xpassed"):
        return "passed"
    return "skipped" if entry.get("reported") in _HEAD_SKIPS else "failed"


def failure_line(nodeid: str, tail: Iterable[str]) -> str:
    """pytest's short summary line for the test (``-rfE``), else one for another case of its
    function (the tail the run kept may have lost it among many: new-user trial, '61 cases
    fail ... the first: === 61 failed, 102 passed in 1.83s ==='), else the output's last
    line."""
    lines = [line for line in tail if line.strip()]
    function = function_id(nodeid)
    for prefixes in ((f"FAILED {nodeid}", f"ERROR {nodeid}"),
                     (f"FAILED {function}[", f"ERROR {function}[")):
        for line in lines:
            if line.startswith(prefixes):
                return line
    return lines[-1] if lines else "no output"


def harness_hidden(base_failed: Iterable[str], head: Mapping[str, Any]) -> list[str]:
    """Tests that fail under the base's harness on head's code and did not fail under head's
    own harness (passed, skipped, deselected or not collected there)."""
    hidden = []
    for nodeid in sorted(set(base_failed)):
        entry = head["tests"].get(nodeid) or {}
        if entry.get("reported") not in _FAILED:
            hidden.append(nodeid)
    return hidden


def accepted_ids(text: str | None) -> frozenset[str]:
    """``.agentgate/accepted``: node ids, one a line, ``#`` comments."""
    lines = (line.split("#", 1)[0].strip() for line in (text or "").splitlines())
    return frozenset(line for line in lines if line)
