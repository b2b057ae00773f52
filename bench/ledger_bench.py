"""How long ``ledger check`` takes on the commit-hook path: N records in a real repository.

Run: python bench/ledger_bench.py [--records 100] [--runs 21]
Prints the median and minimum of ``ledger.check`` in-process (the hook calls it in-process
when a commit touches the ledger) and of a fresh ``agentgate hook pre-commit`` process for a
commit that adds one record, next to one with no ledger change.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentgate.core import config as config_mod
from agentgate.ledger import records as ledger


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _record(test: str, today: str) -> dict[str, object]:
    return {
        "version": 1, "test": test, "verdict": "PRE_EXISTING", "state": "frozen",
        "owner": "alice", "reason": "fails under PYTHONHASHSEED=3 on main too",
        "frozen_at": today, "renewed_at": None, "freeze_until": today, "lease_until": None,
        "frozen_at_sha": "0" * 39 + "1",
        "evidence": {"base_fail": [3], "head_fail": [3], "mode": "matched",
                     "seeds": [0, 1, 2, 3], "tz": "UTC"},
        "recheck": f"agentgate attribute {test} --mode matched",
        "drill": {"k": 10, "ambient": {}},
        "history": [{"at": today, "event": "frozen"}],
    }


def build(root: Path, records: int) -> None:
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", "Bench")
    _git(root, "config", "user.email", "bench@example.com")
    today = ledger.utc_today().isoformat()
    for i in range(records):
        test_file = root / "tests" / f"test_m{i}.py"
        test_file.parent.mkdir(parents=True, exist_ok=True)
        test_file.write_text(f"def test_{i}():\n    assert True\n", encoding="utf-8")
        record = root / ".agentgate" / "freezes" / f"m{i}.json"
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(_record(f"tests/test_m{i}.py::test_{i}", today)), "utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "ledger")


def _time(func: object, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        build(root, args.records)
        config = config_mod.load(root)
        assert ledger.check(root, config) == [], "the bench's records must be valid"
        inproc = _time(lambda: ledger.check(root, config), args.runs)
        hook = [sys.executable, "-m", "agentgate", "hook", "pre-commit"]
        plain = _time(lambda: subprocess.run(hook, cwd=root, capture_output=True), args.runs)
        last = root / ".agentgate" / "freezes" / "m0.json"
        last.write_text(last.read_text("utf-8").replace("alice", "bob"), "utf-8")
        _git(root, "add", "-A")
        touched = _time(lambda: subprocess.run(hook, cwd=root, capture_output=True), args.runs)
    rows = [
        (f"ledger.check, {args.records} records (in-process)", inproc),
        ("agentgate hook pre-commit, no ledger change", plain),
        ("agentgate hook pre-commit, one record changed", touched),
    ]
    print("| what | median ms | min ms |\n|---|---:|---:|")
    for name, times in rows:
        print(f"| {name} | {statistics.median(times) * 1000:.1f} | {min(times) * 1000:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
