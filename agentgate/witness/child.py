"""The recorder of a process a recording started (``children``): from its ``sitecustomize``
to its normal exit, then one flat fragment for the test that started it.

Stdlib, coverage and the recorder only, Python 3.9 syntax: it runs in every Python child of
a recording, in the project's interpreter.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import sys
import threading
import types
from typing import Any

from agentgate.witness import children, harvest, recorder, units


def start() -> None:
    """In a process a recording started (its ``sitecustomize``): record until it exits.
    Tracing starts with the first repository code, as in ``boot``."""
    folder, root = os.environ.get(children.FOLDER), os.environ.get(children.ROOT)
    if not folder or not root or not os.path.isdir(folder) or recorder.active() is not None:
        return
    rec = recorder.Recorder(root=root, child_folder=folder)
    rec.on_trace = lambda: _keep_tracing(rec)
    try:
        rec.start(lazy=True)
    except Exception:
        rec.abandon()
        return
    # Registered before anything of the child's: run after every exit handler it
    # registers (``logging``'s shutdown flushing a repository's handler), all traced.
    atexit.register(_exit, rec)


def _keep_tracing(rec: recorder.Recorder) -> None:
    """coverage stops its tracer in an exit handler of its own, registered as it starts,
    so run before ``_exit``: the handlers in between would run unseen. ``_exit`` stops it."""
    handler = getattr(getattr(rec.lines, "cov", None), "_atexit", None)
    if handler is not None:
        atexit.unregister(handler)


def _exit(rec: recorder.Recorder) -> None:
    """At the child's normal exit: its fragment, unless it stopped being recorded (forked,
    replaced by a recording of its own)."""
    if recorder.active() is not rec or rec.child_folder is None:
        return
    late = _after_exit(rec)
    if late:
        rec.contexts["c"].flags.setdefault(children.WHY, late)
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
    # Modules imported before this recorder started ran unseen, and what they read
    # (``python -W error::app.warn.W`` imports app.warn before ``site``): all of each
    # counts, and the test is incomplete.
    for path, names in harvest.preloaded_blocks(rec).items():
        flat["units"][path] = sorted(set(flat["units"].get(path, ())) | set(names))
        flat["flags"].setdefault(children.WHY, f"{path} imported before its recorder started")
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


def _after_exit(rec: recorder.Recorder) -> str | None:
    """What of the repository may still run once this exit handler returned, untraced: a
    thread still running; at the flush of the standard streams, one that is an object of a
    class of the repository; at finalization, an object of such a class that has a
    finalizer (``__del__`` of its own or inherited, a file object's ``close``), and a
    suspended repository generator or coroutine (closing it runs its ``finally``). None
    when there is none."""
    if any(t is not threading.main_thread() and t.is_alive() for t in threading.enumerate()):
        return "a thread still running at the child's exit"
    classes: dict[type, bool] = {}

    def of_repository(kind: type) -> bool:
        if kind not in classes:
            classes[kind] = any(_defined_in(rec, c) for c in kind.__mro__)
        return classes[kind]

    for name in ("stdout", "stderr", "stdin", "__stdout__", "__stderr__"):
        if of_repository(type(getattr(sys, name, None))):
            return f"sys.{name} is a {type(getattr(sys, name)).__qualname__}"[:120]
    for obj in gc.get_objects():
        if isinstance(obj, _SUSPENDABLE):
            frame = next((f for f in (getattr(obj, a, None) for a in _FRAMES) if f), None)
            if frame is not None and rec.in_file(frame.f_code.co_filename):
                return f"a suspended {frame.f_code.co_name} at the child's exit"[:120]
            continue
        kind = type(obj)
        # File objects have the ``__del__`` that closes them (``io.IOBase``).
        if kind not in classes and hasattr(kind, "__del__") and of_repository(kind):
            return f"{kind.__qualname__} may be finalized after the child's record"[:120]
        classes.setdefault(kind, False)
    return None


def _defined_in(rec: recorder.Recorder, kind: type) -> bool:
    """Whether a class comes from the repository: its module's file, or a function of it."""
    module = sys.modules.get(getattr(kind, "__module__", "") or "")
    if module is not None and rec.rel(harvest.module_file(kind.__module__, module)):
        return True
    return any(rec.in_file(getattr(getattr(v, "__code__", None), "co_filename", None))
               for v in vars(kind).values())


_SUSPENDABLE = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
_FRAMES = ("gi_frame", "cr_frame", "ag_frame")
