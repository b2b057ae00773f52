"""What pytest's start-up runs of the repository (issue 12: pytest imports pluggy's own
``src/pluggy`` before any plugin hook runs).

Here ``-p app.plug -p app.early`` in the pytest configuration imports ``app.plug``,
``app.core``, ``app.early`` and ``app.settings`` at pytest's start-up, before any plugin
hook: ``_init`` runs at ``app.core``'s import, ``_level`` at ``app.settings``', and
``describe`` from the plugin's ``pytest_addoption``. ``agentgate witness record`` starts
recording before pytest is imported (``agentgate.witness.boot``): that start-up is seen and
counts for every test, and a function only one test runs counts for that test alone. A plain
``pytest --agentgate-witness`` starts recording later, from a plugin hook: whatever was
imported before ran unseen, and every test depends on all of it, which is still narrower than
escalating every test. The suite turns warnings into errors: ``boot`` imports agentgate
before pytest, and ``-p agentgate.witness`` must not warn that it cannot rewrite it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgate.core import config
from agentgate.run import interp
from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import isolate, labelled, patch, plan, recorded_repo

# _init and _level have an effect (they log their run), so what their change reaches is not
# told by the names their callers bind (``rebind``): the start-up rule alone decides.
CORE = (
    "import logging\n\n\n"
    "def _init():\n    logging.getLogger('app').debug('init')\n    return 1\n\n\n"
    "LIMIT = _init()\n\n\n"
    "def value():\n    return 1\n\n\ndef other():\n    return 2\n\n\n"
    "def describe():\n    return 'app'\n"
)
SETTINGS = ("import logging\n\n\n"
            "def _level():\n    logging.getLogger('app').debug('level')\n    return 1\n\n\n"
            "LEVEL = _level()\n")
NAMES = "SUFFIX = ''\nUNREAD = 'x'\n"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n\n"
    '[tool.pytest.ini_options]\naddopts = "-p app.plug -p app.early"\n'
    'filterwarnings = ["error"]\n',
    "app/__init__.py": "",
    "app/plug.py": "from app import core, names\n\n\n"
    "def pytest_addoption(parser):\n"
    "    parser.addini('app_name', core.describe() + names.SUFFIX)\n",
    "app/names.py": NAMES,
    "app/core.py": CORE,
    "app/early.py": "from app import settings  # noqa: F401\n",
    "app/settings.py": SETTINGS,
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
VALUE_EDIT = CORE.replace("def value():\n    return 1", "def value():\n    return 3")
INIT_EDIT = CORE.replace("debug('init')\n    return 1", "debug('init')\n    return 2")
MODULE_EDIT = CORE.replace("LIMIT = _init()", "LIMIT = _init() + 1")
DESCRIBE_EDIT = CORE.replace("return 'app'", "return 'app!'")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    """``agentgate witness record``: recording starts before pytest is imported."""
    yield from recorded_repo(tmp_path_factory, FILES)


@pytest.fixture(scope="module")
def recorded_direct(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    """``pytest --agentgate-witness`` in a clean tree: stored for HEAD, recorded from the
    plugin's first hook, after pytest imported ``app.plug`` and ``app.core``."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory)
        repo = GitRepo.init(tmp_path_factory.mktemp("witness") / "repo")
        repo.files(FILES)
        sha = repo.commit("initial")
        done = subprocess.run(  # in the environment agentgate runs tests in (no drift)
            [sys.executable, "-m", "pytest", "-p", "agentgate.witness", "--agentgate-witness"],
            cwd=repo.path, env=interp.test_env(config.load(repo.path), repo.path),
            capture_output=True, text=True, check=False,
        )
        assert done.returncode == 0 and "tests recorded at" in done.stdout, done.stdout
        yield repo, sha


def _labels(recorded: tuple[GitRepo, str], name: str, core: str) -> dict[str, str]:
    return labelled(recorded, name, {"app/core.py": core})


def test_a_change_no_test_reached_skips_them_all(recorded: tuple[GitRepo, str]) -> None:
    """The legitimate case: the start-up is vouched for, nothing escalates."""
    repo, w = recorded
    patch(repo, w, "elsewhere", {"tests/test_plain.py": "def test_plain():\n    assert 1\n"})
    labels = {d.nodeid: d.label for d in plan(repo, w).decisions}
    assert ESCALATE not in labels.values()
    assert labels[VALUE] == labels[OTHER] == labels[LIMIT] == SKIP


