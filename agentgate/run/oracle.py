"""The base oracle (issue 11 items 3-5): the base's form of the tests on head's code.

One temporary worktree of head gets the base's harness laid over it (every conftest,
pytest configuration and start-up file, as at the base: removed where the base has none).
When the range changes the harness, the band's selection runs there first: a test that fails
under the base's harness and did not fail under head's was hidden by the harness. Then the
test files of the suppressed and the edited base tests are laid over too, and exactly those
base node ids run. A full-suite run at head never satisfies a suppression by itself: only
this run does.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgate.core.config import Config
from agentgate.core.paths import function_id
from agentgate.git import gitio, overlay, worktrees
from agentgate.run import band, interp, session, tamper
from agentgate.run import inventory as inventory_mod
from agentgate.run import suppress as judge
from agentgate.run.suppress import Judged

# One "FAILED id - why" line per failure. The cache plugin stays as the band has it (its
# folder is the run's own): tests using the ``cache`` fixture run as they do in the band.
_SUMMARY = ("-rfE",)


@dataclass(frozen=True)
class OracleInput:
    merge_base: str
    head: str
    inventory: inventory_mod.Inventory
    renames: Mapping[str, str]  # base test file -> its head path ("" when deleted)
    edited: frozenset[str]  # base test files the range modified (their tests may be rewritten)
    harness: tuple[str, ...]  # harness paths at base or head: laid over as at the base
    harness_changed: bool
    selection: tuple[str, ...] | None  # the band's selection (None: the whole suite)
    # Changed files of the test roots that are not tests nor conftests (a test's helper, its
    # expected data, a module copy under tests/): the base forms run with them as at base.
    support: tuple[str, ...] = ()
    # Base test files the band ran whole that the range did not touch: only their tests head
    # did not collect (or deselected) count, as code under test made them vanish
    # (``__test__ = False`` on a mixin it ships, a parametrize list it computes).
    untouched: frozenset[str] = frozenset()
    # Base tests a witness left out of the band (nothing they ran or read changed): head did
    # not run them by agentgate's choice, not the patch's (new-user trial, Jinja2: one edited
    # line of a test reported 97 "harmless suppressions" and ran their base forms).
    vouched: frozenset[str] = frozenset()
    # Base tests the witness recorded at the base saw skipped or xfailed: one head skips or
    # xfails too is no suppression (new-user trial, dateutil: 64 platform skips listed as
    # harmless suppressions, each base form run, for a comment in a conftest).
    skipped_at_base: frozenset[str] = frozenset()


@dataclass(frozen=True)
class OracleReport:
    suppressed: tuple[Judged, ...] = ()
    rewritten: tuple[Judged, ...] = ()  # edited tests whose base form fails on head
    harness_hidden: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # a run that did not finish: fails the check
    seconds: float = 0.0
    ran: bool = False
    runs: tuple[band.RunResult, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "ran": self.ran, "duration_s": round(self.seconds, 3),
            "suppressed": [_judged_json(j) for j in self.suppressed],
            "rewritten": [_judged_json(j) for j in self.rewritten],
            "harness_hidden": list(self.harness_hidden), "problems": list(self.problems),
        }


def _judged_json(j: Judged) -> dict[str, str]:
    found = {"nodeid": j.nodeid, "head": j.head, "base_form": j.oracle, "failure": j.failure}
    return {**found, "stand_in": j.stand_in} if j.stand_in else found


def candidates(inp: OracleInput, head: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(suppressed, edited-and-passing) base node ids, from head's merged outcome data."""
    suppressed, edited = [], []
    for nodeid in inp.inventory.nodeids:
        status = judge.head_status(nodeid, inp.renames, head)
        if nodeid in inp.vouched and status in judge.VANISHED:
            continue
        if nodeid in inp.skipped_at_base and status in (judge.SKIPPED, judge.XFAILED):
            continue
        if nodeid.split("::", 1)[0] in inp.untouched:
            if status in judge.VANISHED:
                suppressed.append(nodeid)
        elif status != judge.RAN:
            suppressed.append(nodeid)
        elif nodeid.split("::", 1)[0] in inp.edited and judge.head_passed(
                nodeid, inp.renames, head):
            edited.append(nodeid)
    return suppressed, edited


