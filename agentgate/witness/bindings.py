"""What a module's top-level statements bind and read, and what each function block reads.

The static half of judging a module-level change by the names it rebinds (issue 12 item 5,
``witness.rebind``). A module's top level is cut into *statements* (a class with its body, a
function's header with its decorators and defaults, an assignment, an import, an ``if``
with everything under it), each with the names it binds, the names and attributes it reads,
and whether it is *binding-only*: running it does nothing but bind names -- no call except
to a known side-effect-free callable, no store into another object. A function *block*
(``blocks``: a function or method body, named as ``blocks`` names it) gets the names and
attributes its code reads, and whether it reads names it cannot spell (``getattr`` with a
computed name, ``vars``, ``globals``, ``__dict__``, ``eval``).

Everything here over-approximates what code reads (a name that is also a local counts) and
under-approximates what is binding-only (anything unknown is not): the rule that uses it
then runs more tests, never fewer.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from agentgate.witness import blocks, purity, watch
from agentgate.witness.syntax import FUNCS, Import, base_name, binds, import_items, walk_now

# Reading names no one can spell: any changed name may be what such code reads.
_DYNAMIC_CALLS = frozenset({"vars", "globals", "locals", "eval", "exec", "dir", "__import__"})
_DYNAMIC_ATTRS = frozenset({"__dict__", "__getattribute__", "getmembers"})
# Lookups that bypass a module's class, so no recording sees them.
_BYPASS = watch.BYPASS
# Of those, reads a recording cannot see (``watch`` sees every read of a module object through
# its attribute lookup): the code's own namespace, by ``globals()`` or in evaluated text, and
# lookups that bypass the module's class (``object.__getattribute__(m, name)``).
_OPAQUE_CALLS = frozenset({"globals", "locals", "eval", "exec", "__import__"})
# ``dir()`` too: the names of the scope it runs in (a module's, a class body's), as ``vars()``.
_OWN_NAMESPACE = frozenset({"globals", "locals", "vars", "dir"})
_LITERALS = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp,
             ast.SetComp, ast.DictComp)


@dataclass(frozen=True)
class Reads:
    """What some code reads: global ``loads``; attribute names (``attrs``: of any object,
    as a class attribute is read on an instance), of them those read on a module
    (``module_attrs``: the receiver is an imported name, or the code gets modules by
    computed names, ``import_module``); and whether it reads names it cannot spell, of any
    object (``dynamic``) or of a module (``dynamic_modules``: ``getattr(module, name)``,
    ``vars(module)``, ``globals()``, ``eval``)."""

    loads: frozenset[str]
    attrs: frozenset[str]
    module_attrs: frozenset[str]
    dynamic: bool
    dynamic_modules: bool
    imports: tuple[Import, ...] = ()  # the code's own imports (a function's local ones)
    # Of the module reads it cannot spell, some no recording sees either (``_OPAQUE_CALLS``).
    opaque_modules: bool = True
    # It reads its own module's names by computed names (``globals()``, ``locals()``,
    # ``vars()``): any of them, but no other module's (those are reads of a module object).
    own_namespace: bool = False


@dataclass(frozen=True)
class Statement:
    digest: str  # the statement as the parser sees it, function bodies left out
    binds: frozenset[str]
    reads: Reads
    # Binding-only when run again with other values (``purity``): no call but a known
    # side-effect-free one, no store into another module's object. For a class: its header
    # only (decorators, bases, keywords); each member says it for itself.
    pure: bool
    # It imports a module outside the standard library: a *changed* import may run project
    # code at another moment (a registration, a patch), so it is never binding-only.
    imports_project: bool = False
    # A class deriving from a class of the project (or of an unknown library): making it may
    # run that class's __init_subclass__ or metaclass. Binding-only only where the recording
    # saw no repository code run while the module was imported.
    project_base: bool = False
    imports: tuple[Import, ...] = ()
    name: str = ""  # a class's name, when the statement is a class
    header: str = ""  # a class's decorators, bases and keywords, digested
    members: tuple[Statement, ...] = ()  # a class's body
    # It may raise when run (anything but literals bound to names, a docstring, a plain
    # ``def``): an import that fails fails every test importing the module.
    raises: bool = True
    # Attributes it sets on what an import names (``app.core.LIMIT = 4``, ``setattr(core,
    # "LIMIT", 4)``, ``core.TABLE["k"] = 4``): (the import, the attribute chain after it,
    # ending with the name set; "" for a name it computes).
    stores: tuple[tuple[Import, tuple[str, ...]], ...] = ()
    # Binding-only but for calls to these callables of the project (by the name it calls
    # them); None when it is not binding-only even so.
    calls: frozenset[str] | None = None
    # A class's bases, by the name they start from (``models`` of ``models.Model``).
    bases: tuple[str, ...] = ()
    # The project callables it calls, by where they are looked up (``Purity.targets``).
    targets: frozenset[tuple[str | None, str]] = frozenset()


@dataclass(frozen=True)
class Module:
    statements: tuple[Statement, ...]
    reads: dict[str, Reads]  # function block name -> what its code reads
    exports: frozenset[str] | None  # a literal ``__all__``; None when there is none
    # Names its top level stores an attribute or item into, or through (``Box.__init__ =
    # f``, ``box.Box.x = 1``): such a class is not what its text says.
    patched: frozenset[str] = frozenset()

    def public(self, names: Iterable[str]) -> set[str]:
        """Which of ``names`` a star import of this module binds."""
        if self.exports is not None:
            return {n for n in names if n in self.exports}
        return {n for n in names if not n.startswith("_")}


def analyse(
    source: blocks.Source, *, quiet_import: bool = False, digests: bool = False,
    shadowed: frozenset[str] = frozenset(),
) -> Module | None:
    """The module's statements and its blocks' reads; None when it does not parse.
    ``quiet_import``: the recording saw no repository function run while this text was
    imported, so a class nested in another statement that derives from a project class ran
    no project code when it was made (top-level classes say ``project_base`` instead).
    ``digests``: each statement's digest, to tell which changed (else left empty).
    ``shadowed``: standard-library names the repository also has modules of (an import of
    one may be the repository's)."""
    parsed = _parse(source)
    if parsed is None:
        return None
    tree, bodies = parsed
    try:
        scope = _Scope(tree, {id(f) for f in bodies.values()}, quiet_import, digests,
                       shadowed)
        statements = tuple(scope.statement(s) for s in tree.body)
        reads = {name: _scan(_body_nodes(func), scope.aliases, scope.stdlib, scope.bypass)
                 for name, func in bodies.items()}
    except (RecursionError, MemoryError):
        return None
    return Module(statements, reads, _exports(tree), frozenset(scope.stored))


def pure_functions(source: blocks.Source, names: Iterable[str]) -> frozenset[str]:
    """Which of the named function blocks only compute their result (``purity.body``)."""
    parsed = _parse(source)
    if parsed is None:
        return frozenset()
    tree, bodies = parsed
    try:
        scope = _Scope(tree, {id(f) for f in bodies.values()}, False, False)
        return frozenset(n for n in names if n in bodies and scope.pure_body(bodies[n]))
    except (RecursionError, MemoryError):
        return frozenset()


@dataclass(frozen=True)
class Callables:
    """How a module's top level binds names, to judge a call of a project callable by its
    name: ``pure``, only by functions whose body only computes its result or classes whose
    making does nothing else (``purity.constructor``); ``imports``, its imports (a name may
    come from elsewhere); ``other``, by anything else (a decorated function, an assignment,
    a statement that binds it under an ``if`` or ``try``)."""

    pure: frozenset[str]
    imports: tuple[Import, ...]
    other: frozenset[str]
    # Its top level binds names no text spells (``globals()``, ``locals().update``,
    # ``setattr`` on a module, ``exec``) or answers for missing ones (``__getattr__``).
    dynamic: bool = False


def callables(source: blocks.Source) -> Callables | None:
    """The module's ``Callables``; None when it does not parse."""
    parsed = _parse(source)
    if parsed is None:
        return None
    tree, bodies = parsed
    try:
        scope = _Scope(tree, {id(f) for f in bodies.values()}, False, False)
        pure: set[str] = set()
        other: set[str] = set()
        imports: list[Import] = []
        dynamic = False
        for stmt in tree.body:
            dynamic = dynamic or _binds_unspelled(stmt, scope.block_ids)
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                imports += import_items(stmt)
            elif _pure_callable(stmt, scope):
                pure.add(stmt.name)  # type: ignore[attr-defined]
            elif not isinstance(stmt, ast.Delete):  # a name deleted is no callable
                other |= binds(stmt)
    except (RecursionError, MemoryError):
        return None
    return Callables(frozenset(pure - other), tuple(imports), frozenset(other), dynamic)


def _stored_through(nodes: Iterable[ast.AST]) -> set[str]:
    """Every name and attribute on the way to an attribute or item the code made of
    ``nodes`` stores into or deletes."""
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Attribute | ast.Subscript) and not isinstance(
                node.ctx, ast.Load):
            for part in ast.walk(node):
                if isinstance(part, ast.Name):
                    found.add(part.id)
                elif isinstance(part, ast.Attribute):
                    found.add(part.attr)
    return found


