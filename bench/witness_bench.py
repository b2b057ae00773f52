"""Skip witnesses on real suites: recording overhead, and band size versus safety.

For each project (PyPI sdists: click 8.1.7 and Jinja2 3.1.4 -- rich's sdist ships no tests),
in one run and one after another:

1. **Recording overhead**: the full suite plain, with ``--agentgate-witness`` (recording
   started by the plugin), through ``agentgate.witness.boot`` (recording started before
   pytest is imported: what ``witness record`` runs) and with ``--testmon`` (pytest-testmon's
   own recording), alternated, best of ``--reps`` in wall and in CPU time (user + system of
   the child, less disturbed by other work on the machine), with the recording's harvest
   (after the last test) apart; then the real ``agentgate witness record`` (what a user runs)
   once, and ``witness record --incremental`` after a merge that edits one function (what CI
   on main pays per merge).
2. **Single-function patches**: ``--patches`` functions of the package, picked with a fixed
   seed, each mutated to ``raise RuntimeError`` on entry (one commit each on top of W). For
   each patch the full suite runs (the truth: does any test catch it?), then
   - the witnessed band (``agentgate.witness.gate.evaluate``: selection, without the
     shadow sample, whose size is reported apart),
   - the import-closure band (``agentgate plan --format json``: its test files),
   - pytest-testmon's selection (``--testmon`` from the database recorded at W),
   each measured as the share of tests and of test time (JUnit times) it runs, and whether
   it catches the patches the full suite catches.

The project's suite runs in a venv under bench/_work (pytest 8.3.5, pytest-testmon,
MarkupSafe), without agentgate: ``witness record`` makes the plugin importable for its run,
as it does from pre-commit's isolated environment.

    python bench/witness_bench.py [--projects click,jinja2] [--patches 12] [--reps 2]
                                  [--write bench/witness.md]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import _sdist

from agentgate.core import config as config_mod
from agentgate.core.config import DEFAULT_AGENT_ENV
from agentgate.run import interp
from agentgate.witness import blocks
from agentgate.witness import select as gate

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work"
PROJECTS = {"click": ("click", "8.1.7", "src/click"), "jinja2": ("jinja2", "3.1.4", "src/jinja2")}
VENV_PACKAGES = ("pytest==8.3.5", "pytest-testmon==2.2.0", "markupsafe")
MUTANT = 'raise RuntimeError("agentgate-bench mutant")'
IDENTITY = {f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER")
            for k, v in (("NAME", "bench"), ("EMAIL", "bench@example.com"))}


# --- setup -------------------------------------------------------------------------------------

def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "PYTEST_", "PRE_COMMIT")) and k not in DEFAULT_AGENT_ENV}
    env.pop("PYTHONPATH", None)
    # Byte-compiled modules, as an install and every later run have them (plan_bench does
    # the same): a sandbox's PYTHONDONTWRITEBYTECODE would have every run compile agentgate,
    # coverage's callers and the project again, which no user's machine does.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["VIRTUAL_ENV"] = str(WORK / "venv")
    env.update(IDENTITY)
    return env


def sh(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
       check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env or base_env(), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])} failed ({proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return proc


def ensure_venv() -> Path:
    venv = WORK / "venv"
    marker = venv / ".bench-ready"
    if not marker.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *VENV_PACKAGES], check=True)
        marker.write_text(" ".join(VENV_PACKAGES))
    return venv / "bin" / "python"


def prepare(name: str) -> tuple[Path, str]:
    """A fresh git repository of the sdist, one commit W."""
    dist, version, _pkg = PROJECTS[name]
    repo = WORK / name
    _sdist.unpack(dist, version, WORK / "sdists", repo)
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.testmondata*\n")
    sh(["git", "init", "-q", "-b", "main"], repo)
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-q", "-m", "W"], repo)
    return repo, sh(["git", "rev-parse", "HEAD"], repo).stdout.strip()


# --- running pytest ----------------------------------------------------------------------------

@dataclass
class Run:
    seconds: float
    cases: dict[str, tuple[float, bool]] = field(default_factory=dict)  # id -> (time, failed)
    exit_code: int = 0  # 3: pytest INTERNALERROR (a plugin crashed mid-run)
    cpu: float = 0.0  # user + system seconds of the child processes

    @property
    def failed(self) -> set[str]:
        return {k for k, (_t, bad) in self.cases.items() if bad}

    @property
    def test_time(self) -> float:
        return sum(t for t, _bad in self.cases.values())


def pytest_env(repo: Path) -> dict[str, str]:
    config = config_mod.load(repo)
    env = interp.test_env(config, repo, extra={"VIRTUAL_ENV": str(WORK / "venv")})
    for name in (*DEFAULT_AGENT_ENV, "PYTHONDONTWRITEBYTECODE"):  # as ``base_env``
        env.pop(name, None)
    return env


def run_pytest(repo: Path, python: Path, args: list[str], *, extra_path: str = "",
               module: str = "pytest", lead: tuple[str, ...] = ()) -> Run:
    """``python -m MODULE LEAD... -q --junitxml=... ARGS...`` (``-m coverage run ... -m
    pytest`` takes its own arguments first)."""
    env = pytest_env(repo)
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], extra_path])
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        before, start = cpu_seconds(), time.perf_counter()
        cmd = [str(python), "-m", module, *lead, "-q", f"--junitxml={junit}", *args]
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True,
                              stdin=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        return Run(seconds, parse_junit(junit), proc.returncode, cpu_seconds() - before)


def cpu_seconds() -> float:
    """User + system time of every child this process has waited for."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def parse_junit(path: Path) -> dict[str, tuple[float, bool]]:
    if not path.exists():
        return {}
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        bad = case.find("failure") is not None or case.find("error") is not None
        cases[key] = (float(case.get("time") or 0), bad)
    return cases


