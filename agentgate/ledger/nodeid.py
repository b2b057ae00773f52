"""Does a pytest node id still name a test? Answered from the file's syntax tree alone.

``ledger check`` runs in the commit hook, where pytest collection (imports, conftest, plugins)
costs seconds; ``ast`` costs milliseconds. Where the syntax cannot settle it (the file does not
parse, a class inherits from a base defined elsewhere, a star import) the answer is UNKNOWN,
which the ledger reports instead of accepting.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

FOUND, MISSING, UNKNOWN = "found", "missing", "unknown"

Parsed = ast.Module | str  # a tree, or why the file could not be read or parsed


@dataclass(frozen=True)
class Located:
    status: str
    why: str = ""


def locate(root: Path, nodeid: str, cache: dict[Path, Parsed]) -> Located:
    """FOUND, MISSING or UNKNOWN (with why) for ``path::[Class::...]name[params]``."""
    rel, _, rest = nodeid.partition("::")
    # Parametrized ids (test_x[1-a], whose params may hold "::") come from the function test_x.
    names = rest.split("[", 1)[0].split("::")
    path = root / rel
    if not path.is_file():
        return Located(MISSING, f"{rel} does not exist")
    if path.suffix != ".py":
        return Located(UNKNOWN, f"{rel} is not a Python file")
    tree = _parse(path, rel, cache)
    if isinstance(tree, str):
        return Located(UNKNOWN, tree)
    found = _lookup(tree.body, names, _classes(tree.body), set())
    if found == FOUND:
        return Located(FOUND)
    name = "::".join(names)
    if found == MISSING:
        return Located(MISSING, f"{rel} defines no {name}")
    return Located(UNKNOWN, f"{rel}: {name} may be inherited or imported from elsewhere")


def _parse(path: Path, rel: str, cache: dict[Path, Parsed]) -> Parsed:
    if path not in cache:
        try:
            cache[path] = ast.parse(path.read_bytes().decode("utf-8"), filename=rel)
        except UnicodeDecodeError:
            cache[path] = f"{rel} is not valid UTF-8"
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            cache[path] = f"{rel} does not parse" + (f" (line {line})" if line else "")
        except OSError as exc:
            cache[path] = f"{rel} cannot be read ({exc.strerror})"
    return cache[path]


def _lookup(
    body: list[ast.stmt], names: list[str], classes: dict[str, ast.ClassDef], seen: set[str]
) -> str:
    bound, star = _bindings(body)
    node = bound.get(names[0])
    if node is None:
        return UNKNOWN if star else MISSING
    if len(names) == 1:
        return FOUND
    if not isinstance(node, ast.ClassDef):
        return UNKNOWN  # a class bound by import or assignment: its body is elsewhere
    return _in_class(node, names[1:], classes, seen)


def _in_class(
    cls: ast.ClassDef, names: list[str], classes: dict[str, ast.ClassDef], seen: set[str]
) -> str:
    seen = seen | {cls.name}  # a class hierarchy that loops back is not followed twice
    own = _lookup(cls.body, names, classes, seen)
    if own == FOUND:
        return FOUND
    unknown = own == UNKNOWN
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id == "object":
            continue
        local = classes.get(base.id) if isinstance(base, ast.Name) else None
        if local is None or local.name in seen:
            unknown = True
            continue
        inherited = _in_class(local, names, classes, seen)
        if inherited == FOUND:
            return FOUND
        unknown = unknown or inherited == UNKNOWN
    return UNKNOWN if unknown else MISSING


def _classes(body: list[ast.stmt]) -> dict[str, ast.ClassDef]:
    bound, _ = _bindings(body)
    return {name: node for name, node in bound.items() if isinstance(node, ast.ClassDef)}


def _bindings(body: list[ast.stmt]) -> tuple[dict[str, ast.AST], bool]:
    """Names a module or class body binds (through if/try/with blocks), and any star import."""
    bound: dict[str, ast.AST] = {}
    star = False
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets: list[ast.expr] = (
                list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]
            )
            bound.update({t.id: stmt for t in _names(targets)})
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                star = star or alias.name == "*"
                bound[(alias.asname or alias.name).split(".")[0]] = stmt
        else:
            for block in _blocks(stmt):
                inner, inner_star = _bindings(block)
                bound.update(inner)
                star = star or inner_star
    return bound, star


def _names(targets: list[ast.expr]) -> list[ast.Name]:
    found: list[ast.Name] = []
    for target in targets:
        if isinstance(target, ast.Name):
            found.append(target)
        elif isinstance(target, ast.Tuple | ast.List):
            found += _names(list(target.elts))
    return found


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, ast.If | ast.For | ast.AsyncFor | ast.While):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [stmt.body]
    if isinstance(stmt, ast.Try | ast.TryStar):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    return []
