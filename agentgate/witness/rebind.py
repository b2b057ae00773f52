"""A module-level change judged by the names it rebinds (issue 12 item 5).

A module's top level runs once, at import. When what changed there only *binds names* (a
constant, a class body, a function's decorators or defaults, a new function, an import of
the standard library) and does nothing else (``bindings``: binding-only), the change can
reach a test only through those names: code that reads them. So instead of every test that
used the module, the tests that ran code reading a changed name run:

- a function or method of the module that reads the name (a global load), or whose own
  definition changed (a method counts as reading its class);
- code in another module that imported the name (``from m import X``, ``from m import *``),
  followed through that module's own top-level statements: ``Y = X + 1`` rebinds Y there, a
  class deriving from a changed class is changed too;
- code anywhere that reads an attribute of that name (``m.X``, ``obj.X`` for a class
  attribute), or that reads names it computes (``getattr(m, name)``, ``vars(m)``). Where
  the recording watched module reads (``watch``), a function's reads of a module's
  attributes are the ones it was seen making, each judged against the names the change
  rebinds *in that module* (a whole namespace read, ``vars(m)``, counts where ``m`` holds
  one); its text still decides for its own module's globals and for class attributes;
- a module-level statement that calls the project's callables with a changed value is
  binding-only when each callable only computes its result or only makes an instance
  (``join = curry(join)``: ``_PureCalls``), so it rebinds what it binds.

Whatever is not binding-only falls back to the module rule it refines (``blocks.MODULE``:
every test that used the module), and so does a module whose own top-level statement reads
a changed name and is not binding-only (``registry.add(X)``): the change then reached
something no name shows. Everything else a test depends on (files it read, imports that
failed, the conftests above it) is judged as before.
"""

from __future__ import annotations

import builtins
import difflib
import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from agentgate.core.text import listed
from agentgate.witness import bindings, purity
from agentgate.witness.bindings import Module, Reads, Statement
from agentgate.witness.blocks import READ
from agentgate.witness.syntax import STDLIB, Import

# A keeper of analyses between plans: (text, the options, how to make it) -> the analysis.
Kept = Callable[[bytes, str, Callable[[], Module | None]], Module | None]

# In ``Patch.changed[path]``: the module level changed by the names ``Rebound`` holds for it
# (a file read as data still counts as changed).
REBOUND = "<names>"
# Names Python itself reads, unseen by any reader's code: a module's attribute hook, search
# path, identity; a class's operators and protocols (``obj == other`` reads ``__eq__``). A
# change binding one keeps the module rule.
_IMPLICIT_MODULE = frozenset({"__getattr__", "__dir__", "__path__", "__builtins__",
                              "__spec__", "__loader__", "__package__", "__name__", "__file__",
                              "__class__"})
_PLAIN_DUNDERS = frozenset({"__doc__", "__module__", "__qualname__"})
# Read at run time, these read every name of a module (``vars(m)``, ``dir(m)``).
_WHOLE_NAMESPACE = frozenset({"__dict__", "__getattribute__"})