def run_oracle(root: Path, config: Config, inp: OracleInput,
               head_seen: Iterable[Mapping[str, Any] | None]) -> OracleReport:
    start = time.monotonic()
    head = judge.merged(head_seen)
    suppressed, edited = candidates(inp, head)
    if not (suppressed or edited or inp.harness_changed):
        return OracleReport()
    with worktrees.temporary_worktree(root, inp.head) as tree, \
            session.runner(root, config, tree, "oracle") as runner:
        overlay.lay_over(root, inp.merge_base, tree, inp.harness)
        hidden, problems, runs = _base_harness(runner, inp, head)
        nodes = suppressed + edited
        if nodes:
            files = {n.split("::", 1)[0] for n in nodes}
            overlay.lay_over(root, inp.merge_base, tree, files | set(inp.support))
            result, data = session.run_nodes(
                runner, "oracle", (*_SUMMARY, *_base_form_args(nodes, inp.inventory.nodeids)))
            runs.append(result)
            if data is None or not data.get("finished"):
                # No base form ran: no test's verdict, one line saying why (fails the check).
                problems.append(f"the run of the base forms did not finish (exit "
                                f"{result.exit_code}): "
                                f"{judge.failure_line('', result.output_tail)}")
                nodes, suppressed, edited = [], [], []
    stand_ins: dict[str, str] = {}
    if nodes:
        data, stand_ins = _unstable_ids(root, config, inp, nodes, data or {})
    judged = {n: _judge(n, inp, head, data, result, stand_ins.get(n, ""))
              for n in nodes} if nodes else {}
    return OracleReport(
        suppressed=tuple(judged[n] for n in suppressed),
        rewritten=tuple(judged[n] for n in edited if judged[n].oracle == "failed"),
        harness_hidden=tuple(hidden), problems=tuple(problems),
        seconds=time.monotonic() - start, ran=True, runs=tuple(runs))


def _base_harness(runner: band.Runner, inp: OracleInput, head: Mapping[str, Any]
                  ) -> tuple[list[str], list[str], list[band.RunResult]]:
    """The band's selection under the base's harness, when the range changes the harness."""
    if not inp.harness_changed:
        return [], [], []
    result, data = session.run_nodes(runner, "base-harness",
                                     (*_SUMMARY, *_args(inp.selection or ())))
    if data is None or not data.get("finished"):
        return [], [f"the run under the base's harness did not finish (exit "
                    f"{result.exit_code}): {judge.failure_line('', result.output_tail)}"], [result]
    failed = [n for n in data.get("tests") or {} if judge.oracle_outcome(n, data) == "failed"]
    base_tests = set(inp.inventory.nodeids)  # a new test needing a new fixture is no contract
    return judge.harness_hidden([n for n in failed if n in base_tests], head), [], [result]


def _judge(nodeid: str, inp: OracleInput, head: Mapping[str, Any],
           data: Mapping[str, Any] | None, result: band.RunResult, stand_in: str = "") -> Judged:
    outcome = judge.oracle_outcome(nodeid, data or {})
    why = (judge.failure_line(stand_in or nodeid, result.output_tail) if outcome == "failed"
           else "")
    return Judged(nodeid, judge.head_status(nodeid, inp.renames, head), outcome, why, stand_in)


def _args(nodes: Iterable[str]) -> list[str]:
    return [f"./{n}" for n in nodes]


def _base_form_args(nodes: list[str], inventory: Iterable[str]) -> list[str]:
    """The base forms to run: a parametrized test as its function (an id pytest cannot
    find would end the whole run), its known cases that are not to be judged deselected, so
    that only the judged ones and the cases the inventory does not know run."""
    wanted = set(nodes)
    functions = {function_id(n) for n in nodes}
    known = [n for n in inventory if n not in wanted and function_id(n) in functions
             and n != function_id(n)]
    return [*_args(sorted(functions)), *(f"--deselect={n}" for n in sorted(known))]


