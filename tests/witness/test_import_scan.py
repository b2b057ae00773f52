"""The recording's static import scan (``harvest._imported_names``) reads only the statements
of a file that cannot hold a literal ``import_module`` call (issue 12 item 6: walking every
expression of every file was a large part of the harvest). An import statement nested
anywhere must still be found, and a literal ``import_module`` / ``__import__`` call too."""

from __future__ import annotations

from pathlib import Path

from agentgate.witness import harvest

NESTED = '''import app.top
if True:
    import app.in_if
else:
    import app.in_else
try:
    import app.in_try
except ImportError:
    import app.in_except
else:
    import app.in_try_else
finally:
    import app.in_finally
with open(__file__):
    import app.in_with
for _ in ():
    import app.in_for
while False:
    import app.in_while
match 1:
    case 1:
        import app.in_case


class Box:
    import app.in_class

    def method(self):
        from . import sibling
        return sibling


def outer():
    def inner():
        import app.in_inner
    return inner


async def coroutine():
    import app.in_async
'''
CALLS = '''import importlib


def load():
    return importlib.import_module("app.plugin"), __import__("app.other")
'''


def _scan(tmp_path: Path, text: str) -> dict[str, set[str]]:
    path = tmp_path / "mod.py"
    path.write_text(text, encoding="utf-8")
    return dict(harvest._imported_names(str(path), "app.mod", "app"))


def test_import_statements_are_found_wherever_they_are_nested(tmp_path: Path) -> None:
    found = _scan(tmp_path, NESTED)
    module = {n.split(".")[-1] for n in found["<module>"] if n.startswith("app.")}
    assert module == {"top", "in_if", "in_else", "in_try", "in_except", "in_try_else",
                      "in_finally", "in_with", "in_for", "in_while", "in_case", "in_class"}
    assert found["Box.method"] == {"app", "app.sibling"}
    assert found["outer"] == {"app", "app.in_inner"}
    assert found["coroutine"] == {"app", "app.in_async"}


def test_a_literal_import_module_call_is_found(tmp_path: Path) -> None:
    found = _scan(tmp_path, CALLS)
    assert found["load"] == {"app", "app.plugin", "app.other"}
