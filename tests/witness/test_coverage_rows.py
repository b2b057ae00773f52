"""Before Python 3.12 the recording reads coverage's lines per context in one query over its
data (``units._units_from_bits``, the cheaper path of issue 12 item 6) instead of one query
per file. Both must give the same blocks per context, on real coverage data from a real
coverage run in a subprocess; data with arcs takes the public path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("coverage")

MODULE = '''import os

def first():
    x = 1
    return x


def second(n):
    total = 0
    for i in range(n):
        total += i
    return total


class Box:
    def open(self):
        return "open"

    def close(self):
        return second(3)


VALUE = first()
'''
SCRIPT = '''import contextlib, json, os, sys
import coverage
from agentgate.witness import units

root, branch = sys.argv[1], sys.argv[2] == "1"

class Rec:
    def rel(self, path):
        full = os.path.abspath(path)
        return full[len(root) + 1:] if full.startswith(root + os.sep) else None

cov = coverage.Coverage(data_file=None, config_file=False, branch=branch, source=[root])
with contextlib.suppress(Exception):
    cov.set_option("run:core", "ctrace")
sys.path.insert(0, root)
cov.start()
cov.switch_context("i:1")
import mod
cov.switch_context("t:a")
mod.second(4)
cov.switch_context("t:b")
mod.Box().close()
mod.Box().open()
cov.switch_context("")
mod.first()
cov.stop()
data = cov.get_data()
fast = units._units_from_bits(Rec(), data)
public = units._units_from_contexts(Rec(), data)
print(json.dumps({"fast": fast, "public": public}))
'''


def _units(tmp_path: Path, *, branch: bool) -> dict[str, object]:
    (tmp_path / "mod.py").write_text(MODULE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), "1" if branch else "0"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_one_query_over_coverage_data_gives_the_blocks_of_one_query_per_file(
    tmp_path: Path,
) -> None:
    found = _units(tmp_path, branch=False)
    assert found["fast"] == found["public"]
    assert found["public"] == {
        "i:1": {"mod.py": ["<module>", "first"]},
        "t:a": {"mod.py": ["second"]},
        "t:b": {"mod.py": ["Box.close", "Box.open", "second"]},
        "c": {"mod.py": ["first"]},
    }


def test_data_with_arcs_takes_the_public_path(tmp_path: Path) -> None:
    found = _units(tmp_path, branch=True)
    assert found["fast"] is None and found["public"]
