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
import builtins
import hashlib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from agentgate.witness import blocks

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCS, ast.ClassDef)

# Callables that compute a value and change nothing else a test can observe: calling one at
# import binds a name and that is all. Everything else (a project function, a class of the
# project, an unknown library) may register, patch or configure something: not binding-only.
_PURE_MODULES = (
    "abc", "cmath", "codecs", "collections", "copy", "dataclasses", "datetime", "decimal",
    "enum", "fnmatch", "fractions", "functools", "html", "ipaddress", "itertools", "json",
    "keyword", "math", "numbers", "operator", "os.path", "ntpath", "pathlib", "posixpath",
    "re", "shlex", "string", "struct", "textwrap", "types", "typing", "typing_extensions",
    "unicodedata", "uuid", "weakref", "attr", "attrs", "pytest.mark",
)
_PURE_CALLABLES = frozenset({
    "contextlib.contextmanager", "contextlib.asynccontextmanager", "contextlib.suppress",
    "logging.getLogger", "os.getenv", "os.environ.get", "os.fspath", "os.fsencode",
    "os.fsdecode", "sys.intern", "threading.Lock", "threading.RLock", "threading.local",
    "threading.Event", "threading.Condition", "pytest.fixture", "pytest.param",
    "importlib.metadata.version", "gettext.gettext", "gettext.ngettext",
    "platform.system", "platform.machine", "platform.python_implementation",
    "sys.getdefaultencoding", "sys.getfilesystemencoding",
})
# Even from a module above: these change what other code sees (ABC registration, finalizers).
_IMPURE_TAILS = (".register", ".finalize", ".seed", ".setdefault", ".update")
_PURE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
    "classmethod", "complex", "dict", "dir", "divmod", "enumerate", "filter", "float",
    "format", "frozenset", "getattr", "hasattr", "hash", "hex", "id", "int", "isinstance",
    "issubclass", "iter", "len", "list", "map", "max", "memoryview", "min", "next", "object",
    "oct", "ord", "pow", "print", "property", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip",
    *(n for n in dir(builtins) if n[:1].isupper()),  # exception classes, Ellipsis, ...
})
# Methods of str, bytes, numbers, containers and compiled patterns that only compute.
_PURE_METHODS = frozenset({
    "join", "format", "format_map", "split", "rsplit", "strip", "lstrip", "rstrip", "lower",
    "upper", "replace", "startswith", "endswith", "encode", "decode", "copy", "keys",
    "values", "items", "get", "union", "intersection", "difference", "symmetric_difference",
    "title", "capitalize", "casefold", "count", "index", "find", "rfind", "partition",
    "rpartition", "splitlines", "zfill", "ljust", "rjust", "center", "expandtabs",
    "translate", "maketrans", "fromkeys", "removeprefix", "removesuffix", "match", "search",
    "fullmatch", "sub", "subn", "findall", "finditer", "group", "groups", "to_bytes",
    "from_bytes", "hex", "fromhex", "bit_length", "isoformat", "strftime", "total_seconds",
    "isdigit", "isalpha", "isalnum", "isidentifier", "isupper", "islower", "isspace",
})
# Reading names no one can spell: any changed name may be what such code reads.
_DYNAMIC_CALLS = frozenset({"vars", "globals", "locals", "eval", "exec", "dir", "__import__"})
_DYNAMIC_ATTRS = frozenset({"__dict__", "__getattribute__", "getmembers"})
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))


@dataclass(frozen=True)
class Import:
    """One name an import statement binds: ``alias`` = ``module``'s ``name`` (None for
    ``import module``; "*" for a star import), ``level`` dots before a relative module."""

    alias: str
    module: str
    name: str | None
    level: int


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


@dataclass(frozen=True)
class Statement:
    digest: str  # the statement as the parser sees it, function bodies left out
    binds: frozenset[str]
    reads: Reads
    # Binding-only when run again with other values: no call but a known side-effect-free
    # one, no store into another module's object. For a class: its header only (decorators,
    # bases, keywords); each member says it for itself.
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


