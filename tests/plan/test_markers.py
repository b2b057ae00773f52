"""Skip/xfail markers added to existing tests, read from base and head texts."""

from __future__ import annotations

import pytest

from agentgate.plan.markers import WHOLE_FILE, added_markers

BASE = """\
import pytest

def test_total():
    assert 1

class TestCart:
    def test_add(self):
        assert 1
"""


def _added(head: str, base: str = BASE, *, test_file: bool = True) -> list[tuple[str, str]]:
    return [
        (m.test, m.marker)
        for m in added_markers("tests/test_x.py", base, head, is_test_file=test_file)
    ]


def test_unchanged_file_adds_nothing() -> None:
    assert _added(BASE) == []


@pytest.mark.parametrize(
    "decorator",
    [
        "@pytest.mark.skip",
        "@pytest.mark.skip(reason='flaky')",
        "@pytest.mark.xfail",
        "@pytest.mark.skipif(True, reason='x')",
        "@mark.xfail(strict=False)",
    ],
)
def test_decorator_added_to_existing_test(decorator: str) -> None:
    head = BASE.replace("def test_total", f"{decorator}\ndef test_total")
    head = head.replace("import pytest", "import pytest\nfrom pytest import mark")
    assert _added(head) == [("test_total", decorator[1:])]


def test_marker_on_a_new_test_is_not_an_addition() -> None:
    head = BASE + "\n@pytest.mark.skip\ndef test_new():\n    pass\n"
    assert _added(head) == []


def test_module_pytestmark_reaches_every_existing_test() -> None:
    head = BASE.replace("import pytest", "import pytest\npytestmark = pytest.mark.skip")
    assert _added(head) == [
        ("test_total", "pytest.mark.skip"),
        ("TestCart.test_add", "pytest.mark.skip"),
    ]


def test_class_decorator_and_class_pytestmark() -> None:
    decorated = BASE.replace("class TestCart", "@pytest.mark.xfail\nclass TestCart")
    assert _added(decorated) == [("TestCart.test_add", "pytest.mark.xfail")]
    in_body = BASE.replace(
        "class TestCart:",
        "class TestCart:\n    pytestmark = [pytest.mark.skipif(True, reason='r')]",
    )
    assert _added(in_body) == [("TestCart.test_add", "pytest.mark.skipif(True, reason='r')")]


def test_skip_and_xfail_calls_inside_a_test() -> None:
    head = BASE.replace("    assert 1\n\nclass", "    pytest.skip('later')\n\nclass")
    head = head.replace(
        "    def test_add(self):\n", "    def test_add(self):\n        pytest.xfail('known')\n"
    )
    assert _added(head) == [
        ("test_total", "pytest.skip('later')"),
        ("TestCart.test_add", "pytest.xfail('known')"),
    ]


def test_module_level_skip_call() -> None:
    head = BASE.replace(
        "import pytest", "import pytest\npytest.skip('off', allow_module_level=True)"
    )
    assert {t for t, _ in _added(head)} == {"test_total", "TestCart.test_add"}


def test_aliased_pytest_and_marker_alias() -> None:
    base = BASE.replace("import pytest", "import pytest as pt")
    head = base.replace("def test_total", "SKIP = pt.mark.skip\n\n@SKIP\ndef test_total")
    assert _added(head, base) == [("test_total", "SKIP")]


def test_param_marks_inside_parametrize() -> None:
    head = BASE.replace(
        "def test_total():",
        "@pytest.mark.parametrize('v', [pytest.param(1, marks=pytest.mark.xfail)])\n"
        "def test_total(v):",
    )
    assert _added(head) == [("test_total", "pytest.mark.xfail")]


def test_edited_skipif_condition_counts_as_added() -> None:
    base = BASE.replace(
        "def test_total", "@pytest.mark.skipif(sys.platform == 'win32', reason='w')\ndef test_total"
    )
    head = base.replace("sys.platform == 'win32'", "True")
    assert _added(head, base) == [("test_total", "pytest.mark.skipif(True, reason='w')")]


def test_existing_marker_is_not_reported_again() -> None:
    base = BASE.replace("def test_total", "@pytest.mark.xfail\ndef test_total")
    head = base.replace("assert 1\n\nclass", "assert 2\n\nclass")
    assert _added(head, base) == []


def test_unittest_skips() -> None:
    base = "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    decorated = base.replace("    def test_a", "    @unittest.skip('x')\n    def test_a")
    assert _added(decorated, base) == [("T.test_a", "unittest.skip('x')")]
    called = base.replace("        pass", "        self.skipTest('x')")
    assert _added(called, base) == [("T.test_a", "self.skipTest('x')")]


def test_helper_file_is_compared_as_a_whole() -> None:
    base = "import pytest\n\ndef make():\n    return 1\n"
    head = "import pytest\n\ndef make():\n    pytest.skip('no')\n"
    found = _added(head, base, test_file=False)
    assert found == [(WHOLE_FILE, "pytest.skip('no')")]


def test_new_file_or_unparsable_head_adds_nothing_here() -> None:
    assert added_markers("tests/test_x.py", None, BASE, is_test_file=True) == []
    assert added_markers("tests/test_x.py", BASE, "def (:\n", is_test_file=True) == []


def test_unparsable_base_counts_every_head_marker() -> None:
    head = BASE.replace("def test_total", "@pytest.mark.skip\ndef test_total")
    assert _added(head, "def (:\n") == [("test_total", "pytest.mark.skip")]
