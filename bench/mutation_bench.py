"""The mutation benchmark (issue 12): how small a band agentgate runs on real projects, and
whether it still fails on every mutant the full suite kills.

For each project (a PyPI sdist at a pinned version, ``git init`` and committed as the base
W, see ``PROJECTS``):

1. **Recording cost**, best of ``--reps`` alternated runs: the plain full suite, pytest-testmon
   recording from nothing (``--testmon``; its database is kept for step 3), and the real
   ``agentgate witness record`` at W.
2. **Mutants** (``bench/mutants.py``): seeded AST edits inside function bodies and of module
   constants, each one commit on its own branch from W. The full suite runs on each; only
   the mutants it kills are kept (the ground truth), until ``--mutants`` are kept.
3. For each kept mutant, four selectors, each band run with pytest on the mutant:
   - ``agentgate``: ``agentgate plan --base W --format json`` with no witness store (the
     store is moved aside): its test files, or the full suite when it promotes;
   - ``agentgate+witness``: the same plan with the witness recorded at W: its node ids
     (selection and shadow sample, what ``check`` runs), or the full suite;
   - ``closure``: the plain reverse import closure, from agentgate's own import graph of the
     mutant (``graph.build``; edges include each import's parent packages, whose
     ``__init__`` runs) with no planner rules: the test files whose modules import a changed
     module transitively; no escalation, no promotion;
   - ``testmon``: ``pytest --testmon`` from W's database.

A band is *safe* on a mutant when it is promoted or at least one test it runs fails. Test
share is tests run over the full suite's; time share is the JUnit time the full run measured
for the tests the band ran, over the full suite's (``wall`` is the band's own pytest process
over the full suite's, start-up included: these suites run in one to a few seconds).

    python bench/mutation_bench.py
        [--projects toolz,humanize,markdown,pluggy,boltons,click,pyflakes] [--mutants 12]
        [--seed 1] [--reps 2] [--quick] [--json PATH] [--write bench/mutation.md]

Work happens in a temporary folder outside this checkout (pytest would otherwise climb to
agentgate's own pyproject.toml for a project without pytest configuration); the projects'
venv and sdists are cached under bench/_work.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import _sdist
import mutants as mut
import mutation_report as report
import witness_bench as wb

from agentgate.core import config as config_mod
from agentgate.git import gitio
from agentgate.graph import build as graph_build
from agentgate.plan import planner
from agentgate.plan.pytest_config import python_files
from agentgate.witness import presence


@dataclass(frozen=True)
class Spec:
    dist: str
    version: str
    sources: tuple[str, ...]  # folders whose .py files are mutated
    shape: str
    exclude: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()  # files added to W (the harness, documented)


PROJECTS = {
    "toolz": Spec("toolz", "1.0.0", ("toolz",),
                  "flat layout; `toolz/__init__.py` imports every submodule; tests inside "
                  "the package",
                  exclude=("toolz/tests/", "toolz/_version.py"),
                  extra=(("pytest.ini", "[pytest]\ntestpaths = toolz/tests\n"),)),
    "humanize": Spec("humanize", "4.11.0", ("src/humanize",),
                     "src layout; gettext `.mo` locale files read at run time",
                     exclude=("src/humanize/_version.py",)),
    "markdown": Spec("Markdown", "3.7", ("markdown",),
                     "flat layout; extensions loaded by a computed `importlib.import_module`",
                     # Its unittest suite under pytest: `from unittest import TestSuite` in a
                     # test module is not a test class (pytest would error on collecting it).
                     extra=(("pytest.ini", "[pytest]\npython_classes = *TestCase\n"),)),
    "pluggy": Spec("pluggy", "1.5.0", ("src/pluggy",),
                   "src layout; tests in `testing/` with a root conftest",
                   exclude=("src/pluggy/_version.py",)),
    "boltons": Spec("boltons", "24.1.0", ("boltons",),
                    "flat layout; an empty package `__init__`, one module per area; "
                    "`docs/conf.py` with a computed `__import__`; tests read data files",
                    # test_iter_find_files strips the folder's path with str.lstrip (a set
                    # of characters): it fails or passes by the work folder's name.
                    extra=(("pytest.ini", "[pytest]\ndoctest_optionflags=NORMALIZE_WHITESPACE "
                            "IGNORE_EXCEPTION_DETAIL ELLIPSIS ALLOW_UNICODE\naddopts = --deselect "
                            "tests/test_fileutils.py::test_iter_find_files\n"),)),
    "click": Spec("click", "8.1.7", ("src/click",),
                  "src layout; tests drive the command line in-process (`CliRunner`), a few "
                  "run a pager or an editor (`sh -c cat`)"),
    "pyflakes": Spec("pyflakes", "3.2.0", ("pyflakes",),
                     "flat layout; tests inside the package; integration tests run the "
                     "`bin/pyflakes` script in a Python subprocess",
                     exclude=("pyflakes/test/",)),
}
# Shapes tried beside the default run (``--projects parso,sqlparse,more-itertools,...``).
TRIAL_PROJECTS = {
    "parso": Spec("parso", "0.8.4", ("parso",),
                  "flat layout; a root conftest that imports the package; grammar files "
                  "inside the package read at run time"),
    "sqlparse": Spec("sqlparse", "0.5.1", ("sqlparse",),
                     "flat layout; tests read `.sql` files through a conftest fixture"),
    "more-itertools": Spec("more-itertools", "10.5.0", ("more_itertools",),
                           "flat layout; two large unittest modules"),
    "itsdangerous": Spec("itsdangerous", "2.2.0", ("src/itsdangerous",),
                         "src layout; tests in a package folder, time frozen by freezegun"),
    "cachetools": Spec("cachetools", "5.5.0", ("src/cachetools",),
                       "src layout; one package `__init__` holding most of the code"),
    "tabulate": Spec("tabulate", "0.9.0", ("tabulate",),
                     "flat layout; a command-line entry point tested in a subprocess; "
                     "optional libraries skipped when absent"),
}
# humanize's tests, Markdown's (tests/test_apis.py imports yaml); the rest is witness_bench's
EXTRA_PACKAGES = ("freezegun==1.5.5", "PyYAML==6.0.2")
TIMEOUT_FACTOR = 20  # a mutant that makes the suite run this much longer loops: dropped


# --- setup -------------------------------------------------------------------------------------

def ensure_venv() -> Path:
    python = wb.ensure_venv()
    marker = python.parent.parent / ".mutation-ready"
    if not marker.exists() or marker.read_text() != " ".join(EXTRA_PACKAGES):
        subprocess.run([str(python), "-m", "pip", "install", "-q", *EXTRA_PACKAGES], check=True)
        marker.write_text(" ".join(EXTRA_PACKAGES))
    return python


def prepare(name: str, spec: Spec, work: Path) -> tuple[Path, str]:
    repo = work / name
    _sdist.unpack(spec.dist, spec.version, wb.WORK / "sdists", repo)
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.testmondata*\n")
    for path, text in spec.extra:
        (repo / path).write_text(text)
    wb.sh(["git", "init", "-q", "-b", "main"], repo)
    wb.sh(["git", "add", "-A"], repo)
    wb.sh(["git", "commit", "-q", "-m", f"W: {spec.dist} {spec.version}"], repo)
    return repo, wb.sh(["git", "rev-parse", "HEAD"], repo).stdout.strip()


# --- running pytest ----------------------------------------------------------------------------

def run_pytest(repo: Path, python: Path, args: list[str], timeout: float = 600) -> wb.Run | None:
    """One pytest run with JUnit; None when it outlives ``timeout`` (its group is killed)."""
    env = wb.pytest_env(repo)
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        start = time.perf_counter()
        # No terminal on stdin, as agentgate's own runs have none: click's prompt tests
        # would wait on the bench's stdin (96 s of a 1 s suite when run in the background).
        proc = subprocess.Popen([str(python), "-m", "pytest", "-q", f"--junitxml={junit}", *args],
                                cwd=repo, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None
        return wb.Run(time.perf_counter() - start, wb.parse_junit(junit), code)


def agentgate(repo: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.perf_counter()
    proc = wb.sh([sys.executable, "-m", "agentgate", *args], repo, check=False)
    return proc, time.perf_counter() - start


# --- 1. recording cost -------------------------------------------------------------------------

def recording(repo: Path, python: Path, reps: int, work: Path) -> dict[str, float]:
    best: dict[str, float] = {}

    def keep(key: str, seconds: float) -> None:
        best[key] = min(best.get(key, seconds), seconds)

    for _ in range(reps):
        keep("plain", _timed(run_pytest(repo, python, [])))
        _drop_testmon(repo)
        keep("testmon record", _timed(run_pytest(repo, python, ["--testmon"])))
        proc, seconds = agentgate(repo, "witness", "record")
        if proc.returncode != 0:
            raise SystemExit(f"witness record failed in {repo}:\n{proc.stdout}{proc.stderr}")
        keep("witness record", seconds)
    for data in repo.glob(".testmondata*"):
        shutil.copy(data, work / f"{repo.name}-{data.name}")
    return best


def _timed(run: wb.Run | None) -> float:
    if run is None:
        raise SystemExit("the base suite timed out")
    return run.seconds


def _drop_testmon(repo: Path) -> None:
    for leftover in repo.glob(".testmondata*"):
        leftover.unlink()


# --- 2. mutants --------------------------------------------------------------------------------

def commit_mutant(repo: Path, w: str, index: int, mutant: mut.Mutant) -> None:
    wb.sh(["git", "checkout", "-q", "-f", "-B", f"mutant-{index}", w], repo)
    path = repo / mutant.path
    path.write_bytes(mut.apply(path.read_bytes(), mutant))
    wb.sh(["git", "commit", "-q", "-am", f"mutant {index}: {mutant.label}"], repo)
    # A byte-compiled module is trusted by its source's size and mtime in whole seconds: a
    # file the checkout restored in the same second as the last mutant wrote it, at the same
    # size (``2 -> 3``), would run the last mutant's code. pluggy's __repr__ mutant "failed"
    # 12 tests that way where it fails one.
    for cache in sorted(repo.rglob("__pycache__")):
        if ".git" not in cache.relative_to(repo).parts:
            shutil.rmtree(cache, ignore_errors=True)


# --- 3. selectors ------------------------------------------------------------------------------

def band_of(run: wb.Run | None, full: wb.Run, *, promoted: bool = False) -> report.Band:
    if run is None:
        return report.Band(0, 0.0, 0.0, 0, len(full.failed), crashed=True)
    # The tests' times as the full run measured them: a band's share of the suite's time
    # without the noise of timing sub-second suites twice on a shared machine.
    test_time = sum(full.cases[k][0] for k in run.cases if k in full.cases)
    return report.Band(len(run.cases), test_time, run.seconds, len(run.failed),
                       len(full.failed - run.failed), promoted, run.exit_code == 3)


def run_band(repo: Path, python: Path, args: list[str] | None, full: wb.Run) -> report.Band:
    """``None``: the full suite (promoted); ``[]``: nothing runs."""
    if args is None:
        return band_of(full, full, promoted=True)
    if not args:
        return report.Band(0, 0.0, 0.0, 0, len(full.failed))
    return band_of(run_pytest(repo, python, args, timeout=TIMEOUT_FACTOR * full.seconds), full)


@contextlib.contextmanager
def store_hidden(repo: Path) -> Iterator[None]:
    """The plan as a repository without a witness sees it."""
    store = presence.store_path(repo)
    aside = store.with_name(store.name + ".aside")
    store.rename(aside)
    try:
        yield
    finally:
        aside.rename(store)


def planned(repo: Path, python: Path, w: str, full: wb.Run) -> report.Band:
    proc, seconds = agentgate(repo, "plan", "--base", w, "--format", "json")
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"agentgate plan failed in {repo}:\n{proc.stdout}{proc.stderr}") from None
    if proc.returncode >= 64:  # a usage error or agentgate's own crash: loud, not a band
        print(f"  agentgate plan exited {proc.returncode} in {repo}:\n{proc.stderr[-3000:]}"
              f"{json.dumps(data.get('reasons'))[:2000]}", flush=True)
    promoted = data.get("run") == "full"
    tests = list(data.get("tests", []))
    witness = data.get("witness")
    unrun = list(witness.get("deselected", ())) if isinstance(witness, dict) else []
    # The cases of a selected parametrized function the witness vouches for: --deselect, as
    # ``agentgate check`` runs them.
    band = run_band(repo, python, None if promoted else tests + (
        [f"--deselect={n}" for n in unrun] if tests else []), full)
    band.extra = {"plan_s": seconds, "exit": proc.returncode, "plan": _plan_summary(data)}
    if not promoted and isinstance(data.get("witness"), dict):
        band.extra["by_reason"] = by_reason(data, full)
    return band


def by_reason(data: dict[str, object], full: wb.Run) -> dict[str, list[float]]:
    """The witnessed band broken down by why each test runs: ``{reason: [tests, time share
    of the suite]}``, over the full run's JUnit cases the plan's ids select (a listed id may
    stand for every parametrization of a function, or a whole file); the audit sample's
    tests carry no reason of their own (``audit``)."""
    witness = data["witness"]
    assert isinstance(witness, dict)
    reasons = {junit_key(n): r for n, r in witness.get("reasons", {}).items()}
    listed = tuple(junit_key(n) for n in data.get("tests", []))  # type: ignore[attr-defined]
    unrun = {junit_key(n) for n in witness.get("deselected", ())}
    total = max(1e-9, full.test_time)
    found: dict[str, list[float]] = {}
    for case, (seconds, _bad) in full.cases.items():
        if case in unrun:
            continue
        if any(case == k or case.startswith((k + "[", k + ".", k + "::")) for k in listed):
            cell = found.setdefault(report.reason_kind(reasons.get(case)), [0, 0.0])
            cell[0] += 1
            cell[1] += seconds / total
    return found


def junit_key(nodeid: str) -> str:
    """The JUnit case key (``classname::name``) of a pytest node id (a file: its module). A
    case's parameters may hold "::" (sqlparse's ``test_issue78[...::text ...]``): only the
    part before them names the test."""
    bracket = nodeid.find("[")
    head, case = (nodeid[:bracket], nodeid[bracket:]) if bracket >= 0 else (nodeid, "")
    path, *rest = head.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    if not rest:
        return module + case
    return ".".join([module, *rest[:-1]]) + "::" + rest[-1] + case


def _plan_summary(data: dict[str, object]) -> dict[str, object]:
    """What the report aggregates: the reasons, the chains' seeds, the witness's labels."""
    witness = data.get("witness")
    summary: dict[str, object] = {
        "verdict": data.get("verdict"), "reasons": data.get("reasons", []),
        "why": data.get("why", {}), "changed": data.get("changed", []),
        "suite_size": data.get("suite_size"), "notes": data.get("notes", []),
    }
    if isinstance(witness, dict):
        summary["witness"] = {"counts": witness.get("counts", {}),
                              "reasons": witness.get("reasons", {})}
    return summary


def closure(repo: Path, python: Path, full: wb.Run) -> report.Band:
    start = time.perf_counter()
    config = config_mod.load(repo)
    graph = graph_build.build(repo, config, "HEAD")
    changed = [c.path for c in gitio.diff_changes(repo, "HEAD~1", "HEAD")]
    seeds = [m for m in (graph.module_of(p) for p in changed) if m is not None]
    reach = graph.importers_closure(seeds)
    texts = gitio.read_many_at(repo, "HEAD", list(config_mod.PYTEST_CONFIG_FILES))
    tests = planner.test_files(config, texts, graph, python_files(texts))
    files = sorted({graph.modules[m] for m in reach if graph.modules.get(m) in tests})
    took = time.perf_counter() - start
    band = run_band(repo, python, files, full)
    band.extra = {"plan_s": took, "files": len(files)}
    return band


def testmon(repo: Path, python: Path, work: Path, full: wb.Run) -> report.Band:
    _drop_testmon(repo)
    for saved in work.glob(f"{repo.name}-.testmondata*"):
        shutil.copy(saved, repo / saved.name.split("-", 1)[1])
    return band_of(run_pytest(repo, python, ["--testmon"],
                              timeout=TIMEOUT_FACTOR * full.seconds), full)


def measure(repo: Path, python: Path, w: str, work: Path, full: wb.Run) -> dict[str, report.Band]:
    with store_hidden(repo):
        plain = planned(repo, python, w, full)
    return {"agentgate": plain, "agentgate+witness": planned(repo, python, w, full),
            "closure": closure(repo, python, full), "testmon": testmon(repo, python, work, full)}


# --- a project ---------------------------------------------------------------------------------

def bench_project(name: str, python: Path, args: argparse.Namespace,
                  work: Path) -> report.Project:
    spec = PROJECTS.get(name) or TRIAL_PROJECTS[name]
    repo, w = prepare(name, spec, work)
    print(f"== {name} {spec.version}: recording cost", flush=True)
    costs = recording(repo, python, args.reps, work)
    suite = run_pytest(repo, python, [])
    assert suite is not None and not suite.failed, f"{name}: the base suite must pass"
    project = report.Project(name, spec.version, spec.shape, costs, len(suite.cases))
    # Each operator may try up to twice the mutants asked for; at most 8x in all.
    dealer = mut.Dealer(mut.sites(repo, list(spec.sources), spec.exclude), args.seed,
                        tries=2 * args.mutants)
    for index, mutant in enumerate(dealer):
        if len(project.rows) >= args.mutants or index >= args.mutants * 8:
            break
        commit_mutant(repo, w, index, mutant)
        full = run_pytest(repo, python, [], timeout=TIMEOUT_FACTOR * costs["plain"] + 10)
        outcome = _outcome(full)
        project.tried[outcome] = project.tried.get(outcome, 0) + 1
        if full is not None and full.failed:
            dealer.keep(mutant)
            bands = measure(repo, python, w, work, full)
            project.rows.append(report.Row(mutant.label, mutant.operator, len(full.cases),
                                           full.test_time, full.seconds, len(full.failed),
                                           bands))
            print("  " + report.progress(project.rows[-1]), flush=True)
    wb.sh(["git", "checkout", "-q", "-f", "main"], repo)
    return project


def _outcome(full: wb.Run | None) -> str:
    if full is None:
        return "timeout"
    return "killed" if full.failed else "survived"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", default=",".join(PROJECTS))
    parser.add_argument("--mutants", type=int, default=12, help="kept mutants per project")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="3 mutants, 1 rep: a smoke run")
    parser.add_argument("--json", type=Path, default=wb.WORK / "mutation.json")
    parser.add_argument("--write", type=Path, help="write the markdown table here")
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary one)")
    args = parser.parse_args()
    if args.quick:
        args.mutants, args.reps = 3, 1
    python = ensure_venv()
    os.environ["VIRTUAL_ENV"] = str(python.parent.parent)  # agentgate's project interpreter
    work = args.work or Path(tempfile.mkdtemp(prefix="agentgate-mutation-"))
    started = time.perf_counter()
    results = [bench_project(n, python, args, work) for n in args.projects.split(",")]
    meta = report.machine(args, time.perf_counter() - started)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"meta": meta, "projects": [asdict(p) for p in results]},
                                    indent=1, default=str))
    text = report.markdown(results, meta)
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