def test_a_function_only_one_test_runs_counts_for_that_test_alone(
    recorded: tuple[GitRepo, str],
) -> None:
    """``app.core`` was imported at pytest's start-up, but recording had started: value()
    ran in test_value only (a plain pytest --agentgate-witness run reruns every test)."""
    labels = _labels(recorded, "value", VALUE_EDIT)
    assert labels == {VALUE: IMPACTED, OTHER: SKIP, LIMIT: SKIP, PLAIN: SKIP}


def test_a_function_the_start_up_runs_reruns_every_test(recorded: tuple[GitRepo, str]) -> None:
    """describe() ran in the plugin's pytest_addoption, before any plugin could record."""
    assert _labels(recorded, "describe", DESCRIBE_EDIT) == dict.fromkeys(EVERY, IMPACTED)


def test_a_function_run_at_a_start_up_import_reruns_every_test(
    recorded: tuple[GitRepo, str],
) -> None:
    """_init ran at app.core's import, at pytest's start-up: test_plain too runs under it."""
    assert _labels(recorded, "init", INIT_EDIT) == dict.fromkeys(EVERY, IMPACTED)


def test_a_module_imported_at_start_up_counts_for_every_test(
    recorded: tuple[GitRepo, str],
) -> None:
    """Nothing of app.settings runs after its import, and no test touches it: what its import
    ran is part of the start-up every test runs under."""
    repo, w = recorded
    patch(repo, w, "level", {"app/settings.py": SETTINGS.replace("return 1", "return 2")})
    labels = {d.nodeid: d.label for d in plan(repo, w).decisions}
    assert labels == dict.fromkeys(EVERY, IMPACTED)


def test_a_module_level_edit_of_a_start_up_import_reruns_every_test(
    recorded: tuple[GitRepo, str],
) -> None:
    assert _labels(recorded, "module-level", MODULE_EDIT) == dict.fromkeys(EVERY, IMPACTED)


def test_without_boot_the_preloaded_module_counts_whole_for_every_test(
    recorded_direct: tuple[GitRepo, str],
) -> None:
    """A plain pytest --agentgate-witness run did not see app.core's import: value() may
    have run then, for any test (fail closed), so every test reruns, and none escalates."""
    labels = _labels(recorded_direct, "value", VALUE_EDIT)
    assert ESCALATE not in labels.values()
    assert labels == dict.fromkeys(EVERY, IMPACTED)


def test_a_constant_the_start_up_read_reruns_every_test(
    recorded: tuple[GitRepo, str],
) -> None:
    """pytest_addoption read names.SUFFIX at start-up, for every test; UNREAD nobody reads
    (the legitimate twin: a binding-only change reruns only its readers, here none)."""
    assert labelled(recorded, "suffix", {"app/names.py": NAMES.replace("''", "'!'")}) == (
        dict.fromkeys(EVERY, IMPACTED))
    assert labelled(recorded, "unread", {"app/names.py": NAMES.replace("'x'", "'y'")}) == (
        dict.fromkeys(EVERY, SKIP))


def test_without_boot_a_constant_of_a_preloaded_module_reruns_every_test(
    recorded_direct: tuple[GitRepo, str],
) -> None:
    """Attack: pytest_addoption read names.SUFFIX before the plugin started recording, so no
    read of it was seen; a module imported before recording counts as unwatched, and its
    binding-only change keeps the module rule (every test runs under the start-up)."""
    labels = labelled(recorded_direct, "suffix", {"app/names.py": NAMES.replace("''", "'!'")})
    assert labels == dict.fromkeys(EVERY, IMPACTED)


INIT_TOO = {**FILES, "tests/test_init.py": "from app.core import _init\n\n\n"
            "def test_init():\n    assert _init() == 1\n"}


@pytest.fixture(scope="module")
def recorded_init(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, INIT_TOO)


def test_a_function_run_at_start_up_and_by_a_test_reruns_every_test(
    recorded_init: tuple[GitRepo, str],
) -> None:
    """Attack (found in review of the preloaded charge): _init ran at start-up, for every
    test, and in test_init. Seeing it in test_init must not make it test_init's alone."""
    labels = _labels(recorded_init, "init", INIT_EDIT)
    assert labels[PLAIN] == labels[LIMIT] == IMPACTED
    assert labels["tests/test_init.py::test_init"] == IMPACTED


def test_boot_runs_pytest_without_a_deprecated_entry(tmp_path: Path) -> None:
    """pytest 9.2 deprecates ``pytest.console_main``, which every recording printed about
    (and which pytest 10 removes): boot calls ``pytest.main`` itself."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-m", "agentgate.witness.boot",
         "-q", "-p", "no:cacheprovider", f"--rootdir={tmp_path}"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    assert "console_main" not in done.stderr