_BINDS_UNSPELLED = frozenset({"globals", "locals", "vars", "setattr", "exec", "__import__"})


def _binds_unspelled(stmt: ast.stmt, block_ids: set[int]) -> bool:
    if isinstance(stmt, FUNCS) and stmt.name in ("__getattr__", "__dir__"):
        return True
    return any((isinstance(n, ast.Name) and n.id in _BINDS_UNSPELLED)
               or (isinstance(n, ast.Attribute) and n.attr in ("modules", "__dict__"))
               for n in walk_now(stmt, skip=block_ids, lambdas=True))


def _pure_callable(stmt: ast.stmt, scope: _Scope) -> bool:
    if isinstance(stmt, FUNCS):
        return not stmt.decorator_list and scope.pure_body(stmt)
    return isinstance(stmt, ast.ClassDef) and scope.pure_constructor(stmt)


_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _parse(source: blocks.Source) -> tuple[ast.Module, dict[str, _Function]] | None:
    try:
        text = blocks.decode(source)
        tree = ast.parse(text)
        return tree, _block_functions(tree, blocks.from_tree(tree, text, sums=False))
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return None


def _block_functions(tree: ast.Module, layout: blocks.FileBlocks) -> dict[str, _Function]:
    """Each block's function node, found by the line its body starts on (blocks are the
    outermost functions: no function body is searched)."""
    by_start = {b.start: b.name for b in layout.blocks}
    found: dict[str, _Function] = {}
    for node in (n for stmt in tree.body for n in walk_now(stmt)):
        if isinstance(node, FUNCS) and node.body:
            name = by_start.get(node.body[0].lineno)
            if name is not None and name not in found:
                found[name] = node
    return found