@dataclass(frozen=True, eq=False)
class Rebound:
    names: dict[str, frozenset[str]] = field(default_factory=dict)  # path -> changed names
    members: frozenset[str] = frozenset()  # class attributes that changed (read on instances)
    modules: dict[str, Module] = field(default_factory=dict)  # W's analysis, for the reads
    origin: dict[str, str] = field(default_factory=dict)  # path -> the change it comes from
    # The modules whose own module level changed with a statement that may raise at import.
    sources: frozenset[str] = frozenset()
    # module -> changed pure functions its import ran, whose callers there now rebind names
    # (``import_callers``): those runs no longer count as the module's own change.
    at_import: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)
    # The recording saw every read of a module's attribute (``watch``): a function's reads
    # by computed names are the ``READ`` units its test has, not every changed name.
    observed: bool = False
    # Modules whose reads the recording did not all see (``watch``: a class of their own,
    # module code run without an import, imported before recording started): their own
    # functions' reads of module attributes are judged from their text.
    unwatched: frozenset[str] = frozenset()

    @cached_property
    def resolve(self) -> Resolver:
        return Resolver(self.modules)

    def __bool__(self) -> bool:
        return any(self.names.values()) or bool(self.members)

    @cached_property
    def spelled(self) -> frozenset[str]:
        """Every changed module-level name, as an attribute of a module reads it."""
        return frozenset(n for names in self.names.values() for n in names)

    def hit(self, path: str, block: str) -> str | None:
        """Why the block ``path::block``, run by a test, reads a changed name, or None; for a
        ``READ`` unit, why that read (of the module at ``path``) is of a changed name: one
        the change rebinds in that module (one it imported from a changed module counts,
        ``_Propagation``), or its whole namespace while it has one. A module judged by the
        module rule instead runs every test that read it (a read depends on its file)."""
        if block.startswith(READ):
            name = block[len(READ):]
            own = self.names.get(path, frozenset())
            if name in own or (name in _WHOLE_NAMESPACE and own):
                return f"{path}.{name} read at run time (module level: a changed name)"
            return None
        names = self.names.get(path, frozenset())
        top = block.split(".")[0].split("#")[0]
        where = f"{path}::{block}"
        if top in names:
            return f"{where} (its definition changed at module level{self._from(path)})"
        module = self.modules.get(path)
        reads = module.reads.get(block) if module is not None else None
        if reads is None:
            return f"{where} (module-level change; this code could not be analysed)"
        for item in reads.imports:  # ``from m import X`` inside the function
            for source in self.resolve(path, item) if item.name is not None else ():
                changed = self.names.get(source, frozenset())
                if item.name in changed or (item.name == "*" and changed):
                    return f"{where} imports {item.name} (module level of {source})"
        return _reading(where, reads, names, self.spelled, self.members, self._from(path),
                        observed=self.observed and path not in self.unwatched)

    def _from(self, path: str) -> str:
        origin = self.origin.get(path)
        return f" of {origin}" if origin and origin != path else ""


def _reading(where: str, reads: Reads, names: frozenset[str] | set[str],
             spelled: frozenset[str] | set[str], members: frozenset[str] | set[str],
             origin: str = "", *, observed: bool = False) -> str | None:
    """Why code with these reads reads a changed name: a global of its own module, a
    module's attribute, a class attribute, or names it computes; None when it does not.
    ``observed``: the recording saw the code's reads of module attributes (``watch``): they
    are the test's ``READ`` units, judged by ``Rebound.hit`` as they happened (a read on a
    branch the test did not take, or of a library's module, ``pygments.__version__``, is no
    read of a changed name), so only what it could not see (its own namespace by
    ``globals()``, evaluated text) counts among the names it computes."""
    found = sorted(reads.loads & names)
    if found:
        return f"{where} reads {found[0]} (module level{origin})"
    if reads.own_namespace and names:
        return f"{where} reads its module's names it computes (module level{origin})"
    found = ([] if observed else sorted(reads.module_attrs & spelled)) or sorted(
        reads.attrs & members)
    if found:
        return f"{where} reads .{found[0]} (module level: a changed name)"
    unseen = reads.opaque_modules if observed else reads.dynamic_modules
    if (reads.dynamic_modules and unseen and spelled) or (reads.dynamic and members):
        # Which names it may read: the new-user trial's "reads names it computes (module
        # level: a changed name)" named none of them.
        may = sorted({*(spelled if reads.dynamic_modules and unseen else ()),
                      *(members if reads.dynamic else ())})
        shown = listed(may, 3)
        return f"{where} reads names it computes, which may be a changed one ({shown})"
    return None


@dataclass(frozen=True)
class Outcome:
    rebound: Rebound
    fallback: frozenset[str]  # modules judged by the module rule after all
    blocks: dict[str, frozenset[str]]  # path -> function blocks changed (the module's own)


@dataclass(frozen=True)
class AtImport:
    """Changed functions that ran while modules were imported: ``ran[module]`` is every
    function the recording saw run during that module's import, ``changed[path]`` the
    changed functions of a modified module with its head text."""

    ran: Mapping[str, frozenset[tuple[str, str]]] = field(default_factory=dict)
    changed: Mapping[str, tuple[bytes, frozenset[str]]] = field(default_factory=dict)


