"""The one reader of pytest's JUnit XML: each test's outcome in one run.

Outcomes come from the XML, never from the exit code alone: exit 1 means "some test failed",
not "this one did", and a conftest that does not import exits 4 before any XML exists. The
exit code only tells a harness failure (no XML, internal error) from a test that simply is not
there. Two views of one parse: ``read_outcome`` (one node id, for attribution) and
``read_nodes`` (every node id with its outcome, for the band's counts and failures; it needs
``junit_family=xunit1``, whose ``file`` attribute gives exact node ids).
"""

from __future__ import annotations

import re
import signal
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

# pytest's exit codes (``pytest.ExitCode``), spelled out so this module never imports pytest.
EXIT_TESTS_FAILED, EXIT_INTERRUPTED, EXIT_INTERNAL, EXIT_USAGE, EXIT_NO_TESTS = 1, 2, 3, 4, 5


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # setup or teardown raised
    SKIPPED = "skipped"  # skip and xfail
    NOT_COLLECTED = "not-collected"  # the node does not exist in this tree
    COLLECTION_ERROR = "collection-error"  # the node's module or a conftest does not import
    HARNESS_ERROR = "harness-error"  # no XML, pytest internal or usage error, interrupted
    TIMEOUT = "timeout"  # the run was killed at the per-run limit

    @property
    def failing(self) -> bool:
        """The test ran and did not pass: the outcome a flake shows."""
        return self in (Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT)

    @property
    def ran(self) -> bool:
        """The test was collected and executed (passing, failing, or skipped by itself)."""
        return self in (Outcome.PASSED, Outcome.SKIPPED) or self.failing

    @property
    def broken(self) -> bool:
        """The tree could not run the test at all."""
        return self in (Outcome.COLLECTION_ERROR, Outcome.HARNESS_ERROR)


@dataclass(frozen=True)
class Case:
    """One ``<testcase>`` element: pytest writes a second one for a teardown error."""

    classname: str
    name: str
    outcome: Outcome
    message: str = ""
    file: str = ""  # xunit1 only: the test's file, relative to the rootdir
    # Each ``path:line`` of the failure's traceback, in order (where it failed).
    trace: tuple[str, ...] = ()
    # What the test is beside its id (``attribution.runs``' identity plugin): a digest of its
    # parameters' values and its function's source; "" when nothing said.
    identity: str = ""
    # A teardown's error pytest writes into the same ``<testcase>`` after the call's failure:
    # its message's first line (flake trial round 4: a new teardown error went unseen).
    then: str = ""

    @property
    def nodeid(self) -> str:
        return nodeid_of(self.file, self.classname, self.name)


@dataclass(frozen=True)
class RunOutcome:
    outcome: Outcome
    detail: str = ""  # the failure message's first line, or why the harness failed


_COLLECTION_FAILURE = "collection failure"
_TEARDOWN = "failed on teardown"
# Worst first: a failing parameter or a teardown error decides the node's outcome.
_PRIORITY = (
    Outcome.COLLECTION_ERROR, Outcome.FAILED, Outcome.ERROR, Outcome.PASSED, Outcome.SKIPPED
)


def normalise_nodeid(nodeid: str) -> str:
    """The path part with forward slashes and no leading ``./``; the rest as given: pytest
    escapes a parameter id's non-ASCII and backslashes (``test_w[\\xfc]``) and takes them
    back so (flake trial: ``[/xfc]`` matched nothing, exit 64)."""
    path, sep, rest = nodeid.strip().partition("::")
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path + sep + rest


def junit_address(nodeid: str) -> tuple[str, str]:
    """(classname, name) as pytest's junitxml ``mangle_test_address`` writes them."""
    path, bracket, params = normalise_nodeid(nodeid).partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def parse_cases(xml_text: str) -> list[Case]:
    """Every testcase in a pytest JUnit XML document; ValueError when it does not parse."""
    try:
        tree = ET.fromstring(xml_text)  # local file pytest itself just wrote
    except ET.ParseError as exc:
        raise ValueError(f"JUnit XML does not parse: {exc}") from None
    return [_case(el) for el in tree.iter("testcase")]


IDENTITY_PROPERTY = "agentgate-identity"


