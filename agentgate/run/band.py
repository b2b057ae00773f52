"""Running pytest for a selection -- the scoped band, the full suite, the property band -- in a
clean tree of the pushed revision, and reading the outcome from JUnit XML.

The code tested is the committed head, never the working tree: when the checkout is dirty or
HEAD is not the head, a temporary ``git worktree`` of the head is used and removed after.
The tree's own source roots come first on ``sys.path`` (``interp.test_env``), so neither an
editable install of another checkout nor the caller's ``PYTHONPATH`` decides what is imported.
The selection travels in a JSON file read by a two-line bootstrap that calls
``pytest.main(args)``: no argument-length limit, and no dependence on pytest >= 8.2's
``@argsfile`` in the project's environment.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgate.core.config import Config
from agentgate.core.errors import AgentgateError, ConfigError
from agentgate.git import scratch, worktrees
from agentgate.run import accounting, inifile, interp, process
from agentgate.run import progress as run_progress
from agentgate.run.junit import Outcome, read_nodes

# pytest.main reads its arguments from the JSON file named by argv[1].
BOOTSTRAP = (
    "import json, sys, pytest\n"
    "args = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "raise SystemExit(pytest.main(args))\n"
)
NO_TESTS = 5  # pytest's "no tests collected": an empty selection is not a failure
OUTCOMES_MODULE = "_agentgate_outcomes"
# The plugin is copied, never imported here: it imports pytest, which agentgate's own
# environment (pre-commit's hook environment) need not have.
OUTCOMES_FILE = Path(__file__).with_name("outcomes.py")
_TAIL = 40


@dataclass(frozen=True)
class Tree:
    path: Path
    worktree: bool  # a temporary worktree of head (the checkout was dirty or elsewhere)


@contextlib.contextmanager
def clean_tree(
    root: Path, head: str, roots: worktrees.Roots = worktrees.WHOLE_REPO
) -> Iterator[Tree]:
    """``worktrees.clean_checkout``: the checkout when it is exactly ``head`` and nothing there
    (uncommitted, or ignored under ``roots``) can change the run, else a worktree of ``head``
    that only this run uses (cached per revision, reset and cleaned). No roots given: every
    ignored file outside tool folders counts (fail closed)."""
    with worktrees.clean_checkout(root, head, roots) as path:
        yield Tree(path, worktree=path != root)


# --- one pytest run ------------------------------------------------------------------------

@dataclass(frozen=True)
class RunSpec:
    label: str  # "band", "full", "patch-tests", "items", "property", "property-marked", "shadow"
    args: tuple[str, ...]  # selection and options for pytest
    selected: int | None  # test files or node ids asked for; None for the whole suite
    seed: int | None = None  # --hypothesis-seed passed to this run
    paths: tuple[str, ...] = ()  # the selection's paths: where pytest looks for its config


@dataclass(frozen=True)
class RunResult:
    label: str
    selected: int | None
    exit_code: int
    duration: float
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xfailed: int = 0  # of the skipped: those an xfail marker expected to fail, and did
    failed_ids: tuple[str, ...] = ()  # failures and errors not covered by a valid freeze
    frozen_failed_ids: tuple[str, ...] = ()  # failures of frozen tests: reported, not counted
    timed_out: bool = False
    seed: int | None = None
    output_tail: tuple[str, ...] = ()

    @property
    def green(self) -> bool:
        if self.timed_out or self.failed_ids:
            return False
        # An empty selection of files may collect nothing; a whole suite that collects
        # nothing ran no test at all, and that never counts as a pass.
        passing = (0, NO_TESTS) if self.selected is not None else (0,)
        return self.exit_code in passing or (self.exit_code == 1 and bool(
            self.frozen_failed_ids))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "label": self.label,
            "selected": self.selected,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped,
            "xfailed": self.xfailed,
            "failed_ids": list(self.failed_ids),
            "frozen_failed_ids": list(self.frozen_failed_ids),
            "exit_code": self.exit_code,
            "duration_s": round(self.duration, 3),
            "timed_out": self.timed_out,
            "green": self.green,
        }
        if self.seed is not None:
            data["hypothesis_seed"] = self.seed
        if not self.green:
            data["output_tail"] = list(self.output_tail)
        return data


@dataclass(frozen=True)
class Runner:
    """Everything one pytest run needs that does not change between the runs of a check."""

    python: str
    tree: Path
    env: dict[str, str]
    workdir: Path  # JUnit files, argument files, pytest and Hypothesis caches
    timeout: int
    frozen: frozenset[str] = frozenset()
    seen: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # label -> outcomes
    display: run_progress.Display | None = None  # live counts on a terminal (issue 13)
    outcomes_module: str = OUTCOMES_MODULE  # ``install_outcomes_plugin``'s name for it

    def run(self, spec: RunSpec) -> RunResult:
        junit = self.workdir / f"{spec.label}.xml"
        argsfile = self.workdir / f"{spec.label}.args.json"
        seen = self.workdir / f"{spec.label}.outcomes.json"
        args = [
            # agentgate's own record of every outcome (run.outcomes), next to JUnit's
            "-p", self.outcomes_module, f"{accounting.OPTION}={seen}",
            f"--junitxml={junit}",
            "-o", "junit_family=xunit1",  # xunit1 carries each case's file: exact node ids
            "-o", f"cache_dir={self.workdir / 'pytest-cache'}",  # never write into the tree
            f"--rootdir={self.tree}",
            # the tree's own config and conftests, never the checkout's around the worktree
            *inifile.harness_args(self.tree, spec.paths, self._empty_ini()),
            *self._node_lists(spec),
        ]
        log = self.workdir / f"{spec.label}.log"
        # The live feed comes through a pipe: the display's counts, and what each test
        # ended with as it ended, which the run cannot take back afterwards.
        with run_progress.piped(spec.label, self.display) as feed:
            args.append(feed.option)
            argsfile.write_text(json.dumps(args), encoding="utf-8", errors="surrogateescape")
            done = self._execute(argsfile, log, (feed.write_fd,))
        code = -1 if done.timed_out else done.returncode
        found = _read_outcomes(seen)
        known = (found or {}).get("collected") or ()
        cases = _read_junit(junit, known)
        said = _contradicted(feed.failed(), frozenset(feed.outcomes), cases, found)
        self.seen[spec.label] = found
        return _result(spec, code, done.seconds, cases, self.frozen, done.timed_out,
                       _tail(log) + tuple(said), xfailed=_xfailed(found, cases))

    def _node_lists(self, spec: RunSpec) -> list[str]:
        """``spec.args`` with its ``--deselect`` and ``SELECT_OPTION`` node ids in a file the
        outcome plugin reads (``NODES_OPTION``): pytest parses many repeated options in time
        that grows with their square (new-user trial: 22,673 ``--deselect`` cases of large
        parametrized functions took some 75 s a run before any test started)."""
        kept: list[str] = []
        lists: dict[str, list[str]] = {"select": [], "deselect": []}
        for arg in spec.args:
            option, _, value = arg.partition("=")
            if option in (SELECT_OPTION, "--deselect") and value:
                lists["select" if option == SELECT_OPTION else "deselect"].append(value)
            else:
                kept.append(arg)
        if not lists["select"] and not lists["deselect"]:
            return kept
        nodes = self.workdir / f"{spec.label}.nodes.json"
        nodes.write_text(json.dumps(lists), encoding="utf-8", errors="surrogateescape")
        return [f"{NODES_OPTION}={nodes}", *kept]

    def _empty_ini(self) -> Path:
        empty = self.workdir / "empty.ini"
        if not empty.exists():
            empty.write_text("[pytest]\n", encoding="utf-8")
        return empty

    def _execute(self, argsfile: Path, log: Path,
                 pass_fds: tuple[int, ...] = ()) -> process.Finished:
        cmd = [self.python, "-c", BOOTSTRAP, str(argsfile)]
        with log.open("wb") as out:
            try:
                return process.run(cmd, cwd=self.tree, env=self.env, timeout=self.timeout,
                                   stdout=out, stderr=process.STDOUT, pass_fds=pass_fds)
            except OSError as exc:
                raise AgentgateError(
                    f"cannot run the project's interpreter {self.python!r} ({exc}); "
                    "set [tool.agentgate] python"
                ) from None


# A terminal's escape sequences (colour, cursor): a project's ``addopts = --color=yes``
# (humanize's) colours pytest's output in a log too, and the report quotes it.
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _tail(log: Path) -> tuple[str, ...]:
    """The last lines of a run's output, as plain text."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(_ESCAPES.sub("", line) for line in text.splitlines()[-_TAIL:])


