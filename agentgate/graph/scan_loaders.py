"""Code that loads code without an import statement: the loaders the graph cannot follow.

``importlib.util.spec_from_file_location`` and the file loaders, ``runpy.run_module`` /
``run_path``, ``pkgutil.resolve_name``, ``exec`` / ``compile`` of a file read from disk (or of
a name bound to what one read), ``__builtins__.__import__``, and any of them fetched with
``getattr`` (issue 12) load modules the import graph never sees. Each call is a
``dynamic-import`` escalation of its file, except ``spec_from_file_location`` of a literal or
``__file__``-relative ``.py`` path, which is an edge to that file (and then the
``module_from_spec`` / ``exec_module`` that run the specs a file made are no escalation,
unless something else in the file makes a spec): the file depends on everything it might load,
and only the tests that reach it run more (the planner keeps that local). Matched by the
called attribute's name whatever it was bound from -- a project's own ``run_path`` escalates
too, which costs precision, never safety. ``runpy.run_module`` and ``pkgutil.resolve_name``
called through their module with a literal name are imports of that module instead.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from agentgate.graph.scan_syspath import file_record

if TYPE_CHECKING:
    from collections.abc import Iterable

    from agentgate.graph.scan_syspath import Assign

LOADERS = frozenset((
    "spec_from_file_location", "spec_from_loader", "module_from_spec", "exec_module",
    "load_module", "SourceFileLoader", "SourcelessFileLoader", "ExtensionFileLoader",
    "run_module", "run_path", "resolve_name", "load_source",
))
_READS = frozenset(("open", "read", "read_text", "read_bytes", "get_data", "get_source"))
_FETCHED = LOADERS | {"import_module", "__import__"}
# Run a spec; what they load is the spec's: known when every spec the file makes is a file
# spec with a known path.
_RUNNERS = frozenset(("module_from_spec", "exec_module", "load_module"))
_SPEC_MAKERS = frozenset(("spec_from_loader", "find_spec", "ModuleSpec", "_find_spec"))


def loaders(calls: list[ast.Call], assigns: Iterable[Assign] = ()
            ) -> tuple[list[str], list[tuple[str, str]]]:
    """Raw import records (``runpy.run_module("app.cli")``, ``pkgutil.resolve_name("a.b:c")``
    with a literal name load that module; ``|F``/``|R`` for a file spec with a known path)
    and ``dynamic-import`` escalations."""
    imports: list[str] = []
    found: list[tuple[str, str]] = []
    bound = list(assigns)
    read = _read_names(bound)
    files = _file_specs(calls, bound)
    for call in calls:
        name = _called(call.func)
        if (module := _literal_module(call, name)) is not None:
            imports.append(module)
        elif call in files:
            imports.append(files[call])
        elif name in _RUNNERS and files and _specs_known(calls, files):
            continue
        elif name in LOADERS:
            found.append(("dynamic-import", f"{name}() loads code at line {call.lineno}"))
        elif name in ("exec", "compile") and isinstance(call.func, ast.Name) and _reads(
                call, read):
            found.append(("dynamic-import", f"{name}() of a file's contents at line "
                          f"{call.lineno}"))
        elif name == "__import__" and _via_builtins(call.func):
            found.append(("dynamic-import", f"__builtins__ __import__ at line {call.lineno}"))
        elif name == "getattr" and _fetches_a_loader(call):
            found.append(("dynamic-import", f"getattr() of a loader at line {call.lineno}"))
    return imports, found


def _file_specs(calls: list[ast.Call], assigns: list[Assign]) -> dict[ast.Call, str]:
    """``spec_from_file_location(name, location)`` calls whose location is a ``.py`` file of
    the tree given literally or relative to ``__file__``: their file records."""
    found: dict[ast.Call, str] = {}
    for call in calls:
        if _called(call.func) != "spec_from_file_location" or any(
                isinstance(a, ast.Starred) for a in call.args):
            continue
        where = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "location"), None)
        record = file_record(where, assigns) if where is not None else None
        if record is not None:
            found[call] = record
    return found


def _specs_known(calls: list[ast.Call], files: dict[ast.Call, str]) -> bool:
    """Whether every spec the file makes is one of ``files`` (no other spec maker, no file
    spec with an unknown path, no loader fetched by name)."""
    for call in calls:
        name = _called(call.func)
        if name in _SPEC_MAKERS or (name == "spec_from_file_location" and call not in files):
            return False
        if name == "getattr" and _fetches_a_loader(call):
            return False
    return True


def _literal_module(call: ast.Call, name: str | None) -> str | None:
    """The module ``runpy.run_module`` / ``pkgutil.resolve_name`` loads, when the call names
    it with a literal and is called through the module itself (a bare ``run_module`` may be
    a project's own function: it escalates)."""
    func = call.func
    owner = {"run_module": "runpy", "resolve_name": "pkgutil"}.get(name or "")
    if not (owner and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.value.id == owner and call.args):
        return None
    first = call.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)) or any(
            isinstance(a, ast.Starred) for a in call.args):
        return None
    module = first.value.partition(":")[0]
    return module if module and not module.startswith(".") else None


