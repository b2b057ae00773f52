"""Code a fixture set up once for several tests runs counts for every one of them, whoever
defined the fixture: pytest's own wrappers of ``setup_module``, ``setup_class`` and
unittest's ``setUpClass``, and a plugin's session fixture that builds the app (red-team,
helper-9: the code ran in the first test's context alone, so a change to it skipped the
rest)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

STATE = "STATE = {}\n\n\ndef load(v):\n    STATE['v'] = v\n"
PLUGIN = ("import pytest\nfrom app import state\n\n\n@pytest.fixture(scope='session')\n"
          "def built():\n    state.load(7)\n    return state.STATE\n")
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/state.py": STATE,
    "app/setups.py": "def module_setup(store):\n    store['m'] = 1\n\n\n"
    "def class_setup(store):\n    store['c'] = 1\n\n\ndef unit_setup(store):\n    store['u'] = 1\n",
    "app/other.py": "def one():\n    return 1\n",
    "tests/test_xunit.py": "import unittest\nfrom app import setups\n\nSEEN = {}\n\n\n"
    "def setup_module(module):\n    setups.module_setup(SEEN)\n\n\n"
    "def test_m1():\n    assert SEEN['m'] == 1\n\n\ndef test_m2():\n    assert SEEN['m'] == 1\n\n\n"
    "class TestC:\n    @classmethod\n    def setup_class(cls):\n"
    "        setups.class_setup(SEEN)\n\n"
    "    def test_c1(self):\n        assert SEEN['c'] == 1\n\n"
    "    def test_c2(self):\n        assert SEEN['c'] == 1\n\n\n"
    "class T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
    "        setups.unit_setup(SEEN)\n\n    def test_u1(self):\n        assert SEEN['u'] == 1\n\n"
    "    def test_u2(self):\n        assert SEEN['u'] == 1\n",
    "tests/test_built.py": "def test_b1(built):\n    assert built['v'] == 7\n\n\n"
    "def test_b2(built):\n    assert built['v'] == 7\n",
    "tests/test_other.py": "from app.other import one\n\n\ndef test_one():\n"
    "    assert one() == 1\n",
}
# The plugin lives outside the tree, as an installed one would (``outside`` is on the path).
OUTSIDE = {"libfix.py": PLUGIN}
CONFTEST = "pytest_plugins = ['libfix']\n"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    files = {**FILES, "tests/conftest.py": "import sys, os\nsys.path.insert(0, os.path.join("
             "os.path.dirname(__file__), '..', '..', 'outside'))\n" + CONFTEST}
    yield from recorded_repo(tmp_path_factory, files, outside=OUTSIDE)


@pytest.mark.parametrize(("function", "tests"), [
    ("module_setup", ("test_m1", "test_m2")),
    ("class_setup", ("TestC::test_c1", "TestC::test_c2")),
    ("unit_setup", ("T::test_u1", "T::test_u2")),
])
def test_a_change_to_an_xunit_setup_reruns_every_test_it_served(
    recorded: tuple[GitRepo, str], function: str, tests: tuple[str, ...]
) -> None:
    old = f"def {function}(store):\n    store["
    new = f"def {function}(store):\n    store['x'] = 0\n    store["
    labels = labelled(recorded, function, {"app/setups.py": FILES["app/setups.py"].replace(
        old, new)})
    for name in tests:
        assert labels[f"tests/test_xunit.py::{name}"] == IMPACTED, name
    assert labels["tests/test_other.py::test_one"] == SKIP


def test_a_change_to_code_a_plugins_session_fixture_ran_reruns_its_users(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "state", {"app/state.py": STATE.replace(
        "STATE['v'] = v", "STATE['v'] = v + 1")})
    assert labels["tests/test_built.py::test_b1"] == IMPACTED
    assert labels["tests/test_built.py::test_b2"] == IMPACTED
    assert labels["tests/test_other.py::test_one"] == SKIP