def judge(
    pairs: Mapping[str, tuple[bytes, bytes]],
    universe: Mapping[str, bytes],
    *,
    quiet_import: Callable[[str], bool],
    at_import: AtImport | None = None,
    unwatched: frozenset[str] | None = None,
    known: Iterable[str] = (),
    top_names: frozenset[str] | None = None,
    keeper: Kept | None = None,
) -> Outcome:
    """``pairs``: the modified modules whose top level changed (W's text, head's text);
    ``universe``: W's text of every module the witness saw run, for following names;
    ``quiet_import(path)``: the recording saw no repository function run while that module
    was imported (so its classes' bases ran no project code when they were made);
    ``at_import``: changed functions the recording saw run at some module's import;
    ``unwatched``: modules whose attribute reads the recording did not see (``watch``; None:
    it saw none), judged by the module rule when their names change; ``known``: every path of
    the repository the witness names (where a class's base may come from); ``keeper``: the
    analyses of the universe's texts kept between plans (``witness.analysed``)."""
    modules: dict[str, Module] = {}
    shadowed = _shadowed(universe.keys() | pairs.keys() | {p for p in known if p.endswith(".py")},
                         top_names)
    shown = ",".join(sorted(shadowed))
    for path, text in universe.items():
        quiet = quiet_import(path)

        def made(text: bytes = text, quiet: bool = quiet) -> Module | None:
            return bindings.analyse(text, quiet_import=quiet, shadowed=shadowed)

        found = made() if keeper is None else keeper(
            text, f"quiet={quiet};shadowed={shown}", made)
        if found is not None:
            modules[path] = found
    unparsed = len(modules) < len(universe)
    stored = {n for m in modules.values() for n in m.patched}
    names: dict[str, set[str]] = {}
    attrs: set[str] = set()
    fallback: set[str] = set()
    statements: dict[str, list[Statement]] = {p: list(m.statements) for p, m in modules.items()}
    changed_blocks: dict[str, frozenset[str]] = {}
    raising: set[str] = set()
    resolver = Resolver(modules.keys() | pairs.keys() | {p for p in known if p.endswith(".py")})
    analysed_pairs: list[Module | None] = []
    stores: list[tuple[str, Statement]] = []
    for path, (old_text, new_text) in pairs.items():
        quiet = quiet_import(path)
        old = bindings.analyse(old_text, quiet_import=quiet, digests=True, shadowed=shadowed)
        # Nothing recorded the head's text: no evidence for its classes.
        new = bindings.analyse(new_text, digests=True, shadowed=shadowed)
        analysed_pairs += [old, new]
        if old is not None and new is not None:
            stores += [(path, s) for s in _differing(old, new)]
        delta = None if old is None or new is None or _library_class(
            path, old, new, resolver) else _delta(old, new, quiet)
        if delta is None or old is None or new is None:
            fallback.add(path)
            continue
        names[path], more_attrs = delta
        attrs |= more_attrs
        if any(s.raises for run in _unmatched(old.statements, new.statements) for s in run[1]):
            raising.add(path)
        statements[path] = _union(old.statements, new.statements)
        changed_blocks[path] = _changed_blocks(old_text, new_text)
        modules[path] = old
    origin = {p: p for p in names}
    for path, stmt in stores:
        _stored_into(path, stmt, resolver, names, fallback, origin)
    texts = [*((p, t) for p, t in universe.items() if p not in pairs),
             *((p, t) for p, pair in pairs.items() for t in pair)]
    # What any module stores into or through (``Box.__init__ = f``): every text the witness
    # saw run and both of each changed one; a text that does not parse may store anything.
    patched = None if unparsed or None in analysed_pairs else frozenset(
        stored | {n for m in analysed_pairs if m is not None for n in m.patched})
    propagation = _Propagation(statements, modules, quiet_import,
                               _PureCalls(texts, resolver, patched))
    resolved = _import_callers(at_import or AtImport(), propagation, universe, names,
                               fallback, origin)
    raising |= resolved.keys()
    propagation.run(names, attrs, fallback, origin)
    fallback |= {p for p, n in names.items() if n and p in (unwatched or ())}
    kept = {p: frozenset(n) for p, n in names.items() if p not in fallback and n}
    rebound = Rebound(kept, frozenset(attrs), modules,
                      {p: o for p, o in origin.items() if p in kept},
                      frozenset(raising - fallback),
                      {p: u for p, u in resolved.items() if p not in fallback},
                      observed=unwatched is not None, unwatched=unwatched or frozenset())
    return Outcome(rebound, frozenset(fallback),
                   {p: b for p, b in changed_blocks.items() if p not in fallback})


