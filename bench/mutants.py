"""Seeded AST mutants of a project's source, for the mutation benchmark (issue 12).

Operators, each a small textual edit of one expression or statement so the patch is a
one-line diff a reviewer would recognise:

- inside function bodies: ``compare`` (flip a comparison: ``<`` -> ``>=``, ``==`` -> ``!=``,
  ``in`` -> ``not in``, ``is`` -> ``is not``), ``arith`` (``+`` <-> ``-``, ``*`` -> ``//``),
  ``const`` (an int ``n`` -> ``n + 1``, ``True`` <-> ``False``), ``negate`` (an ``if``/``while``
  condition -> ``not (...)``), ``return-none`` (``return x`` -> ``return None``);
- at module level: ``module-const`` (a module constant ``NAME = 3`` / ``"text"`` / ``True``
  changed).

Sites are found in a fixed order, each operator's sites shuffled with the seed, and dealt
(``Dealer``) to the operator with the fewest *kept* mutants so far (the benchmark keeps only
the mutants the full suite kills): an operator whose mutants mostly survive, as module
constants do, still gets its share of the kept ones, within a bound on its tries. The same
seed and the same kill results always give the same mutants. A mutant that does not compile
is dropped.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

OPERATORS = ("compare", "arith", "const", "negate", "return-none", "module-const")
_FLIP: dict[type[ast.cmpop], ast.cmpop] = {
    ast.Lt: ast.GtE(), ast.GtE: ast.Lt(), ast.Gt: ast.LtE(), ast.LtE: ast.Gt(),
    ast.Eq: ast.NotEq(), ast.NotEq: ast.Eq(), ast.In: ast.NotIn(), ast.NotIn: ast.In(),
    ast.Is: ast.IsNot(), ast.IsNot: ast.Is(),
}
_ARITH: dict[type[ast.operator], ast.operator] = {
    ast.Add: ast.Sub(), ast.Sub: ast.Add(), ast.Mult: ast.FloorDiv(),
}


@dataclass(frozen=True)
class Mutant:
    path: str  # repo-relative
    operator: str
    line: int
    col: int  # UTF-8 byte offset, as ast gives it
    end_line: int
    end_col: int
    old: str
    new: str

    @property
    def label(self) -> str:
        return f"{self.path}:{self.line} {self.operator}: {self.old[:40]} -> {self.new[:40]}"


def sites(repo: Path, sources: list[str], exclude: tuple[str, ...] = ()) -> list[Mutant]:
    """Every candidate mutant of the .py files under ``sources``, in a fixed order."""
    found: list[Mutant] = []
    for folder in sources:
        for path in sorted((repo / folder).rglob("*.py")):
            rel = path.relative_to(repo).as_posix()
            if not any(rel.startswith(prefix) for prefix in exclude):
                found += _file_sites(rel, path.read_bytes())
    return found


class Dealer:
    """Candidates in trial order, balanced over the operators by what was *kept*: the next
    one comes from the operator with the fewest kept mutants (then the fewest tried, then
    ``OPERATORS`` order) that has candidates left and fewer than ``tries`` tried. Dealing
    round-robin over *tried* mutants kept no module-level mutant at all (bench/mutation.md,
    2026-12-02): most module constants survive, so the kept ones were all function bodies."""

    def __init__(self, found: list[Mutant], seed: int, *, tries: int) -> None:
        rng = random.Random(seed)
        self.pools: dict[str, list[Mutant]] = {}
        for op in OPERATORS:
            pool = [m for m in found if m.operator == op]
            rng.shuffle(pool)
            self.pools[op] = pool
        self.kept = dict.fromkeys(OPERATORS, 0)
        self.tried = dict.fromkeys(OPERATORS, 0)
        self.tries = tries

    def __iter__(self) -> Iterator[Mutant]:
        while (op := self._next_operator()) is not None:
            self.tried[op] += 1
            yield self.pools[op].pop(0)

    def keep(self, mutant: Mutant) -> None:
        """The full suite killed ``mutant``: its operator had one more kept."""
        self.kept[mutant.operator] += 1

    def _next_operator(self) -> str | None:
        open_ = [op for op in OPERATORS if self.pools[op] and self.tried[op] < self.tries]
        if not open_:
            return None
        return min(open_, key=lambda op: (self.kept[op], self.tried[op], OPERATORS.index(op)))


def apply(source: bytes, mutant: Mutant) -> bytes:
    """``source`` with the mutant's span replaced (offsets are UTF-8 bytes, lines 1-based)."""
    lines = source.splitlines(keepends=True)
    start = sum(len(x) for x in lines[: mutant.line - 1]) + mutant.col
    end = sum(len(x) for x in lines[: mutant.end_line - 1]) + mutant.end_col
    return source[:start] + mutant.new.encode() + source[end:]


