"""Per-function checksums: which blocks of a file a change touches."""

from __future__ import annotations

from agentgate.witness import blocks
from agentgate.witness.blocks import MODULE

SOURCE = '''import os
LIMIT = 1


@decorate(level=2)
def first(a,
          b=LIMIT):
    """Doc."""
    def inner():
        return a
    return inner() + b


def one_liner(): return 1


class Shape:
    sides = 3

    def area(self):
        return self.sides

    if LIMIT:
        def grow(self):
            self.sides += 1
    else:
        def grow(self):
            self.sides += 2
'''


def _changed(old: str, new: str) -> frozenset[str]:
    assert old in SOURCE, old
    return blocks.changed(SOURCE, SOURCE.replace(old, new, 1))


def test_function_body_change_is_that_function_only() -> None:
    assert _changed("return self.sides", "return self.sides * 2") == {"Shape.area"}


def test_nested_function_belongs_to_its_outer_function() -> None:
    assert _changed("return a\n", "return -a\n") == {"first"}


def test_repeated_names_under_if_are_told_apart() -> None:
    assert _changed("self.sides += 2", "self.sides += 3") == {"Shape.grow#2"}


def test_module_level_class_body_decorator_and_signature_are_module() -> None:
    assert _changed("LIMIT = 1", "LIMIT = 2") == {MODULE}
    assert _changed("sides = 3", "sides = 4") == {MODULE}
    assert _changed("level=2", "level=3") == {MODULE}
    assert _changed("b=LIMIT", "b=LIMIT + 1") == {MODULE}


def test_one_liner_body_is_module_code() -> None:
    assert _changed("def one_liner(): return 1", "def one_liner(): return 2") == {MODULE}


def test_adding_a_function_changes_the_module_block() -> None:
    assert blocks.changed(SOURCE, SOURCE + "\ndef extra():\n    return 0\n") == {MODULE}


def test_unparsable_missing_or_identical() -> None:
    assert blocks.changed(SOURCE, "def broken(:\n") == {MODULE}
    assert blocks.changed(None, SOURCE) == {MODULE}
    assert blocks.changed(SOURCE, None) == {MODULE}
    assert blocks.changed(SOURCE, SOURCE) == frozenset()


def test_block_at_maps_lines_to_blocks() -> None:
    layout = blocks.parse(SOURCE)
    assert layout is not None
    lines = SOURCE.splitlines()
    assert layout.block_at(lines.index("    return inner() + b") + 1) == "first"
    assert layout.block_at(lines.index("def one_liner(): return 1") + 1) == MODULE
    assert layout.block_at(lines.index("    sides = 3") + 1) == MODULE
    assert layout.block_at(lines.index("        return self.sides") + 1) == "Shape.area"


def test_bytes_with_a_coding_cookie_and_crlf() -> None:
    text = "# -*- coding: latin-1 -*-\r\ndef f():\r\n    return 'caf\xe9'\r\n"
    layout = blocks.parse(text.encode("latin-1"))
    assert layout is not None and [b.name for b in layout.blocks] == ["f"]
    assert blocks.changed(text.encode("latin-1"), text.replace("caf", "bar").encode("latin-1")) == {
        "f"
    }


def test_a_docstring_or_a_yield_is_the_definitions() -> None:
    assert _changed('"""Doc."""', '"""Other."""') == {MODULE}
    assert _changed("return inner() + b", "yield inner() + b") == {MODULE}
    # a yield of a nested function's own is that function's
    assert _changed("return a\n", "yield a\n") == {"first"}
    assert _changed("return self.sides", "return (lambda: (yield))") == {"Shape.area"}


COMMENTED = '''def total(items):
    s = 0
    for i in items:
        s += i
    return s


def label():
    return """a

b"""
'''


def test_comments_and_blank_lines_change_no_block() -> None:
    """New-user trial round 7: one ``#`` comment in a hot function ran its 71 tests. What
    the compiler never reads changes no block: comments, blank lines, trailing blanks."""
    edited = ("# totals\n" + COMMENTED.replace("    s = 0\n", "    # start at zero\n    s = 0\n\n")
              .replace("s += i\n", "s += i  # add   \n"))
    assert blocks.changed(COMMENTED, edited) == frozenset()


def test_code_and_the_lines_of_a_string_still_change_their_block() -> None:
    assert blocks.changed(COMMENTED, COMMENTED.replace("s += i", "s -= i")) == {"total"}
    # A blank line or a '#' inside a string is the string's: not a comment, not left out.
    assert blocks.changed(COMMENTED, COMMENTED.replace('"""a\n\nb"""', '"""a\nb"""')) == {
        "label"}
    assert blocks.changed(COMMENTED, COMMENTED.replace('"""a\n\nb"""', '"""a\n# x\nb"""')) == {
        "label"}
    assert blocks.changed(COMMENTED, "x = 1  # set\n" + COMMENTED) == {MODULE}
