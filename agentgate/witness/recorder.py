"""The recording machinery: per-test contexts, a tracer, an audit hook, an import hook.

Every piece of code that runs is attributed to exactly one *context*, the innermost of:
``t:<node id>`` (a test's setup, call and teardown), ``f:<fixture>`` (a fixture's setup,
shared by every test that uses the fixture, so a session fixture set up during the first
test still counts for the last), ``i:<n>`` (the execution of one module at its first import,
whoever triggered it), ``k:<n>`` (a cached function of no arguments computing its one entry,
charged to whoever reads the entry), and ``c`` (collection and everything else). A later step
(``agentgate.witness.graph``) gives each test the contexts it depended on: its own, its
fixtures', and the imports of every file it touched. So a module first imported by test A
still counts for test B that uses it, and neither test is marked or unmarked by the order.

Audit events (PEP 578) see what coverage cannot: files opened for reading, folders listed,
and anything the witness cannot follow (subprocesses, sockets, ctypes), each attributed to
the context it happened in. An audit hook cannot be removed, so one hook is installed per
process and does nothing unless a recorder is active.

No pytest here: ``witness record`` starts a recorder before pytest is imported
(``agentgate.witness.boot``), and the plugin adopts it; the pytest hooks that feed it are in
``agentgate.witness.hooks``. Stdlib and coverage only, Python 3.9 syntax: it runs in the
project's interpreter.
"""

from __future__ import annotations

import _thread
import contextlib
import functools
import hashlib
import importlib._bootstrap as bootstrap
import importlib.util
import inspect
import json
import os
import shutil
import socket
import stat as stat_module
import struct
import subprocess
import sys
import sysconfig
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from agentgate.witness import blocks, carriers, children, harvest, lines, tracer, watch
from agentgate.witness.harvest import Context, TestRun

_ACTIVE: Recorder | None = None
_HOOK_INSTALLED = False
_ORIGINAL_FIND_AND_LOAD = bootstrap._find_and_load  # type: ignore[attr-defined]
_ORIGINAL_FIND_SPEC = bootstrap._find_spec  # type: ignore[attr-defined]
_ORIGINAL_THREAD_SETTRACE = threading.settrace
# Who connected to a listener shows only once it accepted: no audit event.
_ORIGINAL_ACCEPT = socket.socket.accept
_ORIGINAL_CONNECTS = {n: getattr(socket.socket, n) for n in ("connect", "connect_ex")}
# What multiprocessing's spawn and forkserver start their process with (no audit event);
# None where there is none (not POSIX).
_posixsubprocess: Any = sys.modules.get("_posixsubprocess")
if _posixsubprocess is None:
    with contextlib.suppress(ImportError):
        _posixsubprocess = importlib.import_module("_posixsubprocess")
_ORIGINAL_FORK_EXEC: Any = getattr(_posixsubprocess, "fork_exec", None)
# How ``subprocess.Popen`` starts a process (its own references to fork_exec, posix_spawn).
_ORIGINAL_EXECUTE_CHILD: Any = subprocess.Popen._execute_child  # type: ignore[attr-defined]
_ORIGINAL_LRU_CACHE: Any = functools.lru_cache
_ORIGINAL_OS_OPEN: Any = os.open
_ORIGINAL_SCANDIR: Any = os.scandir
try:  # a Python built without SQLite has nothing to watch
    import sqlite3
except ImportError:  # pragma: no cover - every CPython this runs on has it
    sqlite3 = None  # type: ignore[assignment]
_ORIGINAL_SQLITE_CONNECT: Any = None if sqlite3 is None else sqlite3.connect
try:  # a Python built without OpenSSL has nothing to watch
    import ssl
except ImportError:  # pragma: no cover - every CPython this runs on has it
    ssl = None  # type: ignore[assignment]
# The files each ``ssl.SSLContext`` method hands OpenSSL, which opens them in C with no audit
# event (red-team round 5: a rotated key or CA bundle skipped the tests that loaded them).
_SSL_FILES = {"load_cert_chain": ("certfile", "keyfile"),
              "load_verify_locations": ("cafile", "capath"), "load_dh_params": ("path",)}
_ORIGINAL_SSL: dict[str, Any] = {
    n: getattr(ssl.SSLContext, n) for n in _SSL_FILES
    if ssl is not None and hasattr(ssl.SSLContext, n)}
_ORIGINAL_POSIX_SPAWN: dict[str, Any] = {
    n: getattr(os, n) for n in ("posix_spawn", "posix_spawnp") if hasattr(os, n)}

_OPEN, _LIST, _DB, _PROCESS, _NETWORK, _CTYPES = "open", "list", "db", "process", "net", "ctypes"
_TRACE, _THREAD, _EVAL, _ATTACH = "trace", "thread", "eval", "attach"
_AT = "dir_fd"
_WATCHED = {
    "open": _OPEN,
    "sys.settrace": _TRACE,
    "_thread.start_new_thread": _THREAD,
    "os.listdir": _LIST,
    "os.scandir": _LIST,
    "sqlite3.connect": _DB,
    **dict.fromkeys(
        ("subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
         "os.forkpty", "os.startfile", "pty.spawn", "_winapi.CreateProcess"),
        _PROCESS,
    ),
    **dict.fromkeys(
        ("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
         "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
         "socket.gethostbyaddr", "socket.getnameinfo"),
        _NETWORK,
    ),
    **dict.fromkeys(
        ("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata",
         "ctypes.cdata/buffer", "ctypes.call_function", "ctypes.addressof", "ctypes.string_at",
         "ctypes.wstring_at", "ctypes.PyObj_FromPtr", "ctypes.get_errno", "ctypes.set_errno"),
        _CTYPES,
    ),
}
# Name lookups: what they return comes from the machine (hosts file, resolver), as the clock
# does; no code of the repository answers them.
_LOOKUPS = frozenset(
    ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
     "socket.gethostbyaddr", "socket.getnameinfo"))
# Events that compile or run code, and the argument that names where it comes from
# (``cpython.run_file``: a child run as ``python tests/helper.py``).
_RUNS = {"exec": 0, "compile": 1, "cpython.run_file": 0}
_EVENTS = frozenset(_WATCHED) | frozenset(_RUNS)
_WHY = {
    _TRACE: "replaced the trace function the witness records with",
    _THREAD: "started a thread the witness does not trace",
    _PROCESS: "ran a subprocess",
    _NETWORK: "used the network (socket)",
    _CTYPES: "called native code through ctypes",
    _EVAL: "ran evaluated text that reads past a module's attribute lookup",
    _AT: "read a path relative to a folder descriptor the witness cannot place",
    _ATTACH: "attached a SQLite database whose file the statement does not spell",
}
_TOOL, _REPO, _LIB = "tool", "repo", "lib"
STDLIB = tuple(
    os.path.join(sysconfig.get_paths()[k], "") for k in ("stdlib", "platstdlib")
)
# Files the import machinery and pytest itself read (sources, bytecode, assertion
# rewriting) are not the test's data.
_SKIP_PARTS = ("/.git/", "/__pycache__/", "/.pytest_cache/")
# Installed metadata (entry points, versions) comes from the environment, which the
# interpreter's fingerprint covers, and for the project itself from its packaging files.
_METADATA_DIRS = (".dist-info", ".egg-info")
AGENTGATE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
_PACKAGING = blocks.PACKAGING
_REL_KNOWN_MAX = 100_000


