"""Which changes are changes to the test harness (pure rules; issue 11 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgate.core.config import Config
from agentgate.core.model import Change
from agentgate.plan import harness

CONFIG = Config(root=Path("."), sources=("src",), tests=("tests",))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("conftest.py", True),
        ("tests/deep/conftest.py", True),
        ("tests/pytest.toml", True),
        ("sub/.pytest.toml", True),
        ("tests/pytest.ini", True),
        ("src/sitecustomize.py", True),
        ("src/evil.pth", True),
        ("tests/usercustomize.py", True),
        # the module by Python's finders, not the file name (red-team round 4)
        ("src/sitecustomize/__init__.py", True),
        ("src/sitecustomize/hooks.py", True),
        ("src/sitecustomize.pyc", True),
        ("tests/usercustomize.cpython-311-x86_64-linux-gnu.so", True),
        ("src/__pycache__/sitecustomize.cpython-311.pyc", True),
        # distribution metadata on the path: importlib.metadata reads its entry points
        ("src/fastmath-1.0.dist-info/entry_points.txt", True),
        ("fastmath.egg-info/entry_points.txt", True),
        ("tests/x-1.0.dist-info/METADATA", True),
        # legitimate twins: not the harness
        ("src/pkg/sitecustomize.py", False),  # not on sys.path: an ordinary module
        ("docs/evil.pth", False),
        ("src/sitecustomize.txt", False),
        ("src/pkg/sitecustomize/__init__.py", False),
        ("src/sitecustomize_docs.py", False),
        ("tests/test_conftest.py", False),
        ("src/pkg/core.py", False),
        ("tests/fixtures/demo-1.0.dist-info/METADATA", False),  # a packaging test's data
        ("src/pkg/vendored.dist-info/RECORD", False),
    ],
)
def test_is_harness_file(path: str, expected: bool) -> None:
    assert harness.is_harness_file(path, CONFIG) is expected


def _changes(texts: dict[str, tuple[str | None, str | None]]) -> list[str]:
    changes = [Change("M", p) for p in texts]
    return [f"{c.path}: {c.why}" for c in harness.harness_changes(changes, CONFIG, texts)]


def test_a_new_test_file_naming_an_app_plugin_is_a_harness_change() -> None:
    new = 'pytest_plugins = ["app.rewrite"]\n\ndef test_x():\n    pass\n'
    assert _changes({"tests/test_x.py": (None, new)}) == ["tests/test_x.py: pytest_plugins"]


def test_an_ordinary_test_edit_is_not() -> None:
    assert _changes({"tests/test_x.py": ("def test_x():\n    pass\n",
                                         "def test_x():\n    assert 1\n")}) == []


def test_an_unreadable_pytest_plugins_value_counts() -> None:
    new = "pytest_plugins = names()\n"
    assert _changes({"tests/test_x.py": (None, new)}) == ["tests/test_x.py: pytest_plugins"]


def test_the_pytest_table_of_pyproject_counts_and_its_metadata_does_not() -> None:
    old = '[project]\nname = "a"\n'
    assert _changes({"pyproject.toml": (old, '[project]\nname = "b"\n')}) == []
    new = old + '\n[tool.pytest.ini_options]\naddopts = "-p app.plugin"\n'
    assert _changes({"pyproject.toml": (old, new)}) == ["pyproject.toml: pytest configuration"]


def test_a_pytest11_entry_point_counts() -> None:
    old = '[project]\nname = "a"\n'
    new = old + '\n[project.entry-points.pytest11]\nrewrite = "app.rewrite"\n'
    assert _changes({"pyproject.toml": (old, new)}) == ["pyproject.toml: pytest11 entry point"]
    cfg_new = "[options.entry_points]\npytest11 =\n    rewrite = app.rewrite\n"
    assert _changes({"setup.cfg": ("[metadata]\nname = a\n", cfg_new)}) == [
        "setup.cfg: pytest11 entry point"]


def test_conftest_and_startup_files_count_whatever_their_text() -> None:
    assert _changes({"tests/sub/conftest.py": ("", "X = 1\n"),
                     "src/sitecustomize.py": (None, "import app\n")}) == [
        "tests/sub/conftest.py: conftest", "src/sitecustomize.py: start-up file"]


def test_a_nested_pytest_toml_counts() -> None:
    assert _changes({"tests/pytest.toml": (None, "[pytest]\n")}) == [
        "tests/pytest.toml: pytest configuration"]
