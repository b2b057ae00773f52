"""What one Python source imports, before resolution: raw import records per file.

grimp's Rust scanner (ruff's parser) finds every import statement about 20x faster than
``ast.parse`` (sympy's sdist: 0.6 s against 11 s), but it resolves names against a module
set and drops what it cannot find, so an import of a deleted module vanishes. Here it only
says *where* the import statements are and which top-level name each imports; the statement
on that line is re-read (a regex for the one-line forms, tokenize + ``ast`` for the rest) to
keep the full name, and the top-levels are cross-checked against grimp's. A mismatch, a file
that mentions ``importlib``, ``__import__`` or ``pytest_plugins`` (a substring prefilter:
17 of sympy's 1,543 files), and every file when grimp is missing or misbehaves, go through
one exact ``ast`` pass instead (graph.scan_ast), which also finds the dynamic imports.

Raw records are strings, independent of where the file lives:
``a.b`` (``import a.b``, ``import_module("a.b")``), ``a.b:c,d`` (``from a.b import c, d``),
``..x:y`` (``from ..x import y``), ``.:*`` (``from . import *``), ``@.x`` for
``import_module(".x", __name__)`` (relative to the module itself, not its package), and
``|f../lib`` / ``|rlib`` for a folder put on sys.path (graph.scan_syspath).
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
import unicodedata
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentgate.graph.scan_ast import scan_tree
from agentgate.graph.scan_grimp import FAKE_PACKAGE, ImportLine, grimp_lines
from agentgate.graph.scan_isolated import LARGE, scan_isolated
from agentgate.graph.scan_loaders import UNPICKLER_MODULES

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

_DEEP_RELATIVE = "." * 16  # deeper than grimp's fake package (it would panic): use ast

_NAME = r"[^\W\d]\w*"
_DOTTED = rf"{_NAME}(?:\.{_NAME})*"
_AS = rf"(?:\s+as\s+{_NAME})?"
_END = r"\s*(?:#.*)?"
_LIST = rf"{_NAME}{_AS}(?:\s*,\s*{_NAME}{_AS})*"
_IMPORT_RE = re.compile(rf"import\s+({_DOTTED}{_AS}(?:\s*,\s*{_DOTTED}{_AS})*){_END}")
_FROM_RE = re.compile(
    rf"from\s+(\.*)({_DOTTED})?\s+import\s+(\*|{_LIST}|\(\s*{_LIST}\s*,?\s*\)){_END}"
)
_KEYWORD_RE = re.compile(r"\b(?:import|from)\b")
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
_ODD_BREAK_RE = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_DYNAMIC_HINTS = ("importlib", "__import__", "pytest_plugins", "runpy", "pkgutil",
                  "importorskip", "patch", "setattr(", "delattr(", "DocTestSuite",
                  ">>>")  # a docstring's examples (graph.scan_ast: doctest imports)
# the other loaders (graph.scan_loaders) and exec/compile called as builtins
_LOADER_HINTS = re.compile(r"(?<![\w.])(?:exec|compile)\s*\(|\b(?:spec_from_file_location|"
                           r"run_path|run_module|resolve_name|SourceFileLoader|load_source)\b"
                           # folders put on sys.path (graph.scan_syspath)
                           r"|\bsys\s*\.\s*path\b|\b(?:addsitedir|syspath_prepend)\b"
                           r"|\bimport\s+sys\s+as\b|\bfrom\s+sys\s+import\b"
                           # a module run as a program (graph.scan_ast: ``-m app.cli``,
                           # ``-mapp.cli``), code a child runs (``-c "import app"``)
                           r"|(?:^|[\s'\"])-(?:m|c)(?:[\s'\"]|$)|(?:^|[\s'\"])-m[^\W\d]"
                           # what graph.scan_loaders.indirect reads: a .py file an argv or a
                           # path names, ``sys.modules["app.core"]``, builtins taken apart
                           r"|\.py['\"]|\bsys\s*\.\s*modules\b|\bbuiltins\b"
                           # a folder run as a program (``[sys.executable, "app"]``)
                           r"|\bsys\s*\.\s*executable\b"
                           # a string that opens with an import: code for a child or exec
                           r"|['\"]{1,3}\s*(?:from\s+[\w.]+\s+)?import\s")
# the object loaders indirect reads (``pickle.loads``: the file depends on what its data names)
_UNPICKLER_HINTS = re.compile(r"\b(?:" + "|".join(sorted(UNPICKLER_MODULES)) + r")\b")
_SMALL_BATCH = 100_000  # characters: ast parses that in about 40 ms, grimp loads in 30


@dataclass(frozen=True)
class FileScan:
    imports: tuple[str, ...]  # raw records, see the module docstring
    escalations: tuple[tuple[str, str], ...] = ()  # (code, detail)


@dataclass
class ScanStats:
    """Counters for tests and the bench: how many files took which path."""

    parsed: int = 0
    grimp: int = 0
    ast: int = 0
    notes: list[str] = field(default_factory=list)

    def reset(self) -> None:
        self.parsed = self.grimp = self.ast = 0
        self.notes.clear()


STATS = ScanStats()


def scan_sources(sources: Mapping[str, bytes]) -> dict[str, FileScan]:
    """Raw imports of each source (keyed by anything, e.g. blob id)."""
    STATS.parsed += len(sources)
    results: dict[str, FileScan] = {}
    texts: dict[str, str] = {}
    for key, data in sources.items():
        text_or_scan = _decode(data)
        if isinstance(text_or_scan, FileScan):
            results[key] = text_or_scan
        elif _needs_ast(text_or_scan):
            results[key] = _scan_ast(text_or_scan)
        else:
            texts[key] = text_or_scan
    results.update(scan_texts(texts))
    return results


# A string that is nothing but a dotted name, or ``module:attr``: what logging's
# ``dictConfig`` (``'()': 'app.fmt.Upper'``), an entry point (``'app.calc:mul'``),
# ``importlib.resources.files('app.data')``, ``pkgutil.resolve_name``, ``pydoc.locate`` or a
# framework's settings import by name (red-team round 4). Each is an import of the longest
# module it names (resolution keeps every prefix); names that are not the project's
# resolve to nothing. A file name (``'setup.py'``, ``'rates.json'``) is none.
_NAMED_STRING = re.compile(
    r"""(?<![\w.])['"]([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"""
    r""":[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)['"]""")
