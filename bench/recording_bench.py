"""Witness recording: its cost on six real suites, and that a change leaves it the same.

For each project (PyPI sdists: witness_bench's click and Jinja2, mutation_bench's toolz,
humanize, Markdown and pluggy, committed as W in a temporary folder), best of ``--reps``
alternated runs, wall seconds and CPU seconds (user + system of the child, less disturbed by
other work on the machine), each against the plain suite:

- ``plain``: ``python -m pytest``;
- ``coverage``: ``python -m coverage run --source=. -m pytest``, coverage.py's line tracer with
  no contexts: the floor of a recording that uses it (Python 3.11);
- ``witness``: ``pytest -p agentgate.witness --agentgate-witness``, recording started by the
  plugin (a direct run);
- ``boot``: ``python -m agentgate.witness.boot`` with the same arguments, recording started
  before pytest is imported: the run ``agentgate witness record`` makes.

``--baseline DIR`` (another agentgate checkout, the "before" of a change) adds
``baseline``: ``--agentgate-witness`` with DIR's plugin, alternated with the others in every
repetition, so that both sides see the same machine.

``--against DIR`` (another agentgate checkout, e.g. ``git worktree add /tmp/base main``)
records every project with this checkout's plugin and with DIR's, both started by the plugin
and with Python's cyclic garbage collector off (code a weakref callback or a generator's
finalizer runs lands in whichever context the collector happens to run in, so it moves with
any change in allocations), and compares the raw recordings: the blocks per context, the
imports, the files opened and listed, the flags, the tests. Exit 1 when they differ.

    python bench/recording_bench.py [--projects click,jinja2,...] [--reps 3]
        [--baseline DIR] [--against DIR] [--write FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import tempfile
from pathlib import Path
from typing import Any

import mutation_bench as mb
import witness_bench as wb

PROJECTS = ("click", "jinja2", "toolz", "humanize", "markdown", "pluggy")
VARIANTS = ("plain", "coverage", "baseline", "witness", "boot")
NO_GC = "import gc, sys; gc.disable(); import pytest; raise SystemExit(pytest.main(sys.argv[1:]))"


def prepare(name: str, work: Path) -> Path:
    if name in mb.PROJECTS:
        return mb.prepare(name, mb.PROJECTS[name], work)[0]
    dist, version, _pkg = wb.PROJECTS[name]
    spec = mb.Spec(dist, version, (), "")
    return mb.prepare(name, spec, work)[0]


def shim(checkout: Path, work: Path, label: str) -> str:
    """A folder on PYTHONPATH holding a link to one checkout's agentgate package."""
    folder = work / f"shim-{label}"
    folder.mkdir(exist_ok=True)
    link = folder / "agentgate"
    if not link.exists():
        link.symlink_to(checkout.resolve() / "agentgate", target_is_directory=True)
    return str(folder)


def costs(repo: Path, python: Path, reps: int, path: str, baseline: str) -> dict[str, float]:
    raw = repo.parent / f"{repo.name}-raw.json"
    record = ["-p", "agentgate.witness", "--agentgate-witness", f"--agentgate-witness-out={raw}",
              f"--rootdir={repo}"]
    runs: dict[str, tuple[list[str], str, str, tuple[str, ...]]] = {
        "plain": ([], "", "pytest", ()),
        "coverage": ([], "", "coverage", ("run", "--source=.", "-m", "pytest")),
        "baseline": (record, baseline, "pytest", ()),
        "witness": (record, path, "pytest", ()),
        "boot": (record, path, "agentgate.witness.boot", ()),
    }
    if not baseline:
        del runs["baseline"]
    best: dict[str, float] = {}
    for _ in range(reps):
        for name, (args, extra, module, lead) in runs.items():
            run = wb.run_pytest(repo, python, args, extra_path=extra, module=module, lead=lead)
            best[name] = min(best.get(name, run.seconds), run.seconds)
            best[f"{name} cpu"] = min(best.get(f"{name} cpu", run.cpu), run.cpu)
    for data in repo.glob(".coverage*"):
        data.unlink()
    return best