def _contradicted(failed: frozenset[str], heard: frozenset[str], cases: dict[str, Outcome],
                  found: dict[str, Any] | None) -> list[str]:
    """Tests the live feed said failed that the files written at the run's end do not
    (code under test rewrote them once the tests were done), and tests those files say ran
    that never came through the feed (code under test closed it or took it over first):
    failed, in ``cases`` and in the outcome data, and one line each for the report's tail."""
    said = []
    tests = (found or {}).get("tests") or {}
    tests = tests if isinstance(tests, dict) else {}
    unheard = {n for n, e in tests.items() if isinstance(e, dict) and e.get("reported")
               and n not in heard}
    for nodeid in sorted(failed | unheard):
        if cases.get(nodeid) in (Outcome.FAILED, Outcome.ERROR):
            continue
        cases[nodeid] = Outcome.FAILED
        entry = tests.setdefault(nodeid, {})
        entry["reported"] = entry["call"] = "failed"
        said.append(f"FAILED {nodeid} - " + (
            "it failed as it ran; the files written at the run's end said otherwise "
            "(rewritten after the tests)" if nodeid in failed else
            "its outcome never came through the run's live feed, which the files written at "
            "the run's end cannot stand in for"))
    return said


def _read_outcomes(path: Path) -> dict[str, Any] | None:
    """What the outcome plugin wrote; None when it wrote nothing readable (the process
    ended before, or something else wrote there): accounting fails such a run."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == accounting.FORMAT else None


def install_outcomes_plugin(workdir: Path, env: dict[str, str]) -> str:
    """A copy of the outcome plugin as a top-level module in its own folder, first on
    ``env``'s ``PYTHONPATH``: it needs neither agentgate nor its version installed. Its name
    is new for every run (red-team: a patch's ``src/_agentgate_outcomes.py``, earlier on the
    path, was imported in its place and reported every failure as a pass); returns it."""
    folder = workdir / "plugins"
    folder.mkdir(exist_ok=True)
    name = f"{OUTCOMES_MODULE}_{secrets.token_hex(8)}"
    shutil.copyfile(OUTCOMES_FILE, folder / f"{name}.py")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(folder), env.get("PYTHONPATH"))))
    return name


def _read_junit(junit: Path, known: Iterable[str] = ()) -> dict[str, Outcome]:
    if not junit.exists():
        return {}  # pytest never got as far as writing it: the exit code says why
    try:
        return read_nodes(junit, known)
    except ValueError as exc:
        raise AgentgateError(f"pytest wrote unreadable JUnit XML ({exc})", exit_code=70) from None


def _result(
    spec: RunSpec,
    code: int,
    duration: float,
    cases: dict[str, Outcome],
    frozen: frozenset[str],
    timed_out: bool,
    tail: tuple[str, ...],
    xfailed: int = 0,
) -> RunResult:
    bad = sorted(n for n, o in cases.items() if o in (Outcome.FAILED, Outcome.ERROR))
    frozen_bad = tuple(n for n in bad if is_frozen(n, frozen))
    counts = {o: sum(1 for v in cases.values() if v is o) for o in Outcome}
    return RunResult(
        label=spec.label, selected=spec.selected, exit_code=code, duration=duration,
        passed=counts[Outcome.PASSED], failed=counts[Outcome.FAILED],
        errors=counts[Outcome.ERROR], skipped=counts[Outcome.SKIPPED], xfailed=xfailed,
        failed_ids=tuple(n for n in bad if n not in frozen_bad),
        frozen_failed_ids=frozen_bad, timed_out=timed_out, seed=spec.seed, output_tail=tail,
    )


def _xfailed(found: dict[str, Any] | None, cases: dict[str, Outcome]) -> int:
    """How many of the tests JUnit says were skipped xfailed: JUnit writes both as
    ``<skipped>``; agentgate's outcome plugin told them apart (new-user trial: dateutil's 17
    xfailed were counted as skipped)."""
    tests = (found or {}).get("tests")
    if not isinstance(tests, dict):
        return 0
    return sum(1 for nodeid, outcome in cases.items() if outcome is Outcome.SKIPPED
               and isinstance(tests.get(nodeid), dict) and "xfailed" in tests[nodeid].values())


def is_frozen(nodeid: str, frozen: frozenset[str]) -> bool:
    """A freeze of ``test_x`` covers each of its parametrized cases ``test_x[...]`` here;
    ``check`` keeps that excuse only for the cases the base fails too (``flows.freeze_cases``)."""
    return nodeid in frozen or nodeid.split("[", 1)[0] in frozen


# --- a band: which runs a selection needs ---------------------------------------------------------

@dataclass(frozen=True)
class BandSpec:
    selection: tuple[str, ...] | None  # test files or node ids; None runs the whole suite
    property_band: tuple[str, ...] = ()  # config: path prefixes, or "marker:NAME"
    hypothesis_seed: int = 0
    shadow: bool = False  # also run the full suite (when the band was not already it)
    workers: int | str = 0  # pytest-xdist: "auto", a count, or 0 for one process
    suite_files: int = 0  # test files in the whole suite: "auto" sizes a full run by it
    # Node ids of selected parametrized functions' cases not to run (the witness vouches for
    # them): ``--deselect``, which accounting knows for ours.
    deselect: tuple[str, ...] = ()
    # Test files the range added or changed: they run in a process of their own
    # (``PATCH_TESTS``), never in the one that runs the base's other tests.
    apart: tuple[str, ...] = ()
    # Folders whose ``conftest.py`` the whole suite's run loads (``core.paths.
    # sibling_conftests``): a run of selected files walks them too, for the conftests alone
    # (red-team round 6: a sibling folder's conftest set the session's mode for every test,
    # and the band, naming files, never loaded it).
    conftest_dirs: tuple[str, ...] = ()
    # Folders where a conftest collects tests from files that are not Python (``plan.
    # planner``: their items may import anything): a run of selected files collects those
    # items too (red-team round 6: JSON cases and Markdown examples never ran in the band).
    item_dirs: tuple[str, ...] = ()


@dataclass(frozen=True)
class BandReport:
    tree: str
    worktree: bool
    interpreter: str
    pinned_env: dict[str, str]
    runs: tuple[RunResult, ...] = field(default_factory=tuple)
    problems: tuple[accounting.Problem, ...] = ()  # outcome accounting (run.accounting)
    # label -> what the outcome plugin wrote: the base oracle reads head's outcomes from it
    seen: dict[str, dict[str, Any] | None] = field(default_factory=dict, compare=False)

    def run(self, label: str) -> RunResult | None:
        return next((r for r in self.runs if r.label == label), None)


def property_split(entries: Sequence[str]) -> tuple[list[str], list[str]]:
    """Config ``property_band``: ``marker:NAME`` entries are pytest markers; anything else
    is a path prefix (a folder or a file) relative to the repository root."""
    markers = [e.split(":", 1)[1] for e in entries if e.startswith("marker:")]
    paths = [e for e in entries if not e.startswith("marker:")]
    return paths, markers


# The range's own test files, run apart: a test module runs code as pytest imports it and
# as its tests run, in the process that runs every other selected test. A new test file that
# patched the broken function back at import (``app.pricing.tax = _tax``), or swapped an
# untouched base test's ``__code__``, made the base's failing test pass beside it (red-team,
# helper-15); in a process of their own, the base's tests meet head's code as it is.
PATCH_TESTS = "patch-tests"
# The tests conftests collect from files that are not Python (``BandSpec.item_dirs``).
ITEMS = "items"


def band_runs(spec: BandSpec, tree: Path) -> list[RunSpec]:
    """The scoped band (or the full suite) less the property tests and the range's own test
    files; those files apart; the property tests on their own with the pinned seed; the
    shadow full suite when asked."""
    paths, markers = property_split(spec.property_band)
    seed = spec.hypothesis_seed if spec.property_band else None
    runs = [*_main_runs(spec, paths, markers, tree),
            *_property_runs(spec, paths, markers, tree)]
    if spec.shadow and spec.selection is not None:
        runs.append(RunSpec("shadow", _seed_args(seed), None, seed))
    return runs


def _main_runs(spec: BandSpec, paths: list[str], markers: list[str], tree: Path
               ) -> list[RunSpec]:
    deselect = ["-m", f"not ({' or '.join(markers)})"] if markers else []
    apart = [p for p in spec.apart if not _in_any(p, paths)]
    if spec.selection is None:
        ignores = [f"--ignore={p}" for p in (*paths, *apart)]
        present = [p for p in apart if (tree / p).is_file()]
        return [RunSpec("full", (*ignores, *deselect), None),
                *([RunSpec(PATCH_TESTS, (*deselect, *_as_args(present)), len(present),
                           paths=tuple(present))] if present else [])]
    rest = [s for s in spec.selection if not _in_any(s, paths)]
    own = [s for s in rest if _in_any(s, apart)]
    rest = [s for s in rest if not _in_any(s, apart)]
    runs = [RunSpec(label, (*deselect, *_unrun(spec), *_walked(spec, tree, chosen)),
                    len(chosen), paths=tuple(chosen))
            for label, chosen in (("band", rest), (PATCH_TESTS, own)) if chosen]
    items = [d for d in spec.item_dirs if (tree / d).is_dir()]
    if items:
        # A run of its own: walking a folder would collect the whole of a selected file in
        # it, where the band names some of its tests.
        # A file the selection names (a witness's impacted item) runs there, not twice.
        named = sorted({s.split("::", 1)[0] for s in spec.selection
                        if not s.split("::", 1)[0].endswith(".py")})
        runs.append(RunSpec(ITEMS, (*deselect, *_unrun(spec),
                                    *(f"{ITEMS_OPTION}={d}" for d in items),
                                    *(f"--ignore={n}" for n in named),
                                    *_harness(spec, tree, items)),
                            len(items), paths=tuple(items)))
    return runs


def _harness(spec: BandSpec, tree: Path, chosen: Sequence[str]) -> list[str]:
    """The selected files, and the folders a run of them walks for their conftests alone,
    in the order pytest's walk of the suite meets them: the outcome plugin keeps the
    arguments' conftests from loading at start-up, so each loads where the whole suite's run
    loads it, between the test modules it imports before and after (red-team round 7: a
    sibling conftest that set a mode at start-up made the band test another mode than the
    whole suite)."""
    present = [d for d in spec.conftest_dirs if (tree / d / "conftest.py").is_file()]
    ordered = sorted([*chosen, *present], key=walk_order)
    return [*(f"{HARNESS_OPTION}={d}" for d in present), *_as_args(ordered)]


def _walked(spec: BandSpec, tree: Path, chosen: Sequence[str]) -> list[str]:
    """A run of selected tests as pytest's walk of the whole suite meets them: the top
    folders holding them are the arguments, and the outcome plugin collects in them only
    the selected files and node ids (``SELECT_OPTION``) and the folders on their way and
    walked for their conftests (``HARNESS_OPTION``). Named as arguments, every file's
    folders were collected, and their conftests loaded, before any test module was
    imported; walked, each folder's conftest loads between the modules before and after
    it, as in the whole suite (red-team round 7: a later folder's conftest set a mode the
    code reads at import, and the band tested another mode). A file at the root is named."""
    present = [d for d in spec.conftest_dirs if (tree / d / "conftest.py").is_file()]
    roots = sorted({_top(s) for s in (*chosen, *present)}, key=walk_order)
    return [*(f"{HARNESS_OPTION}={d}" for d in present),
            *(f"{SELECT_OPTION}={s}" for s in chosen), *_as_args(roots)]


def _top(arg: str) -> str:
    """The top folder of a path or node id, or the node id of a file at the root."""
    path = arg.split("::", 1)[0]
    return path.split("/", 1)[0] if "/" in path else arg


def walk_order(arg: str) -> tuple[str, ...]:
    """A path's (or node id's) place in pytest's walk: each folder's entries by name."""
    return tuple(arg.split("::", 1)[0].split("/"))


HARNESS_OPTION = "--agentgate-harness-dir"  # as run/outcomes.py defines it (not imported)
SELECT_OPTION = "--agentgate-select"  # the same
NODES_OPTION = "--agentgate-nodes"  # the same
ITEMS_OPTION = "--agentgate-items-dir"  # the same


def _unrun(spec: BandSpec) -> list[str]:
    return [f"--deselect={n}" for n in spec.deselect]


def _property_runs(
    spec: BandSpec, paths: list[str], markers: list[str], tree: Path
) -> list[RunSpec]:
    seed_args = _seed_args(spec.hypothesis_seed)
    runs: list[RunSpec] = []
    if spec.selection is None:
        present = [p for p in paths if (tree / p).exists()]
        if present:
            runs.append(RunSpec("property", (*seed_args, *present), None, spec.hypothesis_seed,
                                paths=tuple(present)))
        marked_sel: list[str] | None = None
    else:
        chosen = [s for s in spec.selection if _in_any(s, paths)]
        if chosen:
            runs.append(RunSpec("property", (*seed_args, *_unrun(spec), *_as_args(chosen)),
                                len(chosen),
                                spec.hypothesis_seed, paths=tuple(chosen)))
        marked_sel = [s for s in spec.selection if not _in_any(s, paths)]
    if markers and (marked_sel is None or marked_sel):
        ignores = [f"--ignore={p}" for p in paths] if marked_sel is None else []
        select = [*_unrun(spec), *_as_args(marked_sel)] if marked_sel else []
        runs.append(RunSpec(
            "property-marked",
            (*seed_args, "-m", " or ".join(markers), *ignores, *select),
            len(marked_sel) if marked_sel is not None else None,
            spec.hypothesis_seed, paths=tuple(marked_sel or ()),
        ))
    return runs


def _seed_args(seed: int | None) -> tuple[str, ...]:
    return () if seed is None else (f"--hypothesis-seed={seed}",)


def _in_any(selected: str, prefixes: list[str]) -> bool:
    path = selected.split("::", 1)[0]
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def _as_args(selection: Sequence[str]) -> list[str]:
    """A path that starts like an option (``-x``) or an args file (``@f``) is made relative."""
    return [f"./{s}" if s.startswith(("-", "@")) else s for s in selection]


def run_band(root: Path, config: Config, tree: Tree, spec: BandSpec,
             frozen: frozenset[str] = frozenset(), *,
             display: run_progress.Display | None = None) -> BandReport:
    """Run every pytest invocation the band needs, in ``tree``, under the project's python."""
    python = interp.project_python(root, config)
    pinned = config.pinned_env()
    with scratch.scratch_dir("band", root) as workdir:
        # Hypothesis' example database would replay old failures into a pinned-seed run.
        env = interp.test_env(config, tree.path,
                              extra={"HYPOTHESIS_STORAGE_DIRECTORY": str(workdir / "hyp")})
        plugin = install_outcomes_plugin(workdir, env)
        has_xdist = interp.require_pytest(python, env, tree.path)
        runner = Runner(python, tree.path, env, workdir, config.timeout, frozen,
                        display=display, outcomes_module=plugin)
        runs = [with_workers(r, spec, has_xdist, python) for r in band_runs(spec, tree.path)]
        results = tuple(runner.run(s) for s in runs)
    problems = accounting.account_runs(
        [(runner.seen.get(r.label), r.exit_code) for r in results
         if r.label != "shadow" and not r.timed_out], spec.selection, spec.deselect)
    return BandReport(str(tree.path), tree.worktree, python, pinned, results, tuple(problems),
                      dict(runner.seen))


