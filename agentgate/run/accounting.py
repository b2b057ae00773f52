"""Outcome accounting: every test agentgate selected produced an outcome agentgate recorded.

Pure: reads what the ``agentgate.run.outcomes`` plugin wrote (already parsed), the selection
and pytest's exit status, and returns the problems, each naming its tests. The band turns
them into reasons. What fails the check (issue 11, item 1):

- the session did not finish (the process ended early, whatever its status) or the plugin
  wrote nothing;
- a selected test with no outcome: not collected (renamed, ``__test__ = False``), deselected
  by the harness, a phase that never ended, or a test that ended the session;
- a selection that collects nothing;
- an outcome the harness rewrote: a phase agentgate saw fail that pytest reported as passed
  or skipped (a conftest hookwrapper, a swallowed exception) -- blocked, not just failed;
- an exit status that disagrees with the one the session ended with;
- code under test that changed pytest in process once the session began (registered a
  plugin, replaced a part of pytest or pluggy that runs or reports a test) -- blocked.

An xfail marker that turns a failure into ``xfailed`` is not a rewrite: it is a suppression,
which the base oracle judges (a test marked at base stays marked).

Under pytest-xdist the file is the controller's: what pytest reported comes from every worker
through ``pytest_runtest_logreport``, what each worker saw run (phases, collection,
deselection) from its ``workeroutput`` at its end. A worker that died sent none, so the tests
it ran have no phase and are named here like any test without an outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentgate.core.model import Verdict
from agentgate.core.paths import function_id

PHASES = ("setup", "call", "teardown")
# The plugin's option and file format (run.outcomes holds the same two: it imports nothing
# of agentgate's, and this module must not import pytest).
OPTION = "--agentgate-outcomes"
FORMAT = 1
_HIDDEN = ("passed", "skipped")  # reported outcomes that would hide a failure
_USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR: a node id on the command line not found


@dataclass(frozen=True)
class Problem:
    code: str
    verdict: Verdict
    detail: str
    nodeids: tuple[str, ...] = ()


def account(
    data: Mapping[str, Any] | None, selection: Sequence[str], returncode: int
) -> list[Problem]:
    """Problems with a run of ``selection`` (node ids, or test files meaning all their
    tests); ``data`` is the plugin's file, None when there is none."""
    if data is None or not isinstance(data.get("tests"), dict):
        return [Problem("no-outcomes", Verdict.FAILED, "pytest ended before agentgate's "
                        f"outcome plugin recorded anything (exit status {returncode})")]
    problems = _session(data, selection, returncode)
    problems += _selected(data, selection)
    problems += _rewritten(data)
    problems += _altered(data)
    return problems


def _session(data: Mapping[str, Any], selection: Sequence[str], returncode: int) -> list[Problem]:
    if not data.get("finished"):
        missing = _without_outcome(data, selection)
        return [Problem("session-not-finished", Verdict.FAILED, "the pytest session ended "
                        f"early (exit status {returncode}) before every test ran", missing)]
    if not data.get("collected") and data.get("exitstatus") == _USAGE_ERROR:
        return [Problem("not-collected", Verdict.FAILED, "pytest could not find every "
                        "selected test and ran none", tuple(selection))]
    if not data.get("collected"):
        return [Problem("collected-nothing", Verdict.FAILED,
                        "the selection collected no test", tuple(selection))]
    status = data.get("exitstatus")
    if status != returncode and not (status == 5 and returncode == 0):
        return [Problem("exit-status", Verdict.FAILED, f"pytest's session ended with status "
                        f"{status} but the process exited {returncode}")]
    return []


def _selected(data: Mapping[str, Any], selection: Sequence[str]) -> list[Problem]:
    if not data.get("finished") or not data.get("collected"):
        return []  # already reported as a whole
    collected, deselected = set(data["collected"]), set(data.get("deselected", ()))
    problems = []
    among_deselected, among_seen = _among(deselected), _among(collected | deselected)
    dropped = tuple(n for n in selection if "::" in n and among_deselected(n))
    # A file selected whole whose tests were all deselected: deselected, not missing.
    emptied = tuple(f for f in selection if "::" not in f and not _in_file(collected, f)
                    and _in_file(deselected, f))
    if dropped or emptied:
        problems.append(Problem("deselected", Verdict.FAILED,
                                "selected tests were deselected by the harness",
                                dropped + emptied))
    absent = tuple(n for n in selection if "::" in n and not among_seen(n))
    absent += tuple(f for f in selection if "::" not in f and not _in_file(collected, f)
                    and f not in emptied)
    if absent:
        problems.append(Problem("not-collected", Verdict.FAILED,
                                "selected tests were not collected", absent))
    unfinished = _unfinished(data, collected)
    if unfinished:
        problems.append(Problem("no-outcome", Verdict.FAILED, "collected tests produced no "
                                "outcome (a phase never ended, or ended the session)",
                                unfinished))
    return problems


