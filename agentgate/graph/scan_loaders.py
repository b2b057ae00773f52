"""Code that loads code without an import statement: the loaders the graph cannot follow.

``importlib.util.spec_from_file_location`` and the file loaders, ``runpy.run_module`` /
``run_path``, ``pkgutil.resolve_name``, ``exec`` / ``compile`` of a file read from disk, and
``__builtins__.__import__`` (issue 12) load modules the import graph never sees. Each call is
a ``dynamic-import`` escalation of its file: the file depends on everything it might load,
and only the tests that reach it run more (the planner keeps that local). Matched by the
called attribute's name whatever it was bound from -- a project's own ``run_path`` escalates
too, which costs precision, never safety.
"""

from __future__ import annotations

import ast

LOADERS = frozenset((
    "spec_from_file_location", "spec_from_loader", "module_from_spec", "exec_module",
    "load_module", "SourceFileLoader", "SourcelessFileLoader", "ExtensionFileLoader",
    "run_module", "run_path", "resolve_name", "load_source",
))
_READS = frozenset(("open", "read", "read_text", "read_bytes", "get_data", "get_source"))


def loader_escalations(calls: list[ast.Call]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for call in calls:
        name = _called(call.func)
        if name in LOADERS:
            found.append(("dynamic-import", f"{name}() loads code at line {call.lineno}"))
        elif name in ("exec", "compile") and isinstance(call.func, ast.Name) and _reads(call):
            found.append(("dynamic-import", f"{name}() of a file's contents at line "
                          f"{call.lineno}"))
        elif name == "__import__" and _via_builtins(call.func):
            found.append(("dynamic-import", f"__builtins__ __import__ at line {call.lineno}"))
    return found


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Subscript) and isinstance(func.slice, ast.Constant):
        return str(func.slice.value)  # __builtins__["__import__"](...)
    return None


def _reads(call: ast.Call) -> bool:
    """Whether an argument of the call reads a file (``open(p).read()``, ``p.read_text()``)."""
    return any(isinstance(n, ast.Call) and _called(n.func) in _READS
               for arg in call.args for n in ast.walk(arg))


def _via_builtins(func: ast.expr) -> bool:
    owner = func.value if isinstance(func, ast.Attribute | ast.Subscript) else None
    return isinstance(owner, ast.Name) and owner.id == "__builtins__"
