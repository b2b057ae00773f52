"""Whether code does nothing but compute and bind names (``rebind``'s *binding-only*).

A statement run at import is binding-only when it calls nothing but known side-effect-free
callables (the builtins that compute, the standard library's value constructors, methods of
str, bytes, containers and compiled patterns), stores only into objects its own module made,
and is no class whose making may run project code. A function body is *pure* when it does
the same with its own locals: it may build and fill local containers, never store into an
argument, a global or another module. Anything unknown is neither: the rules that use these
answers then run more tests, never fewer.

Calls to the project's own callables are collected rather than refused (``Purity.check``):
a statement is binding-only *given* those callables are, which is how ``rebind`` judges a
module-level statement that calls a changed pure function at import.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterable

from agentgate.witness.syntax import FUNCS, STDLIB, Import, base_name, header, literal

# Callables that compute a value and change nothing else a test can observe: calling one at
# import binds a name and that is all. Everything else (a project function, a class of the
# project, an unknown library) may register, patch or configure something.
_PURE_MODULES = (
    "abc", "cmath", "collections", "copy", "dataclasses", "datetime", "enum", "fnmatch",
    "fractions", "functools", "html", "ipaddress", "itertools", "json", "keyword", "math",
    "numbers", "os.path", "ntpath", "posixpath", "re", "shlex", "string", "struct",
    "textwrap", "types", "typing", "typing_extensions", "unicodedata", "uuid", "weakref",
    "attr", "attrs", "pytest.mark",
)
# Of modules that also write files or change global state (decimal.setcontext,
# operator.setitem, Path.write_text): only what makes a value.
_PURE_CALLABLES = frozenset({
    "decimal.Decimal", "operator.itemgetter", "operator.attrgetter",
    "pathlib.Path", "pathlib.PurePath", "pathlib.PurePosixPath", "pathlib.PureWindowsPath",
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
# Methods that change the object they are bound to: one named as a value (not called there)
# is handed to something that may call it (``list(map(SIGNS.append, [-1]))``, red-team).
_MUTATORS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
    "discard", "popitem", "sort", "reverse", "appendleft", "extendleft", "popleft", "rotate",
    "write", "writelines", "send", "put", "put_nowait", "register", "set", "setattr",
    "__setitem__", "__delitem__", "__setattr__", "__delattr__", "__iadd__", "__ior__",
    "__isub__", "__iand__", "__ixor__", "__imul__", "__call__", "__init__",
})
# Callables whose result may be called as pure: they read, never write.
_PURE_FACTORIES = frozenset({"operator.itemgetter", "operator.attrgetter"})
# Methods that run code of a class when it is made, its attributes set or read, or it is
# dropped: a class defining one is not judged a side-effect-free constructor.
_MAKING_HOOKS = frozenset({"__new__", "__setattr__", "__getattr__", "__getattribute__",
                           "__del__", "__delattr__", "__post_init__", "__init_subclass__",
                           "__class_getitem__", "__set_name__"})
# Callables that return a new object of their own, which a store then fills (not ones that
# hand back what they were given or a shared object: ``vars(m)``, ``getattr``, a dict's
# ``get``, ``logging.getLogger``, a ``ChainMap`` writing into its first map).
_NEW_OBJECTS = frozenset({
    *(f"builtins.{n}" for n in ("dict", "list", "set", "frozenset", "tuple", "bytearray",
                                "object", "sorted", "str", "bytes", "int", "float", "complex",
                                "bool", "range")),
    "collections.OrderedDict", "collections.defaultdict", "collections.Counter",
    "collections.deque", "copy.copy", "copy.deepcopy", "types.SimpleNamespace",
    "threading.local", "threading.Lock", "threading.RLock", "threading.Event",
    "weakref.WeakKeyDictionary", "weakref.WeakValueDictionary", "weakref.WeakSet",
})
_COMPOUND = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.Try, ast.TryStar, ast.With)


def qualified(item: Import) -> str | None:
    """What an imported alias refers to, as a dotted name, for the standard library and the
    known libraries above; None for the project and any other library."""
    if item.level or item.name == "*":
        return None
    known = item.module.split(".")[0] in STDLIB or any(
        item.module == m or item.module.startswith(m + ".") or m.startswith(item.module + ".")
        for m in _PURE_MODULES)
    if not known:
        return None
    if item.name is not None:
        return f"{item.module}.{item.name}"
    top = item.module.split(".")[0]
    return top if item.alias == top else item.module  # ``import a.b`` binds ``a``


class Purity:
    """The rules for one module: its import table (alias -> dotted target, None for the
    project's own) and the names its top level binds."""

    def __init__(self, imported: dict[str, str | None], local: set[str],
                 *, quiet_import: bool) -> None:
        self.imported = imported
        self.local = local
        self.quiet_import = quiet_import
        # While checking: the project callables called, by where they are looked up:
        # (None, name) a name of the module, (alias, name) an attribute of the module
        # imported as alias, ("", name) anything else. ``targets``: the last check's.
        self._targets: set[tuple[str | None, str]] | None = None
        self.targets: frozenset[tuple[str | None, str]] = frozenset()
        self._mine: set[str] = set()  # in a function body: names it binds itself
        # Names whose every binding makes a new object (``own``): (the object itself, and
        # everything it holds, all the way down). At the top level, and in a function body.
        self.owned: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        self._mine_owned: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        self.classes: frozenset[str] = frozenset()  # the module's own classes
        # In a constructor's body: its ``self`` and the attributes it may not store there.
        self._owner: tuple[str, frozenset[str]] | None = None

    def own(self, stmts: Iterable[ast.stmt]) -> None:
        """The module's top level: which names hold objects it made itself."""
        self.classes = frozenset(s.name for s in stmts if isinstance(s, ast.ClassDef))
        self.owned = owned(stmts, self._new)

    def _new(self, func: ast.expr) -> bool:
        """Whether calling ``func`` makes a new object: a known constructor, a module's
        class."""
        if isinstance(func, ast.Name) and func.id in self.classes and func.id not in self._mine:
            return True
        return self.target(func) in _NEW_OBJECTS

    def check(self, test: Callable[[], bool]) -> tuple[bool, frozenset[str]]:
        """(binding-only given the project callables it calls, those callables)."""
        found: set[tuple[str | None, str]] = set()
        self._targets = found
        try:
            return test(), frozenset(name for _, name in found)
        finally:
            self._targets = None
            self.targets = frozenset(found)

    # --- statements -----------------------------------------------------------------

    def stmt(self, stmt: ast.stmt) -> bool:
        """Binding-only when run again (imports count as binding: what they import ran
        already, once, whatever the values)."""
        if isinstance(stmt, ast.Expr):
            return self.expr(stmt.value)
        if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            return (all(self.target_ok(t) for t in targets)
                    and self.exprs([getattr(stmt, "value", None),
                                    getattr(stmt, "annotation", None)]))
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass | ast.Global | ast.Nonlocal
                      | ast.Break | ast.Continue):
            return not isinstance(stmt, ast.Global | ast.Nonlocal) or not self._mine
        if isinstance(stmt, FUNCS):
            found = header(stmt)
            decorators = len(stmt.decorator_list)
            return (all(self.decorator(d) for d in found[:decorators])
                    and self.exprs(found[decorators:]))
        if isinstance(stmt, ast.ClassDef):  # nested in a class, an if, a function
            return (self.class_header(stmt)
                    and (self.quiet_import or not self.project_base(stmt))
                    and all(self.stmt(s) for s in stmt.body))
        if isinstance(stmt, ast.Assert | ast.Raise | ast.Return):
            return self.exprs(list(ast.iter_child_nodes(stmt)))  # may raise: that is all
        if isinstance(stmt, ast.Delete):
            return all(self.target_ok(t) for t in stmt.targets)
        if isinstance(stmt, _COMPOUND):
            return self.compound(stmt)
        return type(stmt).__name__ == "TypeAlias"

    def compound(self, stmt: ast.stmt) -> bool:
        exprs: list[ast.AST | None] = [getattr(stmt, "test", None), getattr(stmt, "iter", None)]
        if isinstance(stmt, ast.For | ast.AsyncFor) and not self.target_ok(stmt.target):
            return False
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                # Entering runs the manager's __enter__: only a known one's.
                if not (isinstance(item.context_expr, ast.Call)
                        and self.expr(item.context_expr)):
                    return False
                if item.optional_vars is not None and not self.target_ok(item.optional_vars):
                    return False
        handlers = getattr(stmt, "handlers", ())
        exprs += [h.type for h in handlers]
        bodies = [getattr(stmt, k, []) for k in ("body", "orelse", "finalbody")]
        bodies += [h.body for h in handlers]
        return self.exprs(exprs) and all(self.stmt(s) for b in bodies for s in b)

    def class_header(self, stmt: ast.ClassDef) -> bool:
        if not all(self.decorator(d) for d in stmt.decorator_list):
            return False
        for keyword in stmt.keywords:
            if keyword.arg != "metaclass" or not self.callee(keyword.value):
                return False  # other keywords go to a base's __init_subclass__
        return self.exprs(stmt.bases)

    def project_base(self, stmt: ast.ClassDef) -> bool:
        """A base of the project's (or of an unknown library): making the class may run its
        ``__init_subclass__`` or metaclass."""
        for base in stmt.bases:
            node = base.value if isinstance(base, ast.Subscript) else base  # Generic[T]
            if isinstance(node, ast.Call):
                if not self.call(node):
                    return True
            elif self.target(node) is None:
                return True
        return False

    def decorator(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            return self.expr(node)  # the factory, then what it made (a known one's)
        return self.callee(node)

    def target_ok(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return True
        if isinstance(node, ast.Tuple | ast.List):
            return all(self.target_ok(e) for e in node.elts)
        if isinstance(node, ast.Starred):
            return self.target_ok(node.value)
        making = self._owner
        if (making is not None and isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name) and node.value.id == making[0]):
            return node.attr not in making[1]  # the object being made: its own attribute
        if isinstance(node, ast.Attribute | ast.Subscript):
            # Storing into an object this code made itself (a table filled at import, a
            # class attribute set after the class, a function's own list): not through a
            # name bound to another module's object (``_table = HANDLERS``, red-team).
            return (self._made_here(node.value)
                    and self.expr(getattr(node, "slice", None)))
        return False

    def _made_here(self, node: ast.expr) -> bool:
        """Whether ``node`` (what a store or a method call goes into) is an object this code
        made: a name bound only to new objects, or inside one that holds only new ones."""
        base = base_name(node)
        top, deep = self._mine_owned if self._mine else self.owned
        return base is not None and base in (top if isinstance(node, ast.Name) else deep)

    # --- function bodies ------------------------------------------------------------

    def body(self, func: ast.FunctionDef | ast.AsyncFunctionDef,
             owner: tuple[str, frozenset[str]] | None = None) -> bool:
        """A function's body does nothing but compute its result from its locals (it may
        raise). Its arguments are not its own: storing into one is a side effect, but for
        ``owner``: (a constructor's ``self``, the attributes a store into which runs code
        of the class), whose other attributes it may set."""
        params = {a.arg for a in [*func.args.posonlyargs, *func.args.args,
                                  *func.args.kwonlyargs, func.args.vararg, func.args.kwarg]
                  if a is not None}
        stores = {n.id for s in func.body for n in ast.walk(s)
                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)}
        if owner is not None and owner[0] in stores:
            return False  # ``self`` rebound: its stores go elsewhere
        saved = self._mine, self._owner, self._mine_owned
        self._mine, self._owner = (stores - params) | {"<body>"}, owner
        top, deep = owned(func.body, self._new)
        self._mine_owned = (top - params, deep - params)
        try:
            if not all(self.stmt(s) for s in func.body):
                return False
            self._owner = None  # a nested function's ``self`` is not the object being made
            return all(self.body(n) for s in func.body for n in ast.walk(s)
                       if isinstance(n, FUNCS))
        finally:
            self._mine, self._owner, self._mine_owned = saved

    def constructor(self, cls: ast.ClassDef) -> bool:
        """Calling the class only makes an instance: no decorator (it may replace the
        class), no base but ``object``, no metaclass, none of the hooks that run code of
        the class when made, set or dropped, and an ``__init__`` (if any) whose body is
        pure but for setting attributes of ``self`` that no property or descriptor of the
        class intercepts."""
        if cls.decorator_list or cls.keywords or not all(
                isinstance(b, ast.Name) and b.id == "object" for b in cls.bases):
            return False
        init: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        guarded: set[str] = set()  # attributes whose store may run the class's code
        for stmt in cls.body:
            if isinstance(stmt, FUNCS):
                if stmt.name in _MAKING_HOOKS:
                    return False
                if stmt.name == "__init__":
                    init = stmt
                if stmt.decorator_list:
                    guarded.add(stmt.name)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                value = stmt.value
                names = {n.id for t in (stmt.targets if isinstance(stmt, ast.Assign)
                                        else [stmt.target])
                         for n in ast.walk(t) if isinstance(n, ast.Name)}
                if names & (_MAKING_HOOKS | {"__init__"}):
                    return False  # __init__ = other, __setattr__ = ...: not this text
                if value is not None and not literal(value):
                    guarded |= names
            elif not (isinstance(stmt, ast.Pass) or (
                    isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))):
                return False  # anything else in the body: not judged
        if init is None:
            return True
        args = [*init.args.posonlyargs, *init.args.args]
        if not args or isinstance(init, ast.AsyncFunctionDef):
            return False
        return self.body(init, (args[0].arg, frozenset(guarded)))

    # --- expressions ----------------------------------------------------------------

    def exprs(self, nodes: Iterable[ast.AST | None]) -> bool:
        return all(self.expr(n) for n in nodes if n is not None)

    def expr(self, node: ast.AST | None) -> bool:
        if node is None:
            return True
        # In a function body a lambda may be called there and then (``sorted(key=...)``).
        nodes = list(ast.walk(node) if self._mine else _runs_now(node))
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        for child in nodes:
            if isinstance(child, ast.Call) and not self.call(child):
                return False
            if isinstance(child, ast.Await | ast.Yield | ast.YieldFrom) and not self._mine:
                return False
            if (isinstance(child, ast.Attribute) and id(child) not in called
                    and child.attr in _MUTATORS and not (
                        self._mine and self._made_here(child.value))):
                return False  # a bound method that changes its object, handed on
        return True

    def call(self, call: ast.Call) -> bool:
        func = call.func
        if any(self._handed_getattr(a) for a in (*call.args, *(k.value for k in call.keywords))):
            return False  # a method found by a computed name, handed to what may call it
        if self.callee(func):
            return True
        if not isinstance(func, ast.Attribute):
            return False
        if self._mine and self._made_here(func.value):
            return True  # a method of the function's own object (a list it fills)
        # A method of a value (str, bytes, a compiled pattern, a container) that computes.
        return func.attr in _PURE_METHODS and not self.project_value(func.value)

    def _handed_getattr(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Call) and self.target(node.func) == "builtins.getattr"
                and not _plain_getattr(node))

    def callee(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            # What a call returned, called: only a reader's (``itemgetter("k")(d)``); a
            # ``getattr(SIGNS, "append")`` or a project callable hands back anything.
            return self.target(node.func) in _PURE_FACTORIES and self.call(node)
        found = self.target(node)
        if found is None:
            return self._collect(node)
        if found.endswith(_IMPURE_TAILS):
            return False
        if found.startswith("builtins."):
            return found[9:] in _PURE_BUILTINS
        return found in _PURE_CALLABLES or any(
            found == m or found.startswith(m + ".") for m in _PURE_MODULES)

    def _collect(self, node: ast.expr) -> bool:
        """A project callable, while collecting: its name (a module attribute's name)."""
        if self._targets is None:
            return False
        if isinstance(node, ast.Name) and node.id in self.local | self.imported.keys():
            self._targets.add((None, node.id))
            return True
        if isinstance(node, ast.Attribute) and self.project_value(node.value):
            receiver = node.value.id if isinstance(node.value, ast.Name) else ""
            self._targets.add((receiver, node.attr))
            return True
        return False

    def target(self, node: ast.expr) -> str | None:
        """The dotted name a Name or attribute chain refers to, when it is the standard
        library, a builtin or another known library; None for the project's own names."""
        if isinstance(node, ast.Name):
            if node.id in self._mine:
                return None
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
        base = base_name(node)
        return base is not None and base in self.imported and self.imported[base] is None


def owned(stmts: Iterable[ast.stmt], new: Callable[[ast.expr], bool]
          ) -> tuple[frozenset[str], frozenset[str]]:
    """Of the names ``stmts`` bind in their own scope, those every binding of which makes a
    new object: (the object is new; it and everything it holds are, all the way down). A
    name bound to what another name holds, to what a call returned, by a loop, a ``with``,
    an import or a ``global`` is neither: a store through it may land in another module's
    object."""
    top: dict[str, bool] = {}
    deep: dict[str, bool] = {}

    def mark(name: str, made: tuple[bool, bool]) -> None:
        top[name] = top.get(name, True) and made[0]
        deep[name] = deep.get(name, True) and made[1]

    seen: set[int] = set()  # Name targets an assignment already judged
    for node in _scope_nodes(stmts):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is None:
                continue
            made = _made(node.value, new)
            for target in targets:
                if isinstance(target, ast.Name):
                    mark(target.id, made)
                    seen.add(id(target))
                elif not made[1] and (base := base_name(target)) is not None:
                    deep[base] = False  # ``own['k'] = TABLE``: ``own['k']['x']`` is TABLE's
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and (base := base_name(node.func.value)) is not None
              and not all(_made(a, new)[1] for a in
                          [*node.args, *(k.value for k in node.keywords)])):
            deep[base] = False  # ``own.append(TABLE)``: what it holds may be another's
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            seen.add(id(node.target))  # ``x += [...]``: the same object, or a new one
        elif isinstance(node, (*FUNCS, ast.ClassDef)):
            mark(node.name, (True, False))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            if id(node) not in seen:
                mark(node.id, (False, False))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                mark((alias.asname or alias.name).split(".")[0], (False, False))
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                mark(name, (False, False))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            mark(node.name, (False, False))
    return (frozenset(n for n, ok in top.items() if ok),
            frozenset(n for n, ok in deep.items() if ok))