class Recorder:
    """One recording; ``plugin._enable`` adopts the one ``boot`` started, or starts one."""

    def __init__(self, *, root: str, child_folder: str | None = None) -> None:
        self.root = os.path.abspath(root)
        # A recording in a process a recording started (``children``): everything it does
        # is the starting test's, none of it pytest's start-up. The recording process gets
        # its folder for its children's fragments at ``start``.
        self.child = child_folder is not None
        self.child_folder = child_folder
        self._following: children.Following | None = None
        self.spawns: list[children.Spawn] = []
        # The repository's ``functools.lru_cache``/``cache`` wrappers made while recording:
        # emptied as each test begins (``_lru_cache``), but for the entries of functions of
        # no arguments whose computing context is known (``_Once``): those are charged to
        # each context that reads them (``_charge_hits``).
        self.caches: weakref.WeakSet[Any] = weakref.WeakSet()  # one made per call goes
        self._once: list[_Once] = []
        self.settled: set[int] = set()
        self.on_trace: Callable[[], None] | None = None
        self._prefixes = tuple({self.root + os.sep, os.path.realpath(self.root) + os.sep})
        self._roots = (self.root, os.path.realpath(self.root))
        self._links: dict[str, str | bool | None] = {}  # ``_linked``, per absolute path
        # ``rel`` of absolute paths, asked for every code object, import and file opened.
        self._rel_known: dict[str, str | None] = {}
        self.ambient_names: tuple[str, ...] = ()
        self.out: str | None = None
        self.adopted = False
        self.contexts: dict[str, Context] = {"c": Context()}
        self.import_names: dict[str, str] = {}
        # Top-level names under which repository modules were imported (``colorsys`` for a
        # colorsys.py at the top, ``app`` for app/core.py): evidence of what shadows what.
        self.top_names: set[str] = set()
        self.tests: dict[str, TestRun] = {}
        self.collected: set[str] = set()
        self.collect_errors: set[str] = set()
        self._stack: list[tuple[str, str]] = [("c", "c")]  # (context, recorded label)
        self.import_files: dict[str, str | None] = {}
        self._found: dict[str, str] = {}  # module name -> the repository file a search found
        # Module name -> the import context that loaded it (``again``).
        self._loaded_by: dict[str, str] = {}
        self._imports = 0
        # Per thread (``_busy``): the recorder's own work in one thread must not hide what
        # another thread does meanwhile (a worker reading data files while the main thread
        # switches contexts).
        self._local = threading.local()
        # The tracer's label (``_switch``) and how many imports other threads are in
        # (``thread_import``): while there are any, the label is "c".
        self._label_lock = threading.Lock()
        self._pinned = 0
        # Sockets this process bound, and how many processes had been started then
        # (``_in_process``).
        self._bound: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._spawned = 0
        self._clients: weakref.WeakSet[Any] = weakref.WeakSet()  # sockets that connected
        # Their local addresses, taken as each connected (``_connect``): a client closed and
        # collected before its server accepted is still this process's (boltons' netstring
        # test was incomplete when the weak set had lost it by then).
        self._client_names: set[tuple[Any, Any]] = set()
        self._current = "c"
        self._fixtures_now: set[str] = set()
        self._skip_callers = harvest.tool_dirs()
        # Frames that are the tooling's (``_origin``), or not the repository's code for sure
        # (``_for_the_repository``): built once, walked for every event.
        self._tool_prefixes = ("<frozen ", *self._skip_callers)
        self._not_code_prefixes = ("<", *self._skip_callers)
        self.started_at = time.time()
        self.session_ambient: dict[str, str | None] = {}
        self.preloaded: set[str] = set()
        # Import contexts started from "c" before the plugin adopted the recorder: what
        # pytest's start-up imported (``boot``), charged to every test (``depgraph``).
        self.startup: list[str] = []
        tool = tracer.free_tool()
        self.tracer: tracer.Tracer | None = None
        self.lines: lines.LineTracer | None = None
        self._tracing: tracer.Tracer | lines.LineTracer
        if tool is not None:
            self._tracing = self.tracer = tracer.Tracer(tool)
        else:  # before Python 3.12: coverage's C tracer, its lines kept per context
            self._tracing = self.lines = lines.LineTracer(self.root)
        self._trace_fn: Any = None
        self._thread = threading.get_ident()
        self._settraced: list[tuple[Context, str]] = []  # settrace calls not yet checked
        self.tracing = False
        self.unusable: str | None = None  # why tracing could not start after a lazy start
        # Attribute reads of the repository's modules (``watch``), charged to the context.
        self.watcher = watch.Watcher(self._reader_kind, self._module_read)
        # The repository's hand-written caches, emptied of what earlier tests left as each
        # test begins (``carriers``); a child's state is its own test's already.
        self.carriers = carriers.Carriers()

    @property
    def _busy(self) -> bool:
        """Whether this thread is inside the recorder's own hooks: what they do (coverage
        starting, classifying a read) is not the repository's doing."""
        return bool(getattr(self._local, "busy", False))

    @_busy.setter
    def _busy(self, value: bool) -> None:
        self._local.busy = value

    # --- lifecycle ---------------------------------------------------------------------

    def start(self, *, lazy: bool = False, scratch: str | None = None) -> None:
        """Record from here on, in context "c". Raises ``lines.NoContexts`` when coverage's
        core cannot tell contexts apart: every line would count for the wrong test.

        ``lazy`` (``boot``): the contexts, audit and import hooks now, the tracer only when
        repository code is about to run (``wake``): a module of the repository found for an
        import, or code compiled or executed from a repository file. Until then nothing of
        the repository can run, and pytest's own start-up runs untraced. ``scratch``: where
        the children's folder goes (default: the system temp folder)."""
        global _ACTIVE
        if _ACTIVE is not None and _ACTIVE is not self and _ACTIVE.child:
            _ACTIVE.abandon()  # a child that records on its own writes no fragment
        if lazy:
            self.preloaded = self._imported()
        else:
            self._trace()
        if not self.child:
            self._following = children.Following(self.root, scratch)
            self.child_folder = self._following.folder
        _install_hooks()
        _ACTIVE = self

    def _trace(self) -> None:
        self._tracing.start(self._current)
        self.tracing = True
        for name, module in list(sys.modules.items()):
            self._watch(name, module)
        self.watcher.start()
        # Taken once tracing runs, so a module imported in between counts as unseen.
        self.preloaded |= self._imported()
        if self.lines is not None:
            self._trace_fn = sys.gettrace()
        if self.on_trace is not None:
            self.on_trace()  # a child's: its exit comes before coverage's (``child``)

    def wake(self) -> None:
        """Repository code is about to run: trace from here on (after a lazy start)."""
        if self.tracing or self.unusable:
            return
        if threading.get_ident() != self._thread:
            # coverage would trace this thread and new ones, never the tests' thread.
            self.unusable = ("--agentgate-witness: a thread started repository code before "
                             "pytest ran any test; record without that thread")
            return
        self._busy = True  # coverage imports as it starts: not the repository's imports
        try:
            self._trace()
        except lines.NoContexts:
            self.unusable = lines.NO_CONTEXTS  # the plugin refuses at adoption
        except Exception as exc:  # coverage could not start here (runpy of a folder)
            self.unusable = f"--agentgate-witness: tracing could not start: {exc!r}"[:200]
        finally:
            self._busy = False

    def check_trace(self) -> None:
        """Whether a ``sys.settrace`` since the last check replaced the tracer: every context
        that called it ran unseen since; else each one put the same function back (doctest).
        At each test's end (``_retrace``), and at a child's exit."""
        if self._trace_fn is not None and sys.gettrace() is not self._trace_fn:
            self._untraced()
        else:
            self._settraced.clear()

    def holds(self, spec: Any) -> bool:
        """Whether an import found a module (or a namespace package) in the repository."""
        origin = getattr(spec, "origin", None) if getattr(spec, "has_location", False) else None
        places = [origin, *(getattr(spec, "submodule_search_locations", None) or ())]
        return any(isinstance(p, str) and self.rel(p) is not None for p in places)

    def in_file(self, name: object) -> bool:
        """Whether code named ``name`` (a code object's file name, a ``compile`` argument)
        comes from a repository file: not ``<string>``, ``<frozen ...>`` and the like, which
        ``rel`` would take for relative paths (typing compiles ``<string>`` at any import)."""
        if isinstance(name, bytes):
            name = os.fsdecode(name)
        elif isinstance(name, os.PathLike):
            name = os.fspath(name)
        return isinstance(name, str) and not name.startswith("<") and self.rel(name) is not None

    def _imported(self) -> set[str]:
        return {r for r in map(self.rel, harvest.module_files()) if r}

    def adopt(self, *, ambient: tuple[str, ...], out: str | None) -> None:
        """The plugin takes the recording over: what was imported so far was pytest's
        start-up."""
        self.wake()
        self.adopted = True
        self.ambient_names = ambient
        self.out = out
        self.session_ambient = {n: os.environ.get(n) for n in ambient}
        self.startup = list(self.contexts["c"].imports)

    def stop(self) -> None:
        global _ACTIVE
        _ACTIVE = None
        self.watcher.stop()
        for owner, attribute, original, _watched in _REPLACED:
            setattr(owner, attribute, original)
        if self.tracing:
            self._tracing.stop()
        if self._following is not None:
            self._following.stop()  # the folder stays until the harvest read it (``done``)

    def done(self) -> None:
        """The harvest has read the children's fragments."""
        if self._following is not None:
            self._following.remove()

    def abandon(self) -> None:
        if _ACTIVE is self:
            self.stop()
            self.done()

    # --- contexts ----------------------------------------------------------------------

    def push(self, ctx: str) -> None:
        if self._once:
            self._charge_hits()
        self._switch(ctx)
        self._stack.append((ctx, ctx))
        self.contexts.setdefault(ctx, Context())
        self.watcher.changed()

    def pop(self, ctx: str) -> None:
        if self._once:
            self._charge_hits()
        while len(self._stack) > 1:
            top, _ = self._stack.pop()
            if top == ctx:
                break
        self.watcher.changed()
        self._switch(self._stack[-1][1])

    def _switch(self, label: str) -> None:
        if label == self._current:
            return
        if not self.tracing:
            self._current = label  # the tracer starts in it (``wake``)
            return
        with self._label_lock:
            self._current = label
            if not self._pinned:  # else the tracer stays in "c" (``thread_import``)
                self._label(label)

    def _label(self, label: str) -> None:
        """The tracer's label, one for every thread; under ``_label_lock``."""
        self._busy = True
        try:
            self._tracing.switch(label)
        finally:
            self._busy = False

    @property
    def context(self) -> Context:
        return self.contexts[self.context_name]

    @property
    def context_name(self) -> str:
        """Where this thread's events go. In the tests' thread, its innermost context. In
        another thread, "c" while it imports (``thread_import``), else the test or fixture
        running now: not an import the tests' thread is in, which may be a library's, whose
        flags and reads no test would inherit."""
        if threading.get_ident() == self._thread:
            return self._stack[-1][0]
        if getattr(self._local, "importing", 0):
            return "c"
        return next(c for c, _ in reversed(list(self._stack)) if c[:2] not in ("i:", "k:"))

    def _outside(self) -> bool:
        """Whether an event happens outside any test, fixture or import: in the tests'
        thread, in "c" (pytest's start-up, collection). Another thread is no start-up's: a
        thread a test left running reads and spawns for the tests that run after it. In a
        child (``children``) nothing is: all of it is the test's that started it."""
        return (self._stack[-1][0] == "c" and threading.get_ident() == self._thread
                and not self.child)

    def begin_import(self, name: str) -> str:
        self._imports += 1
        ctx = f"i:{self._imports}"
        self.context.imports.append(ctx)
        self.import_names[ctx] = name
        self.carriers.mark(ctx)
        self.push(ctx)
        return ctx

    def end_import(self, ctx: str, name: str) -> None:
        self.pop(ctx)
        module = sys.modules.get(name)
        path = self._watch(name, module)
        if module is None and path is None:
            # The import failed (``try: import app.bad`` / ``except ImportError``): its code
            # still ran, and it is the repository file its spec named, not a library's
            # see-through import whose flags are the library's business.
            path = self._found.get(name)
        self.import_files[ctx] = path
        if module is not None:
            self._loaded_by.setdefault(name, ctx)
        self.carriers.settle(ctx)  # what the module registered as it loaded stays

    def cache_miss(self, once: _Once, func: Any, args: Any, kwargs: Any) -> Any:
        """A function of no arguments computes its cache's one entry: in a context of its
        own (``k:<n>``), charged to the context that asked, and to every context that reads
        the entry later (``_charge_hits``), as an import is charged to every importer. So
        the entry is not emptied as each test begins: Markdown's tests each rescanned every
        installed distribution for its extensions' entry points. Anywhere else than the
        tests' thread, or in a child (whose whole run is one test's), the entry is emptied
        as before."""
        if (self._busy or self.child or not self.tracing
                or threading.get_ident() != self._thread):
            once.forget(self)
            return func(*args, **kwargs)
        self._imports += 1
        ctx = f"k:{self._imports}"
        self.context.imports.append(ctx)
        self.push(ctx)
        try:
            result = func(*args, **kwargs)
        except BaseException:
            once.forget(self)  # nothing cached
            raise
        finally:
            self.pop(ctx)
        once.known(self, ctx)
        return result

    def _charge_hits(self) -> None:
        """Entries read from their cache since the last switch were read by the context
        running until now (hit counts move only on reads; ``cache_clear`` resets them)."""
        imports = self.contexts[self._stack[-1][0]].imports
        for once in list(self._once):
            wrapper = once.wrapper()
            if wrapper is None:
                self._once.remove(once)
                continue
            hits = wrapper.cache_info().hits
            if hits != once.hits:
                once.hits = hits
                if once.ctx is not None and once.ctx not in imports:
                    imports.append(once.ctx)

    def again(self, name: str, module: Any) -> bool:
        """An import of a module that is loaded already (``importlib.import_module`` always
        asks the import system, even then): nothing of it runs, so instead of a new import
        context (a tracer switch, a cache scan: Markdown imports its extensions by name for
        every test) the context that loaded it counts as imported here, as a new one would
        have counted for its file. False when the recorder did not see it load (pytest's
        start-up loaded it) or it is still loading: the import is followed as any other."""
        first = self._loaded_by.get(name)
        if first is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
            return False
        imports = self.context.imports
        if first not in imports:
            imports.append(first)
        return True

    def thread_import(self, name: str, import_: Any) -> Any:
        """A first import in another thread than the tests' one. It cannot have a context of
        its own: the tracer's label is one for all threads, and the tests' thread switches it
        as tests, fixtures and its own imports begin and end. So while any thread imports,
        the label stays "c", which every test depends on: the module's code, whatever it
        called, and whatever every other thread ran meanwhile count for every test (a later
        test using the module depends on its module code with no import context to say so),
        and so do the files the importing thread opened. The module gets the watched class
        like any other."""
        local = self._local
        with self._label_lock:
            self._pinned += 1
            if self._pinned == 1 and self.tracing:
                self._label("c")
        local.importing = getattr(local, "importing", 0) + 1
        try:
            return _ORIGINAL_FIND_AND_LOAD(name, import_)
        finally:
            local.importing -= 1
            with self._label_lock:
                self._pinned -= 1
                if not self._pinned and self.tracing:
                    self._label(self._current)
            self._busy = True
            try:
                self._watch(name, sys.modules.get(name))
            finally:
                self._busy = False

    def _watch(self, name: str, module: Any) -> str | None:
        """The repository path of an imported module (None: not the repository's), which
        gets the watched class (``watch``) once tracing runs."""
        file = harvest.module_file(name, module)
        path = self.rel(file)
        if path is not None:
            self.top_names.add(name.partition(".")[0])
        if path is not None and not str(file).startswith(AGENTGATE):
            if self.tracing:
                self.watcher.watch(module, path, harvest.alias_parents(self.rel, name, path))
            self.carriers.module(module)
        return path

    def _reader_kind(self, code: Any) -> int:
        """Whose code read a module attribute (``watch.Watcher``)."""
        name = code.co_filename
        if name.startswith("<doctest "):
            return watch.COUNT  # a doctest's examples are the test's own code
        if name.startswith(("<frozen ", AGENTGATE)):
            return watch.SKIP  # the import system (import statements), agentgate
        if name.startswith("<"):
            # Evaluated text (``eval``, ``exec``, dataclasses' generated methods): whoever
            # ran it decides. ``rel`` would take ``<string>`` for a file of the repository.
            return watch.THROUGH
        installed = "-packages" in name  # also inside the tree (a .venv)
        if not installed and self.rel(name) is not None:
            # The repository's, even where it is pluggy itself (pytest runs the repository's
            # src/pluggy): skipping it as tooling would hide its computed reads.
            return watch.REPO_TOP
        if name.startswith(self._skip_callers):
            return watch.SKIP  # pytest, pluggy: collection and hook discovery
        if installed:
            return watch.COUNT  # a library
        if name.startswith("<") or name.startswith(STDLIB):
            return watch.THROUGH  # the standard library, generated code (dataclasses)
        return watch.COUNT

    def _module_read(self, path: str, name: str) -> None:
        self.context.reads.setdefault(path, set()).add(name)

    def missed(self, name: str, path: Any, frame: Any) -> None:
        """An import found no module ``name`` on ``path`` (sys.path when None): the places it
        looked are what the context depends on, so a module appearing there reruns it.
        Outside any test, only the repository's own probes count (not pytest's)."""
        if self._outside() and self._origin(_past_imports(frame)) != _REPO:
            return
        last = name.rpartition(".")[2]
        for entry in list(sys.path if path is None else path):
            if isinstance(entry, str):
                stem = self.rel(os.path.join(entry or ".", last))
                if stem not in (None, "."):
                    self.context.missing.add(stem)

    def passed_over(self, name: str, path: Any, spec: Any, frame: Any) -> None:
        """An import found its module after trying the places before it: the entries of
        ``sys.path`` (``path``: the package's folders) searched first, and, next to a
        source module, the package or extension module of that name that would win over it
        in its own folder. A module a patch adds at one of those places captures every later
        import of the name (``tests/colorsys.py`` for ``import colorsys``, ``tests/app.py``
        for ``import app``, ``app/helpers/__init__.py`` beside ``app/helpers.py``), whichever
        test made the first import and whoever imports it after from ``sys.modules``: they
        count for every test ("c"), pytest's own imports included (a ``json.py`` added at
        the top is imported by pytest itself). A namespace package is found only where no
        entry has a module of that name: every entry counts. A built-in or frozen module is
        found before any folder is searched."""
        origin = getattr(spec, "origin", None) if getattr(spec, "has_location", False) else None
        portions = getattr(spec, "submodule_search_locations", None)
        if origin is None and portions is None:
            return  # built-in, frozen, or a loader's own: no folder played a part
        missing = self.contexts["c"].missing
        if origin is None:
            # A namespace package: a file added anywhere below it names its folder too
            # (``patch._appeared``), so not for every test but for its importer's context
            # (not its own import's, which belongs to its parent package's file); a later
            # import from ``sys.modules`` is not seen (``missed``'s rule).
            if self._outside() and self._origin(_past_imports(frame)) != _REPO:
                return
            stack = list(self._stack)
            own = (threading.get_ident() == self._thread and len(stack) > 1
                   and self.import_names.get(stack[-1][0]) == name)
            missing = (self.contexts[stack[-2][0]] if own else self.context).missing
        last = name.rpartition(".")[2]
        found = None
        if isinstance(origin, str):
            found = os.path.dirname(os.path.abspath(origin))
            if portions is not None:  # a package: found at its folder's parent
                found = os.path.dirname(found)
            elif origin.endswith((".py", ".pyc")):
                stem = self.rel(os.path.join(found, last))
                if stem not in (None, "."):
                    missing.add(stem)
        for entry in list(sys.path if path is None else path):
            if not isinstance(entry, str):
                continue
            full = os.path.abspath(entry or ".")
            if found is not None and full in (found, os.path.realpath(found)):
                break
            stem = self.rel(os.path.join(full, last))
            if stem not in (None, "."):
                missing.add(stem)

    # --- audit events --------------------------------------------------------------------

    def on_event(self, kind: str, event: str, args: tuple[Any, ...], frame: Any) -> None:
        outside = self._outside()
        if kind in (_TRACE, _THREAD) and (self.tracer is not None or not self.tracing):
            # sys.monitoring: another tool's trace function hides nothing from it, and it
            # sees every thread; before the tracer starts there is nothing to hide (starting
            # it replaces any other).
            return
        if kind in (_TRACE, _THREAD) and self._traced_thread(kind, frame):
            return
        if kind == _TRACE and threading.get_ident() == self._thread:
            self._settrace(event, args, frame)
            return
        if kind == _PROCESS:
            self._spawned += 1
            if self.child and event == "os.exec":
                children.exec_record(self.child_folder)
            if getattr(self._local, "spawning", 0):
                return  # a start ``_follow`` notes (``spawned``) once it has the pid
        elif kind == _NETWORK and self._in_process(event, args):
            return
        if kind in _WHY:
            # Inside a test, fixture or import, whoever spawns does it for that context
            # (pytester's subprocess runs count). Outside, only the repository's own code
            # counts: a third-party plugin probing the machine at startup is no test's doing.
            if not outside or self._origin(frame) == _REPO:
                self.context.flags.setdefault(_WHY[kind], _describe(event, args))
            return
        given = (kind, args[0]) if args and type(args[0]) is str else None
        context = self.context
        if given is not None and (given in context.charged or self._nothing_to_charge(
                kind, given[1])):
            return  # charged here already, or nothing to charge, whoever reads it now
        origin = self._origin(frame)
        if outside and origin == _LIB and self._for_the_repository(frame):
            origin = _REPO
        if origin == _TOOL or (outside and origin != _REPO):
            return
        if kind == _OPEN and not _reads(args):
            return
        path = args[0] if args else None
        if kind == _LIST and path is None:
            path = "."
        if isinstance(path, int):  # ``os.listdir(fd)``, ``os.scandir(fd)``: the folder's path
            path = _descriptor_path(path)
            if path is None:
                self.context.flags.setdefault(_WHY[_AT], _describe(event, args))
                return
        if (kind == _OPEN and _is_metadata(path)) or (kind == _LIST and _metadata_search(frame)):
            # Installed metadata, and the search for it: ``importlib.metadata`` lists every
            # ``sys.path`` folder (the root, ``src``) for its ``*.dist-info``/``*.egg-info``
            # names, which installing makes from the packaging files; counting the listing
            # tied every entry-point test to every file added at the root (new-user trial,
            # Markdown). A metadata folder committed to the tree changes the packaging
            # files' node instead (``patch``).
            context.opened.update(_PACKAGING)
            if given is not None:
                context.charged.add(given)
            return
        if kind == _DB:
            path = _database_file(path)
        rel = self.rel(path)
        target = self._linked(path)
        found = context.listed if kind == _LIST else context.opened
        for name in {rel, target} - {None}:
            if name is not None and not name.endswith(".pyc") and not any(
                    p in f"/{name}/" for p in _SKIP_PARTS):
                found.add(name)
        if given is not None and kind in (_OPEN, _LIST) and rel is not None and (
                os.path.isabs(given[1])):  # a relative path's meaning changes with the folder
            context.charged.add(given)

    def _nothing_to_charge(self, kind: str, path: str) -> bool:
        """Whether a read or listing of this absolute path charges nothing whoever makes it:
        outside the repository, no link into it, no installed metadata (``entry_points()``
        stats every ``sys.path`` folder, for every call)."""
        return (kind in (_OPEN, _LIST) and os.path.isabs(path) and self.rel(path) is None
                and not _is_metadata(path) and self._linked(path) is None)

    def _linked(self, path: Any) -> str | None:
        """Where a path leads in the repository when it, or a folder on the way, is a
        symbolic link (``data/current.json`` -> ``data/v2.json``, a linked folder,
        ``/proc/self/cwd/data/x``): a change there changes what the test read through it."""
        try:
            full = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return None
        known = self._links.get(full, False)
        if known is False:
            real = os.path.realpath(full)
            known = None if real == full else self.rel(real)
            if len(self._links) > _REL_KNOWN_MAX:
                self._links.clear()
            self._links[full] = known
        return known if isinstance(known, str) else None

    def stat_seen(self, path: Any, frame: Any, *, folder: bool) -> None:
        """A ``stat`` of a path (``os.path.exists``, ``isfile``, ``getsize``, ``Path.exists``,
        a literal ``glob``), which no audit event shows: what a test learns from it changes
        when the file appears, goes or changes, as a read's does; a folder's, when a file
        appears in it or goes, as a listing's does (red-team, helper-9)."""
        self._busy = True
        try:
            if not folder and _is_source(path):
                # A module's source stat'ed (``inspect.getmodule``, ``linecache`` checking
                # its cache, for every module loaded): what that tells is whether the file
                # is there, as its folder's listing does, not what its code says; counting
                # it as a read tied every such test to every module (new-user trial).
                self.on_event(_LIST, "os.stat", (os.path.dirname(os.fsdecode(path)) or ".",),
                              frame)
                return
            self.on_event(_LIST if folder else _OPEN, "os.stat", (path, "r", 0), frame)
        finally:
            self._busy = False

    def at_folder(self, path: Any, folder: int, frame: Any, *, kind: str, flags: int = 0) -> None:
        """A path relative to a folder descriptor (``os.open(name, dir_fd=fd)``,
        ``os.stat(name, dir_fd=fd)``): the audit event names it as if relative to the
        working folder (red-team: a read through ``dir_fd`` never reached its file)."""
        full = _at(path, folder)
        self._busy = True
        try:
            if full is None:
                if not self._outside():
                    self.context.flags.setdefault(_WHY[_AT], f"dir_fd={folder}")
                return
            self.on_event(kind, "open", (full, "r" if kind != _OPEN else None, flags), frame)
        finally:
            self._busy = False

    def _in_process(self, event: str, args: tuple[Any, ...]) -> bool:
        """Whether a socket event keeps to this process, whose threads the witness traces:
        a name lookup, a bind, and a connect or send to an address a socket of this process
        bound (a test's server thread on ``127.0.0.1:0``; issue 12: every such test was
        incomplete). A socket bound before recording, or before a process was started that
        may have inherited it, may be answered by another process: that stays incomplete,
        as does every other address."""
        if event in _LOOKUPS:
            return True
        sock = args[0] if args else None
        if not _stream(sock):
            return False  # a datagram socket: any process may send to it or answer
        if event == "socket.bind":
            with contextlib.suppress(TypeError):
                self._bound[sock] = self._spawned
            return True  # who connects in is judged at accept (``_accepted``)
        with contextlib.suppress(TypeError):
            self._clients.add(sock)
        address = args[1] if len(args) > 1 else None
        if address is None:
            return event == "socket.sendmsg"  # to the peer connect already judged
        try:
            return any(
                spawned == self._spawned and _answers(bound, sock, address)
                for bound, spawned in list(self._bound.items())
            )
        except RuntimeError:  # another thread changed the registry meanwhile
            return False

    def spawned(self, pid: int, programs: tuple[str, ...], argv: tuple[str, ...],
                frame: Any, environ: tuple[str, ...] | None = None) -> None:
        """The context started a process (``_follow``): the harvest charges it what the
        child recorded, or marks it incomplete (``children.merge``). Outside any test, only
        the repository's own starts count (``on_event``)."""
        self._spawned += 1
        self._local.noted = getattr(self._local, "noted", 0) + 1
        if self._outside() and self._origin(frame) != _REPO:
            return
        self.spawns.append(children.Spawn(pid, self.context_name, programs, argv, environ))

    def _accepted(self, conn: Any, peer: Any) -> None:
        """A connection a listener accepted: from a socket of this process (its address is
        the peer's; for a Unix socket, the peer's process is this one), or else another
        process's, whose code the witness cannot see (a server a test started, connecting
        in on a fixed port)."""
        if conn.family == getattr(socket, "AF_UNIX", None):
            ours = _peer_pid(conn) == os.getpid()
        else:
            named = tuple(peer[:2]) if isinstance(peer, tuple) else None
            try:
                ours = named in self._client_names or any(
                    _same_address(c.getsockname(), peer) for c in list(self._clients))
            except (OSError, RuntimeError):
                ours = False
            self._client_names.discard(named)  # accepted once: the port may be reused
        if not ours:
            self.context.flags.setdefault(
                _WHY[_NETWORK], f"socket.accept from another process {peer!r}"[:120])

    def _traced_thread(self, kind: str, frame: Any) -> bool:
        """coverage traces a new thread through ``threading.settrace``: a thread started
        while coverage's function is still there is traced (3.11 raises no event for its
        start), and the ``sys.settrace`` calls its bootstrap and coverage's installer make
        there install coverage's own tracer, hiding nothing (issue 12: every test that
        started a thread, a ``ThreadPoolExecutor``'s too, was incomplete). A thread
        started after the test took that function away runs unseen: ``_thread_settrace``
        marks the test (and ``_THREAD``, from 3.12, when coverage traces there)."""
        assert self.lines is not None
        hook = self.lines.thread_trace
        if hook is None or getattr(threading, "_trace_hook", None) is not hook:
            return False
        if kind == _THREAD:
            return True
        # The new thread's bootstrap, then coverage's installer starting its tracer there.
        return threading.get_ident() != self._thread and getattr(
            getattr(frame, "f_code", None), "co_filename", None) in self.lines.installers

    def _settrace(self, event: str, args: tuple[Any, ...], frame: Any) -> None:
        """The audit event comes before the call, so whether a ``sys.settrace`` replaced
        coverage's trace function shows at the next one or at the test's end (``_retrace``):
        doctest's ``sys.settrace(saved)`` puts the same function back and hides nothing
        (issue 12: every doctest test was incomplete). Another thread's call is judged at
        once (this thread's checks cannot see it)."""
        if (self._stack[-1][0] == "c" and not self.child
                and self._origin(frame) != _REPO):
            return  # outside any test only the repository's own code counts (as on_event)
        self._settraced.append((self.context, _describe(event, args)))
        if sys.gettrace() is not self._trace_fn:  # the one before replaced it
            self._untraced()

    def _untraced(self) -> None:
        """Every context that called ``sys.settrace`` since the last check ran unseen."""
        for context, what in self._settraced:
            context.flags.setdefault(_WHY[_TRACE], what)
        self._settraced.clear()

    def _for_the_repository(self, frame: Any) -> bool:
        """Whether a library's read outside any test, fixture or import was asked for by the
        repository's code: a conftest's ``pytest_generate_tests`` that loads its cases with a
        library (``yaml.safe_load``, ``iniconfig``) reads for the tests it parametrizes. A
        plugin's read at start-up, with no repository code under it, is no test's doing."""
        for _ in range(200):
            if frame is None:
                return False
            name = frame.f_code.co_filename
            if not name.startswith(self._not_code_prefixes) and not _installed(
                    name) and self.rel(name) is not None:
                return True
            frame = frame.f_back
        return True  # deeper than that: it may be the repository's

    def _origin(self, frame: Any) -> str:
        """Whose code caused an event: the first frame that is not the standard library."""
        for _ in range(80):
            if frame is None:
                break
            code = frame.f_code  # once: each read of it is an audit event
            name = code.co_filename
            if name in _FROZEN_PATH_MODULES or _loader_read(frame, code):
                # A loader's data read for its caller (pkgutil.get_data); os.path's and os's
                # own frames (os.walk, os.path.exists), standard library that is frozen.
                frame = frame.f_back
                continue
            if name.startswith(self._tool_prefixes):
                return _TOOL
            if _installed(name):
                return _LIB
            if self.rel(name) is not None:
                return _REPO
            if not (name.startswith(STDLIB) or name.startswith("<")):
                return _LIB
            frame = frame.f_back
        return _LIB

    def rel(self, path: object) -> str | None:
        """A repository-relative path, or None for anything outside the repository."""
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        elif isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str) or path == ":memory:":
            return None
        absolute = os.path.isabs(path)
        if absolute:  # a relative path's answer depends on the working folder of the moment
            try:
                return self._rel_known[path]
            except KeyError:
                pass
        full = os.path.abspath(path)
        found: str | None = None
        for prefix in self._prefixes:
            if full.startswith(prefix):
                found = full[len(prefix):].replace(os.sep, "/")
                # The git dir holds no file of the tree: ``witness record``'s scratch folder
                # (the children's ``sitecustomize``, an agentgate shim) when the tree is the
                # checkout itself.
                if found == ".git" or found.startswith(".git/"):
                    found = None
                break
        else:
            found = "." if full in self._roots else None
        if absolute:
            if len(self._rel_known) > _REL_KNOWN_MAX:
                self._rel_known.clear()
            self._rel_known[path] = found
        return found

    # --- tests and fixtures (fed by ``hooks``) ------------------------------------------

    def begin_test(self, nodeid: str, file: str) -> str:
        self._fixtures_now = set()
        self.tests[nodeid] = TestRun(
            file=file,
            fixtures=set(),
            ambient=_ambient_print({n: os.environ.get(n) for n in self.ambient_names}),
        )
        ctx = "t:" + nodeid
        # A port this process connected from in an earlier test may be another process's
        # by now: only this test's own connections are known as ours.
        self._client_names.clear()
        for cache in list(self.caches):  # each test computes what it reads, as if first
            if getattr(_ONCE.get(cache), "ctx", None) is None:
                cache.cache_clear()
        self.push(ctx)
        if not self.child:
            self.carriers.begin_test()  # in the test's context: whatever it runs is the test's
        served = children.running(self)  # an earlier test's process may serve this one
        if served:
            self.contexts[ctx].flags.setdefault(_WHY[_PROCESS], served)
        return ctx

    def end_test(self, ctx: str) -> None:
        self._retrace()
        self.pop(ctx)

    def used_fixtures(self, nodeid: str, keys: set[str]) -> None:
        self.tests[nodeid].fixtures = keys | self._fixtures_now

    def _retrace(self) -> None:
        """A test that replaced coverage's trace function (a debugger, coverage run by the
        test) ran unseen from then on: the audit event marked it incomplete; the tests after
        it are traced again."""
        hook = self.lines.thread_trace if self.lines is not None else None
        if hook is not None and getattr(threading, "_trace_hook", None) is not hook:
            # New threads would run unseen (the test that took it away is incomplete).
            _ORIGINAL_THREAD_SETTRACE(hook)
        replaced = self._trace_fn is not None and sys.gettrace() is not self._trace_fn
        self.check_trace()
        if replaced:
            self._busy = True
            try:
                sys.settrace(self._trace_fn)
            finally:
                self._busy = False

    def begin_fixture(self, key: str) -> str:
        """A fixture set up once for several tests: its own context, shared by them, whoever
        defined it. pytest's own wrappers of a module's ``setup_module`` or a class's
        ``setup_class``/``setUpClass``, and a plugin's session fixture that builds the app,
        run the repository's code for every test that uses them (red-team, helper-9: charged
        to the first such test alone, a change to them skipped the others)."""
        self._fixtures_now.add(key)
        self.carriers.mark("f:" + key)
        self.push("f:" + key)
        return "f:" + key

    def end_fixture(self, ctx: str) -> None:
        self.pop(ctx)
        self.carriers.settle(ctx)  # what a shared fixture set up stays for the tests after

    def report(self, nodeid: str, duration: float, *, failed: bool, skipped: bool) -> None:
        run = self.tests.get(nodeid)
        if run is None:
            return
        run.duration += duration
        if failed:
            run.outcome = "failed"
        elif skipped and run.outcome == "passed":
            run.outcome = "skipped"

    def collect_report(self, nodeid: str, *, failed: bool) -> None:
        path = nodeid.split("::")[0]
        if not path or not os.path.isfile(os.path.join(self.root, path)):
            return
        (self.collect_errors if failed else self.collected).add(path)


