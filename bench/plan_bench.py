"""Plan-time benchmark: agentgate's import graph and ``agentgate plan``, cold and warm, next to
grimp's own ``build_graph`` and ``pytest --collect-only -q``, on the same trees in one run.

Trees (built under bench/_work/, which is gitignored):
  sympy  sympy's sdist (``pip download --no-deps --no-binary :all: sympy``), committed as is,
         plus one commit that edits a leaf module (the planned range);
  mono   bench/gen_monorepo.py's 20,000 modules, plus one commit that edits three modules.

Each figure is the median of --runs fresh processes, wall clock, with CPU time alongside
(user + sys: on a loaded machine wall clock grows, CPU much less). "graph" times
``graph.build`` inside the process (interpreter start and imports excluded): cold (no
cache), warm (same commit again) and after a new commit (the cache holds the previous one,
and the edited files are new blobs). "plan" and grimp/pytest are whole processes. grimp
builds only packages (its graph of mono has no tests/), with its own cache in a temp dir.

    python bench/plan_bench.py [--runs 5] [--only sympy|mono] [--collect-timeout 900]
                               [--no-collect] [--write bench/plan.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
SYMPY_EDIT = "sympy/combinatorics/prufer.py"
MONO_EDITS = ("src/mono_core/sub3/mod1200.py", "src/mono_api/sub10/mod4001.py",
              "src/mono_ns/sub40/mod16003.py")

CHILD_GRAPH = """
import json, sys, time
from pathlib import Path
from agentgate.core import config
from agentgate.graph import build as graph
root, rev = Path(sys.argv[1]), sys.argv[2]
cfg = config.load(root)
start, cpu = time.perf_counter(), time.process_time()
g = graph.build(root, cfg, rev)
took, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"s": took, "cpu": cpu, "modules": len(g.modules),
                  "escalations": len(g.escalations), "parsed": g.stats.parsed,
                  "cache": g.stats.cache}))
"""

CHILD_GRIMP = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import grimp
start = time.perf_counter()
g = grimp.build_graph(*sys.argv[3:], cache_dir=sys.argv[2])
print(json.dumps({"s": time.perf_counter() - start, "modules": len(g.modules)}))
"""


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                         text=True, env=env)
    return out.stdout.strip()


def commit_tree(root: Path, message: str) -> None:
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", message)


def prepare_sympy() -> Path:
    downloads = WORK / "dl"
    sdists = sorted(downloads.glob("sympy-*.tar.gz"))
    if not sdists:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        ":all:", "sympy", "-d", str(downloads)], check=True)
        sdists = sorted(downloads.glob("sympy-*.tar.gz"))
    root = WORK / sdists[-1].name.removesuffix(".tar.gz")
    if not (root / ".git").exists():
        shutil.rmtree(root, ignore_errors=True)
        with tarfile.open(sdists[-1]) as archive:
            archive.extractall(WORK, filter="data")  # no chown: git refuses foreign owners
        commit_tree(root, "sympy sdist")
        with (root / SYMPY_EDIT).open("a", encoding="utf-8") as out:
            out.write("\n\ndef _bench_edit():\n    return 1\n")
        commit_tree(root, "bench: edit a leaf module")
    return root


def prepare_mono(modules: int) -> Path:
    root = WORK / f"mono-{modules}"
    if not (root / ".git").exists():
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run([sys.executable, str(HERE / "gen_monorepo.py"), str(root),
                        "--modules", str(modules)], check=True)
        for rel in MONO_EDITS:
            with (root / rel).open("a", encoding="utf-8") as out:
                out.write("\n\ndef _bench_edit():\n    return 1\n")
        commit_tree(root, "bench: edit three modules")
    return root


def graph_cache(root: Path) -> Path:
    common = Path(git(root, "rev-parse", "--git-common-dir"))
    return (common if common.is_absolute() else root / common).resolve() / "agentgate" / "graph"


def child(code: str, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True,
                         text=True, cwd=cwd)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# An installed agentgate runs from byte-compiled modules; a sandbox that sets
# PYTHONDONTWRITEBYTECODE would have every plan compile agentgate again (~0.2 s).
PLAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], cwd: Path, timeout: float | None = None,
          env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Wall clock of one process; its CPU time (user + sys, children included) is kept in
    LAST_CPU so a loaded machine can be told from a slow program."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, proc.returncode, proc.stdout


LAST_CPU = [0.0]


def median(values: list[float]) -> float:
    return statistics.median(values)


def new_commit(root: Path, edits: tuple[str, ...]) -> None:
    """One more commit editing the same files: new blobs the cache has never seen."""
    for rel in edits:
        with (root / rel).open("a", encoding="utf-8") as out:
            out.write(f"\n_BENCH_{time.time_ns()} = 1\n")
    commit_tree(root, "bench: another edit")


