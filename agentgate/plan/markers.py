"""Skip and xfail markers a patch ADDED to tests that already existed at the base.

Relabelling a failing test as skipped or expected-to-fail is the cheapest way to turn a red
band green, so the planner promotes on it. Read from file texts with ``ast`` (no import, no
I/O): per test, the set of marker expressions that apply to it -- its own decorators, its
class's decorators and ``pytestmark``, the module's ``pytestmark`` and module-level
``pytest.skip(...)``, and ``pytest.skip/xfail/importorskip`` or ``self.skipTest`` calls in
its body. A head expression the base did not have for the same test is an addition; an
edited ``skipif`` condition counts too (``skipif(sys.platform == "win32")`` -> ``skipif(True)``).
Files that are not test files (helpers, conftest) are compared as a whole: a new skip
reference anywhere in them skips whatever calls it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

_MARK_NAMES = frozenset({"skip", "skipif", "xfail"})
_UNITTEST_NAMES = frozenset({"skip", "skipIf", "skipUnless", "expectedFailure"})
_CALL_NAMES = frozenset({"skip", "xfail", "importorskip"})
WHOLE_FILE = "*"  # ``test`` of a marker found in a helper or conftest: it reaches every caller


@dataclass(frozen=True)
class AddedMarker:
    path: str
    test: str  # qualified name ("TestCart.test_total", "test_tax") or WHOLE_FILE
    marker: str  # the marker expression as written at head
    line: int

    def describe(self) -> str:
        where = "the file" if self.test == WHOLE_FILE else self.test
        return f"{self.marker} added to {where} (line {self.line})"


def added_markers(
    path: str, base_text: str | None, head_text: str | None, *, is_test_file: bool
) -> list[AddedMarker]:
    """Markers at head that the same test (or file) did not carry at base.

    A file new at head has no existing tests: nothing is an addition. A head file that does
    not parse is the graph's escalation, not this module's; a base that does not parse makes
    every head test count as existing (more promotion, never less).
    """
    if base_text is None or head_text is None:
        return []
    head = _parse(head_text)
    if head is None:
        return []
    base = _parse(base_text)
    if not is_test_file:
        return _whole_file(path, base, head)
    base_tests = dict(_tests(base)) if base is not None else None
    found: list[AddedMarker] = []
    for name, markers in _tests(head):
        if base_tests is not None and name not in base_tests:
            continue
        before = {text for text, _ in base_tests.get(name, [])} if base_tests else set()
        seen: set[str] = set()
        for text, line in markers:
            if text not in before and text not in seen:
                seen.add(text)
                found.append(AddedMarker(path, name, text, line))
    return found


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return None


def _whole_file(path: str, base: ast.Module | None, head: ast.Module) -> list[AddedMarker]:
    ctx = _Context.of(head)
    before = {text for text, _ in _refs(base, _Context.of(base))} if base is not None else set()
    found: dict[str, AddedMarker] = {}
    for text, line in _refs(head, ctx):
        if text not in before and text not in found:
            found[text] = AddedMarker(path, WHOLE_FILE, text, line)
    return list(found.values())


def _refs(tree: ast.AST, ctx: _Context) -> Iterator[tuple[str, int]]:
    yield from _marker_exprs(tree, ctx)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ctx.is_skip_call(node):
            yield ast.unparse(node), node.lineno


@dataclass(frozen=True)
class _Context:
    """How the module spells pytest, unittest and marker aliases (``import pytest as pt``)."""

    pytest_names: frozenset[str]
    unittest_names: frozenset[str]
    imported: frozenset[str]  # skip/xfail/skipIf... imported by name from pytest or unittest
    aliases: frozenset[str]  # module-level NAME = <a skip marker>

    @classmethod
    def of(cls, tree: ast.Module) -> _Context:
        pytest_names, unittest_names, imported = {"pytest"}, {"unittest"}, set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "pytest":
                        pytest_names.add(alias.asname or "pytest")
                    elif alias.name == "unittest":
                        unittest_names.add(alias.asname or "unittest")
            elif isinstance(node, ast.ImportFrom) and node.module in ("pytest", "unittest"):
                wanted = _CALL_NAMES if node.module == "pytest" else _UNITTEST_NAMES
                imported |= {a.asname or a.name for a in node.names if a.name in wanted}
        base = cls(frozenset(pytest_names), frozenset(unittest_names), frozenset(imported),
                   frozenset())
        return cls(base.pytest_names, base.unittest_names, base.imported, _aliases(tree, base))

    def is_marker(self, node: ast.expr) -> bool:
        """``pytest.mark.skip``, ``mark.xfail``, ``unittest.skipIf``, an alias of one."""
        if isinstance(node, ast.Attribute):
            if node.attr in _MARK_NAMES and _ends_with_mark(node.value):
                return True
            return node.attr in _UNITTEST_NAMES and _is_name(node.value, self.unittest_names)
        return isinstance(node, ast.Name) and node.id in self.aliases

    def is_skip_call(self, node: ast.Call) -> bool:
        """``pytest.skip(...)``, ``pytest.xfail(...)``, ``importorskip``, ``self.skipTest``."""
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in _CALL_NAMES and _is_name(func.value, self.pytest_names):
                return True
            return func.attr == "skipTest"
        return isinstance(func, ast.Name) and func.id in self.imported and func.id in _CALL_NAMES


def _aliases(tree: ast.Module, ctx: _Context) -> frozenset[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(n, ast.expr) and ctx.is_marker(n) for n in ast.walk(node.value)
        ):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    names.discard("pytestmark")
    return frozenset(names)


def _ends_with_mark(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "mark") or (
        isinstance(node, ast.Name) and node.id == "mark"
    )


def _is_name(node: ast.expr, names: frozenset[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


# --- which markers apply to which test --------------------------------------------------------

_Markers = list[tuple[str, int]]


def _tests(tree: ast.Module) -> Iterator[tuple[str, _Markers]]:
    """Every test function (``test*`` at module level or in a class) with its markers."""
    ctx = _Context.of(tree)
    module_level = _module_markers(tree, ctx)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_test(node.name):
            yield node.name, module_level + _function_markers(node, ctx)
        elif isinstance(node, ast.ClassDef):
            yield from _class_tests(node, ctx, module_level, prefix="")


def _class_tests(
    node: ast.ClassDef, ctx: _Context, outer: _Markers, *, prefix: str
) -> Iterator[tuple[str, _Markers]]:
    name = f"{prefix}{node.name}"
    inherited = outer + _decorator_markers(node.decorator_list, ctx) + _pytestmark(node.body, ctx)
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _is_test(item.name):
            yield f"{name}.{item.name}", inherited + _function_markers(item, ctx)
        elif isinstance(item, ast.ClassDef):
            yield from _class_tests(item, ctx, inherited, prefix=f"{name}.")


def _is_test(name: str) -> bool:
    return name.startswith("test")


def _module_markers(tree: ast.Module, ctx: _Context) -> _Markers:
    markers = _pytestmark(tree.body, ctx)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        # pytest.skip(..., allow_module_level=True) and pytest.importorskip at module level.
        for call in _calls(node, skip_defs=True):
            if ctx.is_skip_call(call):
                markers.append((ast.unparse(call), call.lineno))
    return markers


def _pytestmark(body: list[ast.stmt], ctx: _Context) -> _Markers:
    markers: _Markers = []
    for node in body:
        targets = assigned_names(node)
        value = getattr(node, "value", None)
        if "pytestmark" in targets and isinstance(value, ast.expr):
            markers += _marker_exprs(value, ctx)
    return markers


def assigned_names(node: ast.stmt) -> set[str]:
    """The plain names a statement binds (``x = ...``, ``x: T = ...``, ``x += ...``)."""
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def _function_markers(node: ast.FunctionDef | ast.AsyncFunctionDef, ctx: _Context) -> _Markers:
    markers = _decorator_markers(node.decorator_list, ctx)
    for call in _calls(node, skip_defs=False):
        if ctx.is_skip_call(call):
            markers.append((ast.unparse(call), call.lineno))
    return markers


def _decorator_markers(decorators: list[ast.expr], ctx: _Context) -> _Markers:
    """Marker expressions anywhere in a decorator: ``@pytest.mark.xfail(...)`` as written,
    and ``pytest.param(..., marks=pytest.mark.skip)`` inside a parametrize."""
    markers: _Markers = []
    for decorator in decorators:
        markers += _marker_exprs(decorator, ctx)
    return markers


def _marker_exprs(tree: ast.AST, ctx: _Context) -> _Markers:
    """Marker expressions under ``tree`` as written: ``pytest.mark.skipif(cond, ...)`` whole
    (so an edited condition differs), a bare ``pytest.mark.skip`` as itself."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)
              and ctx.is_marker(n.func)}
    found = [
        n for n in ast.walk(tree)
        if isinstance(n, ast.expr) and id(n) not in called
        and (ctx.is_marker(n) or (isinstance(n, ast.Call) and id(n.func) in called))
    ]
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    return [(ast.unparse(n), n.lineno) for n in found]


def _calls(node: ast.AST, *, skip_defs: bool) -> Iterator[ast.Call]:
    """Calls under ``node``; with ``skip_defs``, not those inside function or class bodies."""
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call):
            yield current
        for child in ast.iter_child_nodes(current):
            if skip_defs and isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
            ):
                continue
            stack.append(child)