def _stream(sock: Any) -> bool:
    try:
        return bool(sock.type == socket.SOCK_STREAM)
    except AttributeError:
        return False


def _answers(bound: Any, sock: Any, address: Any) -> bool:
    """Whether ``bound``, a socket this process bound, is what ``sock`` reaches at
    ``address``: open and listening, of the same family and type, not sharing its port
    with other processes (``SO_REUSEPORT``; a socket that is not listening may share it
    through ``SO_REUSEADDR``), at that absolute path (AF_UNIX) or port, on that host, or on
    the loopback where it listens everywhere (``localhost`` for ``127.0.0.1`` and
    ``::1``): another loopback address (127.0.0.2) may be another process's."""
    try:
        if bound.fileno() == -1 or (bound.family, bound.type) != (sock.family, sock.type):
            return False
        if not bound.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
            return False
        reuse = getattr(socket, "SO_REUSEPORT", None)
        if reuse is not None and bound.getsockopt(socket.SOL_SOCKET, reuse):
            return False
        name = bound.getsockname()
    except (AttributeError, OSError, TypeError, ValueError):
        return False
    if isinstance(address, (str, bytes)):
        path = os.fsencode(address)
        return path[:1] in (b"/", b"\0") and os.fsencode(name) == path
    if not (isinstance(address, tuple) and isinstance(name, tuple) and len(address) >= 2):
        return False
    host, port, where, at = address[0], address[1], name[0], name[1]
    if port != at or not port:
        return False
    if host == where:
        return True
    if host == "localhost":
        return where in ("127.0.0.1", "::1", "0.0.0.0", "::")
    return where in ("0.0.0.0", "::") and _loopback(host)