@dataclass(frozen=True)
class Module:
    statements: tuple[Statement, ...]
    reads: dict[str, Reads]  # function block name -> what its code reads
    exports: frozenset[str] | None  # a literal ``__all__``; None when there is none

    def public(self, names: Iterable[str]) -> set[str]:
        """Which of ``names`` a star import of this module binds."""
        if self.exports is not None:
            return {n for n in names if n in self.exports}
        return {n for n in names if not n.startswith("_")}


def analyse(source: blocks.Source, *, quiet_import: bool = False) -> Module | None:
    """The module's statements and its blocks' reads; None when it does not parse.
    ``quiet_import``: the recording saw no repository function run while this text was
    imported, so a class nested in another statement that derives from a project class ran
    no project code when it was made (top-level classes say ``project_base`` instead)."""
    try:
        text = blocks.decode(source)
        tree = ast.parse(text)
        layout = blocks.from_tree(tree, text)
        bodies = _block_functions(tree, layout)
        scope = _Scope(tree, {id(f) for f in bodies.values()}, quiet_import)
        statements = tuple(scope.statement(s) for s in tree.body)
        reads = {name: _scan(_body_nodes(func), scope.imported.keys())
                 for name, func in bodies.items()}
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return None
    return Module(statements, reads, _exports(tree))


def _block_functions(tree: ast.Module, layout: blocks.FileBlocks) -> dict[str, ast.AST]:
    """Each block's function node, found by the line its body starts on."""
    by_start = {b.start: b.name for b in layout.blocks}
    found: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, _FUNCS) and node.body:
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


def _scan(nodes: list[ast.AST], imported: Iterable[str]) -> Reads:
    """What the code made of ``nodes`` reads; ``imported``: the module's import aliases
    (the code's own imports count too)."""
    own = [i for n in nodes if isinstance(n, ast.Import | ast.ImportFrom)
           for i in _import_items(n)]
    bound = set(imported) | {i.alias for i in own}
    getter = any(_gets_modules(n) for n in nodes)
    loads: set[str] = set()
    attrs: set[str] = set()
    module_attrs: set[str] = set()
    dynamic = dynamic_modules = False
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.add(node.id)
        elif isinstance(node, ast.Attribute):
            on_module = _on_module(node.value, bound, getter)
            attrs.add(node.attr)
            if on_module:
                module_attrs.add(node.attr)
            if node.attr in _DYNAMIC_ATTRS:
                dynamic = True
                dynamic_modules = dynamic_modules or on_module
        elif isinstance(node, ast.Call):
            access = _named_access(node, bound, getter)
            if access is not None:
                literal, computed, on_module = access
                attrs |= literal
                module_attrs |= literal if on_module else set()
                dynamic = dynamic or computed
                dynamic_modules = dynamic_modules or (computed and on_module)
    return Reads(frozenset(loads), frozenset(attrs), frozenset(module_attrs), dynamic,
                 dynamic_modules, tuple(own))


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
    if isinstance(receiver, ast.Constant | ast.JoinedStr | ast.List | ast.Tuple | ast.Dict
                  | ast.Set | ast.ListComp | ast.SetComp | ast.DictComp):
        return False
    base = _base_name(receiver)
    return getter or (base is not None and base in bound)