def _fetches_a_loader(call: ast.Call) -> bool:
    """``getattr(importlib, "import_module")``: a loader the other rules cannot see called."""
    attr = call.args[1] if len(call.args) > 1 else None
    return isinstance(attr, ast.Constant) and attr.value in _FETCHED


def _read_names(assigns: Iterable[Assign]) -> set[str]:
    """Names bound to a file's contents (``src = open(p).read()``): ``exec(src)`` runs it."""
    names: set[str] = set()
    for node in assigns:
        if node.value is None or not _has_read(node.value):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Subscript) and isinstance(func.slice, ast.Constant):
        return str(func.slice.value)  # __builtins__["__import__"](...)
    return None


def _reads(call: ast.Call, read: set[str]) -> bool:
    """Whether an argument of the call reads a file (``open(p).read()``, ``p.read_text()``),
    or is a name bound to what one read."""
    return any(_has_read(arg) or any(isinstance(n, ast.Name) and n.id in read
                                     for n in ast.walk(arg)) for arg in call.args)


def _has_read(expr: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and _called(n.func) in _READS for n in ast.walk(expr))


def _via_builtins(func: ast.expr) -> bool:
    owner = func.value if isinstance(func, ast.Attribute | ast.Subscript) else None
    return isinstance(owner, ast.Name) and owner.id == "__builtins__"


# Loaders of objects that import the classes and functions their data names (a pickle holds
# ``app.legacy.Rate`` by name): the file depends on whatever module its data may name.
_UNPICKLERS = {
    "pickle": frozenset(("load", "loads", "Unpickler")),
    "_pickle": frozenset(("load", "loads", "Unpickler")),
    "cPickle": frozenset(("load", "loads", "Unpickler")),
    "dill": frozenset(("load", "loads", "Unpickler")),
    "cloudpickle": frozenset(("load", "loads")),
    "joblib": frozenset(("load",)),
    "shelve": frozenset(("open", "Shelf", "DbfilenameShelf")),
    "jsonpickle": frozenset(("decode",)),
    "yaml": frozenset(("unsafe_load", "unsafe_load_all", "full_load", "full_load_all")),
    "pydoc": frozenset(("locate", "importfile")),
}


# Loaders that build objects their data names only when asked to (red-team round 7): PyYAML's
# ``load`` with a loader that is not a safe one, numpy's ``load`` with ``allow_pickle``, and
# logging's configuration from a file or a dict not written in the code (its ``class``
# and ``()`` keys name any class). (module, function) -> the rule that clears a call.
_SAFE_YAML = frozenset(("SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"))
_WHEN_ASKED = {
    ("yaml", "load"): "yaml", ("yaml", "load_all"): "yaml",
    ("numpy", "load"): "pickle", ("logging.config", "fileConfig"): "always",
    ("logging.config", "dictConfig"): "dict", ("logging.config", "listen"): "always",
}

# The module names whose loaders ``indirect`` reads: a file naming none of them need not be
# walked for them (graph.scan's fast path); ``logging`` for ``from logging import config``.
UNPICKLER_MODULES = frozenset(_UNPICKLERS) | {"numpy", "logging"}