def _case(el: ET.Element) -> Case:
    classname, name, file = el.get("classname", ""), el.get("name", ""), el.get("file", "")
    identity = next((p.get("value", "") for p in el.iter("property")
                     if p.get("name") == IDENTITY_PROPERTY), "")
    for tag, outcome in (("failure", Outcome.FAILED), ("error", Outcome.ERROR)):
        child = el.find(tag)
        if child is not None:
            message = child.get("message", "")
            if tag == "error" and message == _COLLECTION_FAILURE:
                outcome = Outcome.COLLECTION_ERROR
            after = el.find("error") if tag == "failure" else None
            then = "" if after is None else _first_line(after.get("message", "") or after.text
                                                         or "")
            return Case(classname, name, outcome, _first_line(message or child.text or ""), file,
                        tuple(_TRACE_LINE.findall(child.text or "")), identity, then)
    skipped = el.find("skipped")
    if skipped is not None:
        message = _first_line(skipped.get("message", ""))
        return Case(classname, name, Outcome.SKIPPED, message, file)
    return Case(classname, name, Outcome.PASSED, file=file)


# pytest's long traceback names each frame's place as ``path:line: ...`` at a line's start.
_TRACE_LINE = re.compile(r"^([^\s:][^:\n]*\.py:\d+):", re.M)
AT = " (at "  # a detail's ending: the last line of the test's own file the failure went through


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:200] if lines else ""


THEN = "; then "  # a detail's tail: the teardown error after the failure (``Case.then``)
CASES = "cases "  # a detail naming the failing cases of a parametrized function's id
# A detail's opening: what the failing test is (``Case.identity``), so one id that names
# another case or another test body on the other tree does not fail the same way.
IDENTITY = "test#"


def cases_for(cases: list[Case], nodeid: str) -> list[Case]:
    """The testcases of one node id; a parametrised function's id matches all its cases, and
    a class's id every test of the class (flake trial: ``test_c.py::TestX`` was "not
    collected", though pytest runs it)."""
    classname, name = junit_address(nodeid)
    has_params = "[" in name
    inside = f"{classname}.{name}" if classname else name
    return [
        c
        for c in cases
        if (c.classname == classname
            and (c.name == name or (not has_params and c.name.startswith(name + "["))))
        or (not has_params and (c.classname == inside or c.classname.startswith(inside + ".")))
    ]


def _case_name(case: Case, classname: str) -> str:
    """A case as the id's own names it: ``test_a[1]``, or ``TestY.test_a`` in a nested class
    (flake trial round 3: ``TestX::test_a`` and ``TestX::TestY::test_a`` were one name, so
    which of them failed was no part of how the class failed)."""
    if case.classname == classname:
        return case.name
    inner = case.classname[len(classname) + 1:] if case.classname.startswith(
        classname + ".") else case.classname
    return f"{inner}.{case.name}"


def _where(case: Case, test_file: str) -> str:
    """Where in the test's own file the failure went through last (its line there): two
    assertions of one test failing with one exception type are two failures (flake trial
    round 3). Lines of the code under test are not taken: a patch that only moves them
    leaves a failure the same."""
    mine = [t for t in case.trace if t.rsplit(":", 1)[0] == test_file]
    return f"{AT}{mine[-1]})" if mine else ""


def outcome_of(cases: list[Case], nodeid: str, returncode: int) -> RunOutcome:
    """The node's outcome from a parsed report and pytest's exit code."""
    mine = cases_for(cases, nodeid)
    if mine:
        worst = min(mine, key=lambda c: _PRIORITY.index(c.outcome))
        classname, name = junit_address(nodeid)
        if not any(c.classname == classname for c in mine):
            classname = f"{classname}.{name}" if classname else name  # a class's id
        failing = sorted({_case_name(c, classname) for c in mine if c.outcome.failing})
        message = worst.message + _where(worst, normalise_nodeid(nodeid).split("::", 1)[0])
        # pytest writes a teardown's error after a failure as a second ``<testcase>`` of the
        # same name (or, in some versions, into the same one: ``Case.then``).
        then = worst.then or next(
            (c.message for c in mine if c is not worst and c.outcome is Outcome.ERROR
             and c.message.startswith(_TEARDOWN) and c.classname == worst.classname
             and c.name == worst.name), "")
        if then:
            message += f"{THEN}{then}"
        if len({_case_name(c, classname) for c in mine}) > 1 and failing:
            # A parametrized function's id: which cases failed is part of how it failed
            # (flake trial: base failing [three] and head [two] looked like one failure).
            message = f"{CASES}{', '.join(failing)}: {message}"
        # Which test failed, beside its name (flake trial round 4: ``test_tax[rate1]`` was
        # another rate on each tree; a test body the patch rewrote failed on the same line).
        which = sorted({c.identity for c in mine if c.outcome.failing and c.identity})
        if which:
            message = f"{IDENTITY}{','.join(which)}: {message}"
        return RunOutcome(worst.outcome, message)
    broken = [c for c in cases if c.outcome is Outcome.COLLECTION_ERROR]
    if broken:
        return RunOutcome(Outcome.COLLECTION_ERROR, f"{broken[0].name}: {broken[0].message}")
    if returncode in (0, EXIT_TESTS_FAILED, EXIT_USAGE, EXIT_NO_TESTS):
        # 4 is also "not found: ...", which pytest reports after writing an empty XML.
        return RunOutcome(Outcome.NOT_COLLECTED, "pytest collected no test with this id")
    return RunOutcome(Outcome.HARNESS_ERROR, f"pytest exited {returncode} without reporting it")


