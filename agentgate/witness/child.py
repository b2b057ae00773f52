"""The recorder of a process a recording started (``children``): from its ``sitecustomize``
to its normal exit, then one flat fragment for the test that started it.

Stdlib, coverage and the recorder only, Python 3.9 syntax: it runs in every Python child of
a recording, in the project's interpreter.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
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
    # Block layouts shared with the recording's other children; not an importable name (the
    # folder is on their ``sys.path``).
    units.LAYOUTS[0] = os.path.join(folder, "agentgate-layouts")
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
    rec.check_trace()  # a sys.settrace of the child's own since its last one
    late = rec.unusable or _after_exit(rec)
    if late:
        rec.contexts["c"].flags.setdefault(children.WHY, late[:120])
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
        if "/.git/" in f"/{path}" or os.path.join(rec.root, path).startswith(recorder.AGENTGATE):
            continue  # the recorder and coverage, linked under .git for a run (``record``)
        flat["units"][path] = sorted(set(flat["units"].get(path, ())) | set(names))
        flat["flags"].setdefault(children.WHY, f"{path} imported before its recorder started")
    fragment = {
        "version": children.FRAGMENT_VERSION,
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "executable": _interpreter(),
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
    """What may still run once this exit handler returned, untraced: a thread still
    running; at the flush of the standard streams and of file objects, a stream that
    writes through anything but a file (``sys.stdout = Upper(sys.stdout)``,
    ``io.TextIOWrapper(Sink())``); at finalization, an object with a ``__del__`` written in
    Python outside the standard library and installed libraries (the repository's, the
    test's ``-c`` text), or a file object of a class of the repository; a suspended
    repository generator or coroutine (closing it runs its ``finally``). None when there
    is none."""
    if any(t is not threading.main_thread() and t.is_alive() for t in threading.enumerate()):
        return "a thread still running at the child's exit"
    for name in ("stdout", "stderr", "__stdout__", "__stderr__"):
        stream = getattr(sys, name, None)
        if stream is not None and not _plain_stream(stream):
            return f"sys.{name} is a {type(stream).__qualname__}"
    finalizes: dict[type, bool] = {}
    for obj in gc.get_objects():
        if isinstance(obj, _SUSPENDABLE):
            frame = next((f for f in (getattr(obj, a, None) for a in _FRAMES) if f), None)
            if frame is not None and rec.in_file(frame.f_code.co_filename):
                return f"a suspended {frame.f_code.co_name} at the child's exit"
            continue
        kind = type(obj)
        if kind in _STREAMS and not _plain_stream(obj):
            return f"a {kind.__name__} over {type(_under(obj)).__qualname__} at the child's exit"
        if kind not in finalizes:
            finalizes[kind] = _finalizer(kind)
        if finalizes[kind]:
            return f"{kind.__qualname__} may be finalized after the child's record"
    return None


# The io classes whose flush at exit writes through to what they wrap.
_STREAMS = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom, io.BufferedRWPair,
            io.BufferedReader)


def _under(stream: object) -> object:
    """What a stream writes through to, down to a file (or whatever is not an io class)."""
    for _ in range(8):
        if type(stream) not in _STREAMS:
            break
        stream = getattr(stream, "buffer", None) or getattr(stream, "raw", None)
    return stream


def _plain_stream(stream: object) -> bool:
    """Whether a stream's flush only writes to a file (or memory): nothing of Python runs."""
    return type(_under(stream)) in (io.FileIO, io.BytesIO, io.StringIO)


def _finalizer(kind: type) -> bool:
    """Whether finalizing an object of ``kind`` may run code no recorder sees: it has a
    ``__del__`` (a file object's closes it), and the class or one of its bases has code
    written outside the standard library and installed libraries (the repository's, the
    test's ``-c`` text: an ``io.StringIO`` whose ``close`` is overridden), or a ``__del__``
    that is neither a function nor the interpreter's own (``functools.partial``)."""
    method = getattr(kind, "__del__", None)
    if method is None:
        return False
    if not isinstance(method, (types.FunctionType, *_NATIVE)):
        return True
    return any(_written(v) for c in kind.__mro__ for v in vars(c).values())


def _written(value: object) -> bool:
    """Whether a class attribute is a function written outside the standard library,
    installed libraries and agentgate."""
    name = getattr(getattr(value, "__code__", None), "co_filename", None)
    return isinstance(name, str) and not (
        name.startswith((*recorder.STDLIB, recorder.AGENTGATE, "<frozen ")) or "-packages" in name)


_NATIVE = (types.WrapperDescriptorType, types.MethodDescriptorType, types.BuiltinFunctionType)


_SUSPENDABLE = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
_FRAMES = ("gi_frame", "cr_frame", "ag_frame")


def _interpreter() -> str:
    """The interpreter binary this process runs: the kernel's word where there is one
    (``sys.executable`` comes from argv[0], which a wrapper script exec'ing Python with
    ``exec -a "$0"`` sets to itself)."""
    with contextlib.suppress(OSError):
        return os.path.realpath(os.readlink("/proc/self/exe"))
    return os.path.realpath(sys.executable) if sys.executable else ""
