"""Wall time of ``agentgate attribute`` versus a bare shell loop of the same pytest runs.

Builds a throwaway repository (base and head commits of a small package and one test), then,
in the same process and one after another, times:

- ``agentgate attribute NODE --mode swept --runs N`` (N seeds on both trees: 2N pytest runs)
  with ``--serial`` and with ``--jobs J``, cached worktrees (the first, cold, run is reported
  on its own);
- a bash ``for`` loop running the very same 2N pytest command lines (built by
  ``attribution.runs.pytest_args``/``run_env``) serially, and the same lines through
  ``xargs -P J``.

The difference is attribute's own cost: git, worktree refresh, JUnit parsing, statistics.

    python bench/attribute_bench.py [--seeds 10] [--jobs N] [--reps 3] [--write bench/attribute.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentgate.attribution.runs import Harness, Tree, find_inifile, prepare_scratch, pytest_args
from agentgate.attribution.runs import run_env as pinned_env
from agentgate.core import config as config_mod
from agentgate.git import worktrees
from agentgate.run import interp

NODE = "tests/test_core.py::test_pick"
FILES = {
    "app/__init__.py": "",
    "app/core.py": "def pick(items):\n    return max(set(items))\n",
    "tests/__init__.py": "",
    "tests/test_core.py": (
        "from app.core import pick\n\n"
        "def test_pick():\n    assert pick(['apple', 'pear']) == 'pear'\n"
    ),
}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    out = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                         text=True, env=env)
    return out.stdout.strip()


def make_repo(root: Path) -> tuple[str, str]:
    git(root.parent, "init", "-q", "-b", "main", str(root))
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-b", "patch")
    (root / "README.md").write_text("a patch\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "patch")
    return base, git(root, "rev-parse", "HEAD")


def attribute_cmd(seeds: int, jobs: int | None) -> list[str]:
    cmd = [sys.executable, "-m", "agentgate", "attribute", NODE, "--base", "main",
           "--mode", "swept", "--runs", str(seeds), "--format", "json"]
    return [*cmd, "--serial"] if jobs is None else [*cmd, "--jobs", str(jobs)]


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"{shlex.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    if "attribute" in cmd:
        verdict = json.loads(proc.stdout)["verdict"]
        assert verdict == "NO_REPRO", verdict
    return took


def shell_lines(root: Path, shas: dict[str, str], seeds: int, scratch: Path) -> list[str]:
    """One complete shell command per pytest run: cd, pinned env, the same argv."""
    config = config_mod.load(root)
    harness = Harness(config=config, python=interp.project_python(root, config), nodeid=NODE,
                      scratch=scratch, timeout=600.0)
    empty = prepare_scratch(harness)
    lines = []
    for seed in range(seeds):
        for name, sha in shas.items():
            path = worktrees.path_for(root, sha)
            tree = Tree(name, sha, path, find_inifile(path, NODE, empty))
            env = pinned_env(harness, tree, seed)
            keep = {k: env[k] for k in ("PYTHONHASHSEED", "TZ", "LC_ALL", "PYTHONPATH",
                                        "PYTHONNOUSERSITE")}
            argv = [harness.python, *pytest_args(harness, tree, scratch / f"{name}-{seed}.xml")]
            assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in keep.items())
            lines.append(f"cd {shlex.quote(str(path))} && env {assigns} {shlex.join(argv)}"
                         " >/dev/null 2>&1")
    return lines


def shell_loop(lines: list[str], scratch: Path, jobs: int | None) -> float:
    script = scratch / "runs.sh"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if jobs is None:
        cmd = ["bash", "-c", f"while IFS= read -r line; do bash -c \"$line\"; done < {script}"]
    else:
        cmd = ["bash", "-c", f"tr '\\n' '\\0' < {script} | xargs -0 -P {jobs} -n 1 bash -c"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def measure(seeds: int, jobs: int, reps: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="attribute-bench-") as tmp:
        root = Path(tmp) / "repo"
        base, head = make_repo(root)
        cold = timed(attribute_cmd(seeds, jobs), root)  # creates both worktrees
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        lines = shell_lines(root, {"base": base, "head": head}, seeds, scratch)
        rows: dict[str, list[float]] = {k: [] for k in
                                        ("attribute serial", "shell loop serial",
                                         f"attribute --jobs {jobs}", f"xargs -P {jobs}")}
        for _ in range(reps):  # interleaved, so drift in machine load hits every row alike
            rows["attribute serial"].append(timed(attribute_cmd(seeds, None), root))
            rows["shell loop serial"].append(shell_loop(lines, scratch, None))
            rows[f"attribute --jobs {jobs}"].append(timed(attribute_cmd(seeds, jobs), root))
            rows[f"xargs -P {jobs}"].append(shell_loop(lines, scratch, jobs))
        return {"cold": cold, "rows": rows, "example": lines[0]}


def report(result: dict[str, object], seeds: int, jobs: int, reps: int) -> str:
    rows = result["rows"]
    assert isinstance(rows, dict)
    out = [
        f"- {2 * seeds} pytest runs ({seeds} seeds x 2 trees), {reps} repetitions, "
        f"median (min) wall seconds",
        f"- machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.2f}",
        f"- PYTEST_DISABLE_PLUGIN_AUTOLOAD={os.environ.get('PYTEST_DISABLE_PLUGIN_AUTOLOAD', '')}",
        f"- first (cold) attribute run, creating both worktrees: {result['cold']:.2f} s",
        "",
        "| what | median s | min s | per run s |",
        "|---|---|---|---|",
    ]
    for name, times in rows.items():
        median = statistics.median(times)
        out.append(f"| {name} | {median:.2f} | {min(times):.2f} | {median / (2 * seeds):.3f} |")
    out += ["", "One line of the shell loop:", "", "```", str(result["example"]), "```"]
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--write", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    text = report(measure(args.seeds, args.jobs, args.reps), args.seeds, args.jobs, args.reps)
    sys.stdout.write(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
