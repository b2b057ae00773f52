"""Module-level statements with an effect beyond their own module (pure).

A module's top level runs when it is imported, and in one pytest process every test file is
imported at collection: a top-level ``calc.configure(fast=True)`` in ``app/other.py``, or
``calc.mul = ...`` in a module the patch adds, lands in ``app.calc`` for every test that
uses it, whether or not that test imports ``app.other`` (red-team round 4). The import
closure follows importers only; a module whose top level gained such a statement also
reaches the modules it imports (``planner``). What counts: a bare call statement, a store
into an attribute or an item (``m.X = ...``, ``d[k] = ...``, ``del m.X``), ``exec``. A
changed function body, a new constant or class, an import: none (they bind the module's own
names, followed by the closure as before).
"""

from __future__ import annotations

import ast

from agentgate.core import pysource


def gained(base: bytes | None, head: bytes | None) -> bool:
    """Whether head's top level has an effectful statement the base's has not (a module the
    patch adds: any); a head that does not parse says nothing here (the graph escalates)."""
    now = _effects(head)
    return bool(now - _effects(base))


def _effects(text: bytes | None) -> set[str]:
    tree = pysource.parse(text)
    if tree is None:
        return set()
    found = set()
    for node in _top_level(tree.body):
        if _effectful(node):
            found.add(ast.dump(node, include_attributes=False))
    return found


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run at import: the module's, and those under its ``if``/``try``/
    ``with``/loops (not inside functions or classes' methods)."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If | ast.For | ast.While | ast.With | ast.Try):
            for field in ("body", "orelse", "finalbody"):
                out += _top_level(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                out += _top_level(handler.body)
    return out


def _effectful(node: ast.stmt) -> bool:
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call | ast.Await)
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    return any(isinstance(t, ast.Attribute | ast.Subscript) for t in _flat(targets))


def _flat(targets: list[ast.expr]) -> list[ast.expr]:
    out: list[ast.expr] = []
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            out += _flat(list(target.elts))
        else:
            out.append(target)
    return out


# --- registries ---------------------------------------------------------------------------
#
# A registry hands out what other modules put in it when they were imported: subclasses it
# lists (``Handler.__subclasses__()``, ``__init_subclass__``), functions a decorator stored,
# objects a top-level ``register(Csv)`` call kept. A test that imports the registry alone
# reaches, through it, code of modules it never imports, which another test file's
# collection loaded (red-team round 4: ``handlers()["csv"]().render`` in a test of
# ``app.registry``; the patch broke ``Csv.render`` in ``app/csvh.py``). A changed module
# that registers into an imported module reaches it, as an import-time effect does.

# Methods that put an item into a container.
_MUTATORS = frozenset(("append", "add", "update", "setdefault", "insert", "extend",
                       "appendleft", "__setitem__"))


def registrations(text: bytes | None, package: str) -> set[tuple[str, str]]:
    """What a module's top level may register into other modules, as ``(kind, dotted)``:
    ``("base", "app.registry.Handler")`` for a class based on an imported class, ``("call",
    "app.registry.register")`` for a decorator or a top-level call of an imported callable.
    Names resolve through the module's own imports (``package``: its package, for relative
    ones); what no import binds is its own and left out."""
    tree = pysource.parse(text)
    if tree is None:
        return set()
    bound = _import_bindings(tree.body, package)
    found: set[tuple[str, str]] = set()

    def add(kind: str, expr: ast.expr) -> None:
        dotted = _dotted(expr, bound)
        if dotted is not None:
            found.add((kind, dotted))

    for node in _top_level(tree.body):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                add("base", base)
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                add("call", decorator.func if isinstance(decorator, ast.Call) else decorator)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            add("call", node.value.func)
    return found


def registers(text: bytes | None, kind: str, name: str) -> bool:
    """Whether ``name`` (``Handler``, ``register``, ``registry.add``) in a module's source is
    a registry: a class whose subclasses it lists or sees defined (``__init_subclass__``, a
    metaclass, ``__subclasses__``), or a function (or a method of a top-level object of a
    class of its own) that stores into a container of the module's (or the object's)."""
    tree = pysource.parse(text)
    if tree is None:
        return False
    classes = {n.name: n for n in _top_level(tree.body) if isinstance(n, ast.ClassDef)}
    if kind == "base":
        return "." not in name and _registry_class(tree, classes, name, set())
    functions = {n.name: n for n in _top_level(tree.body)
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    owner, _, method = name.partition(".")
    if not method:
        function = functions.get(name)
        return function is not None and _stores(function, _module_names(tree.body), "")
    made = _instances(tree.body).get(owner)
    cls = classes.get(made or "")
    if cls is None or "." in method:
        return False
    body = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    function = body.get(method)
    return function is not None and _stores(function, _module_names(tree.body), "self")


def _registry_class(tree: ast.Module, classes: dict[str, ast.ClassDef], name: str,
                    seen: set[str]) -> bool:
    cls = classes.get(name)
    if cls is None or name in seen:
        return False
    seen.add(name)
    # What runs as each subclass is defined, and keeps it: ``__init_subclass__``, or a
    # metaclass of the module's own (``ABCMeta`` lists no subclass), storing anything.
    hooks = [n for n in cls.body if isinstance(n, ast.FunctionDef)
             and n.name == "__init_subclass__"]
    for keyword in cls.keywords:
        meta = classes.get(keyword.value.id) if (
            keyword.arg == "metaclass" and isinstance(keyword.value, ast.Name)) else None
        hooks += [n for n in (meta.body if meta else []) if isinstance(n, ast.FunctionDef)]
    if any(_stores(hook, set(), "*") for hook in hooks):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__subclasses__" and (
                _within(cls, node) or (isinstance(node.value, ast.Name)
                                       and node.value.id == name)):
            return True
    # A class based on a registry class of the module is one too.
    return any(isinstance(b, ast.Name) and _registry_class(tree, classes, b.id, seen)
               for b in cls.bases)


def _within(outer: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(outer))


def _stores(function: ast.AST, names: set[str], own: str) -> bool:
    """Whether a function's body (nested functions included: a decorator factory's inner
    function) puts something into one of ``names`` (the module's) or, with ``own``
    (``self``), into an attribute of its object; ``own="*"``: into anything."""
    def container(expr: ast.expr) -> bool:
        if own == "*":  # any container at all
            return True
        if isinstance(expr, ast.Name):
            return expr.id in names
        return (bool(own) and isinstance(expr, ast.Attribute)
                and isinstance(expr.value, ast.Name) and expr.value.id == own)

    for node in ast.walk(function):
        if isinstance(node, ast.Global):
            return True
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Subscript) and container(t.value) for t in _flat(targets)):
            return True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in _MUTATORS and container(node.func.value)):
            return True
    return False


