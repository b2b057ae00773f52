"""The skip gate: given a witness recorded at W and a patch, what runs and what is skipped.

Every witnessed test gets exactly one label, the first that applies:

- ``run:frozen`` -- in the freeze ledger: it runs, and is never shadow-sampled;
- ``run:ambient-drift`` -- the patch (or the machine) changed the ambient environment:
  the whole suite runs;
- ``escalate:incomplete-witness`` -- the test did what the witness cannot follow
  (subprocess, socket, ctypes, a failure when recorded): it runs;
- ``run:fixture-drift`` -- a conftest.py above it, or fixture data it read, changed;
- ``run:impacted`` -- a block it executed, the module level of a file it touched, a file it
  read or a folder it listed changed in W...HEAD (changes between W and the base count);
- ``skip:witnessed`` -- none of that: the witness vouches for it.

Tests the witness does not know run as ``run:new``. No usable witness means ``None``: the
caller falls back to the import-closure band and never skips anything.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from agentgate.core.config import Config
from agentgate.core.paths import function_id, under, under_any
from agentgate.core.text import listed
from agentgate.git import gitio
from agentgate.run import interp
from agentgate.witness import ambient, impact, presence, record, shadow
from agentgate.witness import depgraph as graph
from agentgate.witness.depgraph import TestEntry, Witness
from agentgate.witness.patch import Patch, compute
from agentgate.witness.store import Store, StoreError, commits_between, newest_usable

ESCALATE = "escalate:incomplete-witness"
IMPACTED = "run:impacted"
FIXTURE_DRIFT = "run:fixture-drift"
AMBIENT_DRIFT = "run:ambient-drift"
FROZEN = "run:frozen"
NEW = "run:new"
SKIP = "skip:witnessed"
LABELS = (ESCALATE, IMPACTED, FIXTURE_DRIFT, AMBIENT_DRIFT, FROZEN, NEW, SKIP)
# ``plan`` executes nothing from the branch (issue 11), and fingerprinting the interpreter
# means running it: plan shows the witnessed band unconfirmed; check confirms it first.
UNCONFIRMED_ENV = ("interpreter not fingerprinted: plan runs nothing from the branch; check "
                   "confirms it before the witness narrows the band, else runs the whole suite")


@dataclass(frozen=True)
class Decision:
    nodeid: str  # a node id, or a test file path for file-level decisions
    label: str
    detail: str = ""
    # Its node id is the one head collects (``_exact``): the cases of its function the
    # witness skips may be deselected (``selection``).
    exact: bool = False

    @property
    def runs(self) -> bool:
        return self.label != SKIP


@dataclass(frozen=True)
class WitnessPlan:
    witness: str
    recorded_at: float
    age_commits: int
    decisions: tuple[Decision, ...]
    selection: tuple[str, ...]  # pytest arguments: node ids and whole test files
    shadow: tuple[str, ...]  # skipped node ids that run anyway, to audit the witness
    ambient_drift: tuple[str, ...]  # why the whole suite runs (empty: it does not)
    patch_digest: str
    shadow_percent: float
    notes: tuple[str, ...] = ()
    band: int | None = None  # decisions that run besides the audit: the audit's cap is its size
    # The process state the recording saw each test leave changed (``run.leaks``); None when
    # the witness does not say (recorded before it did).
    state_leaks: frozenset[str] | None = None
    # Cases of selected parametrized functions the witness vouches for (``selection``):
    # passed to pytest as ``--deselect``, so that every case it does not know still runs.
    deselect: tuple[str, ...] = ()
    # The recorded seconds the audit may cost (shadow.budget); None: not bounded in time.
    audit_budget: float | None = None

    @property
    def shadow_limit(self) -> int:
        """The most skips this plan audits below 100% (shadow.limit of the band)."""
        return shadow.limit(self.band)

    @property
    def full_suite(self) -> bool:
        return bool(self.ambient_drift)

    @property
    def run_args(self) -> tuple[str, ...]:
        """What the band passes to pytest: the selection and the shadow sample (a sampled
        case of a parametrized test runs through its function, in the selection)."""
        chosen = set(self.selection)
        return self.selection + tuple(
            n for n in self.shadow
            if n.split("::", 1)[0] not in chosen and function_id(n) not in chosen)

    def labelled(self, label: str) -> list[Decision]:
        return [d for d in self.decisions if d.label == label]


def evaluate(
    root: Path,
    config: Config,
    *,
    base: str,
    head: str,
    frozen: frozenset[str] = frozenset(),
    notes: list[str] | None = None,
    check_env: bool = True,
    audited: bool = True,
) -> WitnessPlan | None:
    """The witnessed plan for base...head, or None (with the reason in ``notes``).
    ``check_env=False`` (``plan``) runs no interpreter and says so in ``notes``;
    ``audited=False``: no shadow sample (no test can be affected, so none is audited)."""
    said = notes if notes is not None else []
    try:
        found = _find(root, base, head, said)
    except StoreError as exc:
        said.append(f"witness not used: {exc.message}")
        return None
    if found is None:
        return None
    witness, merge_base = found
    patch = compute(root, witness.sha, head, config, graph.paths(witness),
                    imports=graph.import_runs(witness), reach=impact.reach(witness),
                    quiet_import=graph.quiet_imports(witness),
                    unwatched=graph.unwatched(witness), top_names=graph.top_names(witness))
    drift = list(patch.ambient) + _machine_drift(root, config, witness)
    if witness.env and check_env:
        drift += _interpreter_drift(root, config, witness.env, base=merge_base, head=head,
                                    then=witness.info.get(graph.DISTRIBUTIONS))
    elif witness.env:
        said.append(UNCONFIRMED_ENV)
    decisions = classify(witness, patch, config=config, frozen=frozen, drift=tuple(drift))
    digest = shadow.patch_digest(patch_diff(root, merge_base, head))
    skipped = [d.nodeid for d in decisions if d.label == SKIP]
    band = sum(d.runs for d in decisions)
    durations = {n: t.duration for n, t in witness.tests.items()}
    band_seconds = _band_seconds(decisions, durations)
    audit = shadow.sample(digest, skipped, config.shadow_percent if audited else 0.0,
                          frozen=frozen, band=band, durations=durations,
                          band_seconds=band_seconds)
    chosen, unrun = ((), ()) if drift else selection(decisions, patch, frozenset(audit))
    return WitnessPlan(
        witness=witness.sha,
        recorded_at=witness.recorded_at,
        age_commits=commits_between(root, witness.sha, merge_base),
        decisions=tuple(decisions),
        selection=chosen,
        deselect=unrun,
        shadow=audit,
        ambient_drift=tuple(drift),
        patch_digest=digest,
        shadow_percent=config.shadow_percent if audited else 0.0,
        notes=tuple(said),
        band=band,
        state_leaks=_state_leaks(witness),
        # Stated only when the witness holds times (one recorded before it did holds zeros).
        audit_budget=(round(shadow.audit_budget(skipped, durations, band_seconds), 4)
                      if any(durations.values()) else None),
    )


def _band_seconds(decisions: list[Decision], durations: dict[str, float]) -> float:
    """The recorded time of what runs besides the audit: a whole file counts as its recorded
    tests, a test the witness has no time for (a new one) as the median recorded test."""
    typical = statistics.median(durations.values()) if durations else 0.0
    by_file: dict[str, float] = {}
    for nodeid, seconds in durations.items():
        file = nodeid.split("::", 1)[0]
        by_file[file] = by_file.get(file, 0.0) + seconds
    return sum(durations.get(d.nodeid, by_file.get(d.nodeid, typical))
               for d in decisions if d.runs)


def _state_leaks(witness: Witness) -> frozenset[str] | None:
    found = witness.info.get(graph.STATE_LEAKS)
    return frozenset(str(e) for e in found) if isinstance(found, list) else None


def _find(root: Path, base: str, head: str, notes: list[str]) -> tuple[Witness, str] | None:
    store = Store.for_repo(root)
    if not store.exists():
        notes.append(presence.NO_STORE)
        return None
    merge_base = gitio.merge_base(root, base, head)
    entry, note = newest_usable(root, store, merge_base)
    notes.append(note)
    witness = store.load(entry.sha) if entry else None
    if witness is None or not witness.tests:
        return None
    return witness, merge_base


def patch_diff(root: Path, merge_base: str, head: str) -> bytes:
    """The patch's text, independent of the user's diff settings."""
    return gitio.run(
        root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index", "-M",
        "--src-prefix=a/", "--dst-prefix=b/", merge_base, head, "--",
    )


def _machine_drift(root: Path, config: Config, witness: Witness) -> list[str]:
    now = ambient.expected(interp.test_env(config, root), config.ambient)
    return ambient.env_drift(witness.ambient, now)


def _interpreter_drift(
    root: Path, config: Config, recorded: str, *, base: str, head: str, then: object = None
) -> list[str]:
    """The interpreter's fingerprint against the recording's. It runs the interpreter, so
    only ``check`` asks (after ``interp`` refused one the branch supplies); a fingerprint
    that cannot be read confirms nothing and the whole suite runs (issue 11: fail closed)."""
    python = interp.project_python(root, config, base=base, head=head)
    current, dists = record.env_described(python)
    if not current:
        return [f"the interpreter {python} could not be fingerprinted; the witness cannot "
                "vouch for the environment"]
    if current != recorded:
        return [_env_changes(then, dists)]
    return []


def _env_changes(then: object, now: list[str]) -> str:
    """Which distributions were installed, removed or changed since the recording (new-user
    trial: installing pre-commit ran every check's full suite, and nothing said why)."""
    what = "the interpreter or installed packages differ from the recording's"
    if isinstance(then, list) and then:
        added, gone = sorted(set(now) - set(then)), sorted(set(then) - set(now))
        said = [f"+{d}" for d in added] + [f"-{d}" for d in gone]
        if said:
            shown = listed(said, 6)
            what = f"installed packages differ from the recording's ({shown})"
        else:
            what = "the interpreter differs from the recording's"
    return (f"{what}: what they run is no test's recorded code, so every test may differ; "
            "record the witness again in this environment (agentgate witness record)")


def classify(
    witness: Witness,
    patch: Patch,
    *,
    config: Config,
    frozen: frozenset[str] = frozenset(),
    drift: tuple[str, ...] = (),
) -> list[Decision]:
    """One decision per witnessed test still present, then the files the witness lacks."""
    users = impact.rebound_users(witness.nodes, patch)
    tainted = impact.reached(witness.nodes, patch, users)
    decisions = []
    for test in witness.tests.values():
        if patch.test_files.get(test.file) == "deleted":
            continue
        label, detail = _label(test, patch, tainted, config, frozen, drift,
                               uses=impact.uses(test, users))
        exact = label == IMPACTED and _exact(test, patch, tainted)
        decisions.append(Decision(test.nodeid, label, detail, exact))
    decisions = _import_checks(witness, patch, decisions)
    unknown = sorted(frozen - set(witness.tests))
    decisions += [Decision(n, FROZEN, "in the freeze ledger (not in the witness)") for n in unknown]
    return decisions + _file_decisions(witness, patch)


def _label(
    test: TestEntry,
    patch: Patch,
    tainted: dict[str, str],
    config: Config,
    frozen: frozenset[str],
    drift: tuple[str, ...],
    *,
    uses: bool,
) -> tuple[str, str]:
    if test.nodeid in frozen:
        return FROZEN, "in the freeze ledger"
    if drift:
        return AMBIENT_DRIFT, drift[0]
    if test.incomplete:
        return ESCALATE, test.incomplete
    if patch.conftest_everywhere:
        return FIXTURE_DRIFT, (f"{patch.conftest_everywhere[0]} changed what it runs when "
                               "pytest loads it, which reaches every test")
    conftest = next((d for d in patch.conftest_dirs if under(test.file, d)), None)
    if conftest is not None:
        return FIXTURE_DRIFT, f"{_join(conftest, 'conftest.py')} changed"
    if patch.pytest_config:
        return IMPACTED, "pytest configuration changed"
    why = impact.hit(test.units, patch.changed, patch.appeared, patch.rebound if uses else None)
    if why is None and test.file in patch.changed and test.file not in patch.test_files:
        # A doctest (of a module, or of a text file): its examples are the file's own text.
        why = f"{test.file} (its doctests' file changed)"
    if why is None:
        why = next((tainted[d] for d in sorted(test.deps) if d in tainted), None)
    if why is None:
        return SKIP, ""
    if under_any(why, config.fixtures):
        return FIXTURE_DRIFT, why
    return IMPACTED, why


def _exact(test: TestEntry, patch: Patch, tainted: dict[str, str]) -> bool:
    """Whether an impacted test keeps its node id at head, so that its function's other
    cases may be deselected by their ids: a parametrized test's ids are made at collection,
    from its file, what that file imported and what ran while collecting (the test file's
    node and ``COLLECT``, both among its deps), its fixtures' definitions (conftests:
    ``FIXTURE_DRIFT``) and pytest's options.
    When none of those changed and the test is impacted only by a block it ran changing,
    its id is the one the witness holds. Anything else -- a changed test file, a tainted
    dep, a name a module-level change rebound (``@parametrize('n', [LIMIT])``), pytest's
    configuration -- runs every parameter of its function, as ids may have changed."""
    if test.file in patch.changed or test.file in patch.test_files or patch.rebound.names \
            or patch.pytest_config:
        return False
    if "[" not in test.nodeid or any(d in tainted for d in test.deps):
        return False
    # A "::" inside the case ('x::int') is no obstacle: the case runs through its function,
    # and --deselect, a text prefix, takes its siblings' ids as they are.
    why = impact.hit(test.units, patch.changed, patch.appeared)
    return why is not None and "::" in why


def _import_checks(witness: Witness, patch: Patch, decisions: list[Decision]) -> list[Decision]:
    """A module whose module level changed by binding names runs at least one test that
    imports it: a changed statement that raises at import (``X = table["gone"]``) fails
    every such test, and no test may read any of the names (``impact.import_check``)."""
    running = {d.nodeid for d in decisions if d.runs}
    chosen = impact.import_checks(witness, patch, running)
    return [Decision(d.nodeid, IMPACTED, chosen[d.nodeid]) if d.nodeid in chosen else d
            for d in decisions]


def _file_decisions(witness: Witness, patch: Patch) -> list[Decision]:
    out = []
    for path, kind in sorted(patch.test_files.items()):
        if kind == "added" or (kind == "module" and path not in witness.collected):
            out.append(Decision(path, NEW, "test file not in the witness"))
        elif kind == "module":
            known = {function_id(t.nodeid) for t in witness.tests.values() if t.file == path}
            out.extend(
                Decision(f"{path}::{name}", NEW, "test not in the witness")
                for name in patch.new_tests.get(path, ())
                if f"{path}::{name}" not in known
            )
    for path in sorted(witness.collect_errors):
        if patch.test_files.get(path) != "deleted":
            out.append(Decision(path, ESCALATE, "did not collect when the witness was recorded"))
    return out


def selection(
    decisions: list[Decision], patch: Patch, audit: frozenset[str] = frozenset()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """pytest arguments for every decision that runs, and the node ids to deselect among
    them. A test file whose module level changed runs whole (its tests may have new ids). A
    parametrized test runs as its function (``path::test``): every case pytest collects for
    it runs, the new ones and those whose ids changed with their data among them. When every
    case of it that runs keeps its id (``_exact``: only a block it ran changed, or it is
    frozen), the cases the witness skips are deselected, so that only they do not run: a
    case the witness does not know (new, or an id made at random) still does. A sampled
    case (``audit``) runs through its function the same way, and is never deselected: an
    id pytest cannot find would end the whole run."""
    whole = {p for p, kind in patch.test_files.items() if kind in ("added", "module")}
    whole |= {d.nodeid for d in decisions if d.runs and "::" not in d.nodeid}
    chosen: dict[str, None] = dict.fromkeys(sorted(whole))
    functions: dict[str, list[Decision]] = {}
    for decision in decisions:
        if "::" in decision.nodeid and decision.nodeid.split("::", 1)[0] not in whole:
            functions.setdefault(function_id(decision.nodeid), []).append(decision)
    unrun: list[str] = []
    for function, cases in functions.items():
        running = [d for d in cases if d.runs]
        sampled = [d for d in cases if d.nodeid in audit and d.nodeid != function]
        if not running and not sampled:
            continue
        chosen.setdefault(function, None)
        # A sampled skip keeps its id: nothing it depended on changed.
        if all(d.exact or d.label == FROZEN for d in running):
            unrun += [d.nodeid for d in cases
                      if d.label == SKIP and d.nodeid != function and d.nodeid not in audit]
    return tuple(chosen), tuple(sorted(unrun))


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def age_seconds(plan: WitnessPlan) -> float:
    return max(0.0, time.time() - plan.recorded_at)
