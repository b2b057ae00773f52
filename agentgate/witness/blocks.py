"""Per-function checksums of a Python source file, from its text alone.

A file is cut into *blocks*: the body of every function or method that is not itself inside
a function (a nested function belongs to its outer function's block), and the *module
block*: everything else -- imports, module-level statements, class bodies, decorators,
signatures and default values. Only a function body runs later, when something calls it;
the module block runs at import, for every test that uses the file. So a change inside one
function impacts the tests that executed that function, and a change anywhere else impacts
every test that touched the file (pytest-testmon draws the same line with its per-block
checksums).

Stdlib only, and Python 3.9 syntax: the pytest plugin imports this module inside the
project's own interpreter, which may not have agentgate's dependencies.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import importlib.util
import io
import tokenize
from dataclasses import dataclass
from typing import TYPE_CHECKING

MODULE = "<module>"  # the module block; a change here impacts every test touching the file
WHOLE = "*"  # a dependency on a file's whole content (a data file the test opened)
DIR = "<dir>"  # a dependency on a folder's listing (a test that globbed or listed it)
# A dependency on the absence of a module: the path is where an import looked in vain
# (``app/local`` for ``app/local.py``, ``app/local/__init__.py`` or a namespace folder).
MISSING = "<missing>"
# A dependency on one attribute of a module, read at run time (``watch``): ``.NAME``. No block
# name starts with a dot.
READ = "."
# What a read of installed metadata, or the search for it, depends on: the files installing
# the project makes its ``*.dist-info``/``*.egg-info`` from (``recorder``, ``patch``).
PACKAGING = ("pyproject.toml", "setup.cfg", "setup.py")

if TYPE_CHECKING:  # an alias only for the type checker: the plugin side stays 3.9-clean
    from collections.abc import Sequence

    Source = str | bytes
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Block:
    name: str  # qualified name within the file ("Class.method"); "#2" marks a repeat
    start: int  # first line of the body (1-based)
    end: int  # last line of the body
    checksum: str
    # What the definition shows of the body without calling it, part of the module block:
    # ``f.__doc__`` (click's help text), ``inspect.isgeneratorfunction(f)``.
    shown: str = ""


@dataclass(frozen=True)
class FileBlocks:
    blocks: tuple[Block, ...]  # sorted by start line, never overlapping
    module_checksum: str
    starts: tuple[int, ...]  # each block's start, for bisecting

    def block_at(self, line: int) -> str:
        """The block a line belongs to: a function's name, or MODULE."""
        i = bisect.bisect_right(self.starts, line) - 1
        if i >= 0 and self.blocks[i].start <= line <= self.blocks[i].end:
            return self.blocks[i].name
        return MODULE

    def checksums(self) -> dict[str, str]:
        sums = {b.name: b.checksum for b in self.blocks}
        sums[MODULE] = self.module_checksum
        return sums


def decode(source: Source) -> str:
    """Source text as Python reads it: the coding cookie honoured, newlines universal."""
    if isinstance(source, str):
        return source.replace("\r\n", "\n").replace("\r", "\n")
    return importlib.util.decode_source(source)


def parse(source: Source) -> FileBlocks | None:
    """The blocks of a file, or None when it is not Python that parses (-> whole file)."""
    try:
        text = decode(source)
        tree = ast.parse(text)
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return None
    return from_tree(tree, text)


def from_tree(tree: ast.Module, text: str, *, sums: bool = True) -> FileBlocks:
    """The blocks of an already parsed file (``text`` as ``decode`` returns it); without
    ``sums``, their layout alone (a recording maps lines to blocks, it compares none)."""
    lines = text.split("\n")
    code = _code_lines(text, lines) if sums else lines
    spans = sorted(_spans(tree.body, ""), key=lambda s: s[1])
    blocks = _name_blocks(spans, code, sums)
    return FileBlocks(
        blocks=blocks,
        module_checksum=_module_checksum(code, blocks) if sums else "",
        starts=tuple(b.start for b in blocks),
    )


