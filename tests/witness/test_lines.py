"""Before Python 3.12 the recorder keeps coverage's lines per context in memory
(``lines.LineTracer``, issue 12 item 6) instead of flushing them into coverage's SQLite data
at every switch. It must charge every line to the context it ran in, a frame that runs across
a switch included, and fall back to coverage's own ``switch_context`` when coverage's
internals are not what it expects. Real coverage, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("coverage")

MODULE = '''def first():
    x = 1
    return x


def spanning(switch):
    before = 1
    switch()
    after = before + 1
    return after


def numbers():
    yield 1
    yield 2


class Box:
    def open(self):
        return "open"


VALUE = first()
'''
SCRIPT = '''import json, os, sys
from agentgate.witness import lines, units

root, mode = sys.argv[1], sys.argv[2]
tracer = lines.LineTracer(root)
if mode == "arcs":  # coverage's data then holds arcs, not the line sets LineTracer reads
    tracer.cov.set_option("run:branch", True)
sys.path.insert(0, root)
tracer.start("c")
tracer.switch("i:1")
import mod
tracer.switch("t:a")
mod.first()
gen = mod.numbers()
next(gen)
mod.spanning(lambda: tracer.switch("t:b"))  # the frame goes on running in t:b
mod.Box().open()
tracer.switch("t:c")
next(gen)  # a generator resumed in another context
tracer.stop()

class Rec:
    tracer = None
    def __init__(self):
        self.lines = tracer
    def rel(self, path):
        full = os.path.abspath(path)
        return full[len(root) + 1:] if full.startswith(root + os.sep) else None

found = units.by_context(Rec())
print(json.dumps({"in_memory": tracer.by_context is not None, "units": found}))
'''
EXPECTED = {
    "i:1": {"mod.py": ["<module>", "first"]},
    "t:a": {"mod.py": ["first", "numbers", "spanning"]},
    "t:b": {"mod.py": ["Box.open", "spanning"]},
    "t:c": {"mod.py": ["numbers"]},
}


def _record(tmp_path: Path, mode: str) -> dict[str, object]:
    (tmp_path / "mod.py").write_text(MODULE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), mode],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_lines_kept_in_memory_go_to_the_context_they_ran_in(tmp_path: Path) -> None:
    found = _record(tmp_path, "lines")
    assert found["in_memory"] is True
    assert found["units"] == EXPECTED


def test_coverage_internals_it_does_not_expect_fall_back_to_switch_context(
    tmp_path: Path,
) -> None:
    """With arcs in coverage's data the canary refuses the in-memory path; coverage's own
    contexts then give the same blocks."""
    found = _record(tmp_path, "arcs")
    assert found["in_memory"] is False
    assert found["units"] == EXPECTED