_FILE_SUFFIXES = frozenset({
    "py", "pyc", "pyi", "pyx", "so", "txt", "md", "rst", "json", "toml", "yaml",
    "yml", "ini", "cfg", "csv", "tsv", "html", "htm", "xml", "log", "d",
    "sqlite", "png", "jpg", "jpeg", "gif", "svg", "gz", "zip", "tar", "whl",
    "pdf", "css", "js", "lock", "pem", "key", "pkl", "pickle", "npy", "bin",
    "com", "org", "net", "io"})


_PLAIN_IMPORT = re.compile(r"^[\w.]+$")


def _attribute_chains(text: str, imports: Iterable[str]) -> set[str]:
    """``import app`` then ``app.calc.mul``: the module the chain names is used, loaded by
    whichever file imported it first (red-team round 4: a test reached ``app.calc`` only
    because another test file's collection imported it). Each chain on a name a plain
    import binds is an import of what it names; resolution keeps the prefixes that exist."""
    tops = {raw.split(".", 1)[0] for raw in imports if _PLAIN_IMPORT.match(raw)}
    if not tops:
        return set()
    found: set[str] = set()
    chain = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(tops)))
                       + r")((?:\.[A-Za-z_]\w*)+)")
    for match in chain.finditer(text):
        found.add(match.group(1) + match.group(2))
    return found


