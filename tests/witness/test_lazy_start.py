"""``witness record``'s recorder starts before pytest is imported, but its tracer only when
repository code is about to run (``Recorder.start(lazy=True)``): pytest's own start-up then
costs nothing extra. Whatever way the repository's code first runs -- an import, or a file
run from its path by a library (``runpy``, ``importlib``'s ``exec_module``), which no import
of the repository precedes -- it must run traced, never unseen and uncharged. Real coverage
and real imports, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("coverage")

HELPER = "def setup():\n    return 1\n\n\nVALUE = setup()\n"
SCRIPT = '''import importlib.util, json, os, runpy, sys
from agentgate.witness import recorder, units

root, how = sys.argv[1], sys.argv[2]
rec = recorder.Recorder(root=root)
rec.start(lazy=True)
import xml.dom.minidom  # a library: none of the repository's code runs
early = rec.tracing
path = os.path.join(root, "helper.py")
if how == "import":
    sys.path.insert(0, root)
    import helper
elif how == "run_path":
    runpy.run_path(path)
else:  # a module made from a path, never in sys.modules
    spec = importlib.util.spec_from_file_location("anonymous", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
rec.adopt(ambient=(), out=None)
rec.stop()
found = units.by_context(rec)
ran = sorted({b for files in found.values() for b in files.get("helper.py", ())})
print(json.dumps({"early": early, "ran": ran, "preloaded": sorted(rec.preloaded)}))
'''


@pytest.mark.parametrize("how", ["import", "run_path", "exec_module"])
def test_the_repositorys_first_code_runs_traced(tmp_path: Path, how: str) -> None:
    (tmp_path / "helper.py").write_text(HELPER, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), how],
                          capture_output=True, text=True, check=False, cwd=tmp_path.parent)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["early"] is False  # a library's import does not start the tracer
    assert found["ran"] == ["<module>", "setup"]
    assert found["preloaded"] == []


def test_code_compiled_from_a_string_does_not_start_the_tracer(tmp_path: Path) -> None:
    """``typing`` and ``dataclasses`` compile ``<string>`` code at many imports: a name that
    is no file is not the repository's, even when run from the repository's folder."""
    script = ("from agentgate.witness import recorder\n"
              "import os, sys\n"
              "rec = recorder.Recorder(root=os.getcwd())\n"
              "rec.start(lazy=True)\n"
              "exec(compile('x = 1', '<string>', 'exec'))\n"
              "print(rec.tracing)\n"
              "rec.abandon()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