def _asks_to_load(call: ast.Call, rule: str) -> bool:
    """Whether a ``_WHEN_ASKED`` call may build what its data names."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    if rule == "yaml":  # the loader: a keyword or the second argument; none is PyYAML<6's full
        loader = keywords.get("Loader", call.args[1] if len(call.args) > 1 else None)
        name = (loader.attr if isinstance(loader, ast.Attribute)
                else loader.id if isinstance(loader, ast.Name) else None)
        return name not in _SAFE_YAML
    if rule == "pickle":  # numpy's default is allow_pickle=False
        flag = keywords.get("allow_pickle", call.args[2] if len(call.args) > 2 else None)
        return flag is not None and not (isinstance(flag, ast.Constant) and not flag.value)
    if rule == "dict":  # a dict written in the code: its dotted strings are edges already
        return not (call.args and isinstance(call.args[0], ast.Dict))
    return True


def indirect(calls: list[ast.Call], refs: list[ast.expr], subscripts: list[ast.Subscript],
             import_nodes: list[ast.Import | ast.ImportFrom], lists: list[list[ast.expr]],
             assigns: list[Assign], tree: ast.AST | None = None,
             ) -> tuple[list[str], list[tuple[str, str]]]:
    """What a file reaches by name without an import statement (red-team): a pickle or other
    object loader (``dynamic-import``), ``pydoc.locate("app.core.f")`` and
    ``sys.modules["app.core"]`` with a literal (imports of that name's modules), importlib
    or builtins taken apart (``importlib.__dict__["import_module"]``, ``vars(builtins)``:
    ``dynamic-import``), and a ``.py`` file of the tree an argv names (``[sys.executable,
    "app/tools/report.py"]``: an edge to that file). Judged from what ``scan_tree``'s one walk
    collected: no walk of its own."""
    bound = _from_imports(import_nodes)
    imports: list[str] = []
    found: list[tuple[str, str]] = []
    for call in calls:
        owner, name = _owner_and_name(call.func, bound)
        if owner is None or name is None:
            continue
        if owner == "pydoc" and name == "locate" and call.args and isinstance(
                first := call.args[0], ast.Constant) and isinstance(first.value, str):
            imports += _prefixes(first.value)
        elif name in _UNPICKLERS.get(owner, ()) and not _round_trip(
                call, bound, refs, assigns, tree, import_nodes):
            found.append(("dynamic-import", f"{owner}.{name}() loads what its data names at "
                          f"line {call.lineno}"))
        elif (rule := _WHEN_ASKED.get((owner, name))) and _asks_to_load(call, rule):
            found.append(("dynamic-import", f"{owner}.{name}() may build what its data names "
                          f"at line {call.lineno}"))
        elif owner == "builtins" and name in ("getattr", "vars") and call.args and isinstance(
                target := call.args[0], ast.Name) and target.id in ("importlib", "builtins") \
                and not _fetches_a_loader(call):  # that one ``loaders`` names already
            found.append(("dynamic-import", f"{name}() of {target.id} at line {call.lineno}"))
    for ref in refs:
        if (isinstance(ref, ast.Attribute) and ref.attr in ("__dict__", "__getattribute__")
                and isinstance(ref.value, ast.Name)
                and ref.value.id in ("importlib", "builtins", "__builtins__")):
            found.append(("dynamic-import", f"{ref.value.id}.{ref.attr} at line {ref.lineno}"))
    for sub in subscripts:
        if (isinstance(sub.value, ast.Attribute) and sub.value.attr == "modules"
                and isinstance(sub.value.value, ast.Name) and sub.value.value.id == "sys"
                and isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str)):
            imports += _prefixes(sub.slice.value)
    named = [item for items in lists for item in items]
    named += [node.value for node in assigns if node.value is not None]  # SCRIPT = ...
    relative = any(isinstance(r, ast.Name) and r.id == "__file__" for r in refs)
    for item in named:
        if _may_name_a_file(item, relative) and (
                record := file_record(item, assigns)) is not None:
            imports.append(record)
    return imports, found


# Dumpers whose output ``_round_trip`` trusts: the pickle family's own.
_PICKLERS = frozenset(("pickle", "_pickle", "cPickle", "dill", "cloudpickle"))


def _round_trip(call: ast.Call, bound: dict[str, tuple[str, str]], refs: list[ast.expr],
                assigns: list[Assign], tree: ast.AST | None,
                import_nodes: list[ast.Import | ast.ImportFrom]) -> bool:
    """``pickle.loads(pickle.dumps(obj))``, or ``data = pickle.dumps(obj)`` then
    ``pickle.loads(data)``: the data names the classes of an object this process holds, whose
    modules are loaded already (a test's copy idiom): nothing new. A name only when every
    binding of it in the file is such an assignment (``_other_bindings`` names none), and
    only the pickle family's own ``dumps``."""
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Call):
        return _dumps(first, bound)
    if not isinstance(first, ast.Name):
        return False
    stores = sum(isinstance(r, ast.Name) and r.id == first.id
                 and not isinstance(r.ctx, ast.Load) for r in refs)
    dumped = 0
    for node in assigns:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == first.id for t in targets):
            if (len(targets) != 1 or isinstance(node, ast.AugAssign)
                    or not isinstance(node.value, ast.Call) or not _dumps(node.value, bound)):
                return False
            dumped += 1
    # The file walked again only here: loads of a name every assignment of which dumps.
    return (0 < dumped == stores and tree is not None
            and first.id not in _other_bindings(tree, import_nodes))