def store_targets(pairs: Mapping[str, tuple[bytes, bytes]], known: Iterable[str]) -> set[str]:
    """The modules whose names the changed statements of ``pairs`` set (``_stored_into``):
    their readers belong among the code ``judge`` reads."""
    resolver = Resolver(pairs.keys() | {p for p in known if p.endswith(".py")})
    names: dict[str, set[str]] = {}
    fallback: set[str] = set()
    for path, (old_text, new_text) in pairs.items():
        old = bindings.analyse(old_text, digests=True)
        new = bindings.analyse(new_text, digests=True)
        if old is not None and new is not None:
            for stmt in _differing(old, new):
                _stored_into(path, stmt, resolver, names, fallback, {})
    return set(names) | fallback


def _differing(old: Module, new: Module) -> list[Statement]:
    """The top-level statements of either text that the other lacks (``_unmatched``)."""
    return [s for run in _unmatched(old.statements, new.statements) for side in run
            for s in side]


def _stored_into(path: str, stmt: Statement, resolver: Resolver, names: dict[str, set[str]],
                 fallback: set[str], origin: dict[str, str]) -> None:
    """A changed statement that sets an attribute of an imported module, or of something
    one holds (``app.core.LIMIT = 4``, ``settings.X = 1`` for ``from app.core import
    settings``), rebinds that name in that module for everyone who reads it afterwards,
    whichever module they import it from (a helper imported while collecting one test file
    changes what another file's tests read). A name it computes sends the module to the
    module rule."""
    for item, chain in stmt.stores:
        if item.name is None:  # ``import a.b`` binds ``a``; ``import a.b as c`` binds a.b
            top = item.module.split(".")[0]
            base = [top] if item.alias == top else item.module.split(".")
        elif item.name == "*":
            continue
        else:
            base = [*filter(None, item.module.split(".")), item.name]
        full = [*base, *chain[:-1]]
        for k in range(len(full), 0, -1):
            found = resolver(path, Import("", ".".join(full[:k]), None, item.level))
            if not found:
                continue
            name = full[k] if k < len(full) else chain[-1]
            for target in found:
                if not name:
                    fallback.add(target)
                else:
                    names.setdefault(target, set()).add(name)
                    origin.setdefault(target, path)
            break


# --- a changed function run at import: what its callers there rebind ----------------------

def _import_callers(
    at_import: AtImport, propagation: _Propagation, universe: Mapping[str, bytes],
    names: dict[str, set[str]], fallback: set[str], origin: dict[str, str],
) -> dict[str, frozenset[tuple[str, str]]]:
    """A changed function that only computes its result (``purity``: before and after)
    and ran at a module's import, called there only by top-level statements that are
    binding-only but for that call (``__version__ = _get_version(INFO)``): the change
    rebinds what those statements bind. Anything else -- a method, a caller that is not
    binding-only, another function run at that import that reads it -- leaves the run to
    the module rule (every test using the module)."""
    resolved: dict[str, frozenset[tuple[str, str]]] = {}
    pure: dict[str, frozenset[str]] = {}  # path -> changed functions pure before and after
    for path, (head, funcs) in at_import.changed.items():
        before = bindings.pure_functions(universe.get(path, b""), funcs)
        pure[path] = before & bindings.pure_functions(head, before)
    for module, ran in at_import.ran.items():
        hits = {(p, f) for p, f in ran
                if f in at_import.changed.get(p, (b"", frozenset()))[1]}
        if not hits or module in fallback or module not in propagation.statements:
            continue
        bound: set[str] = set()
        for path, func in sorted(hits):
            found = _callers(module, path, func, ran, propagation) if (
                func in pure.get(path, frozenset())) else None
            if found is None:
                break
            bound |= found
        else:
            names.setdefault(module, set()).update(bound)
            origin.setdefault(module, sorted(hits)[0][0])
            resolved[module] = frozenset(hits)
    return resolved