def _scope_nodes(stmts: Iterable[ast.stmt]) -> Iterable[ast.AST]:
    """The nodes of one scope, each before its children: a nested function's, class's or
    lambda's node but not its body (its names are its own)."""
    stack: list[ast.AST] = list(reversed(list(stmts)))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*FUNCS, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _made(node: ast.expr, new: Callable[[ast.expr], bool]) -> tuple[bool, bool]:
    """(whether evaluating ``node`` makes a new object, and one holding only new objects)."""
    if isinstance(node, ast.Constant | ast.JoinedStr):
        return True, True
    if isinstance(node, ast.Dict):
        return True, all(k is not None and _made(k, new)[1] for k in node.keys) and all(
            _made(v, new)[1] for v in node.values)
    if isinstance(node, ast.List | ast.Set | ast.Tuple):
        return True, all(_made(e, new)[1] for e in node.elts)
    if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
                  | ast.Lambda):
        return True, False
    if isinstance(node, ast.BinOp):
        both = _made(node.left, new)[1] and _made(node.right, new)[1]
        return both, both
    if isinstance(node, ast.UnaryOp):
        return _made(node.operand, new)
    if isinstance(node, ast.Call) and new(node.func):
        return True, not node.args and not node.keywords
    return False, False


def _runs_now(node: ast.AST) -> Iterable[ast.AST]:
    """An expression's nodes but a lambda's body (it runs when called), unless the lambda is
    handed to a call, which may call it there and then (``sorted(xs, key=lambda v: ...)``,
    ``map(lambda v: SIGNS.append(v), ...)``)."""
    stack = [node]
    handed: set[int] = set()
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, ast.Call):
            handed.update(id(a) for a in (*current.args, *(k.value for k in current.keywords))
                          if isinstance(a, ast.Lambda))
        if isinstance(current, ast.Lambda) and id(current) not in handed:
            stack += [*current.args.defaults,
                      *(d for d in current.args.kw_defaults if d is not None)]
        else:
            stack += ast.iter_child_nodes(current)


def _plain_getattr(call: ast.Call) -> bool:
    """``getattr(obj, "name"[, default])`` with a literal name that changes nothing."""
    name = call.args[1] if len(call.args) > 1 else None
    return (isinstance(name, ast.Constant) and isinstance(name.value, str)
            and name.value not in _MUTATORS and not call.keywords)


def may_raise(stmt: ast.stmt) -> bool:
    """Whether running the statement may raise: only literals bound to plain names, a
    docstring, ``pass`` and a plain ``def`` (no decorators, literal defaults, no
    annotations) cannot."""
    if isinstance(stmt, ast.Pass) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    ):
        return False
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return not (all(isinstance(t, ast.Name) for t in targets) and literal(stmt.value)
                    and getattr(stmt, "annotation", None) is None)
    if isinstance(stmt, FUNCS):
        args = stmt.args
        return bool(stmt.decorator_list or stmt.returns or any(
            a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
        ) or not all(literal(d) for d in [*args.defaults, *args.kw_defaults] if d))
    return True