def bench_graph(root: Path, edits: tuple[str, ...], runs: int) -> dict[str, Any]:
    cold: list[dict[str, Any]] = []
    warm: list[dict[str, Any]] = []
    incremental: list[dict[str, Any]] = []
    for _ in range(runs):
        shutil.rmtree(graph_cache(root), ignore_errors=True)
        cold.append(child(CHILD_GRAPH, str(root), "HEAD"))
        warm.append(child(CHILD_GRAPH, str(root), "HEAD"))
        new_commit(root, edits)
        incremental.append(child(CHILD_GRAPH, str(root), "HEAD"))
    assert all(r["cache"] == "cold" for r in cold) and all(r["parsed"] == 0 for r in warm)
    out: dict[str, Any] = {"modules": cold[0]["modules"], "escalations": cold[0]["escalations"],
                           "parsed_after_commit": incremental[0]["parsed"]}
    for label, rows in (("cold", cold), ("warm", warm), ("incremental", incremental)):
        out[label] = median([r["s"] for r in rows])
        out[label + "_cpu"] = median([r["cpu"] for r in rows])
    return out


def plan_available() -> bool:
    proc = subprocess.run([sys.executable, "-m", "agentgate", "plan", "--help"],
                          capture_output=True, text=True)
    return proc.returncode == 0


def bench_plan(root: Path, edits: tuple[str, ...], runs: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "agentgate", "plan", "--base", "HEAD~1", "--head", "HEAD",
           "--format", "json"]
    times: dict[str, list[float]] = {k: [] for k in ("cold", "warm", "warm_cpu", "next",
                                                      "next_cpu")}
    verdict: dict[str, Any] = {}
    timed(cmd, root, env=PLAN_ENV)  # byte-compile agentgate once, as an install does
    for _ in range(runs):
        shutil.rmtree(graph_cache(root), ignore_errors=True)
        times["cold"].append(timed(cmd, root, env=PLAN_ENV)[0])
        took, code, out = timed(cmd, root, env=PLAN_ENV)
        times["warm"].append(took)
        times["warm_cpu"].append(LAST_CPU[0])
        data = json.loads(out) if out.strip() else {}
        verdict = {"exit": code, "verdict": data.get("verdict"),
                   "tests": len(data.get("tests", []))}
        new_commit(root, edits)  # the next plan: a range the cache has not seen
        times["next"].append(timed(cmd, root, env=PLAN_ENV)[0])
        times["next_cpu"].append(LAST_CPU[0])
    return {**{k: median(v) for k, v in times.items()}, **verdict}


def bench_grimp(root: Path, src: Path, packages: list[str], runs: int) -> dict[str, Any]:
    cold, warm = [], []
    modules = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            first = child(CHILD_GRIMP, str(src), cache, *packages, cwd=root)
            cold.append(first["s"])
            modules = first["modules"]
            warm.append(child(CHILD_GRIMP, str(src), cache, *packages, cwd=root)["s"])
    return {"cold": median(cold), "warm": median(warm), "modules": modules}


def bench_collect(root: Path, target: str, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
           target]
    try:
        took, code, out = timed(cmd, root, timeout)
    except subprocess.TimeoutExpired:
        return {"s": None, "timeout": timeout}
    tail = out.strip().splitlines()[-1] if out.strip() else ""
    return {"s": took, "exit": code, "summary": tail}


def fmt(value: object) -> str:
    return f"{value:.2f} s" if isinstance(value, float) else str(value)


def report(name: str, results: dict[str, dict[str, Any]]) -> list[str]:
    g, grimp = results["graph"], results["grimp"]
    lines = [f"### {name}", "", "| measurement | cold | warm |", "|---|---|---|",
             f"| agentgate graph.build ({g['modules']} modules) | {fmt(g['cold'])} "
             f"(CPU {fmt(g['cold_cpu'])}) | {fmt(g['warm'])} (CPU {fmt(g['warm_cpu'])}); "
             f"after a commit ({g['parsed_after_commit']} files parsed): "
             f"{fmt(g['incremental'])} (CPU {fmt(g['incremental_cpu'])}) |",
             f"| grimp build_graph ({grimp['modules']} modules) | {fmt(grimp['cold'])} | "
             f"{fmt(grimp['warm'])} |"]
    if "plan" in results:
        p = results["plan"]
        lines.append(f"| agentgate plan (whole process; verdict {p['verdict']}, "
                     f"{p['tests']} tests) | {fmt(p['cold'])} | {fmt(p['warm'])} "
                     f"(CPU {fmt(p['warm_cpu'])}); after a new commit: {fmt(p['next'])} "
                     f"(CPU {fmt(p['next_cpu'])}) |")
    if "collect" in results:
        c = results["collect"]
        shown = fmt(c["s"]) if c["s"] is not None else f"> {c['timeout']:.0f} s (timed out)"
        lines.append(f"| pytest --collect-only -q | {shown} | |")
        if c.get("summary"):
            lines.append(f"|  (pytest said: {c['summary']}) | | |")
    lines.append(f"\nGraph escalations: {g['escalations']}.")
    return lines


