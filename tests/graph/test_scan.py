"""The per-file import scanner: grimp's fast path must say exactly what ``ast`` says."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agentgate.graph import scan as imports_scan
from agentgate.graph.scan import FileScan, scan_sources
from agentgate.graph.scan_grimp import ImportLine

# Sources whose import statements are awkward to re-read from a line number.
TRICKY = {
    "plain": "import os\nimport a.b.c as d, e\n",
    "from": "from a.b import c, d as e  # comment\nfrom . import x\nfrom ..p.q import r\n",
    "parens": "from a import (\n    b,  # why\n    c,\n)\n",
    "backslash": "from a \\\n    import b, \\\n    c\nimport d, \\\n    e\n",
    "semicolons": "import a; import b\nx = 1; from c import d; import e\n",
    "compound": "try: import a\nexcept ImportError: import b\nif TYPE_CHECKING: from c import d\n",
    "nested": "def f():\n    import a\n    class K:\n        from b import c\n",
    "keyword_in_from": "from importer import import_thing\nfrom fromage import x\n",
    "yield_from": "def g():\n    yield from h()\n    import a\n",
    "raise_from": "try:\n    pass\nexcept E as e: raise F from e\nimport b\n",
    "star": "from a.b import *\nfrom . import *\n",
    "crlf": "import a\r\nfrom b import (\r\n  c)\r\n",
    "unicode": "import m\u00e9tier\nfrom caf\u00e9 import na\u00efve\n",
    "formfeed": "import a\n\x0c\nfrom b import (c,\n d)\n",
    "future": "from __future__ import annotations\nimport a\n",
    "empty": "",
    "no_imports": "x = 1\n",
    "indented_first_comment": "    # comment\nimport a\n",
    "dotted_spaces": "import a . b\nfrom . c import d\nfrom .import e\n",
    "match": "match x:\n    case 1:\n        import a\n",
    "long_relative": "from ....deep import x\n",
    "keyword_in_comment": "x = 1; import a  # import b, from c import d\n",
}


@pytest.fixture(autouse=True)
def _fresh_stats(monkeypatch: pytest.MonkeyPatch) -> None:
    imports_scan.STATS.reset()
    # these sources are tiny: without this they would all skip grimp as a small batch
    monkeypatch.setattr(imports_scan, "_SMALL_BATCH", 0)


def test_a_small_batch_skips_grimp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports_scan, "_SMALL_BATCH", 1000)
    assert scan_sources({"k": b"import a\n"})["k"] == FileScan(("a",))
    assert (imports_scan.STATS.grimp, imports_scan.STATS.ast) == (0, 1)


def test_fast_path_agrees_with_ast_on_awkward_sources() -> None:
    sources = {k: v.encode() for k, v in TRICKY.items()}
    fast = scan_sources(sources)
    assert imports_scan.STATS.grimp == len(TRICKY), "a source left the fast path"
    for key, text in TRICKY.items():
        exact = imports_scan._scan_ast(text)
        assert fast[key] == exact, key


def test_fast_path_falls_back_to_ast_when_grimp_disagrees() -> None:
    """If grimp saw other top-level names on a line than the re-read statement has, the
    re-reading is wrong somewhere: the file goes through ast instead."""
    text = "import a\n"
    agreed = {1: ImportLine("import a", frozenset({"a"}))}
    disagreed = {1: ImportLine("import a", frozenset({"a", "b"}))}
    assert imports_scan._from_lines(text, agreed) == FileScan(("a",))
    assert imports_scan._from_lines(text, disagreed) is None
    missed = {1: ImportLine("import a", frozenset({"a"})), 2: ImportLine("", frozenset({"c"}))}
    assert imports_scan._from_lines(text, missed) is None


def test_scan_keeps_full_names_grimp_would_drop() -> None:
    scan = scan_sources({"k": b"from app.pricing import gone\nimport app.x.y.missing\n"})["k"]
    # (``app.pricing`` again: the dotted chain on the ``app`` the plain import binds)
    assert scan == FileScan(("app.pricing", "app.pricing:gone", "app.x.y.missing"))
    assert imports_scan.STATS.grimp == 1


def test_syntax_error_escalates_and_the_rest_of_the_batch_is_scanned() -> None:
    scans = scan_sources({"bad": b"def f(:\n    pass\n", "good": b"import a\n"})
    assert scans["bad"].imports == ()
    assert scans["bad"].escalations[0][0] == "syntax-error"
    assert "line 1" in scans["bad"].escalations[0][1]
    assert scans["good"] == FileScan(("a",))


def test_not_utf8_escalates() -> None:
    scan = scan_sources({"k": b"import a\nname = '\xe9'\n"})["k"]
    assert scan.imports == ()
    assert scan.escalations[0][0] == "not-utf8"


def test_nul_byte_is_a_syntax_error() -> None:
    scan = scan_sources({"k": b"import a\n\x00\n"})["k"]
    assert scan.escalations == (("syntax-error", "source contains a NUL byte"),)


def test_utf8_bom_is_accepted() -> None:
    assert scan_sources({"k": b"\xef\xbb\xbfimport a\n"})["k"] == FileScan(("a",))


def _scan(source: str) -> FileScan:
    return scan_sources({"k": textwrap.dedent(source).encode()})["k"]


def test_importlib_literal_and_relative_with_package() -> None:
    scan = _scan(
        """
        import importlib
        from importlib import import_module as load
        importlib.import_module("app.plugins.csv")
        load(".json", package="app.plugins")
        load("..core", "app.plugins.sub")
        importlib.import_module(".own", __package__)
        importlib.import_module(".child", __name__)
        """
    )
    assert {"app.plugins.csv", "app.plugins.json", "app.plugins.core", ".own", "@.child"} <= set(
        scan.imports
    )
    assert scan.escalations == ()


def test_importorskip_is_an_import() -> None:
    """Red-team: ``pytest.importorskip("app.flags")`` was no edge, so a patch to
    ``app/flags.py`` selected none of the tests that reach it only that way (the test ran at
    no push at all). A literal name is an import, under any binding of pytest or of the
    function; a computed one escalates, as ``import_module``'s does."""
    scan = _scan(
        """
        import pytest
        import pytest as pt
        from pytest import importorskip as need
        pytest.importorskip("app.flags")
        pt.importorskip("app.extra", minversion="1")
        need(modname="app.other")
        """
    )
    assert {"app.flags", "app.extra", "app.other"} <= set(scan.imports)
    assert scan.escalations == ()
    computed = _scan("import pytest\npytest.importorskip(name)\n")
    assert [e[0] for e in computed.escalations] == ["dynamic-import"]
    assert "pytest.importorskip(name) with a computed name" in computed.escalations[0][1]