def _exports(tree: ast.Module) -> frozenset[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return None
            return frozenset(str(v) for v in value) if isinstance(value, list | tuple) else None
    return None


def _body_nodes(func: ast.AST) -> list[ast.AST]:
    return [n for stmt in getattr(func, "body", ()) for n in ast.walk(stmt)]


def _scan(nodes: list[ast.AST], imported: Iterable[str],
          stdlib: frozenset[str] = frozenset(), bypass: frozenset[str] = frozenset()) -> Reads:
    """What the code made of ``nodes`` reads; ``imported``: the module's import aliases
    (the code's own imports count too); ``stdlib``: those that only ever name a module of
    the standard library (an attribute read there is no read of the repository's)."""
    own = [i for n in nodes if isinstance(n, ast.Import | ast.ImportFrom)
           for i in import_items(n)]
    bound = set(imported) | {i.alias for i in own}
    # Names bound to a lookup past a module's class (``from inspect import getattr_static
    # as gs``), the module's (``bypass``) and the code's own imports.
    passing = _BYPASS | bypass | {i.alias for i in own if i.name in _BYPASS}
    getter = any(_gets_modules(n) for n in nodes)
    stored = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    foreign = (stdlib - stored) - {i.alias for i in own if not i.stdlib}
    bound -= foreign
    loads: set[str] = set()
    attrs: set[str] = set()
    module_attrs: set[str] = set()
    dynamic = dynamic_modules = opaque = own_namespace = False
    # A computed read of something that may be a value of the namespace (not a literal, not
    # a standard-library module): next to ``globals()`` it may read a module's names.
    loose = False
    # ``globals()``, ``locals()``, ``vars()``: the code's own namespace, not opaque.
    namespace = {id(n.func) for n in nodes if isinstance(n, ast.Call) and not n.args
                 and not n.keywords and isinstance(n.func, ast.Name)
                 and n.func.id in _OWN_NAMESPACE}
    # ``exec``/``eval`` of text in the code's own globals: what the text reads by name is
    # that namespace (unseen, as by ``globals()``); what it reads of a module object goes
    # through the module's attribute lookup, which a recording sees.
    evaluated = {id(n.func) for n in nodes if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name) and n.func.id in ("exec", "eval")
                 and n.args and _textual(n.args[0]) and _own_globals(n, namespace)}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.add(node.id)
            if node.id in passing:  # from inspect import getattr_static [as gs]
                dynamic = dynamic_modules = opaque = True
            if id(node) in namespace or id(node) in evaluated:
                own_namespace = True
            else:
                opaque = opaque or node.id in _OPAQUE_CALLS  # also passed on, not called
        elif isinstance(node, ast.Attribute):
            on_module = _on_module(node.value, bound, getter)
            attrs.add(node.attr)
            if on_module:
                module_attrs.add(node.attr)
            if node.attr in _BYPASS:
                # object.__getattribute__(m, name), inspect.getattr_static(m, name): a
                # module's attribute read past its class, whatever the receiver.
                dynamic = dynamic_modules = opaque = True
            if node.attr in _DYNAMIC_ATTRS:
                dynamic = True
                dynamic_modules = dynamic_modules or on_module
                loose = loose or not _outside(node.value, foreign)
                opaque = opaque or node.attr == "__getattribute__"
        elif isinstance(node, ast.Call) and id(node.func) not in namespace:
            access = _named_access(node, bound, getter)
            if access is not None:
                literal, computed, on_module, receiver = access
                loose = loose or (computed and not _outside(receiver, foreign))
                called = _called(node)
                opaque = opaque or (called in _OPAQUE_CALLS and id(node.func) not in evaluated) or (
                    called == "vars" and not node.args)
                attrs |= literal
                module_attrs |= literal if on_module else set()
                # ``dir(builtins)``, ``getattr(os, name)``: a standard-library module's names
                # or values, never a class attribute of the project's.
                dynamic = dynamic or (computed and not _outside(receiver, foreign))
                dynamic_modules = dynamic_modules or (computed and on_module)
    if own_namespace:
        # What the namespace holds may be a module (``globals()["limits"].LIMIT``): every
        # attribute the code reads may be a module's.
        module_attrs |= attrs
        dynamic_modules = dynamic_modules or loose
    return Reads(frozenset(loads), frozenset(attrs), frozenset(module_attrs), dynamic,
                 dynamic_modules, tuple(own), opaque, own_namespace)