def _named_access(
    call: ast.Call, bound: set[str], getter: bool
) -> tuple[set[str], bool, bool] | None:
    """For a call that reads attributes by name: (the names spelled, whether some name is
    computed, whether it may read a module). ``getattr(x, "n")`` reads n of x;
    ``getattr(x, name)``, ``vars(x)``, ``dir(x)`` read names no one can spell;
    ``globals()``, ``vars()``, ``eval``, ``exec`` read the module's own."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else "")
    first = call.args[0] if call.args else None
    if name in _DYNAMIC_CALLS:
        on_module = first is None or name in ("eval", "exec", "__import__") or (
            _on_module(first, bound, getter))
        return set(), True, on_module
    if name in ("getattr", "hasattr", "attrgetter", "methodcaller"):
        if name in ("getattr", "hasattr"):
            spelled, receiver = call.args[1:2], first
        else:  # the receiver is whatever the getter is applied to: anything
            spelled, receiver = call.args if name == "attrgetter" else call.args[:1], None
        literal = [a.value for a in spelled
                   if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        on_module = getter if receiver is None else _on_module(receiver, bound, getter)
        names = {p for text in literal for p in text.split(".")}
        return names, len(literal) < len(spelled), on_module
    return None


class _Scope:
    """One module's import table and top-level names, for telling a call's target."""

    def __init__(self, tree: ast.Module, block_ids: set[int], quiet_import: bool) -> None:
        self.block_ids = block_ids
        self.quiet_import = quiet_import
        self.imported: dict[str, str | None] = {}  # alias -> dotted target (None: project)
        for stmt in tree.body:
            for node in _walk_now(stmt):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    for item in _import_items(node):
                        self.imported[item.alias] = _qualified(item)
        self.local = {n for s in tree.body for n in _binds(s)} - set(self.imported)

    # --- statements -----------------------------------------------------------------

    def statement(self, stmt: ast.stmt) -> Statement:
        reads = _scan(list(_walk_now(stmt, skip=self.block_ids, lambdas=True)),
                      self.imported.keys())
        items = [i for n in _walk_now(stmt) if isinstance(n, ast.Import | ast.ImportFrom)
                 for i in _import_items(n)]
        digest = _digest(_dump(stmt, self.block_ids))
        binds = frozenset(_binds(stmt))
        imports_project = not all(_stdlib(i) for i in items)
        if isinstance(stmt, ast.ClassDef):
            header = [*stmt.decorator_list, *stmt.bases, *stmt.keywords]
            return Statement(
                digest, binds, reads, self.pure_header(stmt),
                imports_project, self.project_base(stmt), tuple(items), name=stmt.name,
                header=_digest("|".join(ast.dump(h) for h in header)),
                members=tuple(self.statement(s) for s in stmt.body),
            )
        return Statement(digest, binds, reads, self.pure_stmt(stmt),
                         imports_project, imports=tuple(items), raises=_may_raise(stmt))

    def pure_stmt(self, stmt: ast.stmt) -> bool:
        """Binding-only when run again (imports count as binding: what they import ran
        already, once, whatever the values)."""
        if isinstance(stmt, ast.Expr):
            return self.pure_expr(stmt.value)
        if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = getattr(stmt, "value", None)
            annotation = getattr(stmt, "annotation", None)
            return (all(self.pure_target(t) for t in targets)
                    and self.pure_exprs([value, annotation]))
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass | ast.Global | ast.Nonlocal
                      | ast.Break | ast.Continue):
            return True
        if isinstance(stmt, _FUNCS):
            return all(self.pure_decorator(d) for d in stmt.decorator_list) and (
                self.pure_exprs(_header(stmt)[len(stmt.decorator_list):]))
        if isinstance(stmt, ast.ClassDef):  # nested in a class or an if
            return (self.pure_header(stmt) and (self.quiet_import or not self.project_base(stmt))
                    and all(self.pure_stmt(s) for s in stmt.body))
        if isinstance(stmt, ast.Assert):
            return self.pure_exprs([stmt.test, stmt.msg])
        if isinstance(stmt, ast.Delete):
            return all(isinstance(t, ast.Name) for t in stmt.targets)
        if isinstance(stmt, ast.If | ast.While | ast.For | ast.AsyncFor | ast.Try | ast.With):
            return self.pure_compound(stmt)
        if isinstance(stmt, ast.TryStar):
            return self.pure_compound(stmt)
        return type(stmt).__name__ == "TypeAlias"

    def pure_compound(self, stmt: ast.stmt) -> bool:
        exprs: list[ast.AST | None] = [getattr(stmt, "test", None), getattr(stmt, "iter", None)]
        if isinstance(stmt, ast.For | ast.AsyncFor) and not self.pure_target(stmt.target):
            return False
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                # Entering runs the manager's __enter__: only a known one's.
                if not (isinstance(item.context_expr, ast.Call)
                        and self.pure_expr(item.context_expr)):
                    return False
                if item.optional_vars is not None and not self.pure_target(item.optional_vars):
                    return False
        handlers = getattr(stmt, "handlers", ())
        exprs += [h.type for h in handlers]
        bodies = [getattr(stmt, k, []) for k in ("body", "orelse", "finalbody")]
        bodies += [h.body for h in handlers]
        return self.pure_exprs(exprs) and all(self.pure_stmt(s) for b in bodies for s in b)

    def pure_header(self, stmt: ast.ClassDef) -> bool:
        if not all(self.pure_decorator(d) for d in stmt.decorator_list):
            return False
        for keyword in stmt.keywords:
            if keyword.arg != "metaclass" or not self.pure_call_target(keyword.value):
                return False  # other keywords go to a base's __init_subclass__
        return self.pure_exprs(stmt.bases)

    def project_base(self, stmt: ast.ClassDef) -> bool:
        for base in stmt.bases:
            node = base.value if isinstance(base, ast.Subscript) else base  # Generic[T]
            known = self.pure_call(node) if isinstance(node, ast.Call) else (
                self.target(node) is not None)
            if not known:
                return True
        return False

    def pure_decorator(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            return self.pure_expr(node)  # the factory, then what it made (a known one's)
        return self.pure_call_target(node)

    def pure_target(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return True
        if isinstance(node, ast.Tuple | ast.List):
            return all(self.pure_target(e) for e in node.elts)
        if isinstance(node, ast.Starred):
            return self.pure_target(node.value)
        if isinstance(node, ast.Attribute | ast.Subscript):
            # Storing into an object this module made itself (a table filled at import, a
            # class attribute set after the class): that object is the name it is bound to.
            base = _base_name(node)
            return (base is not None and base in self.local
                    and self.pure_expr(getattr(node, "slice", None)))
        return False

    # --- expressions ----------------------------------------------------------------

    def pure_exprs(self, nodes: Iterable[ast.AST | None]) -> bool:
        return all(self.pure_expr(n) for n in nodes if n is not None)

    def pure_expr(self, node: ast.AST | None) -> bool:
        if node is None:
            return True
        for child in _walk_now(node):
            if isinstance(child, ast.Call) and not self.pure_call(child):
                return False
            if isinstance(child, ast.Await | ast.Yield | ast.YieldFrom):
                return False
        return True

    def pure_call(self, call: ast.Call) -> bool:
        func = call.func
        if self.pure_call_target(func):
            return True
        # A method of a value (str, bytes, a compiled pattern, a container) that computes.
        return (isinstance(func, ast.Attribute) and func.attr in _PURE_METHODS
                and not self.project_value(func.value))

    def pure_call_target(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            return self.pure_call(node)
        target = self.target(node)
        if target is None or target.endswith(_IMPURE_TAILS):
            return False
        if target.startswith("builtins."):
            return target[9:] in _PURE_BUILTINS
        return target in _PURE_CALLABLES or any(
            target == m or target.startswith(m + ".") for m in _PURE_MODULES)

    def target(self, node: ast.expr) -> str | None:
        """The dotted name a Name or attribute chain refers to, when it is the standard
        library, a builtin or another known library; None for the project's own names."""
        if isinstance(node, ast.Name):
            if node.id in self.imported:
                return self.imported[node.id]
            if node.id in self.local:
                return None
            return f"builtins.{node.id}" if hasattr(builtins, node.id) else None
        if isinstance(node, ast.Attribute):
            base = self.target(node.value)
            if base is None or base.startswith("builtins."):
                return None
            return f"{base}.{node.attr}"
        return None

    def project_value(self, node: ast.expr) -> bool:
        """Whether a method's receiver may be the project's own object (whose method of a
        common name may do anything): a name imported from the project."""
        base = _base_name(node)
        return base is not None and base in self.imported and self.imported[base] is None