def _same_address(mine: Any, peer: Any) -> bool:
    return (isinstance(mine, tuple) and isinstance(peer, tuple) and len(mine) >= 2
            and len(peer) >= 2 and mine[:2] == peer[:2])


def _peer_pid(conn: Any) -> int | None:
    """The process at the other end of a Unix socket (Linux: ``SO_PEERCRED``), or None."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        pid, _uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, 12))
    except (OSError, struct.error):
        return None
    return int(pid)


def _loopback(host: object) -> bool:
    import ipaddress

    try:
        return isinstance(host, str) and ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _reads(args: tuple[Any, ...]) -> bool:
    mode, flags = (*args, None, 0)[1:3]
    if isinstance(mode, str):
        return "r" in mode or "+" in mode
    return isinstance(flags, int) and flags & os.O_ACCMODE != os.O_WRONLY


def _is_metadata(path: object) -> bool:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return isinstance(path, str) and any(d + os.sep in path for d in _METADATA_DIRS)


# ``FastPath.children`` and ``FastPath.mtime``: the search for installed metadata in a
# ``sys.path`` folder (the standard library's and the ``importlib_metadata`` backport's).
_METADATA_SEARCH = (os.path.join("importlib", "metadata", "__init__.py"),
                    os.path.join("importlib_metadata", "__init__.py"))


def _metadata_search(frame: Any) -> bool:
    code = getattr(frame, "f_code", None)
    return (code is not None and code.co_name in ("children", "mtime")
            and code.co_filename.endswith(_METADATA_SEARCH))


def _past_imports(frame: Any) -> Any:
    """The first frame outside the import system: whose code asked for the import."""
    while frame is not None and frame.f_code.co_filename.startswith("<frozen "):
        frame = frame.f_back
    return frame


def _describe(event: str, args: tuple[Any, ...]) -> str:
    """The event and its telling argument: the command line, the address, the library."""
    second = event in ("subprocess.Popen", "socket.connect", "socket.bind", "socket.sendto")
    shown = args[1] if second and len(args) > 1 else (args[0] if args else "")
    return f"{event} {shown!r}"[:120]


def _ambient_print(values: dict[str, str | None]) -> str:
    text = json.dumps(values, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def booted() -> Recorder | None:
    """The recording ``boot`` started and no plugin adopted yet, if any. A child's
    recording (``children``) gives way to one of the child's own: the child then writes no
    fragment, and the test that started it stays incomplete."""
    found = _ACTIVE
    if found is not None and found.child:
        found.abandon()
        return None
    return found if found is not None and not found.adopted else None


def active() -> Recorder | None:
    return _ACTIVE


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Every audit event of the process comes here (``id()`` and ``sys._getframe`` raise
    # one): those the recorder ignores leave on the first test.
    if event not in _EVENTS:
        return
    recorder = _ACTIVE
    if recorder is None or recorder._busy:
        return
    if not recorder.tracing and event in _RUNS:
        # Code compiled or executed from a repository file outside any import (runpy,
        # importlib's exec_module of a spec made from a path): trace it.
        where = args[_RUNS[event]] if len(args) > _RUNS[event] else None
        if recorder.in_file(getattr(where, "co_filename", where)):
            recorder.wake()
    if event == "cpython.run_file" and args and recorder.child and not recorder.in_file(
            args[0]) and recorder.in_file(os.path.realpath(os.fsdecode(args[0]))):
        # A child's script that is a file of the repository under a path outside it (a
        # link a test made): what it runs is traced under that path, outside the root.
        recorder.context.flags.setdefault(children.WHY, f"ran {args[0]!r}"[:120])
    if event == "exec" and args and _bypasses(args[0]) and (
            not recorder._outside() or recorder._origin(_caller()) == _REPO):
        # Its reads of module attributes are not all seen: the context is incomplete.
        recorder.context.flags.setdefault(_WHY[_EVAL], repr(args[0].co_filename)[:120])
    kind = _WATCHED.get(event)
    if kind is None:
        return
    caller = _caller()
    recorder._busy = True
    try:
        recorder.on_event(kind, event, args, caller)
    finally:
        recorder._busy = False


# ``os`` and ``os.path`` are frozen from 3.11 on: their frames look like the import system's.
_FROZEN_PATH_MODULES = frozenset(
    f"<frozen {name}>" for name in ("genericpath", "posixpath", "ntpath", "os"))


def _stat_watched(original: Any) -> Any:
    """``os.stat`` or ``os.lstat``, watched (``Recorder.stat_seen``); the import system calls
    ``posix.stat`` itself and is not slowed down. A descriptor or a ``dir_fd`` names no path
    the recorder can place."""

    def watched(path: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = _ACTIVE
        if (recorder is None or recorder._busy or not recorder.tracing
                or isinstance(path, int)):
            return original(path, *args, **kwargs)
        frame = sys._getframe(1)
        folder = kwargs.get("dir_fd")
        if folder is not None:  # what it names is relative to that folder
            placed = _at(path, folder)
            if placed is None:
                recorder.at_folder(path, folder, frame, kind=_OPEN)
                return original(path, *args, **kwargs)
            path_seen = placed
            result = original(path, *args, **kwargs)
            recorder.stat_seen(path_seen, frame, folder=stat_module.S_ISDIR(result.st_mode))
            return result
        try:
            result = original(path, *args, **kwargs)
        except OSError:
            recorder.stat_seen(path, frame, folder=False)
            raise
        recorder.stat_seen(path, frame, folder=stat_module.S_ISDIR(result.st_mode))
        return result

    return watched


# Calls that tell a test whether a path is there (they raise, or answer, when it is not)
# with no audit event and no ``os.stat`` (red-team round 4: ``os.access(FLAG, os.F_OK)``
# skipped its test when the patch added the flag file). Those that also change the file
# (``chmod``, ``utime``, ``rename``...) have audit events, but none the recorder reads as a
# read: each counts as a ``stat`` of every path it is given.
_PROBES = ("access", "statvfs", "pathconf", "readlink", "chmod", "chown", "lchown", "utime",
           "truncate", "rename", "replace", "remove", "unlink", "rmdir", "link", "symlink")
_TWO_PATHS = frozenset({"rename", "replace", "link"})
_ORIGINAL_PROBES: dict[str, Any] = {n: getattr(os, n) for n in _PROBES if hasattr(os, n)}
_ORIGINAL_STAT: Any = os.stat


def _probe_watched(name: str, original: Any) -> Any:
    """``os.<name>``, each path it is given seen as a ``stat`` (``Recorder.stat_seen``)."""
    count = 2 if name in _TWO_PATHS else 1

    def watched(*args: Any, **kwargs: Any) -> Any:
        recorder = _ACTIVE
        if recorder is None or recorder._busy or not recorder.tracing or kwargs.get(
                "dir_fd") is not None or kwargs.get("src_dir_fd") is not None:
            return original(*args, **kwargs)
        frame = sys._getframe(1)
        paths = [a for a in args[:count] if not isinstance(a, int)]
        before = [_is_folder(path) for path in paths]  # a rename's source is gone after
        try:
            return original(*args, **kwargs)
        finally:
            for path, folder in zip(paths, before, strict=True):
                recorder.stat_seen(path, frame, folder=folder)

    return watched


def _is_folder(path: Any) -> bool:
    try:
        return stat_module.S_ISDIR(_ORIGINAL_STAT(path).st_mode)
    except (OSError, TypeError, ValueError):
        return False


def _installed(filename: str) -> bool:
    """Code an installer put in place: a library, even in a virtualenv inside the checkout
    (new-user trial: with ``.venv/`` in the repository, pytest's own start-up listing of
    ``tests/`` was taken for the repository's, and every test reran when a file was added)."""
    return "site-packages" in filename or "dist-packages" in filename


def _is_source(path: Any) -> bool:
    try:
        return os.fsdecode(path).endswith(".py")
    except (TypeError, ValueError):
        return False


def _descriptor_path(fd: int) -> str | None:
    """The path an open descriptor names (Linux: ``/proc/self/fd``), None where unknown."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except (OSError, ValueError):
        return None


def _at(path: Any, folder: Any) -> Any:
    """``path`` as ``dir_fd=folder`` makes it: absolute as it is, else under the folder the
    descriptor names; None when that is unknown."""
    try:
        text = os.fsdecode(path)
    except (TypeError, ValueError):
        return None
    if os.path.isabs(text):
        return text
    base = _descriptor_path(folder) if isinstance(folder, int) else None
    return None if base is None else os.path.join(base, text)


def _os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> Any:
    """``os.open``, watched where it takes a ``dir_fd``: its audit event names the path as if
    it were relative to the working folder (``Recorder.at_folder``)."""
    recorder = _ACTIVE
    if dir_fd is None:
        return _ORIGINAL_OS_OPEN(path, flags, mode)
    if recorder is not None and not recorder._busy and recorder.tracing:
        recorder.at_folder(path, dir_fd, sys._getframe(1), kind=_OPEN, flags=flags)
    return _ORIGINAL_OS_OPEN(path, flags, mode, dir_fd=dir_fd)


def _sqlite_connect(*args: Any, **kwargs: Any) -> Any:
    """``sqlite3.connect``, watched: its audit event names the database it opens, but a
    statement can open other files in C with no event (red-team round 4: ``ATTACH DATABASE
    'app/rates.db'`` on a ``:memory:`` connection; a change to the rates skipped the test
    that read them). An authorizer sees each ATTACH and charges its file as opened; the
    connection's class keeps it when the code sets its own authorizer."""
    if "factory" not in kwargs and len(args) < 6:  # (database, timeout, ..., factory)
        kwargs["factory"] = _WatchedConnection
    connection = _ORIGINAL_SQLITE_CONNECT(*args, **kwargs)
    with contextlib.suppress(Exception):  # a factory that refuses: its reads go unseen
        if not isinstance(connection, _WatchedConnection):
            connection.set_authorizer(_attached)
    return connection


def _attached(action: int, name: Any, *_rest: Any) -> int:
    """SQLite's authorizer: charges the file of an ATTACH, allows everything. SQLite gives
    the file only when the statement spells it; one bound as a parameter (``ATTACH ? AS
    r``) leaves the test incomplete. Never raises (an authorizer that raises denies the
    statement)."""
    try:
        recorder = _ACTIVE
        if (action == sqlite3.SQLITE_ATTACH and recorder is not None
                and not recorder._busy):
            # A file named by a bound parameter or an expression is not known yet here.
            kind, args = (_DB, (name,)) if name else (_ATTACH, ("?",))
            recorder._busy = True
            try:
                recorder.on_event(kind, "sqlite3.attach", args, sys._getframe(1))
            finally:
                recorder._busy = False
    except Exception:  # SQL must run as it would without the witness
        pass
    return 0  # SQLITE_OK


if sqlite3 is not None:
    class _WatchedConnection(sqlite3.Connection):
        """A connection whose own authorizer, if the code sets one, runs after the
        witness's."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            super().set_authorizer(_attached)

        def set_authorizer(  # type: ignore[override]
                self, callback: Any, *args: Any, **kwargs: Any) -> None:
            if callback is None:
                super().set_authorizer(_attached)
                return

            def both(*event: Any) -> Any:
                _attached(*event)
                return callback(*event)

            super().set_authorizer(both, *args, **kwargs)


def _ssl_watched(name: str, original: Any) -> Any:
    """An ``ssl.SSLContext`` method that hands OpenSSL files, watched: each file is charged
    as opened, and each file of a ``capath`` folder (OpenSSL looks certificates up there by
    their hashes, as it needs them). ``create_default_context(cafile=...)`` goes through it."""
    names = _SSL_FILES[name]

    def watched(self: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = _ACTIVE
        if recorder is not None and not recorder._busy and recorder.tracing:
            recorder._busy = True
            try:
                given = dict(zip(names, args, strict=False))
                given.update({k: v for k, v in kwargs.items() if k in names})
                for key, value in given.items():
                    path = os.fsdecode(os.fspath(value)) if value is not None else None
                    if not path:
                        continue
                    files = ([os.path.join(path, f) for f in sorted(os.listdir(path))]
                             if key == "capath" and os.path.isdir(path) else [path])
                    for file in files:
                        recorder.on_event(_OPEN, f"ssl.SSLContext.{name}", (file,),
                                          sys._getframe(1))
            except Exception:  # the call must go as it would without the witness
                pass
            finally:
                recorder._busy = False
        return original(self, *args, **kwargs)

    return watched


class _Entry:
    """An ``os.DirEntry`` of a repository folder a test listed: its ``stat()`` tells the
    file's size and times with no audit event and no ``os.stat`` call (red-team: a size
    budget over ``scandir`` entries skipped its test when a file grew). Everything else is
    the entry's own."""

    __slots__ = ("_entry",)

    def __init__(self, entry: Any) -> None:
        self._entry = entry

    @property
    def name(self) -> Any:
        return self._entry.name

    @property
    def path(self) -> Any:
        return self._entry.path

    def stat(self, *, follow_symlinks: bool = True) -> Any:
        recorder = _ACTIVE
        if recorder is None or recorder._busy:
            return self._entry.stat(follow_symlinks=follow_symlinks)
        frame = sys._getframe(1)
        try:
            result = self._entry.stat(follow_symlinks=follow_symlinks)
        except OSError:
            recorder.stat_seen(self._entry.path, frame, folder=False)
            raise
        recorder.stat_seen(self._entry.path, frame, folder=stat_module.S_ISDIR(result.st_mode))
        return result

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return bool(self._entry.is_dir(follow_symlinks=follow_symlinks))

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return bool(self._entry.is_file(follow_symlinks=follow_symlinks))

    def is_symlink(self) -> bool:
        return bool(self._entry.is_symlink())

    def inode(self) -> int:
        return int(self._entry.inode())

    def __fspath__(self) -> Any:
        return self._entry.__fspath__()

    def __repr__(self) -> str:
        return repr(self._entry)

    def __getattr__(self, name: str) -> Any:  # ``is_junction`` (3.12) and what comes later
        return getattr(self._entry, name)


