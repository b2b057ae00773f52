"""Folders a file puts on ``sys.path``: where its bare imports may come from (issue 12).

``sys.path.insert(0, "lib")``, ``sys.path.append(os.path.join(os.path.dirname(__file__),
"helpers"))``, ``sys.path.insert(0, str(Path(__file__).resolve().parents[1]))`` (directly or
through a name bound once, ``HERE = Path(__file__).parent``), ``sys.path += [...]``,
``site.addsitedir`` and pytest's ``monkeypatch.syspath_prepend`` each add a folder the
file's imports -- and, for tests and conftests, every test's -- are resolved against too
(graph.expand). A record says where the folder is without knowing where the file lives
(blob records are shared by every path holding the blob): ``|f<path>`` relative to the
file's own folder, ``|r<path>`` relative to the repository root (where pytest runs).

A folder that cannot be computed from the text is a ``dynamic-path`` escalation of the file:
it depends on everything (graph.types; the planner keeps that local). Folders outside the
tree (absolute paths, ``tmp_path``, ``tempfile``) hold no module of the tree and are ignored.
Only additions matter: a restore from a saved copy (``sys.path[:] = saved``) adds nothing.
"""

from __future__ import annotations

import ast
import posixpath

from agentgate.graph.resolve import SYS_PATH

_FILE = "%"  # the file itself, inside its folder: its parent is the folder (".")
_OUT = ("out", "")
_WRAPPERS = frozenset(("abspath", "realpath", "normpath", "fspath", "str", "Path", "PurePath",
                       "PosixPath", "WindowsPath", "resolve", "absolute", "expanduser"))
_TEMP = frozenset(("mkdtemp", "mktemp", "gettempdir", "tmp_path", "tmpdir"))
_COPIES = frozenset(("list", "copy", "tuple"))
_DEPTH = 12  # bound name lookups: ``A = B``, ``B = A`` must end
Value = tuple[str, str] | None  # ("f" | "r" | "out", path) or unknown
Escalations = list[tuple[str, str]]
Assign = ast.Assign | ast.AnnAssign | ast.AugAssign


def syspath_records(calls: list[ast.Call], assigns: list[Assign],
                    sys_names: frozenset[str] = frozenset(("sys",)),
                    path_names: frozenset[str] = frozenset()) -> tuple[list[str], Escalations]:
    """Raw ``|f``/``|r`` records and ``dynamic-path`` escalations of one parsed file;
    ``sys_names`` are the names bound to the sys module, ``path_names`` to ``sys.path``."""
    paths = _Paths(assigns, _SysPath(sys_names, path_names))
    records: list[str] = []
    escalations: Escalations = []
    for node, added in _additions(calls, assigns, paths):
        value = paths.value(added) if added is not None else None
        if value is None:
            shown = ast.unparse(added)[:40] if added is not None else "a computed list"
            escalations.append(("dynamic-path", f"sys.path gets {shown} at line "
                                f"{node.lineno}: its imports may come from any folder"))
        elif (record := _record(value)) is not None:
            records.append(record)
    return records, escalations


def file_record(expr: ast.expr, assigns: list[Assign]) -> str | None:
    """``|F<path>`` / ``|R<path>`` for a ``.py`` file of the tree named by a literal or
    ``__file__``-relative path (``spec_from_file_location(name, "plugins/a.py")``): an edge
    to that file (graph.builder). None when the path cannot be computed or leaves the tree."""
    value = _Paths(assigns, _SysPath(frozenset(("sys",)), frozenset())).value(expr)
    if value is None or value[0] == "out":
        return None
    norm = posixpath.normpath(value[1])
    parts = norm.split("/")
    if not norm.endswith(".py") or _FILE in parts or (value[0] == "r" and parts[0] == ".."):
        return None
    return f"{SYS_PATH}{value[0].upper()}{norm}"


def _record(value: tuple[str, str]) -> str | None:
    kind, path = value
    norm = posixpath.normpath(path)
    if kind == "out" or _FILE in norm.split("/") or (kind == "r" and norm.startswith("..")):
        return None  # a file, or a folder outside the tree: no module of the tree is there
    return f"{SYS_PATH}{kind}{norm}"


def _additions(calls: list[ast.Call], assigns: list[Assign], paths: _Paths
               ) -> list[tuple[ast.stmt | ast.expr, ast.expr | None]]:
    """(where, the folder expression or None when the added elements are unknown)."""
    found: list[tuple[ast.stmt | ast.expr, ast.expr | None]] = []
    for call in calls:
        for added in _call_adds(call, paths.is_sys_path):
            found.append((call, added))
    for node in assigns:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if value is not None and any(_sets_sys_path(t, paths.is_sys_path) for t in targets):
            found += [(node, e) for e in paths.elements(value)]
    return found


def _sets_sys_path(target: ast.expr, is_sys_path: _SysPath) -> bool:
    """``sys.path = ...``, ``sys.path[:0] = ...``, ``sys.path += ...``."""
    return is_sys_path(target) or (isinstance(target, ast.Subscript)
                                   and is_sys_path(target.value))