def _other_bindings(tree: ast.AST, import_nodes: Iterable[ast.Import | ast.ImportFrom]
                    ) -> frozenset[str]:
    """Names a file binds other than by an assignment statement in a function: parameters,
    definitions, ``except ... as``, match captures, ``global``/``nonlocal``, imports, and any
    name bound at module level (another module can rebind it as an attribute)."""
    found = {(a.asname or a.name).partition(".")[0] for n in import_nodes for a in n.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.ExceptHandler | ast.FunctionDef | ast.AsyncFunctionDef
                        | ast.ClassDef | ast.MatchAs | ast.MatchStar) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            found.update(node.names)
    body = getattr(tree, "body", None)  # an ``eval`` text's is one expression
    stack: list[ast.AST] = (list(body) if isinstance(body, list)
                            else [body] if isinstance(body, ast.AST) else [])
    while stack:  # module level: not inside a function, a class or a lambda
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return frozenset(found)


def _dumps(call: ast.Call, bound: dict[str, tuple[str, str]]) -> bool:
    owner, name = _owner_and_name(call.func, bound)
    return name == "dumps" and owner in _PICKLERS


def _from_imports(nodes: Iterable[ast.Import | ast.ImportFrom]) -> dict[str, tuple[str, str]]:
    """Local names bound by ``from pickle import loads`` (and ``import pickle as pk``: the
    module under another name): local -> (module, name or "")."""
    bound: dict[str, tuple[str, str]] = {}
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = (alias.name, "")
    return bound


def _owner_and_name(func: ast.expr, bound: dict[str, tuple[str, str]]
                    ) -> tuple[str | None, str | None]:
    """(module, function) a call names: ``pickle.loads``, ``pk.loads``, a ``loads`` imported
    from pickle; a builtin called by its own name is ("builtins", name)."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module, name = bound.get(func.value.id, (func.value.id, ""))
        return (module, func.attr) if not name else (f"{module}.{name}", func.attr)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) and isinstance(
            func.value.value, ast.Name):  # ``logging.config.fileConfig``
        module, name = bound.get(func.value.value.id, (func.value.value.id, ""))
        owner = f"{module}.{name}" if name else module
        return f"{owner}.{func.value.attr}", func.attr
    if isinstance(func, ast.Name):
        if func.id in bound:
            module, name = bound[func.id]
            return (module, name) if name else (None, None)
        return "builtins", func.id
    return None, None


def _prefixes(dotted: str) -> list[str]:
    """``app.core.slug`` -> app, app.core, app.core.slug: those that are modules of the tree
    resolve, the rest to nothing."""
    name = dotted.partition(":")[0]
    parts = [p for p in name.split(".") if p.isidentifier()]
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)] if parts else []


def _may_name_a_file(item: ast.expr, relative: bool) -> bool:
    """A literal ``.py`` path, or (``relative``: the file names ``__file__`` somewhere) an
    expression that may build one from ``__file__``."""
    if isinstance(item, ast.Constant):
        return isinstance(item.value, str) and item.value.endswith(".py")
    return relative  # ``file_record`` computes it, or says it is no path of the tree
