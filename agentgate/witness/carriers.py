"""State one test leaves in the repository's own containers, taken out while recording.

A hand-written cache (a module-level dict, a ``WeakKeyDictionary`` in a closure, a class
attribute, a mutable default, a dict on a module-level instance) filled by one test and
read by a later one: the later test's result came from code only the first test ran, so a
change to that code skipped it, and it fails at head (click's stream cache: 24 failing
tests the witnessed band missed on one mutant). ``recorder._lru_cache`` covers functools'
caches; this covers the containers the repository makes itself.

Which containers: the dicts, sets, lists, deques and weak mappings that are **empty as the
first test begins** (a cache starts empty; a table a module fills as it loads is no cache),
held by a repository module's globals, by a class it defines, by a module-level instance of
such a class, or by the closure cells and defaults of its functions and methods. One level
deep: a cache inside a cache-holding object further down is not seen.

When: as each test begins, what earlier tests added is taken out again, so each test
computes what it reads, as if it ran first, and its recording shows the code that computed
it. What a shared fixture's setup or an import added stays: a session fixture's registry and
a module's registration as it loads are what the tests after them are meant to see. A test
that needed what an earlier test left (an order-dependent suite) fails while recording, and
a test that failed while recording always runs (``depgraph``): the cost is precision, not
safety.

The same goes for a module global a function rebinds (``global _rate; _rate =
_read_rate()``, a memo or a singleton made on first use), for an attribute the module's code
stores that one of its classes or module-level instances holds (``cls._instance =
cls._load()``), and for a name added later to a module-level instance's namespace (a
``functools.cached_property``): as each test begins, each is put back to what it was as the
first test began (or as its module's import ended), unless a shared fixture or an import
set it since (red-team class of helper-15: the second test read ``_rate`` and never ran
``_read_rate``).

Stdlib only, Python 3.9 syntax: it runs in the project's interpreter.
"""

from __future__ import annotations

import collections
import dis
import types
import weakref
from typing import Any

# Exactly these types (a subclass of the repository's may run its code when measured).
# A list memo counts too (red-team, helper-15: ``_loaded = []`` filled once by one test and
# read by the next; the second test's band missed the change to the loader).
_KINDS = frozenset({
    dict, set, list, collections.deque, collections.OrderedDict, collections.defaultdict,
    collections.Counter, weakref.WeakKeyDictionary, weakref.WeakValueDictionary, weakref.WeakSet,
})
_SETS = (set, weakref.WeakSet)
_REBINDS = frozenset(dis.opmap[n] for n in ("STORE_GLOBAL", "DELETE_GLOBAL"))
_SETS_ATTR = frozenset(dis.opmap[n] for n in ("STORE_ATTR", "DELETE_ATTR"))
_MISSING = object()  # a global not bound yet
_SEQUENCES = (list, collections.deque)
_GET = types.ModuleType.__getattribute__
_OBJECT_GET = object.__getattribute__


class _Held:
    """One watched container: its size when last settled and the members that stay."""

    __slots__ = ("box", "kept", "size")

    def __init__(self, box: Any) -> None:
        self.box = box
        self.size = 0
        self.kept: list[Any] = []  # what a shared fixture or an import added

    def undo(self) -> None:
        """Take out what was added since it was last settled."""
        box = self.box
        try:
            if isinstance(box, _SEQUENCES):
                _truncate(box, self.kept)
            elif not self.kept:
                box.clear()
            else:
                keep = set(self.kept)
                for member in [m for m in list(box) if m not in keep]:
                    if isinstance(box, _SETS):
                        box.discard(member)
                    else:
                        box.pop(member, None)
        except Exception:  # a member's own __hash__/__eq__, a thread resizing it: leave it
            pass
        self.size = len(box)

    def accept(self) -> None:
        """What it holds now stays."""
        try:
            self.kept = list(self.box)
        except Exception:
            self.kept = []
        self.size = len(self.box)