class _Scan:
    """``os.scandir``'s iterator over a repository folder, handing out watched entries."""

    __slots__ = ("_scan",)

    def __init__(self, scan: Any) -> None:
        self._scan = scan

    def __iter__(self) -> _Scan:
        return self

    def __next__(self) -> _Entry:
        return _Entry(next(self._scan))

    def __enter__(self) -> _Scan:
        self._scan.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._scan.__exit__(*exc)

    def close(self) -> None:
        self._scan.close()


def _scandir(*args: Any, **kwargs: Any) -> Any:
    """``os.scandir``, watched: in a test, fixture or import, a repository folder's entries
    report their ``stat()`` (``_Entry``). pytest's own collection gets plain entries."""
    scan = _ORIGINAL_SCANDIR(*args, **kwargs)
    recorder = _ACTIVE
    if recorder is None or recorder._busy or not recorder.tracing or recorder._outside():
        return scan
    folder = args[0] if args else kwargs.get("path", ".")
    if isinstance(folder, int):
        folder = _descriptor_path(folder)
    try:
        if folder is None or recorder.rel(os.path.abspath(os.fsdecode(folder))) is None:
            return scan
    except (TypeError, ValueError):
        return scan
    return _Scan(scan)


def _loader_read(frame: Any, code: Any) -> bool:
    """Whether a frame (running ``code``) is an import loader's ``get_data`` called for
    something else than the import system's ``get_code`` (``pkgutil.get_data`` reads a
    package's data file through it): the read is its caller's, not the import system's."""
    if code.co_name != "get_data" or not code.co_filename.startswith("<frozen "):
        return False
    caller = frame.f_back
    return caller is None or caller.f_code.co_name != "get_code"