def shim_dir() -> str:
    """agentgate made importable for the project's interpreter, as witness record does."""
    path = WORK / "shim"
    path.mkdir(exist_ok=True)
    link = path / "agentgate"
    if not link.exists():
        link.symlink_to(Path(gate.__file__).resolve().parents[1], target_is_directory=True)
    return str(path)


# --- 1. recording overhead ---------------------------------------------------------------------

def overhead(repo: Path, python: Path, reps: int) -> dict[str, float]:
    raw = WORK / f"{repo.name}-raw.json"
    record = ["-p", "agentgate.witness", "--agentgate-witness", f"--agentgate-witness-out={raw}"]
    variants = {  # name: (pytest arguments, PYTHONPATH addition, module run with -m)
        "plain": ([], "", "pytest"),
        "witness": (record, shim_dir(), "pytest"),
        "boot": (record, shim_dir(), "agentgate.witness.boot"),
        "testmon": (["--testmon"], "", "pytest"),
    }
    best: dict[str, float] = {}
    for _ in range(reps):
        for name, (args, extra, module) in variants.items():
            for leftover in repo.glob(".testmondata*"):
                leftover.unlink()
            raw.unlink(missing_ok=True)
            run = run_pytest(repo, python, args, extra_path=extra, module=module)
            best[name] = min(best.get(name, run.seconds), run.seconds)
            best[f"{name} cpu"] = min(best.get(f"{name} cpu", run.cpu), run.cpu)
            if name in ("witness", "boot") and raw.is_file():  # the harvest, after pytest
                spent = float(json.loads(raw.read_text())["harvest_seconds"])
                best[f"{name} harvest"] = min(best.get(f"{name} harvest", spent), spent)
            if run.exit_code == 3:
                best[f"{name} crashed"] = 1.0
    # The last --testmon run left W's testmon database: keep it for the patches.
    for data in repo.glob(".testmondata*"):
        shutil.copy(data, WORK / f"{repo.name}-{data.name}")
    before, start = cpu_seconds(), time.perf_counter()
    sh([sys.executable, "-m", "agentgate", "witness", "record"], repo)
    best["agentgate witness record"] = time.perf_counter() - start
    best["agentgate witness record cpu"] = cpu_seconds() - before
    best.update(incremental(repo))
    return best


