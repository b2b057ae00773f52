"""State across tests: a result one test computed and a later test read from a
``functools.lru_cache`` ran the function's body in the first test only, so a change to the
body skipped the second test, which reads the new result at head (red-team). The recording
empties the repository's caches as each test begins."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

CFG = ("import functools\nfrom functools import lru_cache\n\n\n"
       "@functools.lru_cache\ndef rate():\n    return 2\n\n\n"
       "@lru_cache(maxsize=8)\ndef scaled(x):\n    return x * 10\n\n\n"
       "@functools.cache\ndef name():\n    return 'shop'\n\n\n"
       "def other():\n    return 1\n")
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/cfg.py": CFG,
    # file order: every "first" test fills the caches the "second" one reads
    "tests/test_cfg.py": "from app import cfg\n\nWANT = (2, 10, 'shop')\n\n\n"
    "def test_first():\n    assert (cfg.rate(), cfg.scaled(1), cfg.name()) == WANT\n\n\n"
    "def test_second():\n    assert (cfg.rate(), cfg.scaled(1), cfg.name()) == WANT\n\n\n"
    "def test_other():\n    assert cfg.other() == 1\n",
}
BOTH = ("tests/test_cfg.py::test_first", "tests/test_cfg.py::test_second")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


@pytest.mark.parametrize(("old", "new"), [
    ("return 2", "return 3"),  # @functools.lru_cache
    ("return x * 10", "return x * 11"),  # @lru_cache(maxsize=8), imported by name
    ("return 'shop'", "return 'store'"),  # @functools.cache
], ids=["lru_cache", "lru_cache-args", "cache"])
def test_a_cached_function_reruns_every_test_that_reads_it(
    recorded: tuple[GitRepo, str], old: str, new: str, request: pytest.FixtureRequest
) -> None:
    branch = "cached-" + request.node.callspec.id
    labels = labelled(recorded, branch, {"app/cfg.py": CFG.replace(old, new)})
    assert {n: labels[n] for n in BOTH} == dict.fromkeys(BOTH, IMPACTED)
    assert labels["tests/test_cfg.py::test_other"] == SKIP


def test_a_function_no_test_reads_from_a_cache_stays_with_its_callers(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "other", {"app/cfg.py": CFG.replace("return 1", "return 0 + 1")})
    assert {n: labels[n] for n in BOTH} == dict.fromkeys(BOTH, SKIP)
    assert labels["tests/test_cfg.py::test_other"] == IMPACTED