def _caller() -> Any:
    """The Python frame an audit event or a fork hook came from, the one before the hook's
    own; None when the interpreter raised it with no Python code running (a child opening
    its main script, ``children``)."""
    try:
        return sys._getframe(2)
    except ValueError:
        return None


def _bypasses(code: Any) -> bool:
    """Whether evaluated text (a code object named ``<...>``, not a module's file) names a
    lookup that bypasses the watched module class."""
    name = getattr(code, "co_filename", None)
    if not isinstance(name, str) or not name.startswith("<") or name.startswith("<frozen "):
        return False
    stack = [code]
    while stack:
        found = stack.pop()
        if watch.BYPASS.intersection(found.co_names):
            return True
        stack.extend(c for c in found.co_consts if hasattr(c, "co_names"))
    return False


def _find_and_load(name: str, import_: Any) -> Any:
    recorder = _ACTIVE
    if recorder is None or recorder._busy:
        return _ORIGINAL_FIND_AND_LOAD(name, import_)
    if threading.get_ident() != recorder._thread:
        return recorder.thread_import(name, import_)
    module = sys.modules.get(name)
    if module is not None and recorder.again(name, module):
        return _ORIGINAL_FIND_AND_LOAD(name, import_)
    ctx = recorder.begin_import(name)
    try:
        return _ORIGINAL_FIND_AND_LOAD(name, import_)
    finally:
        recorder.end_import(ctx, name)


