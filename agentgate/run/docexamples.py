"""Docstring examples whose expected output a patch rewrote (pure).

With ``--doctest-modules`` every docstring example of a module is a test, and it lives in
the module the patch changes: its base form cannot be laid over head's code the way a test
file's is (red-team: the agent broke ``add`` and changed ``>>> add(2, 3)`` to expect
``-1``). What can be told from the two texts alone is the rewrite itself: a base example
head expects otherwise, or no longer has as the base wrote it (removed, moved, a ``+SKIP``
added), or no longer has after the examples the base had before it (red-team: an example
added before it rebound a name it uses, so it passed as written on the broken code; the
examples of a docstring share one namespace and run in order). New examples may follow the
base's. That is a rewritten test, judged like one (``rewritten_tests``,
``.agentgate/accepted``); the example's node id is pytest's (``app/calc.py::app.calc.add``).
"""

from __future__ import annotations

import ast
import doctest
from dataclasses import dataclass

from agentgate.core import pysource


@dataclass(frozen=True)
class Rewritten:
    nodeid: str  # pytest's doctest item: ``path::module.qualname``
    source: str  # the example's first line
    base: str  # what the base expects, first line
    head: str  # what head expects, first line


GONE = "(no such example at head)"
MOVED = "(the same, after other examples than the base's)"


def rewritten(path: str, module: str, base: str, head: str) -> list[Rewritten]:
    """The base's examples of ``path`` (module ``module``) that head expects otherwise, or
    no longer has where the base had them: removed, its source edited (a ``+SKIP`` or
    ``+ELLIPSIS`` directive added, a space changed), moved to another docstring (red-team:
    each of those hid the example the patch broke)."""
    if not _parses(head):
        return []  # pytest fails to collect the module: the band says so
    old, new = _examples(base), _examples(head)
    found = []
    for qualname, examples in sorted(old.items()):
        after = new.get(qualname, [])
        name = f"{module}.{qualname}" if qualname else module
        # The base's examples must open head's docstring as the base wrote them: from the
        # first one that does not, each is rewritten (later ones run after other examples).
        same = 0
        while same < len(examples) and same < len(after) and examples[same] == after[same]:
            same += 1
        wants = dict(after)
        for source, want in examples[same:]:
            now = wants.get(source)
            head_says = GONE if now is None else MOVED if now == want else _first(now)
            found.append(Rewritten(f"{path}::{name}", _first(source), _first(want), head_says))
    return found


def _parses(text: str) -> bool:
    return pysource.parse(text) is not None


def _examples(text: str) -> dict[str, list[tuple[str, str]]]:
    """qualname ("" for the module) -> its examples in order, (source, expected output);
    nothing for a text that does not parse."""
    tree = pysource.parse(text)
    if tree is None:
        return {}
    found: dict[str, list[tuple[str, str]]] = {}
    parser = doctest.DocTestParser()
    for qualname, node in _documented(tree, ""):
        doc = ast.get_docstring(node, clean=False)
        if not doc or ">>>" not in doc:
            continue
        try:
            examples = parser.get_examples(doc)
        except ValueError:  # a malformed example: pytest reports it as a failing test
            continue
        found[qualname] = [(e.source, e.want) for e in examples]
    return found


_Documented = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _documented(node: _Documented, prefix: str) -> list[tuple[str, _Documented]]:
    """The module and the functions and classes doctest's finder looks into, by the dotted
    names it gives them: the module's and each class's, not a function's inner ones."""
    out: list[tuple[str, _Documented]] = [(prefix, node)]
    if not isinstance(node, ast.Module | ast.ClassDef):
        return out
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}.{child.name}" if prefix else child.name
            out += _documented(child, name)
    return out


def _first(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= 60 else line[:57] + "..."