def _module_aliases(tree: ast.Module, imported: set[str]) -> set[str]:
    """Top-level names assigned an imported name or an attribute chain from one, followed
    until no more are found (``m = limits``, ``n = m``)."""
    # One pass over the whole tree (a function's own assignment counts too: more names,
    # never fewer), then the chains among what it found.
    pairs: list[tuple[str, set[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and isinstance(
                node.value, ast.Name | ast.Attribute):
            base = base_name(node.value)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if base is not None and names:
                pairs.append((base, names))
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for base, names in pairs:
            if (base in imported or base in found) and not names <= found:
                found |= names
                grew = True
    return found


def _base_of(node: ast.expr) -> str | None:
    return base_name(node.value if isinstance(node, ast.Subscript) else node)  # Generic[T]


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _gets_modules(node: ast.AST) -> bool:
    """Code that reaches modules by computed names: ``import_module``, ``__import__``,
    ``sys.modules``."""
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in ("import_module", "__import__", "reload")
    return isinstance(node, ast.Attribute) and node.attr == "modules" and (
        isinstance(node.value, ast.Name) and node.value.id == "sys")


def _on_module(receiver: ast.AST | None, bound: set[str], getter: bool) -> bool:
    """Whether an attribute is read on what may be a module: a chain from an imported
    name, or anything but a literal in code that gets modules by computed names."""
    if receiver is None:
        return True
    if isinstance(receiver, _LITERALS):
        return False
    base = base_name(receiver)
    return getter or (base is not None and base in bound)


def _outside(receiver: ast.AST | None, foreign: Collection[str]) -> bool:
    """Whether a read's receiver is surely no value of a namespace: a literal, or a name
    that only ever names a standard-library module (``vars(operator)``)."""
    return isinstance(receiver, _LITERALS) or (
        isinstance(receiver, ast.Name) and receiver.id in foreign)


def _textual(node: ast.expr) -> bool:
    """Whether an expression builds source text (a string, an f-string, ``%``, ``+``,
    ``.format``, ``.join``): code compiled from it is named ``<string>``, which the recording
    watches as evaluated text. A code object (``compile(text, "app/x.py", ...)``) may carry
    a repository file's name, under which its reads would pass for module-level code."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        return _textual(node.left) or (isinstance(node.op, ast.Add) and _textual(node.right))
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("format", "join") and _textual(node.func.value))


def _own_globals(call: ast.Call, namespace: set[int]) -> bool:
    """Whether an ``exec``/``eval`` call runs its text in the caller's own globals: none
    given, or a bare ``globals()`` (``exec(text, globals(), scratch)``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return False  # *args, **kwargs: any globals
    given = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "globals"), None)
    return given is None or (isinstance(given, ast.Call) and id(given.func) in namespace
                             and isinstance(given.func, ast.Name) and given.func.id == "globals")


def _named_access(
    call: ast.Call, bound: set[str], getter: bool
) -> tuple[set[str], bool, bool, ast.AST | None] | None:
    """For a call that reads attributes by name: (the names spelled, whether some name is
    computed, whether it may read a module, the receiver: None when it is anything).
    ``getattr(x, "n")`` reads n of x; ``getattr(x, name)``, ``vars(x)``, ``dir(x)`` read
    names no one can spell;
    ``globals()``, ``vars()``, ``eval``, ``exec`` read the module's own."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else "")
    first = call.args[0] if call.args else None
    if name in _DYNAMIC_CALLS:
        on_module = first is None or name in ("eval", "exec", "__import__") or (
            _on_module(first, bound, getter))
        return set(), True, on_module, first
    if name in ("getattr", "hasattr", "attrgetter", "methodcaller"):
        if name in ("getattr", "hasattr"):
            spelled, receiver = call.args[1:2], first
        else:  # the receiver is whatever the getter is applied to: anything
            spelled, receiver = call.args if name == "attrgetter" else call.args[:1], None
        literal = [a.value for a in spelled
                   if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        on_module = getter if receiver is None else _on_module(receiver, bound, getter)
        names = {p for text in literal for p in text.split(".")}
        return names, len(literal) < len(spelled), on_module, receiver
    return None


class _Scope:
    """One module's import table and top-level names, for its statements' purity."""

    def __init__(self, tree: ast.Module, block_ids: set[int], quiet_import: bool,
                 digests: bool, shadowed: frozenset[str] = frozenset()) -> None:
        self.block_ids = block_ids
        self.digests = digests
        imported: dict[str, str | None] = {}  # alias -> dotted target (None: the project)
        foreign: dict[str, bool] = {}  # alias -> every import of it is the stdlib's
        assigned: set[str] = set()  # names a statement other than an import binds
        items: dict[str, list[Import]] = {}
        for stmt in tree.body:
            for node in walk_now(stmt):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    for item in import_items(node):
                        imported[item.alias] = purity.qualified(item)
                        items.setdefault(item.alias, []).append(item)
                        foreign[item.alias] = foreign.get(item.alias, True) and (
                            item.stdlib and item.name is None
                            and item.module.split(".")[0] not in shadowed)
            if not isinstance(stmt, ast.Import | ast.ImportFrom | ast.Delete):
                assigned |= binds(stmt)
        local = {n for s in tree.body for n in binds(s)} - set(imported)
        self.rules = purity.Purity(imported, local, quiet_import=quiet_import)
        self.rules.own(tree.body)
        # Names that only ever hold a module of the standard library (``import operator``).
        self.stdlib = frozenset(a for a, only in foreign.items() if only) - assigned
        # Names the top level binds to an imported name or an attribute of one (``m =
        # app.limits``): they may hold a module, as the import's own name does.
        self.aliases = frozenset(imported) | _module_aliases(tree, set(imported))
        self.stored: set[str] = set()  # what the statements seen so far store through
        self.items = items  # alias -> every import binding it
        self.bypass = frozenset(a for a, found in self.items.items()
                                if any(i.name in _BYPASS for i in found))

    def statement(self, stmt: ast.stmt) -> Statement:
        nodes = list(walk_now(stmt, skip=self.block_ids, lambdas=True))
        reads = _scan(nodes, self.aliases, self.stdlib, self.bypass)
        self.stored |= _stored_through(nodes)
        items = [i for n in walk_now(stmt) if isinstance(n, ast.Import | ast.ImportFrom)
                 for i in import_items(n)]
        digest = _digest(_dump(stmt, self.block_ids)) if self.digests else ""
        bound = frozenset(binds(stmt))
        imports_project = not all(i.stdlib for i in items)
        if isinstance(stmt, ast.ClassDef):
            header = [*stmt.decorator_list, *stmt.bases, *stmt.keywords]
            return Statement(
                digest, bound, reads, self.rules.class_header(stmt),
                imports_project, self.rules.project_base(stmt), tuple(items), name=stmt.name,
                header=_digest("|".join(ast.dump(h) for h in header)) if self.digests else "",
                members=tuple(self.statement(s) for s in stmt.body),
                bases=tuple(b for b in map(_base_of, stmt.bases) if b is not None),
                stores=self._stores(nodes),
            )
        given, calls = self.rules.check(lambda: self.rules.stmt(stmt))
        return Statement(digest, bound, reads, given and not calls, imports_project,
                         imports=tuple(items), raises=purity.may_raise(stmt),
                         calls=calls if given else None, targets=self.rules.targets,
                         stores=self._stores(nodes))

    def _stores(self, nodes: list[ast.AST]) -> tuple[tuple[Import, tuple[str, ...]], ...]:
        """The attributes the code sets on, or through, what an import names."""
        found: list[tuple[Import, tuple[str, ...]]] = []
        for node in nodes:
            chain: list[str] | None = None
            if isinstance(node, ast.Attribute | ast.Subscript) and not isinstance(
                    node.ctx, ast.Load):
                chain = _stored_chain(node)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("setattr", "delattr") and node.args):
                chain = _chain(node.args[0])
                name = node.args[1] if len(node.args) > 1 else None
                attr = name.value if isinstance(name, ast.Constant) and isinstance(
                    name.value, str) else ""  # "": a name it computes
                chain = None if chain is None else [*chain, attr]
            if chain and len(chain) > 1:
                found += [(item, tuple(chain[1:])) for item in self.items.get(chain[0], ())]
        return tuple(found)

    def pure_body(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """The function's body only computes its result (and calls nothing of the
        project's)."""
        given, calls = self.rules.check(lambda: self.rules.body(func))
        return given and not calls

    def pure_constructor(self, cls: ast.ClassDef) -> bool:
        """Calling the class only makes an instance (and calls nothing of the project's)."""
        given, calls = self.rules.check(lambda: self.rules.constructor(cls))
        return given and not calls


def _chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _stored_chain(node: ast.AST) -> list[str] | None:
    """The name chain a store target changes: ``knobs.SPEED`` for ``knobs.SPEED = v``,
    ``knobs.TABLE`` for ``knobs.TABLE["k"] = v`` and ``knobs.TABLE["k"].x = v`` (what
    a subscript holds is part of the name holding it); None when no name starts it."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Subscript):
            parts = []
        else:
            parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _dump(stmt: ast.stmt, block_ids: set[int]) -> str:
    """``ast.dump`` of the statement with each block's body replaced by what it shows
    (``blocks.shown``: a changed docstring changes the definition)."""
    saved = [(n, n.body) for n in ast.walk(stmt) if id(n) in block_ids and isinstance(n, FUNCS)]
    shown = [blocks.shown(n) for n, _body in saved if isinstance(n, FUNCS)]
    try:
        for node, _body in saved:
            node.body = []
        return "|".join([ast.dump(stmt), *shown])
    finally:
        for node, body in saved:
            node.body = body


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()[:16]