class _Global:
    """One name the repository's code rebinds -- a module global (``space`` a module's dict),
    or an attribute of one of its classes or module-level instances (``owner``) -- and the
    value that stays."""

    __slots__ = ("kept", "name", "owner", "space")

    def __init__(self, space: Any, name: str, owner: Any = None) -> None:
        self.space, self.name, self.owner = space, name, owner
        self.kept = self.now()

    def now(self) -> Any:
        return self.space.get(self.name, _MISSING)

    def undo(self) -> None:
        if isinstance(self.owner, type):  # a class's namespace is read-only: through type
            if self.kept is _MISSING:
                type.__delattr__(self.owner, self.name)
            else:
                type.__setattr__(self.owner, self.name, self.kept)
        elif self.kept is _MISSING:
            self.space.pop(self.name, None)
        else:
            self.space[self.name] = self.kept

    def accept(self) -> None:
        self.kept = self.now()


class Carriers:
    """The repository's empty containers, and what each test begins with in them."""

    def __init__(self) -> None:
        self._pending: list[Any] = []  # repository modules not scanned yet
        self._modules: set[int] = set()
        self._names: set[str] = set()  # the repository's module names
        self._seen: set[int] = set()  # containers already held (``_held`` keeps the ids)
        self._held: list[_Held] = []
        self._full: list[Any] = []  # containers seen full, kept so their ids stay theirs
        self._marks: dict[str, list[int]] = {}  # a shared fixture's or import's sizes at start
        self._globals: list[_Global] = []  # module globals the repository's functions rebind
        self._global_keys: set[tuple[int, str]] = set()
        self._global_marks: dict[str, list[Any]] = {}  # their values as a fixture began
        self.started = False

    def module(self, module: Any) -> None:
        """A repository module was imported (or found imported): scanned as a test begins."""
        if module is None or id(module) in self._modules:
            return
        self._modules.add(id(module))
        self._pending.append(module)

    def begin_test(self) -> None:
        """A test begins: what earlier tests added comes out. Whatever the repository's
        objects do when looked at, the recording goes on (``_guarded``)."""
        self.started = True
        _guarded(self._scan)
        for held in self._held:
            if _size(held.box) != held.size:
                _guarded(held.undo)
        for bound in self._globals:
            if bound.now() is not bound.kept:
                _guarded(bound.undo)

    def mark(self, ctx: str) -> None:
        """A shared fixture or an import begins (``ctx``): what it adds will stay."""
        if self.started:
            self._marks[ctx] = [_size(h.box) for h in self._held]
            self._global_marks[ctx] = [g.now() for g in self._globals]

    def settle(self, ctx: str) -> None:
        """The shared fixture or import ``ctx`` ended."""
        sizes = self._marks.pop(ctx, None) if self._marks else None
        values = self._global_marks.pop(ctx, None) if self._global_marks else None
        if sizes is None:
            return
        for index, size in enumerate(sizes):  # containers held since are settled as new
            held = self._held[index]
            if _size(held.box) != size:
                _guarded(held.accept)
        for index, value in enumerate(values or ()):
            bound = self._globals[index]
            if bound.now() is not value:
                bound.accept()
        _guarded(self._scan)  # an import's own containers, as they are when it ends, are its

    def _scan(self) -> None:
        pending, self._pending = self._pending, []
        for module in pending:
            try:
                space = _GET(module, "__dict__")
                name = space.get("__name__")
            except Exception:
                continue
            if isinstance(name, str):
                self._names.add(name)
        for module in pending:
            try:
                space = _GET(module, "__dict__")
                values = [v for k, v in list(space.items()) if not _dunder(k)]
            except Exception:
                continue
            for value in values:
                _guarded(lambda v=value: self._value(v, deep=True))
            _guarded(lambda m=space, v=values: self._rebound(m, v))

    def _rebound(self, space: dict[str, Any], values: list[Any]) -> None:
        """The globals of ``space`` its own functions and methods rebind, and the attributes
        they store that its classes and module-level instances hold (``cls._instance =
        cls()``, ``_state.current = x``), held."""
        codes: list[Any] = []
        owners: list[Any] = []
        for value in values:
            if isinstance(value, type):
                if getattr(value, "__module__", None) == space.get("__name__"):
                    owners.append(value)
            elif getattr(type(value), "__module__", None) in self._names and not isinstance(
                    value, (types.FunctionType, types.ModuleType)):
                owners.append(value)
            funcs: list[Any] = [value] if isinstance(value, types.FunctionType) else []
            if isinstance(value, type) and getattr(value, "__module__", None) in self._names:
                for inner in list(_OBJECT_GET(value, "__dict__").values()):
                    inner = getattr(inner, "__func__", inner)  # staticmethod, classmethod
                    if isinstance(inner, property):
                        funcs += [f for f in (inner.fget, inner.fset, inner.fdel) if f]
                    elif isinstance(inner, types.FunctionType):
                        funcs.append(inner)
            codes += [f.__code__ for f in funcs
                      if isinstance(f, types.FunctionType) and f.__globals__ is space]
        names: set[str] = set()
        attrs: set[str] = set()
        while codes:
            code = codes.pop()
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
            if _REBINDS.isdisjoint(code.co_code) and _SETS_ATTR.isdisjoint(code.co_code):
                continue
            for op in dis.get_instructions(code):
                if op.opcode in _REBINDS:
                    names.add(str(op.argval))
                elif op.opcode in _SETS_ATTR:
                    attrs.add(str(op.argval))
        held = [(space, name, None) for name in names]
        for owner in owners if attrs else ():
            try:
                inner = _OBJECT_GET(owner, "__dict__")
            except Exception:  # slots only: nothing a store rebinds in a dict
                continue
            held += [(inner, name, owner) for name in attrs if name in inner]
        for inner, name, owner in held:
            key = (id(inner), name)
            if key not in self._global_keys and not _dunder(name):
                self._global_keys.add(key)
                self._globals.append(_Global(inner, name, owner))

    def _value(self, value: Any, *, deep: bool) -> None:
        if type(value) in _KINDS:
            self._hold(value)
        elif isinstance(value, types.FunctionType):
            self._function(value)
        elif isinstance(value, (staticmethod, classmethod)):
            inner = getattr(value, "__func__", None)  # any callable: ``staticmethod(gettz)``
            if isinstance(inner, types.FunctionType):
                self._function(inner)
        elif not deep:
            return
        elif isinstance(value, type):
            if getattr(value, "__module__", None) in self._names:
                for key, inner in list(_OBJECT_GET(value, "__dict__").items()):
                    if not _dunder(key):
                        self._value(inner, deep=False)
        elif getattr(type(value), "__module__", None) in self._names:
            try:  # a module-level instance of one of the repository's classes
                inner_space = _OBJECT_GET(value, "__dict__")
            except Exception:
                return
            if isinstance(inner_space, dict):
                for inner in list(inner_space.values()):
                    if type(inner) in _KINDS:
                        self._hold(inner)
                self._hold_namespace(inner_space)

    def _hold_namespace(self, space: dict[str, Any]) -> None:
        """A module-level instance's own namespace: a name added to it later (a
        ``functools.cached_property`` computed by one test, read by the next) comes out as
        each test begins; the names it has now stay."""
        if id(space) in self._seen:
            return
        self._seen.add(id(space))
        held = _Held(space)
        held.accept()
        self._held.append(held)

    def _function(self, func: Any) -> None:
        if getattr(func, "__module__", None) not in self._names:
            return
        for cell in func.__closure__ or ():
            try:
                inner = cell.cell_contents
            except ValueError:
                continue
            if type(inner) in _KINDS:
                self._hold(inner)
        for inner in (func.__defaults__ or ()) + tuple((func.__kwdefaults__ or {}).values()):
            if type(inner) in _KINDS:
                self._hold(inner)

    def _hold(self, box: Any) -> None:
        if id(box) in self._seen:
            return
        try:
            empty = len(box) == 0
        except Exception:
            return
        self._seen.add(id(box))  # seen full, it is never held: a table, not a cache
        if empty:
            self._held.append(_Held(box))
        else:
            self._full.append(box)


def _truncate(box: Any, kept: list[Any]) -> None:
    """A list or deque back to what stays, when it still starts with it; else left alone
    (a test that reordered or took out what a fixture put there)."""
    if len(box) < len(kept) or any(box[i] is not kept[i] for i in range(len(kept))):
        return
    while len(box) > len(kept):
        box.pop()


def _size(box: Any) -> int:
    try:
        return len(box)
    except Exception:  # a weak mapping a thread resized mid-count
        return -1


def _guarded(step: Any) -> Any:
    """``step()``; None when it raised: a container or object of the repository's that
    misbehaves when looked at is left alone, and the recording goes on."""
    try:
        return step()
    except Exception:
        return None


def _dunder(name: Any) -> bool:
    return isinstance(name, str) and name.startswith("__") and name.endswith("__")
