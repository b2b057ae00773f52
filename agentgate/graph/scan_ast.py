"""The exact pass over one syntax tree: import statements, and the imports grimp cannot see.

``importlib.import_module("literal")`` (with a literal, ``__package__`` or ``__name__``
``package=`` for a relative name) and ``__import__("literal", ..., fromlist, level)`` are
imports like any other. Anything else done with those two functions -- a computed name, a
computed package or fromlist, ``*args``, passing the function around -- is a
``dynamic-import`` escalation: the graph cannot tell what it loads. Only names bound from
``importlib`` / ``builtins`` count, so a project's own ``import_module`` helper (sympy has
one) is an ordinary function. ``pytest_plugins = [...]`` is an import too (pytest performs it),
and so is ``pytest.importorskip("literal")``: a test that imports a module through it reaches
that module (a computed name escalates like ``import_module``'s).
"""

from __future__ import annotations

import ast
import doctest
import itertools
import re
import textwrap
from dataclasses import dataclass, field

from agentgate.core import pysource
from agentgate.graph.scan_loaders import indirect, loaders
from agentgate.graph.scan_syspath import Assign, syspath_records

Escalations = list[tuple[str, str]]
_EXEC_DEPTH = 4  # exec("exec('...')"): code inside code, read this far


def scan_tree(tree: ast.AST, *, dynamic: bool = True, depth: int = 0
              ) -> tuple[list[str], Escalations]:
    """Raw import records (see imports_scan) and escalations of one parsed file; with
    ``dynamic=False`` (a lone import statement) only the statements.

    One pre-order walk (a call comes before the name it calls): aliases such as
    ``from importlib import import_module as load`` may come after their use, so calls and
    references are collected first and judged once every binding is known.
    """
    imports: list[str] = []
    names = _Bindings()
    calls: list[ast.Call] = []
    refs: list[ast.expr] = []
    assigns: list[Assign] = []
    lists: list[list[ast.expr]] = []
    subscripts: list[ast.Subscript] = []
    import_nodes: list[ast.Import | ast.ImportFrom] = []
    plugins: Escalations = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            imports.extend(alias.name for alias in node.names)
            names.note_import(node)
            import_nodes.append(node)
            continue
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            imports.append(f"{'.' * node.level}{module}:{','.join(a.name for a in node.names)}")
            names.note_from(node)
            import_nodes.append(node)
            continue
        if isinstance(node, ast.Call):
            calls.append(node)
        elif dynamic and isinstance(node, ast.Constant) and isinstance(node.value, str):
            imports.extend(_run_as_main(node.value))
            if ">>>" in node.value:
                plugins += _doctest_examples(node.value, getattr(node, "lineno", 0), depth,
                                             imports)
            elif _CODE_IMPORT.search(node.value):
                _code_text(node.value, getattr(node, "lineno", 0), depth, imports)
        elif dynamic and isinstance(node, ast.List | ast.Tuple):
            imports.extend(_run_as_main_argv(node.elts))
            plugins += _run_code_argv(node.elts, depth, imports)  # escalated as found
            lists.append(node.elts)
        elif isinstance(node, ast.Name | ast.Attribute):
            refs.append(node)
        elif dynamic and isinstance(node, ast.Subscript):
            subscripts.append(node)
        elif dynamic and isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            _pytest_plugins(node, imports, plugins)
            assigns.append(node)
        for child in ast.iter_child_nodes(node):
            stack.append(child)
    escalations: Escalations = list(plugins)
    if dynamic:
        names.constants = _constants(tree)
        _dynamic(calls, refs, names, imports, escalations)
        loaded, unknown = loaders(calls, assigns)
        imports += loaded
        escalations += unknown
        folders, computed = syspath_records(calls, assigns, frozenset(names.sys),
                                            frozenset(names.sys_path))
        imports += folders
        escalations += computed
        _executed(calls, depth, imports, escalations)
        imports += _named_targets(calls, names.constants)
        reached, unknown = indirect(calls, refs, subscripts, import_nodes, lists, assigns,
                                    tree)
        imports += reached
        escalations += unknown
    return imports, escalations


_MINUS_M = re.compile(r"(?:^|\s)-m\s*([^\W\d]\w*(?:\.[^\W\d]\w*)*)(?=\s|$)")
_DOTTED_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


def _as_main(module: str) -> str:
    """``-m app`` runs ``app/__main__.py`` when ``app`` is a package: an import of
    ``app.__main__`` reaches ``app`` too, and a name with no such file resolves to its
    prefixes (red-team round 4: ``python -m app`` had no edge to ``__main__.py``)."""
    return f"{module}.__main__"