def recorded(repo: Path, python: Path, path: str, out: Path) -> dict[str, Any]:
    """One raw recording with the cyclic garbage collector off, normalised for comparing."""
    env = wb.pytest_env(repo)
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], path])
    args = ["-p", "agentgate.witness", "--agentgate-witness", f"--agentgate-witness-out={out}"]
    wb.sh([str(python), "-c", NO_GC, "-q", *args], repo, env=env, check=False)
    text = re.sub(r"/tmp/[A-Za-z0-9_.-]+", "/tmp/X", out.read_text(encoding="utf-8"))
    raw: dict[str, Any] = json.loads(text)
    for key in ("started_at", "harvest_seconds", "version"):
        raw.pop(key, None)
    if not raw.get("startup"):
        raw.pop("startup", None)
    for test in raw["tests"].values():
        test.pop("duration", None)
    return raw


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    found = []
    for key in sorted(set(ours) | set(theirs)):
        if key == "contexts":
            for name in sorted(set(ours[key]) | set(theirs[key])):
                if ours[key].get(name) != theirs[key].get(name):
                    found.append(f"context {name}")
        elif ours.get(key) != theirs.get(key):
            found.append(key)
    return found


def compare(repo: Path, python: Path, here: str, there: str) -> str:
    ours = recorded(repo, python, here, repo.parent / f"{repo.name}-ours.json")
    theirs = recorded(repo, python, there, repo.parent / f"{repo.name}-theirs.json")
    units = sum(len(b) for c in ours["contexts"].values() for b in c["units"].values())
    diff = differences(ours, theirs)
    what = "identical" if not diff else f"{len(diff)} differences: {', '.join(diff[:5])}"
    return (f"{len(ours['contexts'])} contexts, {units} units, {len(ours['tests'])} tests: "
            f"{what}")


def _cell(best: dict[str, float], name: str) -> str:
    if name not in best:
        return "-"
    wall, cpu = best[name], best[f"{name} cpu"]
    if name == "plain":
        return f"{wall:.2f} / {cpu:.2f}"
    return f"{wall:.2f} / {cpu:.2f} ({wall / best['plain']:.2f}x / {cpu / best['plain cpu']:.2f}x)"


def markdown(rows: dict[str, dict[str, float]], same: dict[str, str],
             args: argparse.Namespace) -> str:
    out = [
        "# Witness recording cost", "",
        f"Machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs. Reproduce: `python bench/recording_bench.py --projects "
        f"{args.projects} --reps {args.reps}{' --baseline DIR' if args.baseline else ''}"
        f"{' --against DIR' if args.against else ''}`. "
        f"Seconds, wall / CPU, best of {args.reps}, "
        "and the ratio to the plain suite.", "",
        "| project | plain | coverage run (no contexts) | baseline --agentgate-witness | "
        "--agentgate-witness | boot |", "|---|---|---|---|---|---|",
    ]
    out += [f"| {name} | " + " | ".join(_cell(best, v) for v in VARIANTS) + " |"
            for name, best in rows.items()]
    if same:
        out += ["", "Raw recordings against another checkout's (cyclic GC off):", ""]
        out += [f"- {name}: {text}" for name, text in same.items()]
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", default=",".join(PROJECTS))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="an agentgate checkout to measure too")
    parser.add_argument("--against", type=Path, help="another agentgate checkout to compare")
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    python = mb.ensure_venv()
    work = Path(tempfile.mkdtemp(prefix="agentgate-recording-"))
    here = shim(Path(__file__).resolve().parents[1], work, "here")
    baseline = shim(args.baseline, work, "baseline") if args.baseline else ""
    rows, same = {}, {}
    for name in args.projects.split(","):
        repo = prepare(name, work)
        print(f"== {name}", flush=True)
        if args.against:
            same[name] = compare(repo, python, here, shim(args.against, work, "there"))
            print(f"   {same[name]}", flush=True)
        if args.reps:
            rows[name] = costs(repo, python, args.reps, here, baseline)
    text = markdown(rows, same, args)
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 1 if any("identical" not in t for t in same.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