def _rewritten(data: Mapping[str, Any]) -> list[Problem]:
    found = []
    for nodeid, entry in sorted(data["tests"].items()):
        saw = [p for p in PHASES if entry.get(p) == "failed"]
        if saw and (entry.get("reported") in _HIDDEN or entry.get("hidden_by")):
            # ``hidden_by``: the code under test skipped or xfailed the test (``outcomes``),
            # which an xfail marker's reported "xfailed" would otherwise look like.
            found.append((nodeid, saw[0], entry.get("reported")))
    if not found:
        return []
    first = found[0]
    return [Problem("outcome-rewritten", Verdict.BLOCKED, f"the harness reported tests that "
                    f"failed as passing ({first[0]}: {first[1]} failed, reported "
                    f"{first[2]})", tuple(n for n, _, _ in found))]


def _altered(data: Mapping[str, Any]) -> list[Problem]:
    """The code under test changed pytest while the tests ran (registered a plugin, replaced
    what runs or reports a test): no outcome of the session is the tests' own to say."""
    said = [str(a) for a in data.get("altered") or ()]
    if not said:
        return []
    return [Problem("harness-altered", Verdict.BLOCKED, "the code under test changed how "
                    f"pytest runs or reports tests: {said[0]}; a patch may not change the "
                    "harness from the code under test", tuple(sorted(data["tests"])))]


def _among(ids: set[str]) -> Callable[[str], bool]:
    """Whether a selected node id is among ``ids``: itself, or, for a test selected without
    its parameters (``path::test``: the witness runs all of an impacted parametrized test's
    cases), one of its cases (``path::test[1-2]``)."""
    cases = {function_id(n) for n in ids if n.endswith("]")}
    return lambda nodeid: nodeid in ids or nodeid in cases


def _without_outcome(data: Mapping[str, Any], selection: Sequence[str]) -> tuple[str, ...]:
    done = {n for n, e in data["tests"].items() if _complete(e)}
    among_done = _among(done)
    missing = [n for n in selection if "::" in n and not among_done(n)]
    missing += [f for f in selection if "::" not in f and not _in_file(done, f)]
    return tuple(missing)


def _unfinished(data: Mapping[str, Any], collected: set[str]) -> tuple[str, ...]:
    tests: Mapping[str, Mapping[str, str]] = data["tests"]
    return tuple(sorted(n for n in collected if not _complete(tests.get(n, {}))))


def _complete(entry: Mapping[str, str]) -> bool:
    """A test has an outcome: it was reported, and no phase was left running or ended the
    session."""
    phases = [entry[p] for p in PHASES if p in entry]
    return "reported" in entry and bool(phases) and not {"started", "exit"} & set(phases)


def _in_file(nodeids: set[str], path: str) -> bool:
    prefix = path.rstrip("/") + "::"
    return any(n.startswith(prefix) for n in nodeids)


def account_runs(
    runs: Iterable[tuple[Mapping[str, Any] | None, int]], selection: Sequence[str] | None,
    ours: Sequence[str] = (),
) -> list[Problem]:
    """Problems with the runs of one band: each run's session, then the selection against
    what all of them collected together (the band, the property run and the marker run each
    take their share; a test one run deselects another may run). ``selection`` None is the
    whole suite, which must collect something. ``ours``: the cases the band itself
    deselected (``--deselect``), which no harness hid."""
    problems: list[Problem] = []
    merged: dict[str, Any] = {"finished": True, "collected": [], "deselected": [], "tests": {}}
    for data, returncode in runs:
        if data is None or not isinstance(data.get("tests"), dict):
            problems += account(None, (), returncode)
            continue
        problems += _run_session(data, selection or (), returncode)
        problems += _rewritten(data)
        problems += _altered(data)
        merged["collected"] += data.get("collected") or []
        merged["deselected"] += data.get("deselected") or []
        merged["tests"].update(data["tests"])
        merged["finished"] = merged["finished"] and bool(data.get("finished"))
    if not merged["finished"]:
        return problems  # the unfinished session named what it left without an outcome
    if not merged["collected"] and not problems:
        return [Problem("collected-nothing", Verdict.FAILED, "the run collected no test",
                        tuple(selection or ()))]
    merged["deselected"] = sorted(
        set(merged["deselected"]) - set(merged["collected"]) - set(ours))
    return problems + _selected(merged, selection or ())


def _run_session(data: Mapping[str, Any], selection: Sequence[str], returncode: int
                 ) -> list[Problem]:
    """One run's session; a run of the band that collects nothing is fine on its own (the
    marker run of a band with no marked test), the band as a whole is judged after."""
    if data.get("finished") and not data.get("collected") and (
            data.get("exitstatus") != _USAGE_ERROR):
        return []
    return _session(data, selection, returncode)