def incremental(repo: Path) -> dict[str, float]:
    """``witness record --incremental`` after a merge that edits one function's body (a
    harmless line at its entry): what CI on main pays per merge."""
    package = next(p for n, (_d, _v, p) in PROJECTS.items() if n == repo.name)
    edit = mutants(repo, package, 1)[0]
    w = sh(["git", "rev-parse", "HEAD"], repo).stdout.strip()
    apply(repo, w, 999, edit, line="_agentgate_bench = None")
    before, start = cpu_seconds(), time.perf_counter()
    done = sh([sys.executable, "-m", "agentgate", "witness", "record", "--incremental",
               "--format", "json"], repo)
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - before
    sh(["git", "checkout", "-q", "-f", "main"], repo)
    note = next(n for n in json.loads(done.stdout)["notes"] if "carried" in n)
    carried = int(note.split(" tests carried")[0].split(": ")[-1].split(" of ")[0])
    return {"incremental": seconds, "incremental cpu": cpu, "carried": carried,
            "tests": float(json.loads(done.stdout)["tests"])}


# --- 2. patches --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mutant:
    path: str
    function: str
    line: int  # where the raise goes
    indent: int


def mutants(repo: Path, package: str, count: int, seed: int = 7) -> list[Mutant]:
    found = []
    for path in sorted((repo / package).rglob("*.py")):
        rel = path.relative_to(repo).as_posix()
        tree = ast.parse(path.read_bytes())
        layout = blocks.parse(path.read_bytes())
        names = {b.name for b in layout.blocks} if layout else set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and len(node.body) > 1:
                first = node.body[1] if _docstring(node) else node.body[0]
                qual = _qualname(tree, node)
                if qual in names:
                    found.append(Mutant(rel, qual, first.lineno, first.col_offset))
    return random.Random(seed).sample(found, min(count, len(found)))


def _docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = node.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
        first.value.value, str)


def _qualname(tree: ast.Module, target: ast.AST) -> str:
    def walk(body: list[ast.stmt], prefix: str) -> str | None:
        for node in body:
            if node is target and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return prefix + node.name
            if isinstance(node, ast.ClassDef):
                found = walk(node.body, f"{prefix}{node.name}.")
                if found:
                    return found
        return None

    return walk(tree.body, "") or "?"