def _callers(
    module: str, path: str, func: str, ran: frozenset[tuple[str, str]],
    propagation: _Propagation,
) -> set[str] | None:
    """What the statements of ``module`` calling ``path``'s (pure) ``func`` bind, or None."""
    if "." in func:
        return None
    statements = propagation.statements[module]
    aliases = {func} if module == path else {func} | {
        i.alias for s in statements for i in s.imports
        if i.name == func and path in propagation.resolve(module, i)}
    for other_path, block in ran - {(path, func)}:
        other = propagation.modules.get(other_path)
        reads = other.reads.get(block) if other is not None else None
        if reads is None or reads.loads & aliases or func in reads.module_attrs:
            return None  # called through another function run at that import, maybe
    callers = [s for s in statements if s.reads.loads & aliases or func in s.reads.module_attrs]
    if not callers or any(s.name or s.calls is None or not s.calls <= aliases
                          for s in callers):
        return None
    return {n for s in callers for n in s.binds}


# --- one module: which names its change rebinds -------------------------------------------

Found = tuple[set[str], set[str]]  # (module-level names, class attribute names)


def _delta(old: Module, new: Module, quiet: bool) -> Found | None:
    """What the change rebinds, or None when it is not binding-only. A class that went away
    or stayed with the same header was made at W, where ``quiet`` is the recording's
    evidence about its bases; a new class has no such evidence."""
    names: set[str] = set()
    attrs: set[str] = set()
    for gone, came in _unmatched(old.statements, new.statements):
        pending = {s.name: s for s in came if s.name}
        results: list[Found | None] = []
        for stmt in gone:
            other = pending.pop(stmt.name, None) if stmt.name else None
            if other is not None and other.header == stmt.header:
                results.append(_class_delta(stmt, other, quiet))
                continue
            results.append(_whole(stmt, quiet))
            if other is not None:
                results.append(_whole(other, False))
        results += [_whole(s, False) for s in came if not s.name or s.name in pending]
        for found in results:
            if found is None:
                return None
            names |= found[0]
            attrs |= found[1]
    implicit = names & _IMPLICIT_MODULE or {a for a in attrs if a.startswith("__")
                                            and a.endswith("__") and a not in _PLAIN_DUNDERS}
    return None if implicit else (names, attrs)


def _library_class(path: str, old: Module, new: Module, resolve: Resolver) -> bool:
    """Whether a class the change touches derives from a library's class (not the standard
    library's or a known one's, not the repository's): the library's metaclass or
    ``__init_subclass__`` may keep the class (an ORM's models, a plugin registry) where no
    name of it is read again, and the recording does not trace a library's code, so it has
    no evidence either way."""
    imports = {i.alias: i for m in (old, new) for s in m.statements for i in s.imports}
    classes = {s.name for m in (old, new) for s in m.statements if s.name}

    def library(stmt: Statement) -> bool:
        for base in stmt.bases:
            item = imports.get(base)
            if item is None:
                # A class of this module or a builtin; any other name (``Base =
                # declarative_base()``) is whatever a call made: anything.
                if base not in classes and not hasattr(builtins, base):
                    return True
            elif (not item.level and not item.stdlib and purity.qualified(item) is None
                    and not resolve(path, item)):
                return True
        return any(library(m) for m in stmt.members if m.name)

    return any(library(s) for run in _unmatched(old.statements, new.statements)
               for side in run for s in side if s.name)


