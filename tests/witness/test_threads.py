"""Tests that start threads (issue 12: a witness narrows them like any other).

Before Python 3.12 the recorder traces with coverage, which has every new thread install its
tracer through ``threading.settrace``; the thread's bootstrap then calls ``sys.settrace``,
an audit event the recorder once took for a test hiding its code. Every test that started a
thread, a ``ThreadPoolExecutor``'s included, was ``escalate:incomplete-witness`` and ran for
every patch. Now such a thread is traced like the main one and its code counts for the test;
a test that takes coverage's function away from new threads is still incomplete. From 3.12
``sys.monitoring`` sees every thread.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

WORK = "def double(x):\n    return 2 * x\n\n\ndef triple(x):\n    return 3 * x\n"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/work.py": WORK,
    "tests/test_pool.py": "from concurrent.futures import ThreadPoolExecutor\n\n"
    "from app import work\n\n\n"
    "def test_pool():\n    with ThreadPoolExecutor(1) as pool:\n"
    "        assert pool.submit(work.double, 2).result() == 4\n",
    "tests/test_thread.py": "import threading\n\nfrom app import work\n\n\n"
    "def test_thread():\n    out = []\n"
    "    thread = threading.Thread(target=lambda: out.append(work.triple(2)))\n"
    "    thread.start()\n    thread.join()\n    assert out == [6]\n",
    # New threads run untraced while the hook is None; it is put back before the test ends.
    "tests/test_untraced.py": "import threading\n\nfrom app import work\n\n\n"
    "def test_untraced():\n    out = []\n    saved = threading.gettrace()\n"
    "    threading.settrace(None)\n    try:\n"
    "        thread = threading.Thread(target=lambda: out.append(work.double(3)))\n"
    "        thread.start()\n        thread.join()\n"
    "    finally:\n        threading.settrace(saved)\n    assert out == [6]\n",
    # The thread itself stops tracing before it runs the repository's code.
    "tests/test_thread_off.py": "import sys\nimport threading\n\nfrom app import work\n\n\n"
    "def test_thread_off():\n    out = []\n\n    def run():\n        sys.settrace(None)\n"
    "        out.append(work.double(4))\n\n"
    "    thread = threading.Thread(target=run)\n    thread.start()\n    thread.join()\n"
    "    assert out == [8]\n",
    "tests/test_plain.py": "def test_plain():\n    assert 1 + 1 == 2\n",
}
POOL = "tests/test_pool.py::test_pool"
THREAD = "tests/test_thread.py::test_thread"
UNTRACED = "tests/test_untraced.py::test_untraced"
PLAIN = "tests/test_plain.py::test_plain"
OFF = "tests/test_thread_off.py::test_thread_off"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_function_run_in_a_worker_thread_reruns_only_its_test(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "double", {"app/work.py": WORK.replace("2 * x", "x + x")})
    assert labels[POOL] == IMPACTED  # ran double in the pool's thread
    assert labels[THREAD] == labels[PLAIN] == SKIP  # no longer incomplete for its thread
    # Their threads ran double unseen: they run (incomplete before 3.12, seen from 3.12 on).
    assert labels[UNTRACED] in (ESCALATE, IMPACTED)
    assert labels[OFF] in (ESCALATE, IMPACTED)
    labels = labelled(recorded, "triple", {"app/work.py": WORK.replace("3 * x", "x * 3")})
    assert labels[THREAD] == IMPACTED
    assert labels[POOL] == SKIP