def _unstable_ids(root: Path, config: Config, inp: OracleInput, nodes: list[str],
                  data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A judged case whose base form did not run, because the base's own collection makes
    another id for it from run to run (a pid, a random or a time value in its parameters):
    the base is collected once more, and when it does not reproduce the id either, the case
    is judged by the cases of its function that the base's inventory does not know, which
    the base form's run did collect (the worst of their outcomes). The second collection may
    name one of them as the run did (new-user trial: a time to the second, the same in both
    runs) and it still stands in. A case the base does reproduce, which head's code made
    vanish (a parametrize list it computes), keeps its verdict: its base form could not be
    collected on head's code. Also returns which case stood for each such id."""
    tests: dict[str, Any] = dict(data.get("tests") or {})
    missing = [n for n in nodes if n not in tests and n != function_id(n)]
    if not missing:
        return dict(data), {}
    files = tuple(sorted({n.split("::", 1)[0] for n in missing}))
    again = set(inventory_mod.collect(root, config, inp.merge_base, files))
    known = set(inp.inventory.nodeids)
    stand_ins: dict[str, str] = {}
    for nodeid in missing:
        if nodeid in again:
            continue
        strangers = [t for t in tests if function_id(t) == function_id(nodeid)
                     and t != function_id(t) and t not in known]
        if strangers:
            worst = min(strangers, key=lambda t: _RANK.get(judge.oracle_outcome(t, data), 0))
            tests[nodeid] = tests[worst]
            stand_ins[nodeid] = worst
    return {**data, "tests": tests}, stand_ins


# Which stranger stands for an unstable base id: a failure first.
_RANK = {"failed": 0, "skipped": 1, "xfailed": 2, "passed": 3}


# --- the base's own outcomes ---------------------------------------------------------------

_AT_BASE_FORMAT = 1
ONLY_OPTION = "--agentgate-only"  # as run/outcomes.py defines it (not imported: pytest)


@dataclass(frozen=True)
class AtBase:
    outcomes: Mapping[str, str]  # node id -> passed, failed, skipped or xfailed on the base
    problem: str = ""  # the run did not finish: nothing is known


def outcomes_at_base(root: Path, config: Config, merge_base: str, nodeids: Iterable[str]
                     ) -> AtBase:
    """What the base itself (its code, tests and harness) does with each of ``nodeids``, run
    in a temporary worktree of the base as the band runs; an id the base does not collect is
    absent. Cached per base tree and interpreter under ``.git/agentgate/inventory/``: an id
    asked once is not run again for pushes on the same base."""
    wanted = sorted(set(nodeids))
    path = _at_base_path(root, config, merge_base)
    known = _read_at_base(path)
    missing = [n for n in wanted if n not in known]
    if not missing:
        return AtBase({n: known[n] for n in wanted if known[n]})
    files = sorted({n.split("::", 1)[0] for n in missing})
    with worktrees.temporary_worktree(root, merge_base) as tree, \
            session.runner(root, config, tree, "base-run") as runner:
        listed = runner.workdir / "only.txt"
        listed.write_text("\n".join(missing) + "\n", encoding="utf-8")
        result, data = session.run_nodes(
            runner, "base-run", (f"{ONLY_OPTION}={listed}", *_args(files)))
    if data is None or not data.get("finished"):
        return AtBase({}, f"the run of the base's own tests did not finish (exit "
                          f"{result.exit_code}): {judge.failure_line('', result.output_tail)}")
    tests = data.get("tests") or {}
    for nodeid in missing:  # "" : the base does not have it
        known[nodeid] = judge.oracle_outcome(nodeid, data) if nodeid in tests else ""
    _write_at_base(path, known)
    return AtBase({n: known[n] for n in wanted if known[n]})


def _at_base_path(root: Path, config: Config, merge_base: str) -> Path:
    tree = gitio.resolve(root, merge_base, what="merge-base", peel="tree")
    python = interp.project_python(root, config)
    key = hashlib.sha256(f"{tree}\0{python}".encode("utf-8", "surrogateescape"))
    return gitio.state_dir(root) / "inventory" / f"at-base-{key.hexdigest()[:32]}.json"


def _read_at_base(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != _AT_BASE_FORMAT:
        return {}
    found = data.get("outcomes")
    if not isinstance(found, dict):
        return {}
    return {str(k): str(v) for k, v in found.items()}


def _write_at_base(path: Path, known: Mapping[str, str]) -> None:
    tamper.write(path, json.dumps({"format": _AT_BASE_FORMAT,
                                   "outcomes": dict(known)}).encode("utf-8"))