def _whole(stmt: Statement, quiet: bool) -> Found | None:
    """A statement that appeared or went away: everything it binds, if binding-only."""
    if not _pure(stmt, quiet) or stmt.imports_project:
        return None
    return set(stmt.binds), {n for m in stmt.members for n in m.binds}


def _class_delta(old: Statement, new: Statement, quiet: bool) -> Found | None:
    """A class whose header stayed: its name and the attributes its changed members bind,
    and those of the members that read them (``B = A * 2`` in the class body)."""
    if not (old.pure and (quiet or not old.project_base)):
        return None
    attrs: set[str] = set()
    for gone, came in _unmatched(old.members, new.members):
        for member in (*gone, *came):
            if not _pure(member, quiet) or member.imports_project:
                return None
            attrs |= member.binds
    grew = True
    while grew:
        grew = False
        for member in _union(old.members, new.members):
            if member.reads.loads & attrs and not member.binds <= attrs:
                if not _pure(member, quiet):
                    return None
                attrs |= member.binds
                grew = True
    return {new.name}, attrs


def _pure(stmt: Statement, quiet: bool) -> bool:
    """Binding-only when run (again): a class's header and every member too."""
    return (stmt.pure and (quiet or not stmt.project_base)
            and all(_pure(m, quiet) for m in stmt.members))


