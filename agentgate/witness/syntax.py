"""Small facts about Python syntax that ``bindings`` and ``purity`` share: what a statement
runs now (not a function's body), the names it binds, the imports it makes, the name an
attribute chain starts from.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (*FUNCS, ast.ClassDef)
STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))


@dataclass(frozen=True)
class Import:
    """One name an import statement binds: ``alias`` = ``module``'s ``name`` (None for
    ``import module``; "*" for a star import), ``level`` dots before a relative module."""

    alias: str
    module: str
    name: str | None
    level: int

    @property
    def stdlib(self) -> bool:
        return not self.level and self.module.split(".")[0] in STDLIB


def import_items(node: ast.Import | ast.ImportFrom) -> list[Import]:
    if isinstance(node, ast.Import):
        return [Import(a.asname or a.name.split(".")[0], a.name, None, 0) for a in node.names]
    module = node.module or ""
    return [Import(a.asname or a.name, module, a.name, node.level) for a in node.names]


def walk_now(
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
        if isinstance(current, FUNCS):
            stack += header(current)
            if skip is not None and id(current) not in skip:
                stack += current.body  # a one-liner: its body is module code
        elif isinstance(current, ast.ClassDef) and not classes:
            stack += [*current.decorator_list, *current.bases, *current.keywords]
        elif isinstance(current, ast.Lambda) and not lambdas:
            stack += [*current.args.defaults,
                      *(d for d in current.args.kw_defaults if d is not None)]
        else:
            stack += ast.iter_child_nodes(current)


def header(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """What a ``def`` evaluates: decorators, defaults, annotations."""
    args = func.args
    found: list[ast.expr] = [*func.decorator_list, *args.defaults]
    found += [d for d in args.kw_defaults if d is not None]
    found += [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                     args.vararg, args.kwarg]
              if a is not None and a.annotation is not None]
    if func.returns is not None:
        found.append(func.returns)
    return found


def binds(stmt: ast.stmt) -> set[str]:
    """Every name a top-level statement binds in the module (a class binds its name, not
    what its body binds; a function, its name)."""
    found: set[str] = set()
    for node in walk_now(stmt, classes=False):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            found.add(node.id)
        elif isinstance(node, SCOPES):
            found.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update(i.alias for i in import_items(node) if i.name != "*")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        found.add("__doc__")
    return found


def base_name(node: ast.AST) -> str | None:
    """The name an attribute or subscript chain starts from (``a`` of ``a.b[c].d``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def literal(node: ast.expr | None) -> bool:
    if node is None:
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