def _named_in_strings(text: str) -> set[str]:
    """The dotted names quoted strings of a source are made of, as import records."""
    found: set[str] = set()
    for match in _NAMED_STRING.finditer(text):
        name = match.group(1)
        if ":" not in name and name.rpartition(".")[2].lower() in _FILE_SUFFIXES:
            continue
        found.add(name.replace(":", "."))
    return found


def scan_here(text: str) -> FileScan:
    """One decoded source scanned in this process, whatever its size (the isolated child's
    entry)."""
    return _scan_fast({"f": text})["f"]


def scan_texts(texts: Mapping[str, str]) -> dict[str, FileScan]:
    """Decoded sources: the huge ones each in a child process (``scan_isolated``), the rest
    here."""
    huge = {k: t for k, t in texts.items() if len(t) > LARGE}
    results = _scan_fast({k: t for k, t in texts.items() if k not in huge})
    for key, text in huge.items():
        results[key] = FileScan(*scan_isolated(text))
    return results


def _decode(data: bytes) -> str | FileScan:
    """The source as Python reads it: a ``# coding:`` cookie is honoured (issue 12: under
    ``utf-7`` the bytes ``+AAo-import os`` are a newline and an import)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    encoding = _declared(data)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        where = f" at byte {exc.start} ({exc.reason})" if isinstance(
            exc, UnicodeDecodeError) else ""
        detail = f"not valid {encoding}{where}; re-save it as UTF-8"
        return FileScan((), (("not-utf8", detail),))
    if "\x00" in text:
        return FileScan((), (("syntax-error", "source contains a NUL byte"),))
    return text


def _declared(data: bytes) -> str:
    """The encoding a coding cookie on the first two lines declares, else UTF-8."""
    if not any(b"coding" in line for line in data[:400].split(b"\n", 2)[:2]):
        return "utf-8"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return "utf-8"  # an unknown codec: decoding as UTF-8 then fails or is what Python sees
    return "utf-8" if encoding == "utf-8-sig" else encoding


def _needs_ast(text: str) -> bool:
    return (_DEEP_RELATIVE in text or any(hint in text for hint in _DYNAMIC_HINTS)
            or _LOADER_HINTS.search(text) is not None
            or _UNPICKLER_HINTS.search(text) is not None)


def _scan_ast(text: str) -> FileScan:
    STATS.ast += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings (bad escapes) are not ours to print
            tree = ast.parse(text)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        return FileScan((), (("syntax-error", f"{where}{exc.msg}"),))
    except (ValueError, RecursionError, MemoryError) as exc:
        return FileScan((), (("syntax-error", f"cannot be parsed ({type(exc).__name__})"),))
    try:
        imports, escalations = scan_tree(tree)
    except RecursionError:  # parsed, but nested too deeply for the tree walk
        return FileScan((), (("too-complex", "nested too deeply to read its imports"),))
    return FileScan(tuple(sorted({*imports, *_named_in_strings(text),
                                  *_attribute_chains(text, imports)})), tuple(escalations))


# --- the grimp path ------------------------------------------------------------------------

def _scan_fast(texts: Mapping[str, str]) -> dict[str, FileScan]:
    """grimp finds the import lines; the lines are re-read; any doubt goes to ``ast``.
    A few small files (a warm build after a commit) go straight to ``ast``: that is
    quicker than loading grimp at all."""
    if sum(map(len, texts.values())) < _SMALL_BATCH:
        return {key: _scan_ast(text) for key, text in texts.items()}
    found, note = grimp_lines(texts)
    if note:
        STATS.notes.append(note)
    results: dict[str, FileScan] = {}
    for key, text in texts.items():
        lines = found.get(key)
        scan = _from_lines(text, lines) if lines is not None else None
        if scan is None:
            results[key] = _scan_ast(text)
        else:
            STATS.grimp += 1
            results[key] = scan
    return results


def _from_lines(text: str, lines: Mapping[int, ImportLine]) -> FileScan | None:
    """Raw imports of the statements starting on ``lines``; None when they disagree with grimp."""
    raws: list[str] = []
    reader = _LineReader(text)
    for number, line in sorted(lines.items()):
        got = _simple(line.contents)
        if got is None:
            got = reader.statements_at(number)
        if got is None or {_top(raw) for raw in got} != line.tops:
            return None
        raws.extend(got)
    return FileScan(tuple(sorted({*raws, *_named_in_strings(text),
                                  *_attribute_chains(text, raws)})))


def _top(raw: str) -> str:
    if raw[0] in ".@":
        return FAKE_PACKAGE
    return raw.partition(":")[0].partition(".")[0]


def _simple(line: str) -> list[str] | None:
    """The one-line ``import a.b as c, d`` / ``from .x import (y, z)`` forms, else None."""
    if line.startswith("import"):
        if not _IMPORT_RE.fullmatch(line):
            return None
        parts = line.partition("#")[0][6:].split(",")
        raws = [part.split()[0] for part in parts]
    elif line.startswith("from"):
        match = _FROM_RE.fullmatch(line)
        if match is None:
            return None
        dots, module, names = match.groups()
        items = [part.split()[0] for part in names.strip("()").split(",") if part.strip()]
        raws = [f"{dots}{module or ''}:{','.join(items)}"]
    else:
        return None
    # Python NFKC-normalises identifiers (ast does it on the slow path)
    return raws if line.isascii() else [unicodedata.normalize("NFKC", r) for r in raws]


class _LineReader:
    """Reads the whole import statement(s) that start on a line: tokenize, then ``ast``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] = []
        self._buffer = io.StringIO()

    def statements_at(self, number: int) -> list[str] | None:
        if not self._starts:
            self._starts = _line_starts(self.text)
            self._buffer = io.StringIO(self.text)
        if number > len(self._starts):
            return None
        start = self._starts[number - 1]
        end = self._starts[number] if number < len(self._starts) else len(self.text)
        raws: list[str] = []
        done = start
        for match in _KEYWORD_RE.finditer(self.text, start, end):
            if match.start() < done:
                continue  # a keyword inside the statement just read
            if self.text[done : match.start()].lstrip(" \t;").startswith("#"):
                break  # the rest of the line is a comment
            got, done = self._statement_from(number, match.start())
            raws.extend(got)
        return raws or None

    def _statement_from(self, number: int, offset: int) -> tuple[list[str], int]:
        self._buffer.seek(offset)
        read = _logical_line(self._buffer)
        if read is None:
            return [], offset + 1
        source, (row, col) = read
        end = offset + col if row == 1 else self._starts[number + row - 2] + col
        try:
            tree = ast.parse(source)
        except (SyntaxError, RecursionError, MemoryError):
            return [], offset + 1  # ``yield from x``, ``raise E from e``, a word in a string
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Import | ast.ImportFrom):
            return [], offset + 1
        return scan_tree(tree, dynamic=False)[0], end


def _line_starts(text: str) -> list[int]:
    """Where each line starts, counting only the breaks Python's tokenizer (and ruff) count."""
    if _ODD_BREAK_RE.search(text) is None:  # then str.splitlines agrees, and it runs in C
        return [0, *itertools.accumulate(map(len, text.splitlines(keepends=True)))]
    return [0, *(m.end() for m in _NEWLINE_RE.finditer(text))]


def _logical_line(buffer: io.StringIO) -> tuple[str, tuple[int, int]] | None:
    """Tokens up to the end of the statement, joined (continuation lines and comments gone),
    and where the statement ends (row from 1, column; columns of row 1 count from the start).
    """
    parts: list[str] = []
    end = (1, 0)
    skip = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    try:
        for token in tokenize.generate_tokens(buffer.readline):
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or token.string == ";":
                break
            if token.type == tokenize.ERRORTOKEN or len(parts) > 100_000:
                return None
            if token.type not in skip:
                parts.append(token.string)
                end = token.end
    except (tokenize.TokenError, SyntaxError):
        return None
    return " ".join(parts), end