def _find_spec(name: str, path: Any, target: Any = None) -> Any:
    spec = _ORIGINAL_FIND_SPEC(name, path, target)
    recorder = _ACTIVE
    if recorder is None or recorder._busy:
        return spec
    if spec is None:
        recorder._busy = True
        try:
            recorder.missed(name, path, sys._getframe(1))
        finally:
            recorder._busy = False
    else:
        if not recorder.tracing and recorder.holds(spec):
            recorder.wake()  # before the module's code runs
        origin = getattr(spec, "origin", None) if getattr(spec, "has_location", False) else None
        found = recorder.rel(origin) if isinstance(origin, str) else None
        if found is not None:
            recorder._found[name] = found
        recorder._busy = True
        try:
            recorder.passed_over(name, path, spec, sys._getframe(1))
        finally:
            recorder._busy = False
    return spec


def _install_hooks() -> None:
    """One audit hook per process (they cannot be removed); the import hook each start.

    The interpreter looks ``_find_and_load`` up on ``importlib._bootstrap`` at every import
    it cannot answer from ``sys.modules``, so wrapping it sees exactly the first import of
    each module, from ``import`` statements and ``importlib.import_module`` alike. Every
    search for a module, ``importlib.util.find_spec`` included, goes through ``_find_spec``:
    wrapping it sees the imports that found nothing (issue 12: ``try: import app.local``).
    """
    global _HOOK_INSTALLED
    if not _HOOK_INSTALLED:
        sys.addaudithook(_audit)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(before=_forking, after_in_child=_forked)
        _HOOK_INSTALLED = True
    for owner, attribute, _original, watched in _REPLACED:
        setattr(owner, attribute, watched)


def _database_file(database: Any) -> Any:
    """The file ``sqlite3.connect`` opens: a ``file:`` URI (``uri=True``) names its path
    between the scheme and the query, percent-encoded (red-team: the URI text was kept as the
    file read, so a change to the database skipped its readers). A plain name is its path."""
    try:
        text = os.fsdecode(database)
    except (TypeError, ValueError):
        return database
    if not text.startswith("file:"):
        return database
    rest = text[len("file:"):].split("?", 1)[0].split("#", 1)[0]
    if rest.startswith("//"):  # file://localhost/path, file:///path
        rest = rest[2:]
        rest = rest[rest.find("/"):] if "/" in rest else ""
    from urllib.parse import unquote  # pytest has it imported already

    return unquote(rest) if rest else database


def _lru_cache(*args: Any, **kwargs: Any) -> Any:
    """``functools.lru_cache`` (and ``functools.cache``, which calls it), watched while
    recording: a result one test computed and a later test read from the cache ran the
    function's body in the first test's context only, so a change to the body skipped the
    second test, which reads its new result at head (state across tests, red-team). Each
    wrapper of a repository function is emptied as every test begins: each test runs what
    it reads. A function of no arguments keeps its one entry instead, computed in a context
    of its own that every reader is charged (``Recorder.cache_miss``)."""
    if args and callable(args[0]):  # ``@lru_cache`` without arguments
        return _cached(_ORIGINAL_LRU_CACHE(128, *args[1:], **kwargs), args[0])
    made = _ORIGINAL_LRU_CACHE(*args, **kwargs)
    return functools.partial(_cached, made)


def _cached(made: Any, func: Any) -> Any:
    recorder = _ACTIVE
    code = getattr(func, "__code__", None)
    if recorder is None or code is None or not recorder.in_file(code.co_filename):
        return made(func)
    if not _no_arguments(code):
        wrapper = made(func)
        recorder.caches.add(wrapper)
        return wrapper
    once = _Once()

    @functools.wraps(func)
    def miss(*args: Any, **kwargs: Any) -> Any:
        active = _ACTIVE
        if active is None:
            return func(*args, **kwargs)
        return active.cache_miss(once, func, args, kwargs)

    wrapper = made(miss)
    wrapper.__wrapped__ = func  # what ``inspect`` unwraps to: the function itself
    once.wrapper = weakref.ref(wrapper)
    _ONCE[wrapper] = once
    recorder.caches.add(wrapper)
    return wrapper