def _code_lines(text: str, lines: list[str]) -> list[str | None]:
    """The file's lines as the compiler reads them: a comment is cut off, a line holding
    nothing else or nothing at all is None (left out of every digest), trailing blanks go,
    so an edit of comments or blank lines changes no block (new-user trial round 7: one
    ``#`` comment in a hot function ran its 71 tests). The lines a token spans over several
    (a string) stay as they are. The raw lines when the text does not tokenize."""
    code: list[str | None] = list(lines)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return code
    has_code: set[int] = set()
    spanned: set[int] = set()
    cuts: dict[int, int] = {}
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            cuts[tok.start[0]] = tok.start[1]
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                              tokenize.ENDMARKER):
            has_code.update(range(tok.start[0], tok.end[0] + 1))
            if tok.end[0] > tok.start[0]:
                spanned.update(range(tok.start[0], tok.end[0] + 1))
    for number, line in enumerate(lines, start=1):
        if number not in has_code:
            code[number - 1] = None
        elif number not in spanned:
            code[number - 1] = line[: cuts.get(number, len(line))].rstrip()
        elif number in cuts:
            code[number - 1] = line[: cuts[number]]
    return code


_Span = tuple[str, int, int, "ast.FunctionDef | ast.AsyncFunctionDef"]


def _spans(body: list[ast.stmt], prefix: str) -> list[_Span]:
    """(qualified name, first body line, last body line, the definition) of every outermost
    function."""
    found: list[_Span] = []
    for node in body:
        found.extend(_node_spans(node, prefix))
    return found


def _node_spans(node: ast.AST, prefix: str) -> list[_Span]:
    if isinstance(node, _FUNCS):
        span = _body_span(node)
        return [(prefix + node.name, *span, node)] if span else []
    if isinstance(node, ast.ClassDef):
        return _spans(node.body, f"{prefix}{node.name}.")
    found: list[_Span] = []
    # Functions defined under if/try/with/for at module or class level are still blocks.
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            found.extend(_node_spans(child, prefix))
        else:
            body = getattr(child, "body", None)  # except handlers, match cases
            if isinstance(body, list):
                found.extend(_spans(body, prefix))
    return found


def _body_span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int] | None:
    """The lines only the body occupies; None for a one-liner (its body is module code)."""
    header_end = max(
        [node.lineno]
        + [getattr(n, "end_lineno", None) or node.lineno for n in ast.walk(node.args)]
        + ([node.returns.end_lineno or node.lineno] if node.returns else [])
    )
    start = node.body[0].lineno
    end = node.end_lineno or start
    if start <= header_end:
        return None
    return start, end


def shown(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """What defining the function shows of its body without running it: the docstring
    (``__doc__``) and whether a ``yield`` of its own makes it a generator (its code flags).
    It belongs to the block that runs the definition."""
    doc = ast.get_docstring(node, clean=False)
    return f"{doc!r}:{_yields(node)}"


def _yields(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    todo: list[ast.AST] = [*func.body]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (*_FUNCS, ast.Lambda, ast.ClassDef)):  # scopes of their own
            todo.extend(ast.iter_child_nodes(node))
    return False


def _name_blocks(spans: list[_Span], lines: Sequence[str | None], sums: bool
                 ) -> tuple[Block, ...]:
    seen: dict[str, int] = {}
    blocks = []
    for name, start, end, node in spans:
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name}#{seen[name]}"
        if sums:
            text = "\n".join(line for line in lines[start - 1 : end] if line is not None)
            blocks.append(Block(label, start, end, _digest(text), shown(node)))
        else:
            blocks.append(Block(label, start, end, ""))
    return tuple(blocks)


def _module_checksum(lines: Sequence[str | None], blocks: tuple[Block, ...]) -> str:
    """Everything outside the bodies, each body replaced by a marker with what it shows."""
    kept: list[str | None] = []
    line = 1
    for block in blocks:
        kept.extend(lines[line - 1 : block.start - 1])
        kept.append("\0" + block.shown)
        line = block.end + 1
    kept.extend(lines[line - 1 :])
    return _digest("\n".join(k for k in kept if k is not None))


def _digest(text: str) -> str:
    data = text.encode("utf-8", errors="surrogateescape")
    return hashlib.sha256(data).hexdigest()[:16]


def changed(old: Source | None, new: Source | None) -> frozenset[str]:
    """Names of the blocks that differ between two versions of a file.

    MODULE in the answer means every test touching the file is impacted: the module block
    changed, the file appeared or went away, or one side does not parse.
    """
    if old is None or new is None:
        return frozenset({MODULE})
    before, after = parse(old), parse(new)
    if before is None or after is None:
        return frozenset({MODULE})
    old_sums, new_sums = before.checksums(), after.checksums()
    if old_sums[MODULE] != new_sums[MODULE]:
        return frozenset({MODULE})
    names = set(old_sums) | set(new_sums)
    return frozenset(n for n in names if old_sums.get(n) != new_sums.get(n))