def _module_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in _top_level(body):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets: list[ast.expr] = (node.targets if isinstance(node, ast.Assign)
                                       else [node.target])
            names.update(t.id for t in _flat(targets) if isinstance(t, ast.Name))
    return names


def _instances(body: list[ast.stmt]) -> dict[str, str]:
    """Top-level ``registry = Registry(...)``: the object's name and its class's."""
    made: dict[str, str] = {}
    for node in _top_level(body):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    made[target.id] = node.value.func.id
    return made


def _import_bindings(body: list[ast.stmt], package: str) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from the top level's imports."""
    bound: dict[str, str] = {}
    for node in _top_level(body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node.module or "", node.level, package)
            if source is None:
                continue
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
    return bound


def _absolute(module: str, level: int, package: str) -> str | None:
    if not level:
        return module or None
    parts = package.split(".") if package else []
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base) or None


def _dotted(expr: ast.expr, bound: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name) or expr.id not in bound:
        return None
    return ".".join([bound[expr.id], *reversed(parts)])


def reexport(text: bytes | None, name: str, package: str) -> str | None:
    """Where a module's top level imports ``name``'s first part from (``from app.registry
    import Handler`` in ``app/__init__.py``): the dotted name it stands for, so a registry
    re-exported by a package is judged where it is defined; None when it binds it itself."""
    tree = pysource.parse(text)
    if tree is None:
        return None
    first, _, rest = name.partition(".")
    source = _import_bindings(tree.body, package).get(first)
    if source is None:
        return None
    return f"{source}.{rest}" if rest else source