# --- pytest-xdist (issue 13 item 3) ------------------------------------------------------------

# "auto" distributes a run only from this many test files: below it, starting the workers
# (each one imports and collects the project) costs more than it saves.
AUTO_MIN_FILES = 20
# The property runs keep their one pinned process.
XDIST_RUNS = ("band", "full", PATCH_TESTS, "shadow")


def with_workers(run: RunSpec, spec: BandSpec, has_xdist: bool, python: str) -> RunSpec:
    """``run`` with the ``-n`` its band asks for; the outcome plugin accounts for every
    test on the controller either way (run.outcomes)."""
    if run.label not in XDIST_RUNS:
        return run
    files = len({s.split("::", 1)[0] for s in run.paths}) if run.selected else spec.suite_files
    args = xdist_args(spec.workers, files, has_xdist, python)
    return dataclasses.replace(run, args=(*args, *run.args)) if args else run


def xdist_args(workers: int | str, files: int, has_xdist: bool, python: str) -> tuple[str, ...]:
    """``-n`` for a run of ``files`` test files: 0 is one process (``-n 0`` also overrides a
    project's own ``-n`` in addopts), a count is that many workers, "auto" is ``-n auto``
    on a machine with cores to spare and a run large enough to pay for the workers."""
    if not has_xdist:
        if workers not in (0, "auto"):
            raise ConfigError(f"workers = {workers} needs pytest-xdist in the project's "
                              f"interpreter {python}; install it there or set workers = 0")
        return ()
    if workers == "auto":
        big = files >= AUTO_MIN_FILES and (os.cpu_count() or 1) > 1
        return ("-n", "auto") if big else ()
    return ("-n", str(workers))