def _no_arguments(code: Any) -> bool:
    """A function that takes no argument at all: its cache holds at most one entry."""
    return not (code.co_argcount or code.co_kwonlyargcount or code.co_posonlyargcount
                or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


class _Once:
    """The one entry of a cached function of no arguments: the context that computed it
    (None: unknown, emptied as each test begins), and its cache's hit count when last
    charged."""

    __slots__ = ("ctx", "hits", "wrapper")

    def __init__(self) -> None:
        self.ctx: str | None = None
        self.hits = 0
        self.wrapper: Callable[[], Any] = lambda: None

    def known(self, recorder: Recorder, ctx: str) -> None:
        wrapper = self.wrapper()
        self.ctx = ctx
        self.hits = wrapper.cache_info().hits if wrapper is not None else 0
        if self not in recorder._once:
            recorder._once.append(self)

    def forget(self, recorder: Recorder) -> None:
        self.ctx = None
        if self in recorder._once:
            recorder._once.remove(self)


_ONCE: weakref.WeakKeyDictionary[Any, _Once] = weakref.WeakKeyDictionary()


def _thread_settrace(func: Any) -> None:
    """``threading.settrace``, watched: before 3.12 no audit event shows a thread starting,
    so a test that takes coverage's function away from new threads (``settrace(None)``)
    would run a thread's code unseen. That test is incomplete."""
    recorder = _ACTIVE
    if (recorder is not None and not recorder._busy and recorder.tracing
            and recorder.lines is not None and func is not recorder.lines.thread_trace):
        recorder.context.flags.setdefault(_WHY[_THREAD], f"threading.settrace({func!r})"[:120])
    _ORIGINAL_THREAD_SETTRACE(func)


def _forked() -> None:
    """In a child this process forked, record nothing: the parent marked the context that
    forked (``os.fork``), and a lock another thread held at the fork (``_label_lock``)
    would stay held in the child for ever."""
    global _ACTIVE
    recorder = _ACTIVE
    if recorder is not None:
        _ACTIVE = None
        recorder.watcher.stop()
        # The plugin's hooks still reach it (pytest-forked runs the test in the child).
        recorder._label_lock = threading.Lock()
        recorder._pinned = 0


def _connecting(original: Any) -> Any:
    """``socket.socket.connect`` / ``connect_ex``, watched: the local address this process
    connected from, which a listener of this process may accept later (``_accepted``)."""

    def connect(sock: Any, address: Any) -> Any:
        try:
            return original(sock, address)
        finally:
            recorder = _ACTIVE
            if recorder is not None and not recorder._busy:
                with contextlib.suppress(OSError, TypeError, ValueError):
                    name = sock.getsockname()
                    if isinstance(name, tuple) and len(recorder._client_names) < 65536:
                        recorder._client_names.add(tuple(name[:2]))

    return connect


def _accept(sock: Any) -> Any:
    """``socket.socket.accept``, watched: a connection from another process runs code the
    witness cannot see (``Recorder._accepted``)."""
    conn, peer = _ORIGINAL_ACCEPT(sock)
    recorder = _ACTIVE
    if recorder is not None and not recorder._busy:
        recorder._busy = True
        try:
            recorder._accepted(conn, peer)
        finally:
            recorder._busy = False
    return conn, peer


def _unseen_start(start: Any) -> Any:
    """``_thread.start_new_thread`` (or its older alias ``start_new``, a builtin of its
    own), watched: ``threading`` keeps its own reference, so this is a thread started
    without it, which coverage does not trace (``sys.monitoring``, from 3.12, sees it). The
    context started a thread the witness does not trace."""

    def started(*args: Any, **kwargs: Any) -> Any:
        recorder = _ACTIVE
        if (recorder is not None and not recorder._busy and recorder.tracing
                and recorder.lines is not None):
            recorder.context.flags.setdefault(_WHY[_THREAD], "_thread.start_new_thread")
        return start(*args, **kwargs)

    return started


def _follow(start: Any, describe: Any) -> Any:
    """A function that starts a process and returns its pid (``_posixsubprocess.fork_exec``,
    ``os.posix_spawn``, ``os.posix_spawnp``), watched: the context started a process, which
    ``children`` follows (``Recorder.spawned``). multiprocessing's spawn and forkserver
    start methods call fork_exec directly and raise no audit event. ``describe``: the
    program files the start may run, in order, and the argv, from its arguments."""

    def started(*args: Any, **kwargs: Any) -> Any:
        recorder = _ACTIVE
        if recorder is None or recorder._busy:
            return start(*args, **kwargs)
        local = recorder._local
        local.spawning = getattr(local, "spawning", 0) + 1
        try:
            pid = start(*args, **kwargs)
        finally:
            local.spawning -= 1
        recorder._busy = True
        try:
            programs, argv, env = describe(args, kwargs)
            recorder.spawned(pid, children.decoded(programs), children.decoded(argv),
                             sys._getframe(1), _environ(env))
        finally:
            recorder._busy = False
        return pid

    return started


def _fork_exec_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, Any]:
    # (args, executable_list, close_fds, pass_fds, cwd, env, ...): the same from 3.9 to 3.14
    return args[1], args[0], args[5] if len(args) > 5 else None


def _posix_spawn_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, Any]:
    env = args[2] if len(args) > 2 else kwargs.get("env")
    return (args[0],), args[1], env  # (path, argv, env, ...)


def _posix_spawnp_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, Any]:
    env = args[2] if len(args) > 2 and isinstance(args[2], dict) else os.environ
    found = shutil.which(os.fsdecode(args[0]), path=env.get("PATH"))
    return (found or args[0],), args[1], env


def _environ(env: Any) -> tuple[str, ...] | None:
    """A started process's environment as ``NAME=value`` items; inherited, what of this
    process's ``children.contained`` reads, as it is now (a test's ``monkeypatch`` of
    ``BASH_ENV`` is undone by the harvest)."""
    if env is None:
        return tuple(f"{n}={os.environ[n]}" for n in children.CONTAINED_ENV if n in os.environ)
    try:
        if isinstance(env, dict) or hasattr(env, "items"):
            return tuple(f"{os.fsdecode(k)}={os.fsdecode(v)}" for k, v in env.items())
        return tuple(os.fsdecode(item) for item in env)
    except (TypeError, ValueError):
        return ("AGENTGATE_UNREADABLE_ENV=1", "BASH_ENV=?")  # unknown: not contained


def _execute_child(popen: Any, *args: Any, **kwargs: Any) -> Any:
    """``subprocess.Popen._execute_child``, watched: its audit event comes before the start,
    whose pid ``_follow`` notes. A start it did not note (a way to start a process no
    wrapper sees) marks the context, as every process did before ``children``."""
    recorder = _ACTIVE
    if recorder is None or recorder._busy:
        return _ORIGINAL_EXECUTE_CHILD(popen, *args, **kwargs)
    local = recorder._local
    noted = getattr(local, "noted", 0)
    local.spawning = getattr(local, "spawning", 0) + 1
    started = False
    try:
        found = _ORIGINAL_EXECUTE_CHILD(popen, *args, **kwargs)
        started = True
        return found
    finally:
        local.spawning -= 1
        # A start that raised ran no program (exec failed: FileNotFoundError), though
        # fork_exec returned its pid; what a ``preexec_fn`` ran in the forked child is
        # marked by ``_forking``.
        pid = getattr(popen, "pid", None)
        for spawn in [s for s in list(recorder.spawns) if s.pid == pid] if not started else ():
            recorder.spawns.remove(spawn)  # one at a time: other threads may be noting
        if started and getattr(local, "noted", 0) == noted:
            recorder._busy = True
            try:
                recorder.on_event(_PROCESS, "subprocess.Popen", (None, popen.args),
                                  sys._getframe(1))
            finally:
                recorder._busy = False


def _forking() -> None:
    """Before a fork (``os.fork``, a ``preexec_fn`` of ``subprocess``): the child runs
    Python code no recorder sees (``_forked`` stops it there)."""
    recorder = _ACTIVE
    if recorder is not None and not recorder._busy:
        recorder._busy = True
        local = recorder._local
        spawning, local.spawning = getattr(local, "spawning", 0), 0
        try:
            recorder.on_event(_PROCESS, "os.fork", (), _caller())
        finally:
            local.spawning = spawning
            recorder._busy = False


_fork_exec = _follow(_ORIGINAL_FORK_EXEC, _fork_exec_args)
_SPAWN_ARGS = {"posix_spawn": _posix_spawn_args, "posix_spawnp": _posix_spawnp_args}

# Every function a recording replaces while it runs: (owner, attribute, original, watched).
# The interpreter looks ``_find_and_load`` and ``_find_spec`` up on ``importlib._bootstrap`` at
# each import; ``importlib.util`` bound its own ``_find_spec`` at its import.
_REPLACED: list[tuple[Any, str, Any, Any]] = [
    (bootstrap, "_find_and_load", _ORIGINAL_FIND_AND_LOAD, _find_and_load),
    (bootstrap, "_find_spec", _ORIGINAL_FIND_SPEC, _find_spec),
    (importlib.util, "_find_spec", _ORIGINAL_FIND_SPEC, _find_spec),
    (threading, "settrace", _ORIGINAL_THREAD_SETTRACE, _thread_settrace),
    (socket.socket, "accept", _ORIGINAL_ACCEPT, _accept),
    *((socket.socket, n, f, _connecting(f)) for n, f in _ORIGINAL_CONNECTS.items()),
    *((_thread, name, getattr(_thread, name), _unseen_start(getattr(_thread, name)))
      for name in ("start_new_thread", "start_new") if hasattr(_thread, name)),
    *([(_posixsubprocess, "fork_exec", _ORIGINAL_FORK_EXEC, _fork_exec),
       (subprocess, "_fork_exec", _ORIGINAL_FORK_EXEC, _fork_exec)]
      if _ORIGINAL_FORK_EXEC is not None else []),
    (subprocess.Popen, "_execute_child", _ORIGINAL_EXECUTE_CHILD, _execute_child),
    (functools, "lru_cache", _ORIGINAL_LRU_CACHE, _lru_cache),
    (os, "open", _ORIGINAL_OS_OPEN, _os_open),
    *([(sqlite3, "connect", _ORIGINAL_SQLITE_CONNECT, _sqlite_connect),
       (sqlite3.dbapi2, "connect", _ORIGINAL_SQLITE_CONNECT, _sqlite_connect)]
      if sqlite3 is not None else []),
    *((ssl.SSLContext, name, original, _ssl_watched(name, original))
      for name, original in _ORIGINAL_SSL.items()),
    (os, "scandir", _ORIGINAL_SCANDIR, _scandir),
    *((os, name, getattr(os, name), _stat_watched(getattr(os, name)))
      for name in ("stat", "lstat")),
    *((os, name, original, _probe_watched(name, original))
      for name, original in _ORIGINAL_PROBES.items()),
    *((os, name, start, _follow(start, _SPAWN_ARGS[name]))
      for name, start in _ORIGINAL_POSIX_SPAWN.items()),
]
