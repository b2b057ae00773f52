"""The base inventory: which base test files a range touches (pure), and their node ids
collected at the base with the base's harness, cached by tree id (real git, real pytest)."""

from __future__ import annotations

from pathlib import Path

from agentgate.core.config import Config
from agentgate.core.model import Change
from agentgate.core.paths import TestFiles
from agentgate.gate.checks import config_at
from agentgate.git import gitio
from agentgate.run import inventory
from tests.support.git_repo import GitRepo

BASE = ("tests/test_a.py", "tests/sub/test_b.py", "tests/sub/helper.py", "tests/test_c.py",
        "app/x.py")


def touched(*changes: Change) -> tuple[str, ...]:
    tests = TestFiles(Config(root=Path(".")))
    return inventory.touched_tests(changes, tests, BASE)


def test_changed_deleted_and_renamed_test_files_as_the_base_names_them() -> None:
    assert touched(Change("M", "tests/test_a.py"), Change("D", "tests/test_c.py"),
                   Change("R090", "tests/moved.py", old_path="tests/sub/test_b.py"),
                   Change("A", "tests/test_new.py"), Change("M", "app/x.py")) == (
        "tests/sub/test_b.py", "tests/test_a.py", "tests/test_c.py")


def test_a_changed_conftest_touches_the_test_files_below_it() -> None:
    assert touched(Change("A", "tests/sub/conftest.py")) == ("tests/sub/test_b.py",)
    assert len(touched(Change("M", "conftest.py"))) == 3


def test_the_bases_node_ids_are_collected_at_the_base_and_cached(repo: GitRepo) -> None:
    repo.files({"tests/test_a.py": "import pytest\n\n@pytest.mark.parametrize('n', [1, 2])\n"
                "def test_a(n):\n    pass\n",
                "tests/conftest.py": "def pytest_collection_modifyitems(items):\n"
                "    items.reverse()\n"})
    base = repo.commit("base")
    repo.files({"tests/test_a.py": "def test_other():\n    pass\n"})
    repo.commit("head")
    config = config_at(repo.path, base)
    found = inventory.inventory(repo.path, config, base, ("tests/test_a.py",))
    assert found.nodeids == ("tests/test_a.py::test_a[1]", "tests/test_a.py::test_a[2]")
    cache = list((gitio.state_dir(repo.path) / "inventory").glob("*.json"))
    assert len(cache) == 1
    assert inventory.inventory(repo.path, config, base, ("tests/test_a.py",)) == found
