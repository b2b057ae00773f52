"""Reads of a repository module's attributes, seen while recording (issue 12, ``rebind``).

``rebind`` judges a module-level change by the names it rebinds, from the code that reads
them. The repository's own code it reads statically; what it cannot read is code outside the
repository (a library doing ``getattr(settings, name)`` for every setting,
``pkgutil.resolve_name("app.settings:MIDDLEWARE")``, ``inspect.getmembers``) and the
repository's own reads by computed names (``getattr(module, name)``). Both are seen here, as
they happen: every module of the repository gets a class of its own (``Watched``, a
``ModuleType`` whose attribute lookup reports the name), and each read is charged to the
context it happens in.

Counted: reads made by code outside the repository and outside the tooling (pytest, pluggy,
the import system, agentgate), and reads made by the repository's functions. Not counted:
the repository's module-level and class-body code (``from m import X``, ``Y = m.X``), which
``rebind`` follows statically through the names each statement binds; charging those reads to
the importing module's users would undo that. A read through the standard library counts
for whoever called it (a conftest's ``pkgutil.resolve_name`` counts; pytest's doctest finder
reading a module's ``__dict__`` does not).

A read is judged once per context: the same code reading the same name of the same module
again in that context is judged the same, and a read already charged to the context is let
through at once (``_CHARGED``, ``_JUDGED``): a repeated read costs a set lookup on top of the
Python-level ``__getattribute__``, not a frame, an audit event and a walk up the stack
(Markdown's suite reads module attributes in tight loops).

A module whose class is not plain ``ModuleType`` (a lazy module that set its own), or that
defines a module ``__getattr__``, is not watched: it is *unwatched*, and so is a repository
file whose module code ran without an import the recorder saw (``runpy``, ``exec_module``
of a spec made by hand). ``rebind`` judges changes to those by the module rule.

Stdlib only, Python 3.9 syntax: it runs in the project's interpreter.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from typing import Any

_GET = types.ModuleType.__getattribute__
_frame = sys._getframe
_FUNCTION = 0x1  # CO_OPTIMIZED: a function's code, not a module's or a class body's
# What reads a module's attribute past its class, unseen here: ``object.__getattribute__(m,
# name)`` (any ``__getattribute__`` called on the module), ``inspect.getattr_static(m, name)``.
BYPASS = frozenset({"__getattribute__", "getattr_static"})
# What the import system sets on every module, which no edit of its source changes:
# ``inspect.getmodule`` reads ``__file__`` of every module loaded, for every test that asks
# (hypothesis does), and charging those reads tied every such test to every module's
# top-level code (new-user trial: appending a test to one file reran attrs's whole suite).
IMPORT_SET = frozenset({"__file__", "__name__", "__spec__", "__loader__", "__package__",
                        "__cached__", "__builtins__"})
# Who read: a kind per code object.
SKIP, COUNT, REPO_TOP, THROUGH = 0, 1, 2, 3
# The sink: (module, name, the reading frame, the read's key) for each read not yet judged in
# the current context, or None when nothing records.
_SINK: list[Callable[[Any, str, Any, Any], None] | None] = [None]
# The current context's reads already charged to it, by (module, name): reading the same name
# again, whoever reads it, adds nothing, and is let through without even looking at the
# reader. (``sys._getframe`` and ``id`` raise audit events: the recorder's audit hook would
# run on every lookup. A module hashes by identity without an event.)
_CHARGED: set[tuple[Any, str]] = set()
# The reads judged not to count in the current context, by (module, name, reading code): the
# same code reading the same name again is judged the same (a read decided by its caller's
# caller is never kept here). Both sets are emptied whenever the context changes
# (``Watcher.changed``).
_JUDGED: set[tuple[Any, str, Any]] = set()


class Watched(types.ModuleType):
    """A repository module while recording: each attribute read is reported."""

    __slots__ = ()

    # Every lookup of a repository module's attribute runs this: what it uses is bound as
    # defaults (locals), which halves its cost against globals.
    def __getattribute__(
        self, name: str, _sink: Any = _SINK, _charged: Any = _CHARGED, _judged: Any = _JUDGED,
        _get: Any = _GET, _frame: Any = _frame,
    ) -> Any:
        sink = _sink[0]
        if sink is not None and (self, name) not in _charged:
            frame = _frame(1)
            key = (self, name, frame.f_code)
            if key not in _judged:
                sink(self, name, frame, key)
        return _get(self, name)


class Watcher:
    """Gives the repository's modules the watched class and reports their reads.

    ``kind(code)``: SKIP (tooling, the import system), COUNT (a library, the repository's
    functions), REPO_TOP (the repository's module-level or class-body code: counted only
    when reached through the standard library) or THROUGH (the standard library: whoever
    called it decides). ``report(path, name)``: one read to charge."""

    def __init__(self, kind: Callable[[Any], int], report: Callable[[str, str], None]) -> None:
        self._kind = kind
        self._report = report
        self._kinds: dict[Any, int] = {}
        # Keyed by the module itself, which hashes by identity: ``id()`` raises an audit event,
        # and every read of a watched module looks its path up here.
        self.paths: dict[Any, str] = {}  # module -> its repository path
        # module -> the files of the packages a module imported under another name than
        # its file's own needs (``tlz.curried.operator``): a read of it is a use of them.
        self.parents: dict[Any, tuple[str, ...]] = {}
        self._held: list[Any] = []  # the watched modules, so an id is never reused
        self.unwatched: set[str] = set()
        # Per thread: classifying a read in one thread must not hide another thread's reads.
        self._local = threading.local()

    def start(self) -> None:
        _SINK[0] = self.read

    def stop(self) -> None:
        if _SINK[0] == self.read:
            _SINK[0] = None
        self.changed()

    @staticmethod
    def changed() -> None:
        """The recording's context changed: every read is judged afresh for the new one."""
        _CHARGED.clear()
        _JUDGED.clear()

    def watch(self, module: Any, path: str, parents: tuple[str, ...] = ()) -> None:
        """Give a repository module the watched class, or note it as unwatched;
        ``parents``: the files of its name's packages, when that name is not its file's."""
        if type(module) is not Watched:
            # A module ``__getattr__`` (PEP 562) would run inside the watched lookup, whose
            # frame a ``warnings.warn(stacklevel=2)`` there would then name instead of the
            # reader (mutation benchmark round 6: jsonschema's deprecation tests failed
            # while recording): such a module is left as it is, unwatched.
            if type(module) is not types.ModuleType or "__getattr__" in _GET(module, "__dict__"):
                self.unwatched.add(path)
                return
            try:
                module.__class__ = Watched
            except TypeError:
                self.unwatched.add(path)
                return
            self._held.append(module)
        self.paths[module] = path
        if parents:
            self.parents[module] = parents

    def still_watched(self) -> None:
        """A watched module that set a class of its own since is unwatched from then on."""
        for module in self._held:
            if type(module) is not Watched:
                self.unwatched.add(self.paths[module])

    def read(self, module: Any, name: str, frame: Any, key: Any) -> None:
        if name in IMPORT_SET:
            _CHARGED.add((module, name))  # not judged again in this context
            return
        local = self._local
        if getattr(local, "busy", False):
            return
        path = self.paths.get(module)
        if path is None:
            return
        local.busy = True  # what classifying reads is not the repository's doing
        try:
            counted = self._counts(frame, key[2])
            kind = self._kinds.get(key[2], THROUGH)  # the reader's code: no second audit event
            if counted:
                self._report(path, name)
                _CHARGED.add((module, name))
            elif kind != THROUGH:
                _JUDGED.add(key)  # its own code decided: the same read again is the same
            # A copy's packages (where the import found it) count for any reader but the
            # tooling: module-level code too, which ``rebind`` follows only by name.
            if counted or kind == REPO_TOP:
                for parent in self.parents.get(module, ()):
                    self._report(parent, "__path__")
        finally:
            local.busy = False

    def _counts(self, frame: Any, code: Any) -> bool:
        """Whether the read counts, from the reading frame (running ``code``) up: each
        ``frame.f_code`` is an audit event, so the reader's code is passed in."""
        immediate = True
        for _ in range(64):
            if frame is None:
                break
            if not immediate:
                code = frame.f_code
            kind = self._kinds.get(code)
            if kind is None:
                kind = self._kinds[code] = self._classify(code)
            if kind != THROUGH:
                return kind == COUNT or (kind == REPO_TOP and not immediate)
            frame = frame.f_back
            immediate = False
        return True  # the standard library all the way up: nobody to blame, so it counts

    def _classify(self, code: Any) -> int:
        kind = self._kind(code)
        if kind == REPO_TOP and code.co_flags & _FUNCTION:
            return COUNT
        return kind