def _call_adds(call: ast.Call, is_sys_path: _SysPath) -> list[ast.expr | None]:
    func = call.func
    if not isinstance(func, ast.Attribute) or any(isinstance(a, ast.Starred) for a in call.args):
        return []
    if func.attr in ("addsitedir", "syspath_prepend"):
        return [call.args[0] if call.args else None]
    if not is_sys_path(func.value):
        return []
    if func.attr == "insert":
        return [call.args[1] if len(call.args) > 1 else None]
    if func.attr == "append":
        return [call.args[0] if call.args else None]
    if func.attr == "extend":
        arg = call.args[0] if call.args else None
        return list(arg.elts) if isinstance(arg, ast.List | ast.Tuple) else [None]
    return []


class _SysPath:
    """Whether an expression is ``sys.path``, under whatever names the file bound."""

    def __init__(self, sys_names: frozenset[str], path_names: frozenset[str]) -> None:
        self.sys_names, self.path_names = sys_names, path_names

    def __call__(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.path_names
        return (isinstance(node, ast.Attribute) and node.attr == "path"
                and isinstance(node.value, ast.Name) and node.value.id in self.sys_names)


class _Paths:
    """Evaluates path expressions, following names bound exactly once in the file."""

    def __init__(self, assigns: list[Assign], is_sys_path: _SysPath) -> None:
        self.is_sys_path = is_sys_path
        bound: dict[str, list[ast.AST]] = {}
        for node in assigns:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        bound.setdefault(target.id, []).append(node.value)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                bound.setdefault(node.target.id, []).append(node)  # a second binding
        self.once = {name: exprs[0] for name, exprs in bound.items() if len(exprs) == 1}
        self.saved = {name for name, exprs in bound.items()
                      if all(_copies_sys_path(e, is_sys_path) for e in exprs)}

    def elements(self, value: ast.expr) -> list[ast.expr | None]:
        """What a list assigned to sys.path adds: its elements, minus sys.path itself."""
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            return self.elements(value.left) + self.elements(value.right)
        if isinstance(value, ast.List | ast.Tuple):
            return list(value.elts)
        if _copies_sys_path(value, self.is_sys_path) or (
                isinstance(value, ast.Name) and value.id in self.saved):
            return []
        return [None]

    def value(self, expr: ast.expr, depth: int = 0) -> Value:
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return _OUT if expr.value.startswith(("/", "\\", "~")) else ("r", expr.value or ".")
        if isinstance(expr, ast.Name):
            return self._name(expr.id, depth)
        if isinstance(expr, ast.Attribute) and expr.attr == "parent":
            return _parent(self.value(expr.value, depth + 1))
        if isinstance(expr, ast.Subscript):
            return self._parents(expr, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
            return _join(self.value(expr.left, depth + 1), [expr.right])
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        return None

    def _name(self, name: str, depth: int) -> Value:
        if name == "__file__":
            return ("f", _FILE)
        if name in _TEMP:
            return _OUT
        bound = self.once.get(name)
        return self.value(bound, depth + 1) if isinstance(bound, ast.expr) else None

    def _parents(self, expr: ast.Subscript, depth: int) -> Value:
        """``p.parents[n]``: the (n+1)-th folder up."""
        owner, index = expr.value, expr.slice
        if not (isinstance(owner, ast.Attribute) and owner.attr == "parents"
                and isinstance(index, ast.Constant) and type(index.value) is int
                and index.value >= 0):
            return None
        value = self.value(owner.value, depth + 1)
        for _ in range(index.value + 1):
            value = _parent(value)
        return value

    def _call(self, call: ast.Call, depth: int) -> Value:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        method = isinstance(func, ast.Attribute) and name in ("resolve", "absolute", "joinpath")
        first = func.value if method and isinstance(func, ast.Attribute) else (
            call.args[0] if call.args else None)
        rest = call.args if method else call.args[1:]
        if name in ("getcwd", "cwd"):
            return ("r", ".")
        if name in _TEMP:
            return _OUT
        if first is None or call.keywords or name not in (*_WRAPPERS, "dirname", "join",
                                                          "joinpath"):
            return None
        value = self.value(first, depth + 1)
        return _parent(value) if name == "dirname" else _join(value, rest)


def _copies_sys_path(expr: ast.AST, is_sys_path: _SysPath) -> bool:
    """``sys.path[:]``, ``list(sys.path)``, ``sys.path.copy()``, ``copy.copy(sys.path)``."""
    if isinstance(expr, ast.Subscript):
        return is_sys_path(expr.value)
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name == "copy" and isinstance(func, ast.Attribute) and is_sys_path(func.value):
        return True
    return name in _COPIES and len(expr.args) == 1 and is_sys_path(expr.args[0])


def _parent(value: Value) -> Value:
    if value is None or value[0] == "out":
        return value
    return (value[0], f"{value[1]}/..")


def _join(value: Value, parts: list[ast.expr]) -> Value:
    if value is None or value[0] == "out":
        return value
    path = value[1]
    for part in parts:
        if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
            return None
        if part.value.startswith(("/", "\\")):
            return _OUT
        path = f"{path}/{part.value}"
    return (value[0], path)