def targets(done: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Issue 3's targets, against this run's figures."""
    lines = ["### Targets (issue 3)", ""]

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    if "sympy" in done:
        g, grimp = done["sympy"]["graph"], done["sympy"]["grimp"]
        for label, key in (("warm", "warm"), ("after a commit", "incremental")):
            ratio = g[key] / grimp["warm"]
            lines.append(f"- sympy, graph.build {label}: {g[key]:.2f} s = {ratio:.2f}x grimp's "
                         f"warm build ({grimp['warm']:.2f} s); within 1.5x: "
                         f"{verdict(ratio <= 1.5)}")
        if "plan" in done["sympy"]:
            p = done["sympy"]["plan"]
            ratio = p["warm"] / grimp["warm"]
            lines.append(f"- sympy, whole `agentgate plan` warm: {p['warm']:.2f} s (CPU "
                         f"{p['warm_cpu']:.2f} s) = {ratio:.2f}x; within 1.5x: "
                         f"{verdict(ratio <= 1.5)}")
    if "mono" in done:
        g = done["mono"]["graph"]
        for label, key in (("warm", "warm"), ("after a commit", "incremental")):
            lines.append(f"- mono, graph.build {label}: {g[key]:.2f} s; under 0.5 s: "
                         f"{verdict(g[key] < 0.5)}")
        if "plan" in done["mono"]:
            p = done["mono"]["plan"]
            lines.append(f"- mono, whole `agentgate plan` warm: {p['warm']:.2f} s (CPU "
                         f"{p['warm_cpu']:.2f} s); under 0.5 s: {verdict(p['warm'] < 0.5)}")
    return [*lines, ""]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--modules", type=int, default=20_000)
    parser.add_argument("--only", choices=("sympy", "mono"))
    parser.add_argument("--collect-timeout", type=float, default=900.0)
    parser.add_argument("--no-collect", action="store_true", help="skip pytest --collect-only")
    parser.add_argument("--write", type=Path, help="write the figures as markdown here")
    args = parser.parse_args(argv)
    WORK.mkdir(exist_ok=True)
    with_plan = plan_available()
    command = "python bench/plan_bench.py " + " ".join(argv)
    out: list[str] = [
        "# Plan time: the import graph and `agentgate plan`", "",
        f"Machine: {platform.platform()}, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start. "
        f"Reproduce: `{command.strip()}`.", "",
        f"Medians of {args.runs} fresh processes, wall clock, CPU (user + sys) alongside: "
        "other jobs share this machine, and wall clock grows with them where CPU does not.",
        "*graph.build* is timed inside its process (interpreter start and imports excluded): "
        "cold (no cache), warm (the same commit again), and after a commit (the cache holds the "
        "previous commit; the edited files are blobs it has never seen). *plan* is the whole "
        "`agentgate plan --base HEAD~1 --head HEAD --format json` process, run from "
        "byte-compiled modules as an install runs it (the bench drops PYTHONDONTWRITEBYTECODE "
        "for it). grimp builds its "
        "graph of the packages only (no tests/ in mono), with its own cache in a temp folder.",
        ""]
    trees: list[tuple[str, Path, Path, list[str], str | None, tuple[str, ...]]] = []
    if args.only in (None, "sympy"):
        root = prepare_sympy()
        trees.append(("sympy sdist", root, root, ["sympy"], "sympy", (SYMPY_EDIT,)))
    if args.only in (None, "mono"):
        root = prepare_mono(args.modules)
        packages = ["mono_core", "mono_api", "mono_jobs", "mono_ns"]
        trees.append((f"generated monorepo ({args.modules} modules)", root, root / "src",
                      packages, None, MONO_EDITS))
    done: dict[str, dict[str, dict[str, Any]]] = {}
    for name, root, src, packages, collect, edits in trees:
        results: dict[str, dict[str, Any]] = {"graph": bench_graph(root, edits, args.runs)}
        results["grimp"] = bench_grimp(root, src, packages, args.runs)
        if with_plan:
            results["plan"] = bench_plan(root, edits, args.runs)
        if collect and not args.no_collect:
            results["collect"] = bench_collect(root, collect, args.collect_timeout)
        done["sympy" if collect else "mono"] = results
        lines = report(name, results)
        out += [*lines, ""]
        print("\n".join(lines), flush=True)
    out += targets(done)
    if not with_plan:
        out.append("`agentgate plan` is not available yet: graph.build only.")
    out.append(f"Load average at the end: {os.getloadavg()[0]:.2f}.")
    if args.write:
        args.write.write_text("\n".join(out) + "\n", encoding="utf-8")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