def _run_as_main(text: str) -> list[str]:
    """Modules a command line in a string runs (``"python -m app.cli --x"``, for a shell, or
    glued, ``-mapp.cli``): imports of them (red-team, helper-8: a test of ``python -m
    app.cli`` run in a subprocess was never selected by a change to ``app/cli.py``). A name
    that is not the project's resolves to nothing."""
    return [_as_main(m.group(1)) for m in _MINUS_M.finditer(text)] if "-m" in text else []


def _run_as_main_argv(items: list[ast.expr]) -> list[str]:
    """The same for an argv written as a list or tuple: ``[sys.executable, "-m", "app.cli"]``
    (``"-mapp.cli"`` glued is a string of the first kind)."""
    found = []
    for first, second in itertools.pairwise(items):
        if (isinstance(first, ast.Constant) and first.value == "-m"
                and isinstance(second, ast.Constant) and isinstance(second.value, str)
                and _DOTTED_NAME.fullmatch(second.value)):
            found.append(_as_main(second.value))
        elif (_interpreter(first) and isinstance(second, ast.Constant)
              and isinstance(second.value, str) and _FOLDER.fullmatch(second.value)):
            # ``[sys.executable, "app"]``: a folder run as a program runs its __main__.py
            # (red-team round 4); a name that is no package of the project resolves to nothing.
            found.append(_as_main(second.value.removeprefix("./").strip("/").replace("/", ".")))
    return found


_FOLDER = re.compile(r"(?:\./)?[^\W\d]\w*(?:/[^\W\d]\w*)*/?")


def _interpreter(node: ast.expr) -> bool:
    """``sys.executable``, or a literal ``python``/``python3``: what runs a program."""
    if isinstance(node, ast.Attribute):
        return node.attr == "executable" and isinstance(node.value, ast.Name) and (
            node.value.id == "sys")
    return isinstance(node, ast.Constant) and node.value in ("python", "python3")


# A string holding an import statement: code for a child (``-c``, ``input=`` to ``python -``),
# for ``exec``, a template run later, however it gets there (``textwrap.dedent``, a constant,
# a local name; red-team round 4).
_CODE_IMPORT = re.compile(r"(?:^|[\n;])[ \t]*(?:from[ \t]+[\w.]+[ \t]+import|import)[ \t]+\w")


def _code_text(text: str, line: int, depth: int, imports: list[str]) -> None:
    """The imports of a string that parses as Python (dedented) and imports something: the
    file depends on what they name; the rest of such text is not judged (a computed import
    in it escalates nothing, as the text may never run)."""
    if depth >= _EXEC_DEPTH:
        return
    code = pysource.parse(textwrap.dedent(text))
    if code is None:
        return
    imports += scan_tree(code, dynamic=False, depth=depth + 1)[0]


def _doctest_examples(text: str, line: int, depth: int, imports: list[str]) -> Escalations:
    """The imports of the ``>>>`` examples in a string (a docstring): with
    ``--doctest-modules`` each is code pytest runs as the module's doctest, and what it
    imports is that test's (red-team round 4: ``>>> from app.calc import mul`` in another
    module's docstring was no edge). Examples that do not parse are skipped."""
    out: Escalations = []
    try:
        examples = doctest.DocTestParser().get_examples(text)
    except ValueError:
        return out
    for example in examples:
        _scan_text(example.source, "a doctest example", line + example.lineno, depth, imports,
                   out)
    return out


def _run_code_argv(items: list[ast.expr], depth: int, imports: list[str]) -> Escalations:
    """``[sys.executable, "-c", "from app.core import slug; ..."]``: the code a child runs
    imports what it names (red-team)."""
    out: Escalations = []
    for first, second in itertools.pairwise(items):
        if (isinstance(first, ast.Constant) and first.value == "-c"
                and (text := _literal(second)) is not None):
            _scan_text(text, "-c", getattr(second, "lineno", 0), depth, imports, out)
    return out


def _scan_text(text: str, how: str, line: int, depth: int, imports: list[str],
               out: Escalations, mode: str = "exec") -> None:
    try:
        code = ast.parse(text, mode=mode)
    except (SyntaxError, ValueError):
        return  # not Python, or it fails when run
    if depth >= _EXEC_DEPTH:
        out.append(("too-complex", f"{how} nested too deeply at line {line}"))
        return
    found, escalated = scan_tree(code, depth=depth + 1)
    imports += found
    out += [(c, f"{d} (in the code {how} runs at line {line})") for c, d in escalated]


