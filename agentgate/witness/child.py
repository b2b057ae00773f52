"""The recorder of a process a recording started (``children``): from its ``sitecustomize``
to its normal exit, then one flat fragment for the test that started it.

Stdlib, coverage and the recorder only, Python 3.9 syntax: it runs in every Python child of
a recording, in the project's interpreter.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
from typing import Any

from agentgate.witness import children, harvest, recorder, units


def start() -> None:
    """In a process a recording started (its ``sitecustomize``): record until it exits.
    Tracing starts with the first repository code, as in ``boot``."""
    folder, root = os.environ.get(children.FOLDER), os.environ.get(children.ROOT)
    if not folder or not root or not os.path.isdir(folder) or recorder.active() is not None:
        return
    rec = recorder.Recorder(root=root, child_folder=folder)
    rec.on_trace = lambda: _exit_after(rec)
    try:
        rec.start(lazy=True)
    except Exception:
        rec.abandon()
        return
    atexit.register(_exit, rec)


def _exit_after(rec: recorder.Recorder) -> None:
    """Once tracing started: the fragment is written before the exit handlers registered
    until then run (coverage's stops its tracer), after those registered later (the
    child's own, which run traced)."""
    atexit.unregister(_exit)
    atexit.register(_exit, rec)


def _exit(rec: recorder.Recorder) -> None:
    """At the child's normal exit: its fragment, unless it stopped being recorded (forked,
    replaced by a recording of its own)."""
    if recorder.active() is not rec or rec.child_folder is None:
        return
    rec.stop()
    found = units.by_context(rec)
    out: dict[str, Any] = {
        "contexts": harvest.context_entries(rec, found),
        "unwatched": harvest.unwatched_modules(rec, found),
        "top_names": sorted(rec.top_names),
    }
    children.merge(rec, out)  # what it started in turn
    # A library's import is see-through, its own flags the library's business
    # (``depgraph``), as in the recording process.
    flat = children.flatten(
        entry if not name.startswith("i:") or rec.import_files.get(name)
        else {**entry, "flags": {}} for name, entry in out["contexts"].items())
    # Modules imported before this recorder started ran unseen: all of each counts.
    for path, names in harvest.preloaded_blocks(rec).items():
        flat["units"][path] = sorted(set(flat["units"].get(path, ())) | set(names))
    fragment = {
        "version": children.FRAGMENT_VERSION,
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "executable": os.path.realpath(sys.executable) if sys.executable else "",
        "argv": list(getattr(sys, "orig_argv", ()) or ()) or None,
        "context": flat,
        "unwatched": out["unwatched"],
        "top_names": out["top_names"],
    }
    name = os.path.join(rec.child_folder, f"{os.getpid()}-{os.urandom(6).hex()}")
    with contextlib.suppress(OSError):
        with open(name + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(json.dumps(fragment))
        os.replace(name + ".tmp", name + ".json")
