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