def _may_raise(stmt: ast.stmt) -> bool:
    """Whether running the statement may raise: only literals bound to plain names, a
    docstring, ``pass`` and a plain ``def`` (no decorators, literal defaults, no
    annotations) cannot."""
    if isinstance(stmt, ast.Pass) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    ):
        return False
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return not (all(isinstance(t, ast.Name) for t in targets) and _literal(stmt.value)
                    and getattr(stmt, "annotation", None) is None)
    if isinstance(stmt, _FUNCS):
        args = stmt.args
        return bool(stmt.decorator_list or stmt.returns or any(
            a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
        ) or not all(_literal(d) for d in [*args.defaults, *args.kw_defaults] if d))
    return True


def _literal(node: ast.expr | None) -> bool:
    if node is None:
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _qualified(item: Import) -> str | None:
    """What an imported alias refers to, as a dotted name, for the standard library and the
    known libraries above; None for the project and any other library."""
    if item.level or item.name == "*":
        return None
    known = item.module.split(".")[0] in _STDLIB or any(
        item.module == m or item.module.startswith(m + ".") or m.startswith(item.module + ".")
        for m in _PURE_MODULES)
    if not known:
        return None
    if item.name is not None:
        return f"{item.module}.{item.name}"
    top = item.module.split(".")[0]
    return top if item.alias == top else item.module  # ``import a.b`` binds ``a``


