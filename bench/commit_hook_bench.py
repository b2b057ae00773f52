"""What agentgate's commit-time hook costs, beside a peer hook and git's own floor.

Builds a repository of a few thousand files (nested packages, one commit), stages a small
change, and times, as fresh processes interleaved in the same run (median of ``--runs``):

- ``agentgate hook pre-commit`` (the console script git or pre-commit calls) and
  ``agentgate hook commit-msg``, installed into a venv of their own as pre-commit does, and
  the pre-commit one again from this environment's (editable) install;
- pre-commit-hooks' ``check-added-large-files`` on the staged files (the peer: a trivial
  hook, installed into a venv under bench/_work/);
- ``git status`` (the floor: no hook can beat what git itself needs to look at the tree),
  and ``python -c pass`` in a venv and in this environment (the interpreter's start-up);
- ``python -c "import typer, git, rich.console"``: what a naive hook would add.

Then ``python -X importtime -c "import agentgate.flows.hooks"``'s top offenders, and a check
that the real hook path never imports typer, click, rich or GitPython. Figures, machine facts
and the reproduce command go to bench/commit_hook.md.

Reproduce, from the repository root:  python bench/commit_hook_bench.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "commit_hook"
REPORT = ROOT / "bench" / "commit_hook.md"
COMMAND = "python bench/commit_hook_bench.py"
HEAVY = ("typer", "click", "rich", "git")
STAGED = ("shop/pkg_03/sub_07/mod_05.py", "tests/test_pkg_03.py", "shop/pkg_03/sub_07/new.py")


def bench_env() -> dict[str, str]:
    """No GIT_* or agent variables from the calling shell; a pinned identity."""
    from_agent = {"AI_AGENT", "CLAUDECODE", "CODEX_SANDBOX", "CODEX_THREAD_ID", "GEMINI_CLI"}
    from_agent |= {"CURSOR_AGENT", "COPILOT_MODEL", "GOOSE_PROVIDER", "CLINE_ACTIVE"}
    from_agent |= {"OPENCODE", "AUGMENT_AGENT"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in from_agent}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="Bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
        NO_COLOR="1",
    )
    return env


def git(repo: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    ).stdout


# --- the repository -----------------------------------------------------------------------


def project_files(packages: int, subpackages: int, modules: int) -> dict[str, str]:
    files = {
        "pyproject.toml": '[project]\nname = "shop"\nversion = "1"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        ".agentgate/scope": "shop\ntests\n",
        "shop/__init__.py": "",
        "README.md": "bench\n",
    }
    for p in range(packages):
        files[f"shop/pkg_{p:02d}/__init__.py"] = ""
        files[f"tests/test_pkg_{p:02d}.py"] = f"def test_pkg_{p}():\n    assert True\n"
        for s in range(subpackages):
            files[f"shop/pkg_{p:02d}/sub_{s:02d}/__init__.py"] = ""
            for m in range(modules):
                files[f"shop/pkg_{p:02d}/sub_{s:02d}/mod_{m:02d}.py"] = (
                    f"from shop.pkg_{p:02d} import sub_{s:02d}\n\nVALUE = {p * s + m}\n"
                )
    return files


def build_repo(path: Path, files: dict[str, str], env: dict[str, str]) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main", env=env)
    for rel, text in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(path, "add", "-A", env=env)
    git(path, "commit", "-q", "--no-verify", "-m", "initial", env=env)


def stage_small_change(path: Path, env: dict[str, str]) -> list[str]:
    """Two edited files and a new one: what a typical small commit stages."""
    for rel in STAGED:
        with (path / rel).open("a", encoding="utf-8") as fh:
            fh.write("\nCHANGED = True\n")
    git(path, "add", "--", *STAGED, env=env)
    return list(STAGED)


# --- what is timed ------------------------------------------------------------------------


def peer_script() -> Path:
    """``check-added-large-files`` in a venv of its own (pip, from PyPI), built once."""
    target = WORK / "peer-venv"
    script = target / "bin" / "check-added-large-files"
    if not script.exists():
        venv.create(target, with_pip=True, clear=True)
        pip = [str(target / "bin" / "python"), "-m", "pip", "install", "-q", "pre-commit-hooks"]
        subprocess.run(pip, check=True)
    return script


def venv_agentgate() -> Path:
    """agentgate installed (not editable) into a venv of its own, as pre-commit installs a
    hook: the fair match for the peer. Reinstalled from the checkout on every run."""
    target = WORK / "agentgate-venv"
    python = target / "bin" / "python"
    if not python.exists():
        venv.create(target, with_pip=True, clear=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(ROOT)], check=True)
    reinstall = ["install", "-q", "--no-deps", "--force-reinstall", str(ROOT)]
    subprocess.run([str(python), "-m", "pip", *reinstall], check=True)
    return target / "bin" / "agentgate"


def agentgate_script() -> Path:
    """The console script of this interpreter's install (not a pyenv/asdf shim, whose own
    start-up would be timed too)."""
    beside = Path(sys.executable).parent / "agentgate"
    found = beside if beside.exists() else shutil.which("agentgate")
    if not found:
        sys.exit("agentgate is not installed for this interpreter: pip install -e .")
    return Path(found)


def commands(repo: Path, staged: list[str], agentgate: Path) -> dict[str, list[str]]:
    """The timed commands, in report order: the venv rows first, then this environment's."""
    message = WORK / "COMMIT_EDITMSG"
    message.write_text("small change\n", encoding="utf-8")
    peer = peer_script()
    naive = "import typer, git, rich.console"
    return {
        "agentgate hook pre-commit": [str(agentgate), "hook", "pre-commit"],
        "agentgate hook commit-msg": [str(agentgate), "hook", "commit-msg", str(message)],
        "check-added-large-files (peer)": [str(peer), *staged],
        "venv python -c pass (interpreter floor)": [str(peer.parent / "python"), "-c", "pass"],
        "git status (floor)": ["git", "status"],
        "git rev-parse HEAD (one git process)": ["git", "rev-parse", "HEAD"],
        "agentgate hook pre-commit (this env, editable)": [
            str(agentgate_script()),
            *("hook", "pre-commit"),
        ],
        "python -c pass (this env)": [sys.executable, "-c", "pass"],
        f"python -c '{naive}' (this env: a naive hook's extra)": [sys.executable, "-c", naive],
    }


