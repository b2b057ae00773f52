"""Modules imported before recording started (issue 12: pytest imports pluggy before any
plugin can start recording, so every pluggy test was ``escalate:incomplete-witness``).

Here ``-p app.plug`` in the pytest configuration imports ``app.plug`` and ``app.core``
before the witness plugin starts. Their module code ran unseen, and so did ``_init``, called
at import, and any function may have run then for any test: every test depends on all of
such a module, which is still narrower than escalating every test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import patch, plan, recorded_repo

CORE = (
    "def _init():\n    return 1\n\n\nLIMIT = _init()\n\n\n"
    "def value():\n    return 1\n\n\ndef other():\n    return 2\n"
)
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n\n"
    '[tool.pytest.ini_options]\naddopts = "-p app.plug"\n',
    "app/__init__.py": "",
    "app/plug.py": "from app import core  # noqa: F401\n",
    "app/core.py": CORE,
    "tests/test_value.py": "from app.core import value\n\n\n"
    "def test_value():\n    assert value() == 1\n",
    "tests/test_other.py": "from app.core import other\n\n\n"
    "def test_other():\n    assert other() == 2\n",
    "tests/test_limit.py": "from app.core import LIMIT\n\n\n"
    "def test_limit():\n    assert LIMIT == 1\n",
    "tests/test_plain.py": "def test_plain():\n    assert True\n",
}
VALUE = "tests/test_value.py::test_value"
OTHER = "tests/test_other.py::test_other"
LIMIT = "tests/test_limit.py::test_limit"
PLAIN = "tests/test_plain.py::test_plain"
EVERY = {VALUE, OTHER, LIMIT, PLAIN}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def _labels(recorded: tuple[GitRepo, str], name: str, core: str) -> dict[str, str]:
    repo, w = recorded
    patch(repo, w, name, {"app/core.py": core})
    return {d.nodeid: d.label for d in plan(repo, w).decisions}


def test_a_preloaded_module_is_vouched_for_not_escalated(
    recorded: tuple[GitRepo, str],
) -> None:
    """The legitimate case: a change elsewhere skips the tests that never reached it, even
    though app.core was imported before recording started (it used to escalate them all)."""
    repo, w = recorded
    patch(repo, w, "elsewhere", {"tests/test_plain.py": "def test_plain():\n    assert 1\n"})
    labels = {d.nodeid: d.label for d in plan(repo, w).decisions}
    assert ESCALATE not in labels.values()  # the witness vouches for preloaded modules
    assert labels[VALUE] == labels[OTHER] == labels[LIMIT] == SKIP


def test_a_function_body_edit_of_a_preloaded_module_reruns_every_test(
    recorded: tuple[GitRepo, str],
) -> None:
    """value() may also have run before recording started, for any test: every test."""
    labels = _labels(recorded, "value", CORE.replace("return 1\n\n\ndef other", "return 3\n\n\n"
                                                     "def other"))
    assert ESCALATE not in labels.values()
    assert labels == dict.fromkeys(EVERY, IMPACTED)


def test_a_module_level_edit_of_a_preloaded_module_reruns_every_test(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = _labels(recorded, "module-level", CORE.replace("LIMIT = _init()",
                                                             "LIMIT = _init() + 1"))
    assert labels == dict.fromkeys(EVERY, IMPACTED)


def test_a_function_that_ran_before_recording_reruns_every_test(
    recorded: tuple[GitRepo, str],
) -> None:
    # _init ran at app.core's import, unseen; test_limit reads what it computed.
    labels = _labels(recorded, "init", CORE.replace("def _init():\n    return 1",
                                                     "def _init():\n    return 2"))
    assert labels == dict.fromkeys(EVERY, IMPACTED)


INIT_TOO = {**FILES, "tests/test_init.py": "from app.core import _init\n\n\n"
            "def test_init():\n    assert _init() == 1\n"}


@pytest.fixture(scope="module")
def recorded_init(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, INIT_TOO)


def test_a_function_run_at_import_and_by_a_test_reruns_every_test(
    recorded_init: tuple[GitRepo, str],
) -> None:
    """Attack (found in review): _init ran unseen at import, for test_limit, and seen in
    test_init. Seeing it in test_init must not make it test_init's alone."""
    repo, w = recorded_init
    patch(repo, w, "init", {"app/core.py": CORE.replace("def _init():\n    return 1",
                                                         "def _init():\n    return 2")})
    labels = {d.nodeid: d.label for d in plan(repo, w).decisions}
    assert labels[LIMIT] == IMPACTED
    assert labels["tests/test_init.py::test_init"] == IMPACTED