def _unmatched(
    old: Iterable[Statement], new: Iterable[Statement]
) -> list[tuple[list[Statement], list[Statement]]]:
    """The runs of statements that differ, in order (a moved statement differs)."""
    before, after = list(old), list(new)
    matcher = difflib.SequenceMatcher(
        None, [s.digest for s in before], [s.digest for s in after], autojunk=False
    )
    return [(before[i1:i2], after[j1:j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _union(old: Iterable[Statement], new: Iterable[Statement]) -> list[Statement]:
    seen: dict[str, Statement] = {}
    for stmt in (*old, *new):
        seen.setdefault(stmt.digest, stmt)
    return list(seen.values())


def _changed_blocks(old: bytes, new: bytes) -> frozenset[str]:
    from agentgate.witness import blocks

    before, after = blocks.parse(old), blocks.parse(new)
    if before is None or after is None:
        return frozenset()
    old_sums, new_sums = before.checksums(), after.checksums()
    old_sums.pop(blocks.MODULE)
    new_sums.pop(blocks.MODULE)
    return frozenset(n for n in old_sums.keys() | new_sums.keys()
                     if old_sums.get(n) != new_sums.get(n))


# --- every module: where the changed names go ---------------------------------------------

class _Propagation:
    """Follow changed names through every module's top level until nothing more changes:
    an import of a changed name rebinds it; a binding-only statement reading one rebinds
    what it binds; any other statement reading one sends its module to the module rule."""

    def __init__(self, statements: dict[str, list[Statement]], modules: dict[str, Module],
                 quiet_import: Callable[[str], bool],
                 pure_call: Callable[[str, tuple[str | None, str]], bool] = (
                     lambda path, target: False)) -> None:
        self.statements = statements
        self.modules = modules
        self.quiet = quiet_import
        self.pure_call = pure_call
        self.resolve = Resolver(statements)

    def run(self, names: dict[str, set[str]], attrs: set[str], fallback: set[str],
            origin: dict[str, str]) -> None:
        grew = True
        while grew:
            grew = False
            spelled = {n for p, s in names.items() if p not in fallback for n in s}
            for path, stmts in self.statements.items():
                if path not in fallback and self.module(path, stmts, names, attrs, fallback,
                                                        spelled, origin):
                    grew = True

    def module(self, path: str, stmts: list[Statement], names: dict[str, set[str]],
               attrs: set[str], fallback: set[str], spelled: set[str],
               origin: dict[str, str]) -> bool:
        """One pass over a module's statements; whether anything grew."""
        own = names.setdefault(path, set())
        size = (len(own), len(attrs))
        for stmt in stmts:
            imported, sources = self.imported(stmt, path, names, fallback)
            touched = _reading("", stmt.reads, own, spelled, attrs) is not None
            if not (imported or touched):
                continue
            if touched and not _pure(stmt, self.quiet(path)) and not self.given(path, stmt):
                fallback.add(path)
                return True
            # An import rebinds the changed names it imports; any other statement that
            # read a changed name rebinds all it binds (a class: every attribute too).
            own |= imported
            if touched:
                own |= stmt.binds
                attrs |= {n for m in stmt.members for n in m.binds}
            if sources and path not in origin:
                origin[path] = origin.get(sources[0], sources[0])
        return (len(own), len(attrs)) != size

    def given(self, path: str, stmt: Statement) -> bool:
        """Binding-only but for calls of the project's callables, each of which only
        computes its result or makes an instance (``join = curry(join)``): run again with
        a changed value, it rebinds what it binds and nothing else."""
        return (not stmt.name and not stmt.imports_project and bool(stmt.calls)
                and all(self.pure_call(path, t) for t in stmt.targets))

    def imported(self, stmt: Statement, path: str, names: dict[str, set[str]],
                 fallback: set[str]) -> tuple[set[str], list[str]]:
        """The names this statement's imports bind to a changed value, and from where."""
        found: set[str] = set()
        sources: list[str] = []
        for item in stmt.imports:
            if item.name is None:
                continue  # a module object: what is read from it is an attribute
            for source in self.resolve(path, item):
                changed = names.get(source, set())
                if source in fallback or not changed:
                    continue  # a fallen-back module's users depend on it whole
                module = self.modules.get(source)
                if item.name == "*":
                    got = module.public(changed) if module is not None else changed
                else:
                    got = {item.alias} if item.name in changed else set()
                if got:
                    found |= got
                    sources.append(source)
        return found, sources


class _PureCalls:
    """Whether a project callable a module's statement calls only computes its result or
    makes an instance (``bindings.callables``), found from that module as Python finds it:
    a name of the module, or an attribute of a module it imported; through ``from m import
    X`` and star imports of the repository's modules. Anything else -- a library's
    callable, a module that binds names no text spells, a name bound by something other
    than such a ``def`` or ``class`` -- is not. Judged from W's text (and head's, for a
    changed module: both must agree), on demand."""

    def __init__(self, texts: Iterable[tuple[str, bytes]], resolve: Resolver,
                 patched: frozenset[str] | None) -> None:
        self.texts: dict[str, list[bytes]] = {}
        for path, text in texts:
            self.texts.setdefault(path, []).append(text)
        self.resolve = resolve
        # Every name some module's top level stores into or through (None: unknown).
        self.patched = patched
        self.parsed: dict[str, list[bindings.Callables] | None] = {}

    def __call__(self, path: str, target: tuple[str | None, str]) -> bool:
        receiver, name = target
        if self.patched is None or name in self.patched:
            return False
        if receiver is None:
            return self.lookup(path, name, set()) is True
        calling = self.of(path)
        if not receiver or calling is None or any(receiver in m.other for m in calling):
            return False  # the name is bound by something else than an import too
        modules = [found for m in calling for i in m.imports if i.alias == receiver
                   for found in self.modules_of(path, i)]
        return bool(modules) and all(
            m is not None and self.lookup(m, name, set()) is True for m in modules)

    def of(self, path: str) -> list[bindings.Callables] | None:
        if path not in self.parsed:
            found = [bindings.callables(t) for t in self.texts.get(path, [])]
            self.parsed[path] = None if not found or None in found else [
                f for f in found if f is not None]
        return self.parsed[path]

    def modules_of(self, path: str, item: Import) -> list[str | None]:
        """The repository module an import binds (``import a.b`` binds ``a``, ``import a.b
        as c`` binds ``a.b``: both when the alias cannot tell; ``from a import b``), None
        where it is none or cannot be told."""
        if item.name is None:
            dotted = [item.module]
            top = item.module.split(".")[0]
            if "." in item.module and item.alias == top:
                dotted.append(top)
        else:
            dotted = [f"{item.module}.{item.name}" if item.module else item.name]
        found: list[str | None] = []
        for name in dotted:
            paths = self.sources(path, Import(item.alias, name, None, item.level))
            found.append(paths[0] if len(paths) == 1 else None)
        return found

    def sources(self, path: str, item: Import) -> list[str]:
        """The repository modules an import of ``item.module`` gets. ``Resolver`` matches
        any dotted suffix, which errs towards more modules where more means more tests;
        here it would err the other way (``from somelib import make`` is not the pure
        ``make`` of ``app/vendor/somelib.py``), so an absolute import counts only a module
        at the tree's top or under ``src/``."""
        found = self.resolve(path, item)
        if item.level:
            return found
        wanted = item.module.split(".")
        return [p for p in found if _dotted(p) in (wanted, ["src", *wanted])]

    def lookup(self, path: str, name: str, seen: set[tuple[str, str]]) -> bool | None:
        """True: ``name`` in module ``path`` is a pure callable; False: it may be anything
        else; None: the module does not bind it."""
        if (path, name) in seen:
            return False
        seen.add((path, name))
        modules = self.of(path)
        if modules is None or any(m.dynamic for m in modules):
            return False
        verdicts: set[bool | None] = set()
        for module in modules:
            verdicts.add(self._one(path, module, name, seen))
        if False in verdicts or len(verdicts) > 1:
            return False  # unknown somewhere, or bound in one text and not the other
        return verdicts.pop()

    def _one(self, path: str, module: bindings.Callables, name: str,
             seen: set[tuple[str, str]]) -> bool | None:
        """Every way the module binds ``name`` (its own ``def``/``class``, an import of it,
        a star import that exports it) must give a pure callable: whichever runs last."""
        if name in module.other:
            return False
        found: set[bool | None] = {True} if name in module.pure else set()
        for item in module.imports:
            if item.alias != name and item.name != "*":
                continue
            sources = self.sources(path, item) if item.name is not None else []
            if not sources:
                return False  # a module, a library's callable, everything of a library
            looked = {self.lookup(s, name if item.name == "*" else item.name or "", seen)
                      for s in sources}
            if item.name != "*" and None in looked:
                return False  # imported from a module that does not bind it
            found |= looked - {None}
        if not found:
            return None
        return found == {True} or False


class Resolver:
    """Which of the known modules an import names: by dotted suffix (``pkg.mod`` is
    ``src/pkg/mod.py`` or ``pkg/mod/__init__.py``), relative ones from the importer."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.known = set(paths)
        self.by_name: dict[str, list[str]] = {}
        for path in sorted(self.known):
            parts = _dotted(path)
            for i in range(len(parts)):
                self.by_name.setdefault(".".join(parts[i:]), []).append(path)

    def __call__(self, importer: str, item: Import) -> list[str]:
        if not item.level:
            return self.by_name.get(item.module, [])
        folder = posixpath.dirname(importer)
        for _ in range(item.level - 1):
            folder = posixpath.dirname(folder)
        base = [p for p in folder.split("/") if p] + [p for p in item.module.split(".") if p]
        if not base:
            return [p for p in ("__init__.py",) if p in self.known]
        candidates = ("/".join([*base[:-1], base[-1] + ".py"]), "/".join([*base, "__init__.py"]))
        return [p for p in candidates if p in self.known]


def _shadowed(paths: set[str], top_names: frozenset[str] | None) -> frozenset[str]:
    """Standard-library names that may get the repository's module (a flat layout's
    ``signal.py``), so they are no standard-library alias: those the recording saw a
    repository module imported under (``top_names``), and, where it cannot tell (an
    older recording), any the repository has a module of, wherever (a folder the project
    puts on ``sys.path`` itself may be a package's: a package's ``operator.py`` is no
    evidence of itself)."""
    if top_names is not None:
        return top_names & STDLIB
    return frozenset(n for p in paths for n in _dotted(p)[-1:] if n in STDLIB)


def _dotted(path: str) -> list[str]:
    stem = path[:-3] if path.endswith(".py") else path
    parts = stem.split("/")
    return parts[:-1] if parts[-1] == "__init__" else parts