def time_once(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{cmd[0]} exited {proc.returncode}: {proc.stdout!r} {proc.stderr!r}")
    return elapsed


def measure(
    cmds: dict[str, list[str]], cwd: Path, env: dict[str, str], runs: int
) -> dict[str, list[float]]:
    """Each command once to warm caches, then ``runs`` rounds in a shuffled order, so a
    burst of load elsewhere on the machine lands on every command alike."""
    timings: dict[str, list[float]] = {name: [] for name in cmds}
    for cmd in cmds.values():
        time_once(cmd, cwd, env)
    order = list(cmds)
    rng = random.Random(0)
    for _ in range(runs):
        rng.shuffle(order)
        for name in order:
            timings[name].append(time_once(cmds[name], cwd, env))
    return timings


# --- where the time goes ------------------------------------------------------------------


def import_offenders(
    python: Path, env: dict[str, str], top: int = 10
) -> list[tuple[int, int, str]]:
    """(cumulative us, self us, module) of ``import agentgate.flows.hooks``, worst first."""
    proc = subprocess.run(
        [str(python), "-X", "importtime", "-c", "import agentgate.flows.hooks"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            rows.append((int(parts[1]), int(parts[0]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


_PROBE = """
import json, sys
from agentgate.cli.app import main
sys.argv = ["agentgate", "hook", "pre-commit"]
code = main()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
sys.stderr.write("PROBE " + json.dumps({{"exit": code, "heavy": heavy}}) + "\\n")
"""


def heavy_imports(python: Path, repo: Path, env: dict[str, str]) -> dict[str, object]:
    """Run the real hook entry point in-process and list typer/click/rich/git modules."""
    probe = _PROBE.format(heavy=set(HEAVY))
    proc = subprocess.run(
        [str(python), "-c", probe], cwd=repo, env=env, capture_output=True, text=True
    )
    line = next(x for x in proc.stderr.splitlines() if x.startswith("PROBE "))
    result: dict[str, object] = json.loads(line.removeprefix("PROBE "))
    return result


def git_calls(agentgate: Path, repo: Path, env: dict[str, str]) -> list[str]:
    """The git processes one ``agentgate hook pre-commit`` starts, from git's trace2 events."""
    trace = WORK / "trace2.json"
    trace.unlink(missing_ok=True)
    traced = {**env, "GIT_TRACE2_EVENT": str(trace)}
    subprocess.run([str(agentgate), "hook", "pre-commit"], cwd=repo, env=traced, check=True)
    calls = []
    for raw in trace.read_text(encoding="utf-8").splitlines():
        event = json.loads(raw)
        if event.get("event") == "start":
            calls.append(_describe(event["argv"]))
    trace.unlink()
    return calls


def _describe(argv: list[str]) -> str:
    """``git -C <repo> cat-file blob <sha>:setup.cfg`` -> ``cat-file blob <rev>:setup.cfg``:
    the first words of the call, with no machine path or object id in the report."""
    args = argv[3:] if argv[1:2] == ["-C"] else argv[1:]
    return " ".join(re.sub(r"^[0-9a-f]{40,64}", "<rev>", a) for a in args[:3])


def machine_facts() -> dict[str, str]:
    cpu = "unknown"
    if Path("/proc/cpuinfo").exists():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "nproc": str(usable),
        "cpu": cpu,
        "python": platform.python_version(),
        "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
        "platform": platform.platform(),
        "load average (1 min) before": f"{os.getloadavg()[0]:.2f}",
    }


# --- the report ---------------------------------------------------------------------------


def derived(timings: dict[str, list[float]]) -> list[str]:
    med = {name: statistics.median(values) * 1000 for name, values in timings.items()}
    hook = med["agentgate hook pre-commit"]
    start = med["venv python -c pass (interpreter floor)"]
    return [
        "The first four rows run in venvs of their own (agentgate as pre-commit installs it, "
        "the peer likewise); the `this env` rows use the development (editable) install, "
        "whose interpreter start-up also processes this environment's `.pth` files.",
        "",
        f"agentgate's own work over a venv interpreter's start-up: {hook - start:.1f} ms "
        f"(median {hook:.1f} - {start:.1f}); over the peer: "
        f"{hook - med['check-added-large-files (peer)']:+.1f} ms; over `git status`: "
        f"{hook - med['git status (floor)']:+.1f} ms.",
    ]


def busy_warning(facts: dict[str, str]) -> list[str]:
    """Medians on a shared machine measure the neighbours too: say so in the report."""
    load = float(facts["load average (1 min) before"])
    if load <= int(facts["nproc"]) / 2:
        return []
    return [
        "",
        f"**The machine was busy** (1-minute load {load:.2f} on {facts['nproc']} CPUs, from "
        "other work): medians include waiting for a CPU; the min column is closer to an idle "
        "machine's figure. Re-run on a quiet machine for clean medians.",
    ]


def render(
    timings: dict[str, list[float]],
    facts: dict[str, str],
    offenders: list[tuple[int, int, str]],
    probe: dict[str, object],
    calls: list[str],
    shape: str,
) -> str:
    runs = len(next(iter(timings.values())))
    lines = [
        "# Commit-time hook cost",
        "",
        f"Written by `{COMMAND}` on {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC. "
        f"Repository: {shape}; staged: {len(STAGED)} files (2 edited, 1 added). Each command "
        f"is a fresh process; {runs} interleaved rounds after one warm-up run each.",
        "",
        "| command | median ms | min ms | max ms |",
        "|---|---:|---:|---:|",
    ]
    for name, values in timings.items():
        ms = [v * 1000 for v in values]
        lines.append(f"| {name} | {statistics.median(ms):.1f} | {min(ms):.1f} | {max(ms):.1f} |")
    lines += ["", *derived(timings), *busy_warning(facts), "", "## Machine", ""]
    lines += [f"- {key}: {value}" for key, value in facts.items()]
    lines += [
        "",
        '## `python -X importtime -c "import agentgate.flows.hooks"` (agentgate\'s venv), top 10',
        "",
    ]
    lines += ["| cumulative us | self us | module |", "|---:|---:|---|"]
    lines += [f"| {cum} | {own} | `{mod.strip()}` |" for cum, own, mod in offenders]
    lines += [
        "",
        "`site` (and whatever `.pth` files pull in) is the interpreter's own start-up, "
        "paid by any Python hook.",
    ]
    lines += [
        "",
        f"git processes one `agentgate hook pre-commit` starts: {len(calls)} "
        f"({'; '.join(f'`git {c}`' for c in calls)}).",
    ]
    heavy = probe["heavy"] or "none"
    lines += [
        "",
        f"Heavy modules imported by the real `agentgate hook pre-commit` path (exit "
        f"{probe['exit']}): {heavy} (checked: {', '.join(HEAVY)}).",
        "",
        "## Reproduce",
        "",
        "```bash",
        "pip install -e '.[test]'",
        COMMAND + "            # --runs N, --packages P (x15 subpackages x10 modules)",
        "```",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--packages", type=int, default=20, help="x15 subpackages x10 modules")
    parser.add_argument("--no-write", action="store_true", help="print, do not write the .md")
    args = parser.parse_args()
    env = bench_env()
    WORK.mkdir(parents=True, exist_ok=True)
    repo = WORK / "repo"
    files = project_files(args.packages, 15, 10)
    build_repo(repo, files, env)
    staged = stage_small_change(repo, env)
    agentgate = venv_agentgate()
    python = agentgate.parent / "python"
    facts = machine_facts()
    timings = measure(commands(repo, staged, agentgate), repo, env, args.runs)
    facts["load average (1 min) after"] = f"{os.getloadavg()[0]:.2f}"
    shape = (
        f"{len(files)} files ({args.packages} packages x 15 subpackages x 10 modules), one commit"
    )
    offenders = import_offenders(python, env)
    probe, calls = heavy_imports(python, repo, env), git_calls(agentgate, repo, env)
    text = render(timings, facts, offenders, probe, calls, shape)
    print(text)
    if not args.no_write:
        REPORT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