def test_a_dotted_target_a_patch_imports_is_an_import() -> None:
    """Red-team: a test that imports ``app`` and patches ``"app.calc.mul"`` reaches
    ``app/calc.py`` only through the string (mock imports it to find ``mul``); a change there
    selected no test. The patch family, pytest-mock's ``mocker``, ``monkeypatch.setattr`` and
    ``delattr`` with a dotted string, and ``DocTestSuite("app.doc")`` name what they import;
    ``patch.object`` and a two-argument ``setattr`` name no module."""
    scan = _scan(
        """
        import doctest
        from unittest import mock
        from unittest.mock import patch

        def test(monkeypatch, mocker, obj):
            with mock.patch("app.calc.mul", return_value=0):
                pass
            patch("app.a.b")
            mock.patch.dict("app.conf.SETTINGS", {})
            mock.patch.multiple("app.multi", x=1)
            mocker.patch("app.m.f")
            monkeypatch.setattr("app.s.t", 1)
            monkeypatch.delattr("app.d.e")
            doctest.DocTestSuite("app.doc")
            monkeypatch.setattr(obj, "name", 1)
            mock.patch.object(obj, "calc")
            mock.patch(TARGET)

        TARGET = "app.held.g"
        """
    )
    assert set(scan.imports) >= {
        "app.calc:mul", "app.a:b", "app.conf:SETTINGS", "app:multi", "app.m:f", "app.s:t",
        "app.d:e", "app.doc", "app.held:g"}
    assert scan.escalations == ()