def apply(repo: Path, w: str, index: int, mutant: Mutant, *, line: str = MUTANT) -> str:
    sh(["git", "checkout", "-q", "-f", "-B", f"bench-{index}", w], repo)
    path = repo / mutant.path
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(mutant.line - 1, " " * mutant.indent + line + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    sh(["git", "commit", "-q", "-am", f"mutate {mutant.function}"], repo)
    return sh(["git", "rev-parse", "HEAD"], repo).stdout.strip()


@dataclass
class Band:
    tests: int
    test_time: float
    caught: bool
    missed: int  # failing tests of the full suite the band did not run
    extra: dict[str, float] = field(default_factory=dict)
    crashed: bool = False


def band_of(run: Run, full: Run) -> Band:
    return Band(len(run.cases), run.test_time, bool(run.failed), len(full.failed - run.failed),
                crashed=run.exit_code == 3)


def witnessed(repo: Path, python: Path, w: str, full: Run) -> Band:
    start = time.perf_counter()
    plan = gate.evaluate(repo, config_mod.load(repo), base=w, head="HEAD")
    took = time.perf_counter() - start
    assert plan is not None, "the witness must be usable here"
    if plan.full_suite:
        result = band_of(full, full)
    elif not plan.selection:
        result = Band(0, 0.0, False, len(full.failed))
    else:
        result = band_of(run_pytest(repo, python, list(plan.selection)), full)
    result.extra = {"plan_s": took, "shadow": len(plan.shadow),
                    "escalated": len(plan.labelled(gate.ESCALATE))}
    return result


def import_closure(repo: Path, python: Path, w: str, full: Run, test_files: set[str]) -> Band:
    start = time.perf_counter()
    proc = sh([sys.executable, "-m", "agentgate", "plan", "--base", w, "--format", "json"],
              repo, check=False)
    took = time.perf_counter() - start
    data = json.loads(proc.stdout)
    files = set(data.get("tests", []))
    if data.get("run") == "full" or files >= test_files:
        result = band_of(full, full)
    elif not files:
        result = Band(0, 0.0, False, len(full.failed))
    else:
        result = band_of(run_pytest(repo, python, sorted(files)), full)
    result.extra = {"plan_s": took, "promoted": float(data.get("run") == "full")}
    return result


def testmon(repo: Path, python: Path, full: Run) -> Band:
    for leftover in repo.glob(".testmondata*"):
        leftover.unlink()
    for saved in WORK.glob(f"{repo.name}-.testmondata*"):
        shutil.copy(saved, repo / saved.name.split("-", 1)[1])
    return band_of(run_pytest(repo, python, ["--testmon"]), full)


# --- report ------------------------------------------------------------------------------------

BANDS = ("witness", "closure", "testmon")


@dataclass
class Row:
    mutant: str
    full_tests: int
    full_time: float
    caught: bool
    bands: dict[str, Band]


@dataclass
class Project:
    name: str
    costs: dict[str, float]
    rows: list[Row]


def bench_project(name: str, python: Path, patches: int, reps: int) -> Project:
    repo, w = prepare(name)
    print(f"== {name}: recording overhead", flush=True)
    costs = overhead(repo, python, reps)
    test_files = {p.relative_to(repo).as_posix() for p in (repo / "tests").rglob("test_*.py")}
    rows = []
    for index, mutant in enumerate(mutants(repo, PROJECTS[name][2], patches)):
        apply(repo, w, index, mutant)
        full = run_pytest(repo, python, [])
        bands = {"witness": witnessed(repo, python, w, full),
                 "closure": import_closure(repo, python, w, full, test_files),
                 "testmon": testmon(repo, python, full)}
        row = Row(f"{mutant.path}::{mutant.function}", len(full.cases), full.test_time,
                  bool(full.failed), bands)
        rows.append(row)
        print(f"  {row.mutant}: caught={row.caught} " + " ".join(
            f"{k}={b.tests}{'' if b.caught == row.caught else '!'}" for k, b in bands.items()),
            flush=True)
    sh(["git", "checkout", "-q", "-f", "main"], repo)
    return Project(name, costs, rows)


def markdown(results: list[Project], args: argparse.Namespace) -> str:
    out = [
        "# Skip witnesses on real suites", "",
        f"Machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs. Reproduce: `python bench/witness_bench.py --projects "
        f"{args.projects} --patches {args.patches} --reps {args.reps} --write bench/witness.md`.",
        "",
        "Projects are PyPI sdists (click 8.1.7, Jinja2 3.1.4; rich's sdist ships no tests), "
        "run in a venv with pytest 8.3.5 and pytest-testmon 2.2.0 and without agentgate "
        "(`witness record` makes the plugin importable for its run). Each patch makes one "
        f"function of the package `{MUTANT}` on entry, one commit on top of the recorded "
        "revision W. A band *catches* a patch when at least one test it runs fails; *missed "
        "failing tests* counts the full suite's failures a band did not run. Test time is "
        "the JUnit time of the tests a band ran over the full suite's. The witness band is "
        "the gate's selection (impacted, fixture drift, escalated, new), without the shadow "
        "sample. The import-closure band is `agentgate plan`'s test files.",
        "", "## Recording overhead (full suite, best of the reps)", "",
        "Seconds, wall / CPU (user + system of the child processes), and the ratio to the "
        "plain suite's. `--agentgate-witness`: recording started by the plugin; `boot`: "
        "`python -m agentgate.witness.boot`, recording started before pytest is imported, what "
        "`agentgate witness record` runs (which adds its worktree, interpreter probe, "
        "fingerprint and store).", "",
        "| project | plain | --agentgate-witness | boot | of which harvest | "
        "--testmon (fresh) | agentgate witness record | --incremental after a one-function "
        "merge (tests carried) |", "|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        c = res.costs
        crash = " (INTERNALERROR)" if "testmon crashed" in c else ""
        out.append(f"| {res.name} | {_cost(c, 'plain')} | {_cost(c, 'witness')} | "
                   f"{_cost(c, 'boot')} | {c.get('boot harvest', 0):.2f} | "
                   f"{_cost(c, 'testmon')}{crash} | {_cost(c, 'agentgate witness record')} | "
                   f"{_cost(c, 'incremental')} ({c['carried']:.0f} of {c['tests']:.0f}) |")
    out += ["", "## Single-function patches (share of the full suite each band runs)", "",
            "| project | patches (caught by full suite) | band | tests | test time | "
            "caught | missed failing tests | runs crashed |", "|---|---|---|---|---|---|---|---|"]
    for res in results:
        out += _band_rows(res)
    out += ["", "Witnessed plan: mean time of `gate.evaluate`, tests escalated (always run), "
            "and the shadow sample (10%, run on top of the band, not counted above):", ""]
    out += [_witness_line(res) for res in results]
    out += ["", "Per patch (tests run: witness / import closure / testmon / full):", ""]
    for res in results:
        out += [_patch_line(res.name, row) for row in res.rows]
    return "\n".join(out) + "\n"


def _cost(costs: dict[str, float], name: str) -> str:
    """``wall / cpu`` seconds, with each one's ratio to the plain suite's."""
    wall, cpu = costs[name], costs[f"{name} cpu"]
    if name == "plain":
        return f"{wall:.2f} / {cpu:.2f}"
    return (f"{wall:.2f} / {cpu:.2f} ({wall / costs['plain']:.2f}x / "
            f"{cpu / costs['plain cpu']:.2f}x)")


def _band_rows(res: Project) -> list[str]:
    caught = [r for r in res.rows if r.caught]
    count = max(1, len(res.rows))
    lines = []
    for band in BANDS:
        share = sum(r.bands[band].tests / max(1, r.full_tests) for r in res.rows) / count
        tshare = sum(r.bands[band].test_time / max(1e-9, r.full_time) for r in res.rows) / count
        hits = sum(1 for r in caught if r.bands[band].caught)
        missed = sum(r.bands[band].missed for r in caught)
        crashed = sum(1 for r in res.rows if r.bands[band].crashed)
        lines.append(f"| {res.name} | {len(res.rows)} ({len(caught)}) | {band} | {share:.1%} | "
                     f"{tshare:.1%} | {hits}/{len(caught)} | {missed} | {crashed} |")
    return lines


def _witness_line(res: Project) -> str:
    n = max(1, len(res.rows))

    def mean(band: str, key: str) -> float:
        return sum(r.bands[band].extra[key] for r in res.rows) / n

    return (f"- {res.name}: witness gate {mean('witness', 'plan_s'):.2f} s, escalated "
            f"{mean('witness', 'escalated'):.0f} tests, shadow {mean('witness', 'shadow'):.1f} "
            f"tests; `agentgate plan` (import closure, CLI process) "
            f"{mean('closure', 'plan_s'):.2f} s")


def _patch_line(name: str, row: Row) -> str:
    counts = " / ".join(str(row.bands[b].tests) for b in BANDS)
    return (f"- {name} `{row.mutant}`: {counts} / {row.full_tests}"
            f"{'' if row.caught else ' (no test catches it)'}"
            f"{' (testmon crashed)' if row.bands['testmon'].crashed else ''}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", default="click,jinja2")
    parser.add_argument("--patches", type=int, default=12)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    python = ensure_venv()
    os.environ["VIRTUAL_ENV"] = str(WORK / "venv")  # the gate asks the same interpreter
    results = [bench_project(n, python, args.patches, args.reps) for n in args.projects.split(",")]
    text = markdown(results, args)
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