def _stdlib(item: Import) -> bool:
    return not item.level and item.module.split(".")[0] in _STDLIB


def _import_items(node: ast.Import | ast.ImportFrom) -> list[Import]:
    if isinstance(node, ast.Import):
        return [Import(a.asname or a.name.split(".")[0], a.name, None, 0) for a in node.names]
    module = node.module or ""
    return [Import(a.asname or a.name, module, a.name, node.level) for a in node.names]


def _binds(stmt: ast.stmt) -> set[str]:
    """Every name a top-level statement binds in the module (a class binds its name, not
    what its body binds; a function, its name)."""
    found: set[str] = set()
    for node in _walk_now(stmt, classes=False):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            found.add(node.id)
        elif isinstance(node, _SCOPES):
            found.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update(i.alias for i in _import_items(node) if i.name != "*")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        found.add("__doc__")
    return found


def _walk_now(
    node: ast.AST, *, skip: set[int] | None = None, classes: bool = True,
    lambdas: bool = False,
) -> Iterator[ast.AST]:
    """The nodes that run when a statement runs: a function's decorators, defaults and
    annotations but not its body (except a one-liner's, when ``skip`` names the functions
    that are blocks), a lambda's body only with ``lambdas``, a class's body unless
    ``classes`` is off."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, _FUNCS):
            stack += _header(current)
            if skip is not None and id(current) not in skip:
                stack += current.body  # a one-liner: its body is module code
        elif isinstance(current, ast.ClassDef) and not classes:
            stack += [*current.decorator_list, *current.bases, *current.keywords]
        elif isinstance(current, ast.Lambda) and not lambdas:
            stack += [*current.args.defaults,
                      *(d for d in current.args.kw_defaults if d is not None)]
        else:
            stack += ast.iter_child_nodes(current)


def _header(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    args = func.args
    found: list[ast.expr] = [*func.decorator_list, *args.defaults]
    found += [d for d in args.kw_defaults if d is not None]
    found += [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                     args.vararg, args.kwarg]
              if a is not None and a.annotation is not None]
    if func.returns is not None:
        found.append(func.returns)
    return found


def _base_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dump(stmt: ast.stmt, block_ids: set[int]) -> str:
    """``ast.dump`` of the statement with each block's body replaced by a marker."""
    if not any(id(n) in block_ids for n in ast.walk(stmt)):
        return ast.dump(stmt)
    saved: list[tuple[ast.AST, list[ast.stmt]]] = []
    for node in ast.walk(stmt):
        if id(node) in block_ids and isinstance(node, _FUNCS):
            saved.append((node, node.body))
    try:
        for node, _body in saved:
            node.body = []  # type: ignore[attr-defined]
        return ast.dump(stmt)
    finally:
        for node, body in saved:
            node.body = body  # type: ignore[attr-defined]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()[:16]
