"""What the base inventory and the base oracle cost, next to the band's own time.

On a generated monorepo (bench/gen_monorepo.py), one range per scenario on top of the same
base, each judged by ``agentgate check``: a code-only change (touches no test: pays nothing),
a skip marker added to a test (a harmless suppression), an edited test (its base form runs),
and a changed conftest (the selection runs again under the base's harness). The inventory is
timed cold (collected in a worktree of the base) and warm (from its cache); with
``--witness``, a witness is recorded at the base first and the inventory is also timed as
read from it (no collection runs).

    python bench/oracle_bench.py [--modules 2000] [--reps 3] [--witness]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work"
sys.path.insert(0, str(HERE.parent))

from agentgate.core.paths import TestFiles  # noqa: E402
from agentgate.flows import base_contract  # noqa: E402
from agentgate.flows import check as checkrun  # noqa: E402
from agentgate.gate import checks as gate  # noqa: E402
from agentgate.git import gitio  # noqa: E402
from agentgate.run import inventory  # noqa: E402

Edit = Callable[[Path], None]


def git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    subprocess.run(["git", "-C", str(root), *args], check=True, env={**gitio.no_git_env(), **env})


def prepare(modules: int, *, witness: bool) -> Path:
    root = WORK / f"oracle-{modules}"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([sys.executable, str(HERE / "gen_monorepo.py"), str(root), "--modules",
                    str(modules)], check=True, stdout=subprocess.DEVNULL)
    git(root, "tag", "base")
    if witness:  # recorded at the base: the inventory then comes from it
        subprocess.run([sys.executable, "-m", "agentgate", "witness", "record"], cwd=root,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return root


def append(rel: str, text: str) -> Edit:
    def edit(root: Path) -> None:
        with (root / rel).open("a", encoding="utf-8") as out:
            out.write(text)
    return edit


def skip_first(root: Path) -> None:
    path = root / "tests/test_0.py"
    path.write_text("import pytest\n" + path.read_text().replace(
        "def test_0", "@pytest.mark.skip\ndef test_0"), encoding="utf-8")


SCENARIOS: dict[str, Edit] = {
    "code only": append("src/mono_core/sub0/mod0.py", "\n\ndef _bench():\n    return 1\n"),
    "skip marker on a test": skip_first,
    "edited test": append("tests/test_10.py", "\n\ndef test_10_more():\n    assert True\n"),
    "changed conftest": append("tests/conftest.py", "\nLEVEL = 1\n"),
}


def scenario(root: Path, name: str, edit: Edit) -> dict[str, Any]:
    git(root, "checkout", "-q", "-B", "bench", "base")
    edit(root)
    git(root, "commit", "-qam", name)
    shutil.rmtree(gitio.state_dir(root) / "inventory", ignore_errors=True)
    recorded = _recorded_seconds(root)
    cold = _inventory_seconds(root)
    warm = _inventory_seconds(root)
    start = time.monotonic()
    data = checkrun.check(root, "base", "HEAD").to_json()
    total = time.monotonic() - start
    results = data["results"]
    found = results.get("base_oracle") if results.get("ran") else None
    return {"scenario": name, "exit": data["exit_code"], "check_s": total,
            "band_s": results.get("duration_s", 0.0) if results.get("ran") else 0.0,
            "tests": results.get("passed", 0) + results.get("failed", 0),
            "inventory_cold_s": cold, "inventory_warm_s": warm, "inventory_witness_s": recorded,
            "oracle_s": found["duration_s"] if found else None}


def _inventory_seconds(root: Path) -> float | None:
    """The inventory's own cost for this range; None when the range touches no test."""
    checked = gate.check_range(root, "base", "HEAD")
    start = time.monotonic()
    inp = base_contract.oracle_input(root, checked, None)
    if inp is None:
        return None
    inventory.inventory(root, checked.config, checked.merge_base, inp.inventory.files)
    return time.monotonic() - start


def _recorded_seconds(root: Path) -> float | None:
    """The inventory read from a witness recorded at the base; None without one (or when
    the range touches no test)."""
    checked = gate.check_range(root, "base", "HEAD")
    start = time.monotonic()
    base_paths = gitio.ls_tree(root, checked.merge_base)
    tests = TestFiles(checked.config, checked.python_files)
    files = inventory.touched_tests(checked.changes, tests, base_paths)
    if not files or base_contract.recorded_inventory(root, checked.merge_base, files) is None:
        return None
    return time.monotonic() - start


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per field, the median over the repetitions (None stays None)."""
    out = dict(rows[0])
    for key, value in rows[0].items():
        if isinstance(value, float):
            values = sorted(r[key] for r in rows)
            out[key] = values[len(values) // 2]
    return out


def table(modules: int, rows: list[dict[str, Any]]) -> list[str]:
    def s(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"
    out = [f"Generated monorepo, {modules} modules ({modules // 11} test files):", "",
           "| range | exit | check total s | band s (tests) | inventory cold s | "
           "inventory warm s | inventory from witness s | oracle s |",
           "|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['scenario']} | {r['exit']} | {s(r['check_s'])} | {s(r['band_s'])} "
            f"({r['tests']}) | {s(r['inventory_cold_s'])} | {s(r['inventory_warm_s'])} | "
            f"{s(r['inventory_witness_s'])} | {s(r['oracle_s'])} |" for r in rows]
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--witness", action="store_true",
                        help="record a witness at the base and time the inventory from it")
    args = parser.parse_args(argv)
    root = prepare(args.modules, witness=args.witness)
    scenario(root, "warm-up", SCENARIOS["code only"])  # the first run pays the OS caches
    rows = [median_row([scenario(root, name, edit) for _ in range(args.reps)])
            for name, edit in SCENARIOS.items()]
    print("\n".join(table(args.modules, rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