def _executed(calls: list[ast.Call], depth: int, imports: list[str], out: Escalations) -> None:
    """``exec("import app.x")``: the literal code's imports are the file's (issue 12: an
    import inside a string is still an import)."""
    for call in calls:
        if not (isinstance(call.func, ast.Name) and call.func.id in ("exec", "compile", "eval")
                and call.args and (text := _literal(call.args[0])) is not None):
            continue
        # ``eval("__import__('app.core')")``: an expression (red-team)
        _scan_text(text, f"{call.func.id}()", call.lineno, depth, imports, out,
                   "eval" if call.func.id == "eval" else "exec")


# Calls that import the module a dotted string names: ``mock.patch("app.calc.mul")`` (and
# ``patch.dict``/``patch.multiple``, ``mocker.patch``), ``monkeypatch.setattr("app.calc.mul",
# v)`` / ``delattr``: each imports ``app.calc`` to reach ``mul``; ``DocTestSuite("app.calc")``
# imports the module itself. A test that imports only ``app`` and patches ``app.calc.mul``
# reaches ``app/calc.py`` through the string (red-team).
_TARGET_CALLS = frozenset({"patch", "setattr", "delattr"})
_PATCH_PARTS = frozenset({"dict", "multiple"})
_MODULE_CALLS = frozenset({"DocTestSuite"})


def _named_targets(calls: list[ast.Call], constants: dict[str, str]) -> list[str]:
    """The modules patch-like calls name, by a literal or a module-level constant
    (``TARGET = "app.calc.mul"``; ``mock.patch(TARGET)``)."""
    found = []
    for call in calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in _PATCH_PARTS and isinstance(func, ast.Attribute) and isinstance(
                func.value, ast.Attribute | ast.Name) and _last_name(func.value) == "patch":
            name = "patch"
        first = call.args[0] if call.args else None
        text = constants.get(first.id) if isinstance(first, ast.Name) else _literal(first)
        if text is None or not _DOTTED_NAME.fullmatch(text):
            continue
        if name in _MODULE_CALLS:
            found.append(text)
        elif name in _TARGET_CALLS and "." in text and (
                name == "patch" or isinstance(func, ast.Attribute)):
            module, _, attr = text.rpartition(".")
            found.append(f"{module}:{attr}")
    return found


def _last_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _constants(tree: ast.AST) -> dict[str, str]:
    """Module-level ``NAME = "text"`` bindings: a computed import's constant prefix."""
    found: dict[str, str] = {}
    for node in tree.body if isinstance(tree, ast.Module) else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name) and (text := _literal(node.value)) is not None:
            found[node.targets[0].id] = text
    return found


def prefix_of(expr: ast.expr | None, constants: dict[str, str]) -> str | None:
    """The constant start of a computed module name: ``"app.formats." + kind``,
    ``PREFIX + name``, ``f"app.formats.{kind}"``; None when it has none."""
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        expr = expr.left
    if isinstance(expr, ast.JoinedStr) and expr.values:
        expr = expr.values[0]
    if isinstance(expr, ast.Name):
        return constants.get(expr.id)
    return _literal(expr)


def _narrowed(call: ast.Call, kind: str, names: _Bindings) -> tuple[str, str] | None:
    """A computed absolute name under a dotted constant prefix loads a module under that
    prefix (issue 12): ``(record, detail)``, the record meaning every module below it."""
    name_expr = _arg(call, 0, "name")
    if _unpacked(call) or name_expr is None or _literal(name_expr) is not None:
        return None
    if kind == "__import__" and _arg(call, 4, "level") is not None:
        return None
    prefix = prefix_of(name_expr, names.constants)
    if not prefix or prefix.startswith(".") or "." not in prefix:
        return None  # relative, or no complete top-level package ("app" + x): anything
    detail = (f"{_label(kind)}({ast.unparse(name_expr)[:40]}) with a computed name under "
              f"{prefix!r} at line {call.lineno}")
    return f"{prefix.rstrip('.')}:**", detail