# --- finding sites -----------------------------------------------------------------------------

def _file_sites(rel: str, source: bytes) -> list[Mutant]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = [m for node in tree.body for m in _module_const(rel, source, node)]
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in func.body:
                found += _in_body(rel, source, stmt)
    return [m for m in dict.fromkeys(found) if _compiles(source, m)]


def _in_body(rel: str, source: bytes, stmt: ast.stmt) -> list[Mutant]:
    found: list[Mutant] = []
    # f-string parts are formatting, not values; nested functions are found twice (as a
    # statement here and as functions of their own): ``_file_sites`` drops the repeats.
    fstrings = [f for f in ast.walk(stmt) if isinstance(f, ast.JoinedStr)]
    skip = {id(part) for f in fstrings for part in ast.walk(f)}
    for node in ast.walk(stmt):
        if id(node) in skip:
            continue
        made = _site(rel, source, node)
        if made is not None:
            found.append(made)
    return found


def _site(rel: str, source: bytes, node: ast.AST) -> Mutant | None:
    if isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIP:
        new = ast.Compare(node.left, [_FLIP[type(node.ops[0])], *node.ops[1:]],
                          node.comparators)
        return _make(rel, source, node, "compare", ast.unparse(new))
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        new_op = ast.BinOp(node.left, _ARITH[type(node.op)], node.right)
        return _make(rel, source, node, "arith", ast.unparse(new_op))
    if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
        return _make(rel, source, node, "const", _tweak(node.value))
    if isinstance(node, ast.If | ast.While):
        old = _segment(source, node.test)
        return _make(rel, source, node.test, "negate", f"not ({old})")
    if isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        return _make(rel, source, node, "return-none", "return None")
    return None


def _module_const(rel: str, source: bytes, node: ast.stmt) -> list[Mutant]:
    value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
    if not isinstance(value, ast.Constant) or type(value.value) not in (int, float, str, bool):
        return []
    if isinstance(value.value, str) and not value.value:
        return []
    return [_make(rel, source, value, "module-const", _tweak(value.value))]


def _tweak(value: object) -> str:
    if isinstance(value, bool):
        return repr(not value)
    if isinstance(value, int | float):
        return repr(value + 1)
    return repr(f"{value}_mutant")


def _make(rel: str, source: bytes, node: ast.AST, operator: str, new: str) -> Mutant:
    old = _segment(source, node)
    return Mutant(rel, operator, node.lineno, node.col_offset,  # type: ignore[attr-defined]
                  node.end_lineno, node.end_col_offset, old, new)  # type: ignore[attr-defined]


def _segment(source: bytes, node: ast.AST) -> str:
    return ast.get_source_segment(source.decode("utf-8", "replace"), node) or ""


def _compiles(source: bytes, mutant: Mutant) -> bool:
    if mutant.old == mutant.new or not mutant.old:
        return False
    try:
        compile(apply(source, mutant), mutant.path, "exec")
    except (SyntaxError, ValueError):
        return False
    return True