def test_dunder_import_literal_with_fromlist_and_level() -> None:
    scan = _scan(
        """
        __import__("app.a")
        __import__("app.b", globals(), locals(), ["c", "d"])
        __import__("sib", globals(), locals(), ["x"], 1)
        import builtins
        builtins.__import__("app.e")
        """
    )
    assert {"app.a", "app.b:c,d", ".sib:x", "app.e"} <= set(scan.imports)
    assert scan.escalations == ()


def test_relative_dunder_import_resolves_against_the_package_its_globals_name() -> None:
    """Red team round 4: ``__import__("calc", {"__package__": "app"}, None, ["mul"], 1)`` in a
    test file is ``app.calc``, not a sibling of the test file (which hid the edge)."""
    scan = _scan(
        """
        __import__("calc", {"__package__": "app", "__name__": "app.x"}, None, ["mul"], 1)
        __import__("io", {"__name__": "app.fmt.x"}, None, [], 1)
        __import__("k", {"__name__": "app.pkg", "__path__": []}, None, [], 2)
        __import__("v", {"__package__": None, "__name__": "app.y"}, level=1)
        __import__("w", None, None, [], 1)
        """
    )
    assert {"app.calc:mul", "app.fmt.io", "app.k", "app.v", ".w"} <= set(scan.imports)
    assert ".calc:mul" not in scan.imports
    assert scan.escalations == ()


@pytest.mark.parametrize("globals_arg", ["ns", "{'__package__': pkg}", "{key: 'app'}", "{}",
                                         "{**ns}"])
def test_relative_dunder_import_with_unknown_globals_is_computed(globals_arg: str) -> None:
    scan = _scan(f"__import__('calc', {globals_arg}, None, ['mul'], 1)\n")
    assert scan.escalations and "computed globals" in scan.escalations[0][1]


def test_relative_dunder_import_above_the_top_package_is_unresolved() -> None:
    scan = _scan("__import__('calc', {'__package__': 'app'}, None, [], 2)\n")
    assert scan.escalations and scan.escalations[0][0] == "unresolved-import"


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("import importlib\nimportlib.import_module(name)\n", "computed name at line 3"),
        # No whole package name before the computed part: it may be "apple" or "app.x".
        ("import importlib\nimportlib.import_module(f'app{x}')\n", "computed name"),
        ("__import__(name)\n", "__import__(name) with a computed name at line 2"),
        ("__import__('a', fromlist=names)\n", "computed fromlist"),
        ("import importlib\nimportlib.import_module('.x', pkg)\n", "computed package"),
        ("import importlib\nimportlib.import_module(*args)\n", "computed name"),
        ("from importlib import import_module\nloader = import_module\n", "used indirectly"),
        ("import builtins\nbuiltins.__import__ = hook\n", "used indirectly"),
        # importlib and builtins under other names (issue 12)
        ("import importlib as il\nil.import_module(x)\n", "computed name at line 3"),
        ("from importlib import import_module as im\nim(x)\n", "computed name at line 3"),
        ("import builtins as b\nb.__import__(x)\n", "__import__(x) with a computed name"),
        ("from builtins import __import__ as imp\nimp(x)\n", "computed name at line 3"),
    ],
)
def test_computed_dynamic_import_escalates(source: str, fragment: str) -> None:
    # line 1 is the kept import, so the source's own lines count from 2
    scan = scan_sources({"k": ("import app.kept\n" + source).encode()})["k"]
    assert [code for code, _ in scan.escalations] == ["dynamic-import"]
    assert fragment in scan.escalations[0][1]
    assert "app.kept" in scan.imports  # an escalation never empties the import set


@pytest.mark.parametrize(("call", "package"), [
    ("f'app.{x}'", "app"), ("'app.' + x", "app"), ("'app.formats.' + x", "app.formats"),
])
def test_a_computed_name_under_a_whole_package_is_that_package(call: str, package: str) -> None:
    scan = scan_sources({"k": f"import importlib\nimportlib.import_module({call})\n".encode()})
    [(code, _detail)] = scan["k"].escalations
    assert code == "dynamic-prefix" and f"{package}:**" in scan["k"].imports