def _pytest_plugins(node: ast.Assign | ast.AnnAssign | ast.AugAssign, imports: list[str],
                    out: Escalations) -> None:
    """``pytest_plugins = ["pkg.fixtures"]`` (in a conftest or test module) makes pytest
    import those modules: literal names are imports, anything else cannot be followed."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
        return
    value = node.value
    names = [_literal(value)] if isinstance(value, ast.Constant) else _literal_strings(value)
    if names is None or None in names:
        detail = f"pytest_plugins with a computed value at line {node.lineno}"
        out.append(("dynamic-import", detail))
        return
    imports.extend(n for n in names if n)


@dataclass
class _Bindings:
    """Local names that mean importlib, builtins, import_module, __import__, sys or
    sys.path."""

    importlib: set[str] = field(default_factory=set)
    builtins: set[str] = field(default_factory=set)
    import_module: set[str] = field(default_factory=set)
    dunder: set[str] = field(default_factory=lambda: {"__import__"})
    pytest: set[str] = field(default_factory=set)  # ``import pytest`` (as another name)
    importorskip: set[str] = field(default_factory=set)  # ``from pytest import importorskip``
    sys: set[str] = field(default_factory=lambda: {"sys"})  # ``import sys as _sys``
    sys_path: set[str] = field(default_factory=set)  # ``from sys import path``
    constants: dict[str, str] = field(default_factory=dict)  # module-level NAME = "text"

    def note_import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.split(".", 1)[0]
            if alias.asname is None and top in ("importlib", "builtins"):
                self._modules(top).add(top)  # ``import importlib.util`` binds importlib
            elif alias.name in ("importlib", "builtins") and alias.asname:
                self._modules(alias.name).add(alias.asname)
            elif alias.name == "sys" and alias.asname:
                self.sys.add(alias.asname)
            elif alias.name == "pytest":
                self.pytest.add(alias.asname or alias.name)

    def note_from(self, node: ast.ImportFrom) -> None:
        if not node.level and node.module == "sys":
            self.sys_path.update(a.asname or a.name for a in node.names if a.name == "path")
        if not node.level and node.module in ("pytest", "_pytest.outcomes"):
            self.importorskip.update(a.asname or a.name for a in node.names
                                     if a.name == "importorskip")
        if node.level or node.module not in ("importlib", "builtins"):
            return
        for alias in node.names:
            local = alias.asname or alias.name
            if alias.name == "import_module" and node.module == "importlib":
                self.import_module.add(local)
            elif alias.name == "__import__":
                self.dunder.add(local)

    def _modules(self, name: str) -> set[str]:
        return self.importlib if name == "importlib" else self.builtins

    def kind(self, node: ast.AST) -> str | None:
        """"import_module" or "__import__" when ``node`` names one of them."""
        if isinstance(node, ast.Name):
            if node.id in self.import_module:
                return "import_module"
            if node.id in self.importorskip:
                return "importorskip"
            return "__import__" if node.id in self.dunder else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = node.value.id
            if node.attr == "import_module" and owner in self.importlib:
                return "import_module"
            if node.attr == "importorskip" and owner in self.pytest:
                return "importorskip"
            if node.attr == "__import__" and owner in self.importlib | self.builtins:
                return "__import__"
        return None


def _dynamic(
    calls: list[ast.Call],
    refs: list[ast.expr],
    names: _Bindings,
    imports: list[str],
    out: Escalations,
) -> None:
    called: set[int] = set()
    for call in calls:
        kind = names.kind(call.func)
        if kind is None:
            continue
        called.add(id(call.func))
        narrowed = _narrowed(call, kind, names)
        if narrowed is not None:
            imports.append(narrowed[0])
            out.append(("dynamic-prefix", narrowed[1]))
            continue
        record = (_import_module(call) if kind == "import_module" else
                  _importorskip(call) if kind == "importorskip" else _dunder_import(call))
        if isinstance(record, str):
            imports.append(record)
        else:
            out.append(record)
    for ref in refs:
        if id(ref) not in called and (kind := names.kind(ref)):
            line = getattr(ref, "lineno", 0)
            out.append(("dynamic-import", f"{_label(kind)} used indirectly at line {line}"))


def _label(kind: str) -> str:
    return {"import_module": "importlib.import_module",
            "importorskip": "pytest.importorskip"}.get(kind, "__import__")


def _arg(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _unpacked(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _computed(call: ast.Call, kind: str, what: str, expr: ast.AST | None) -> tuple[str, str]:
    shown = ast.unparse(expr) if expr is not None else "*args"
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    detail = f"{_label(kind)}({shown}) with a computed {what} at line {call.lineno}"
    return "dynamic-import", detail


def _literal(expr: ast.expr | None) -> str | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    return None


def _import_module(call: ast.Call) -> str | tuple[str, str]:
    name_expr, package_expr = _arg(call, 0, "name"), _arg(call, 1, "package")
    name = _literal(name_expr)
    if _unpacked(call) or name is None:
        return _computed(call, "import_module", "name", name_expr)
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    rest = name[level:]
    own = ast.unparse(package_expr) if package_expr is not None else ""
    if own in ("__package__", "__spec__.parent", "__name__"):
        # relative to the module's package, or (``__name__``) to the module itself
        return ("@" if own == "__name__" else "") + "." * level + rest
    package = _literal(package_expr)
    if package is None:
        return _computed(call, "import_module", "package", package_expr)
    bits = package.rsplit(".", level - 1)
    if not package or len(bits) < level:
        where = f"import_module({name!r}, {package!r})"
        return "unresolved-import", f"{where} goes above its package at line {call.lineno}"
    return f"{bits[0]}.{rest}" if rest else bits[0]


def _importorskip(call: ast.Call) -> str | tuple[str, str]:
    """``pytest.importorskip(modname, ...)``: an absolute import of ``modname``."""
    name_expr = _arg(call, 0, "modname")
    name = _literal(name_expr)
    if _unpacked(call) or name is None or name.startswith("."):
        return _computed(call, "importorskip", "name", name_expr)
    return name


def _dunder_import(call: ast.Call) -> str | tuple[str, str]:
    name_expr = _arg(call, 0, "name")
    name = _literal(name_expr)
    if _unpacked(call) or name is None:
        return _computed(call, "__import__", "name", name_expr)
    fromlist_expr, level_expr = _arg(call, 3, "fromlist"), _arg(call, 4, "level")
    fromlist = _literal_strings(fromlist_expr)
    if fromlist is None:
        return _computed(call, "__import__", "fromlist", fromlist_expr)
    level = 0 if level_expr is None else _literal_int(level_expr)
    if level is None:
        return _computed(call, "__import__", "level", level_expr)
    record = "." * level + name
    if level:
        anchor = _relative_anchor(call, level, name)
        if isinstance(anchor, tuple):
            return anchor
        record = anchor or record
    return f"{record}:{','.join(fromlist)}" if fromlist else record


def _relative_anchor(call: ast.Call, level: int, name: str) -> str | tuple[str, str] | None:
    """A relative ``__import__`` resolves against the package its ``globals`` name: the
    calling module's own (``globals()``, None; then None here: relative to the file), or
    the one a dict literal gives (red team round 4: ``{"__package__": "app"}`` made
    ``.calc`` an import of ``app.calc`` that a test file's own package hid). Anything else
    may name any package."""
    globals_expr = _arg(call, 1, "globals")
    if globals_expr is None or (isinstance(globals_expr, ast.Constant)
                                and globals_expr.value is None):
        return None
    if (isinstance(globals_expr, ast.Call) and isinstance(globals_expr.func, ast.Name)
            and globals_expr.func.id in ("globals", "vars") and not globals_expr.args):
        return None
    if not isinstance(globals_expr, ast.Dict) or None in globals_expr.keys:
        return _computed(call, "__import__", "globals", globals_expr)
    given = {_literal(k): v for k, v in zip(globals_expr.keys, globals_expr.values,
                                            strict=True)}
    if None in given:  # a key the code computes may be either
        return _computed(call, "__import__", "globals", globals_expr)
    package = _literal(given.get("__package__"))
    if package is None and "__package__" in given and not (
            isinstance(given["__package__"], ast.Constant)
            and given["__package__"].value is None):
        return _computed(call, "__import__", "globals", globals_expr)
    if package is None:
        module = _literal(given.get("__name__"))
        if module is None:
            return _computed(call, "__import__", "globals", globals_expr)
        package = module if "__path__" in given else module.rpartition(".")[0]
    bits = package.rsplit(".", level - 1)
    if not package or len(bits) < level:
        where = f"__import__({name!r}, level={level}) in {package!r}"
        return "unresolved-import", f"{where} goes above its package at line {call.lineno}"
    return f"{bits[0]}.{name}" if name else bits[0]


def _literal_strings(expr: ast.expr | None) -> list[str] | None:
    if expr is None or (isinstance(expr, ast.Constant) and expr.value is None):
        return []
    if not isinstance(expr, ast.List | ast.Tuple):
        return None
    values = [_literal(element) for element in expr.elts]
    return None if any(v is None for v in values) else [v for v in values if v]


def _literal_int(expr: ast.expr) -> int | None:
    if isinstance(expr, ast.Constant) and type(expr.value) is int and expr.value >= 0:
        return expr.value
    return None
