"""Python source read the one way every stage reads it (pure)."""

from __future__ import annotations

import ast


def parse(text: str | bytes | None) -> ast.Module | None:
    """The module ``text`` is, or None when there is none or it does not parse: a syntax
    error, a NUL byte, or a tree too deep for the parser (each stage then says what that
    means for it)."""
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