def test_pytest_plugins_literal_and_computed() -> None:
    assert set(_scan("pytest_plugins = ('a.fix', 'b.fix')\n").imports) == {"a.fix", "b.fix"}
    assert _scan("pytest_plugins = 'a.fix'\n").imports == ("a.fix",)
    computed = _scan("pytest_plugins = [x for x in y]\n")
    assert [code for code, _ in computed.escalations] == ["dynamic-import"]


def test_a_projects_own_import_module_is_an_ordinary_function() -> None:
    scan = _scan(
        """
        from sympy.external import import_module
        numpy = import_module(name)
        """
    )
    assert scan.escalations == ()


def test_without_grimp_the_ast_pass_gives_the_same_answer() -> None:
    """A missing (or changed) grimp costs speed, never correctness."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["grimp"] = None
        from agentgate.graph import scan as imports_scan
        imports_scan._SMALL_BATCH = 0
        sources = {{k: v.encode() for k, v in {TRICKY!r}.items()}}
        got = imports_scan.scan_sources(sources)
        exact = {{k: imports_scan._scan_ast(v) for k, v in {TRICKY!r}.items()}}
        assert got == exact
        assert imports_scan.STATS.grimp == 0
        assert "grimp's scanner is unavailable" in imports_scan.STATS.notes[0]
        print("ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "ok", proc.stderr


# --- issue 12: no source can crash the scanner --------------------------------------------

HUGE_EXPRESSION = "import os\nX = " + " + ".join(["1"] * 60_000) + "\n"  # grimp: SIGSEGV


def test_a_huge_generated_expression_escalates_instead_of_crashing() -> None:
    scans = scan_sources({"huge": HUGE_EXPRESSION.encode(), "ok": b"import a.b\n"})
    assert scans["ok"].imports == ("a.b",)
    [(code, detail)] = scans["huge"].escalations
    assert code == "too-complex" and "scan" in detail


def test_a_large_ordinary_file_is_still_read_exactly() -> None:
    # The legitimate twin: a big file that is not pathological keeps its imports.
    big = "import a.b\nfrom c import d\n" + "x = 1\n" * 40_000
    assert len(big) > imports_scan.LARGE
    scan = scan_sources({"big": big.encode()})["big"]
    assert (scan.imports, scan.escalations) == (("a.b", "c:d"), ())


def test_deep_nesting_on_the_ast_path_escalates() -> None:
    deep = "import importlib\nY = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n"
    [(code, _)] = scan_sources({"deep": deep.encode()})["deep"].escalations
    assert code in ("syntax-error", "too-complex")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Attack: under utf-7 these bytes are a newline and an import that UTF-8 never sees.
        (b"# coding: utf-7\n+AAo-import app.hidden\n", ("app.hidden",)),
        (b"#!/usr/bin/env python\n# coding=utf-7\n+AAo-import app.x\n", ("app.x",)),
        ("# -*- coding: latin-1 -*-\nimport app.caf\u00e9\n".encode("latin-1"), ("app.café",)),
        (b"import os  # coding: not a cookie on line 1? it is: utf-8 stays\n", ("os",)),
    ],
    ids=["utf-7", "utf-7-second-line", "latin-1", "plain"],
)
def test_sources_are_decoded_as_python_decodes_them(source: bytes, expected: tuple[str]) -> None:
    assert scan_sources({"f": source})["f"].imports == expected


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("import importlib.util as u\nu.spec_from_file_location('p', PLUGIN)\n",
         "spec_from_file_location"),
        ("import runpy\nrunpy.run_path('scripts/x.py')\n", "run_path"),
        ("from runpy import run_module\nrun_module('app.x')\n", "run_module"),
        ("import pkgutil\npkgutil.resolve_name(spec)\n", "resolve_name"),
        ("exec(open('conf.py').read())\n", "exec() of a file"),
        ("from pathlib import Path\ncode = compile(Path('x.py').read_text(), 'x', 'exec')\n",
         "compile() of a file"),
        ("__builtins__.__import__('app.x')\n", "__builtins__"),
        ("__builtins__['__import__']('app.x')\n", "__builtins__"),
        ("import importlib as il\nil.util.spec_from_file_location('p', '/abs/x.py')\n",
         "spec_from_file_location"),
        ("src = open('conf.py').read()\nexec(src)\n", "exec() of a file"),
        ("import importlib\nload = getattr(importlib, 'import_module')\n", "getattr()"),
    ],
    ids=["spec_from_file_location", "run_path", "run_module", "resolve_name", "exec",
         "compile", "builtins", "builtins-subscript", "importlib-alias", "exec-of-a-name",
         "getattr"],
)
def test_other_loaders_escalate(source: str, fragment: str) -> None:
    [(code, detail)] = scan_sources({"f": source.encode()})["f"].escalations
    assert code == "dynamic-import" and fragment in detail


def test_the_code_exec_runs_from_a_literal_is_scanned() -> None:
    # Attack: an import hidden in a string; the plain code and re's compile add nothing.
    source = ("exec('import app.hidden')\nexec(\"exec('from app import deeper')\")\n"
              "from re import compile\nR = compile('[a-z]+')\nexec('y = 1')\n")
    scan = scan_sources({"f": source.encode()})["f"]
    assert {"app.hidden", "app:deeper"} <= set(scan.imports)
    assert scan.escalations == ()
    computed = scan_sources({"f": b"exec('import importlib\\nimportlib.import_module(n)')\n"})
    [(code, detail)] = computed["f"].escalations
    assert code == "dynamic-import" and "in the code exec() runs at line 1" in detail


def test_a_file_spec_with_a_known_path_is_a_file_record() -> None:
    # Issue 12: a literal or __file__-relative .py path is an edge to that file.
    source = ("import importlib.util as u\nfrom pathlib import Path\n"
              "a = u.spec_from_file_location('a', 'plugins/x.py')\n"
              "b = u.spec_from_file_location('b', Path(__file__).parent / 'y.py')\n"
              "u.module_from_spec(a)\n")
    scan = scan_sources({"f": source.encode()})["f"]
    assert {"|Rplugins/x.py", "|Fy.py"} <= set(scan.imports)
    assert scan.escalations == ()


def test_a_literal_run_module_or_resolve_name_is_an_import() -> None:
    source = ("import runpy, pkgutil\nrunpy.run_module('app.cli', run_name='__main__')\n"
              "pkgutil.resolve_name('app.hooks:setup')\n")
    scan = scan_sources({"f": source.encode()})["f"]
    assert {"app.cli", "app.hooks"} <= set(scan.imports)
    assert scan.escalations == ()


def test_exec_of_a_string_and_re_compile_do_not_escalate() -> None:
    # The legitimate twins: no file is read, nothing is loaded.
    source = b"import re\nR = re.compile('x')\nexec('y = 1')\ncode = 'z = 2'\nexec(code)\n"
    assert scan_sources({"f": source})["f"].escalations == ()


@pytest.mark.parametrize("text", [
    "import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'app.cli'])\n",
    "import os\nos.system('python -m app.cli --quiet')\n",
    "import subprocess, sys\nsubprocess.run([sys.executable, '-mapp.cli'])\n",
])
def test_a_module_run_as_a_program_is_an_import(text: str) -> None:
    """Whichever way the file is scanned (the grimp batch for files with no dynamic hint),
    ``-m app.cli`` in an argv or a command line (or glued, ``-mapp.cli``) is an import of
    ``app.cli`` and of its ``__main__`` should it be a package (resolution keeps every
    prefix)."""
    assert "app.cli.__main__" in scan_sources({"k": text.encode()})["k"].imports


def test_a_module_used_through_a_package_attribute_is_an_import() -> None:
    """Red-team round 4: ``import app`` then ``app.calc.mul(...)``: ``app.calc`` is loaded by
    whichever test file imported it first, and a change to it ran none of this file's
    tests. On both scanner paths; a name no plain import binds makes no chain."""
    text = ("import app\nimport os\n\n\ndef test_b():\n    assert app.calc.mul(2, 3) == 6\n"
            "    other.thing.x()\n")
    for source in (text, text + "# padding\n" * 12_000):
        imports = set(scan_sources({"k": source.encode()})["k"].imports)
        assert "app.calc.mul" in imports and not any(i.startswith("other") for i in imports)


def test_a_string_opening_with_an_import_is_code_whichever_path() -> None:
    """Red-team round 4: code for a child or for exec written as ``textwrap.dedent(\"\"\"...)``,
    a constant or a local name held imports no rule saw. A string that parses as Python and
    imports something is the file's imports; a string that only mentions the word is not."""
    text = ('s = "import fake"; import real\nt = """\nimport hidden\n"""\nimport after\n'
            'u = "the import of it"\n')
    for source in (text, text + "# padding\n" * 12_000):
        imports = set(scan_sources({"k": source.encode()})["k"].imports)
        assert imports == {"fake", "real", "hidden", "after"}, imports


@pytest.mark.parametrize(("text", "named"), [
    ("LOGGING = {'formatters': {'f': {'()': 'app.fmt.Upper'}}}\n", "app.fmt.Upper"),
    ("from importlib.metadata import EntryPoint\n"
     "E = EntryPoint(name='m', value='app.calc:mul', group='g')\n", "app.calc.mul"),
    ("from importlib import resources\nDATA = resources.files('app.data')\n", "app.data"),
])
def test_a_string_that_is_a_dotted_name_is_an_import(text: str, named: str) -> None:
    """Red-team round 4: logging's ``dictConfig`` factories, entry points and
    ``importlib.resources`` import what a string names. A file name is no module name."""
    big = text + "\n" * 1 + "# padding\n" * 12_000  # the grimp batch too
    for source in (text, big):
        assert named in scan_sources({"k": source.encode()})["k"].imports
    plain = "PATH = 'rates.json'\nHOST = 'example.com'\nV = '1.2.3'\nDOC = 'notes.txt'\n"
    assert scan_sources({"k": plain.encode()})["k"].imports == ()


# What scan_tree reads besides import statements (graph.scan_loaders' ``indirect``): a file
# that holds one of these and no other hint took the fast path, whose import lines alone do
# not show them. Sources over 100,000 characters in all (every real project) take it:
# tabulate's test_cli.py runs ``[sys.executable, "tabulate/__init__.py"]`` and its tests were
# in no band (mutation benchmark trial).
INDIRECT = {
    "argv-file": 'import subprocess, sys\n\n\ndef run():\n'
                 '    subprocess.run([sys.executable, "app/cli.py"])\n',
    "argv-file-relative": 'import os\n\nSCRIPT = os.path.join(os.path.dirname(__file__), '
                          '"..", "app", "cli.py")\n',
    "unpickler": "import pickle\n\n\ndef load(data):\n    return pickle.loads(data)\n",
    "unpickler-from": "from dill import loads\n\n\ndef load(data):\n    return loads(data)\n",
    "yaml": "import yaml\n\n\ndef load(text):\n    return yaml.unsafe_load(text)\n",
    "logging-config": "from logging import config\n\n\ndef load(path):\n"
                      "    config.fileConfig(path)\n",
    "sys-modules": "import sys\n\nCORE = sys.modules['app.core']\n",
    "builtins-dict": "import builtins\n\nLOAD = builtins.__dict__['__import__']\n",
    "vars-builtins": "import builtins\n\nLOAD = vars(builtins)['__import__']\n",
    "dunder-builtins": "LOAD = __builtins__.__dict__['__import__']\n",
    "pydoc": "import pydoc\n\nF = pydoc.locate('app.core.f')\n",
    "importorskip": "import pytest\n\nflags = pytest.importorskip('app.flags')\n",
    "mock-patch": "import app\nfrom unittest import mock\n\n\ndef t():\n"
                  "    with mock.patch('app.calc.mul'):\n        pass\n",
    "monkeypatch-setattr": "def t(monkeypatch):\n    monkeypatch.setattr('app.calc.mul', 1)\n",
}


@pytest.mark.parametrize("key", sorted(INDIRECT))
def test_the_fast_path_sees_what_only_the_tree_walk_reads(key: str) -> None:
    text = INDIRECT[key]
    exact = imports_scan._scan_ast(text)
    assert exact.escalations or any(r.startswith("|") or r.startswith("app") for r in
                                    exact.imports), exact  # the walk does read something
    assert scan_sources({key: text.encode()})[key] == exact