def read_outcome(xml_path: Path, nodeid: str, returncode: int, stderr: str = "") -> RunOutcome:
    """The node's outcome in one finished run: HARNESS_ERROR when pytest wrote no usable XML."""
    why = _last_line(stderr)
    if returncode == EXIT_INTERNAL:
        return RunOutcome(Outcome.HARNESS_ERROR, f"pytest internal error: {why}")
    try:
        text = xml_path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        if returncode < 0:
            # Killed by a signal while it ran (agentgate's own time limit is told apart
            # before this): the test crashed the interpreter, a failure like any other
            # (flake trial round 3: head's os.abort() on some seeds was HARNESS_ENV).
            return RunOutcome(Outcome.FAILED, f"{_signal_name(-returncode)}: the process died "
                              f"while the test ran: {why}")
        return RunOutcome(Outcome.HARNESS_ERROR, f"pytest exited {returncode}, no XML: {why}")
    try:
        cases = parse_cases(text)
    except ValueError as exc:
        return RunOutcome(Outcome.HARNESS_ERROR, str(exc))
    result = outcome_of(cases, nodeid, returncode)
    if result.outcome is Outcome.HARNESS_ERROR and why:
        return RunOutcome(result.outcome, f"{result.detail}: {why}")
    return result


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else ""


# --- every node of a run (the band) -------------------------------------------------------

# Worst last. Not ``_PRIORITY``: per node, a teardown error after a failure counts as an
# error, and a collection error is one more error, as the band has always counted them.
_NODE_RANK = (Outcome.PASSED, Outcome.SKIPPED, Outcome.FAILED, Outcome.ERROR)


def read_nodes(xml_path: Path, known: Iterable[str] = ()) -> dict[str, Outcome]:
    """Node id -> passed, skipped, failed or error, for every test the run reported; a test
    reported twice keeps its worst outcome. ``known``: the run's exact node ids (agentgate's
    outcome plugin), matched by the address JUnit writes: a test class imported into a
    second test file carries its defining file in ``file`` (itsdangerous; new-user trial:
    failures were counted under a node id that does not exist). ValueError when the XML
    does not parse."""
    exact = {junit_address(n): n for n in known}
    nodes: dict[str, Outcome] = {}
    for case in parse_cases(xml_path.read_text(encoding="utf-8", errors="replace")):
        outcome = Outcome.ERROR if case.outcome is Outcome.COLLECTION_ERROR else case.outcome
        nodeid = exact.get((case.classname, case.name)) or case.nodeid
        seen = nodes.get(nodeid, Outcome.PASSED)
        if _NODE_RANK.index(outcome) >= _NODE_RANK.index(seen):
            nodes[nodeid] = outcome
    return nodes


def nodeid_of(file: str, classname: str, name: str) -> str:
    """Rebuild pytest's node id from xunit1's file, classname and name attributes."""
    if not file:
        return f"{classname}::{name}" if classname else name
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    if not classname:
        return file  # a collection error: the case is the file itself
    rest = classname[len(module):].lstrip(".") if classname.startswith(module) else ""
    parts = [file, *(rest.split(".") if rest else []), name]
    return "::".join(parts)
