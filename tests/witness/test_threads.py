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

import json
from collections.abc import Iterator

import pytest

from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo, run_agentgate
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
    # The same through the older alias, a builtin of its own where it still exists.
    "tests/test_raw_alias.py": "import _thread\n\nfrom app import work\n\n\n"
    "def test_raw_alias():\n    out = []\n    lock = _thread.allocate_lock()\n"
    "    lock.acquire()\n\n"
    "    def run():\n        out.append(work.double(6))\n        lock.release()\n\n"
    "    getattr(_thread, 'start_new', _thread.start_new_thread)(run, ())\n"
    "    lock.acquire()\n    assert out == [12]\n",
    # A thread started without threading: coverage never traces it.
    "tests/test_raw.py": "import _thread\n\nfrom app import work\n\n\n"
    "def test_raw():\n    out = []\n    lock = _thread.allocate_lock()\n    lock.acquire()\n\n"
    "    def run():\n        out.append(work.double(5))\n        lock.release()\n\n"
    "    _thread.start_new_thread(run, ())\n    lock.acquire()\n    assert out == [10]\n",
    # A worker reads data files while the tests' thread keeps the recorder busy with its own
    # reads: each thread's reads are recorded, none is dropped for the other's.
    **{f"data/d{i}.txt": f"{i}\n" for i in range(40)},
    "data/noise.txt": "noise\n",
    "tests/test_busy.py": "import threading\nfrom pathlib import Path\n\n"
    "DATA = Path(__file__).resolve().parent.parent / 'data'\n\n\n"
    "def test_busy():\n    seen = []\n    done = threading.Event()\n\n"
    "    def worker():\n        for i in range(40):\n"
    "            seen.append((DATA / f'd{i}.txt').read_text())\n        done.set()\n\n"
    "    thread = threading.Thread(target=worker)\n    thread.start()\n"
    "    while not done.is_set():\n        (DATA / 'noise.txt').read_text()\n"
    "    thread.join()\n    assert len(seen) == 40\n",
    # The same for reads of a module's attributes by computed names (``watch``).
    "app/names.py": "".join(f"K{i} = {i}\n" for i in range(60)),
    "app/noise.py": "".join(f"N{i} = {i}\n" for i in range(3000)),
    "tests/test_busy_names.py": "import sys\nimport threading\n\nfrom app import names, noise\n\n\n"
    "def test_busy_names():\n    seen = []\n    done = threading.Event()\n"
    "    interval = sys.getswitchinterval()\n    sys.setswitchinterval(1e-6)\n\n"
    "    def worker():\n        for i in range(60):\n"
    "            seen.append(getattr(names, f'K{i}'))\n        done.set()\n\n"
    "    thread = threading.Thread(target=worker)\n    thread.start()\n    j = 0\n"
    "    while not done.is_set():\n        getattr(noise, f'N{j % 3000}')\n        j += 1\n"
    "    thread.join()\n    sys.setswitchinterval(interval)\n    assert seen == list(range(60))\n",
    # A worker thread is the first to import app.lazy, whose module code calls a function of
    # a module the tests' thread imported long before; a later test reads what it computed.
    "app/helper.py": "def compute():\n    return 41 + 1\n\n\ndef other():\n    return 0\n",
    "app/lazy.py": "from app import helper\n\nVALUE = helper.compute()\n",
    "tests/test_a_thread_import.py": "import threading\n\n\n"
    "def test_thread_import():\n    out = []\n\n"
    "    def run():\n        from app import lazy\n        out.append(lazy.VALUE)\n\n"
    "    thread = threading.Thread(target=run)\n    thread.start()\n    thread.join()\n"
    "    assert out == [42]\n",
    "tests/test_later.py": "from app import helper\n\n\n"
    "def test_later():\n    from app import lazy\n    assert lazy.VALUE == 42\n\n\n"
    "def test_other():\n    assert helper.other() == 0\n",
    # A worker's import outlives its test: the next test's context must stay its own while
    # the import ends (a library's read of a data file there is the next test's).
    "tests/sync.py": "import threading\n\n"
    "STARTED, GO, DONE = threading.Event(), threading.Event(), threading.Event()\n"
    "IN, OUT = threading.Event(), threading.Event()\n",
    # A library outside the repository (``OUTSIDE``), on sys.path through the conftest.
    # Its hook also has a pool's thread read a data file outside any test, code of the
    # standard library alone: what a thread reads then counts for every test.
    "tests/conftest.py": "import sys\nfrom concurrent.futures import ThreadPoolExecutor\n"
    "from pathlib import Path\n\n"
    "sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'outside'))\n"
    "POOL = ThreadPoolExecutor(1)\n"
    "BETWEEN = Path(__file__).resolve().parent.parent / 'data' / 'between.txt'\n\n\n"
    "def pytest_collection_finish(session):\n"
    "    assert POOL.submit(BETWEEN.read_text).result() == 'between\\n'\n",
    "data/between.txt": "between\n",
    # A worker starts a process while the tests' thread is inside a library's first import:
    # the flag is the test's, not the import's (a library import's flags reach no test).
    "tests/test_lib_import.py": "import subprocess\nimport sys\nimport threading\n\n"
    "import sync\n\n\n"
    "def test_lib_import():\n    def run():\n        sync.IN.wait(30)\n"
    "        subprocess.run(['ls'], stdout=subprocess.DEVNULL, check=True)\n"
    "        sync.OUT.set()\n\n"
    "    thread = threading.Thread(target=run)\n    thread.start()\n"
    "    import libslow  # noqa: F401\n    thread.join()\n",
    # One test takes coverage's function away from new threads and leaves it so (trace's
    # runctx ends with threading.settrace(None)); a later test's thread must still be traced.
    "tests/test_z1_hook.py": "import trace\n\n\n"
    "def test_hook():\n    trace.Trace(count=1, trace=0).runctx('x = 1', {}, {})\n",
    "tests/test_z2_thread.py": "import threading\n\nfrom app import work\n\n\n"
    "def test_after_hook():\n    out = []\n"
    "    thread = threading.Thread(target=lambda: out.append(work.triple(2)))\n"
    "    thread.start()\n    thread.join()\n    assert out == [6]\n",
    "app/slow.py": "import sync\n\nsync.STARTED.set()\nsync.GO.wait(30)\nVALUE = 1\n",
    "data/late.txt": "late\n",
    "tests/test_s1_start.py": "import threading\n\nimport sync\n\n\n"
    "def test_start():\n    def run():\n        import app.slow\n        sync.DONE.set()\n\n"
    "    threading.Thread(target=run, daemon=True).start()\n    assert sync.STARTED.wait(30)\n",
    "tests/test_s2_reader.py": "from pathlib import Path\n\nimport click\nimport sync\n\n"
    "LATE = str(Path(__file__).resolve().parent.parent / 'data' / 'late.txt')\n\n\n"
    "def test_reader():\n    sync.GO.set()\n    assert sync.DONE.wait(30)\n"
    "    with click.open_file(LATE) as f:\n        assert f.read() == 'late\\n'\n",
}
OUTSIDE = {"libslow.py": "import sync\n\nsync.IN.set()\nassert sync.OUT.wait(30)\n"}
HELPER = FILES["app/helper.py"]
READER = "tests/test_s2_reader.py::test_reader"
LATER = "tests/test_later.py::test_later"
OTHER = "tests/test_later.py::test_other"
IMPORTER = "tests/test_a_thread_import.py::test_thread_import"
POOL = "tests/test_pool.py::test_pool"
THREAD = "tests/test_thread.py::test_thread"
UNTRACED = "tests/test_untraced.py::test_untraced"
PLAIN = "tests/test_plain.py::test_plain"
OFF = "tests/test_thread_off.py::test_thread_off"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES, OUTSIDE)


def test_a_function_run_in_a_worker_thread_reruns_only_its_test(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "double", {"app/work.py": WORK.replace("2 * x", "x + x")})
    assert labels[POOL] == IMPACTED  # ran double in the pool's thread
    assert labels[THREAD] == labels[PLAIN] == SKIP  # no longer incomplete for its thread
    # Their threads ran double unseen: they run (incomplete before 3.12, seen from 3.12 on).
    assert labels[UNTRACED] in (ESCALATE, IMPACTED)
    assert labels[OFF] in (ESCALATE, IMPACTED)
    assert labels["tests/test_raw.py::test_raw"] in (ESCALATE, IMPACTED)
    assert labels["tests/test_raw_alias.py::test_raw_alias"] in (ESCALATE, IMPACTED)
    assert labels["tests/test_lib_import.py::test_lib_import"] == ESCALATE
    labels = labelled(recorded, "triple", {"app/work.py": WORK.replace("3 * x", "x * 3")})
    assert labels[THREAD] == IMPACTED
    assert labels["tests/test_z2_thread.py::test_after_hook"] == IMPACTED
    assert labels[POOL] == SKIP


def test_a_worker_threads_reads_are_recorded_while_the_tests_thread_keeps_the_recorder_busy(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    repo.git("checkout", "-q", "-f", w)
    done = run_agentgate(
        "witness", "show", "--test", "tests/test_busy.py::test_busy", "-f", "json", cwd=repo.path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    test = json.loads(done.stdout)["test"]
    assert test["complete"], test
    assert {f"data/d{i}.txt" for i in range(40)} <= set(test["depends_on"])
    done = run_agentgate(
        "witness", "show", "--test", "tests/test_busy_names.py::test_busy_names", "-f", "json",
        cwd=repo.path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    test = json.loads(done.stdout)["test"]
    assert {f".K{i}" for i in range(60)} <= set(test["depends_on"]["app/names.py"])


def test_what_a_first_import_in_a_worker_thread_ran_counts_for_every_later_user(
    recorded: tuple[GitRepo, str],
) -> None:
    # compute ran inside app.lazy's import, in the worker thread: test_later depends on it
    # through lazy.VALUE although it never ran compute itself.
    # What ran while a thread imported counts for every test: the label is one for all threads.
    labels = labelled(recorded, "compute", {"app/helper.py": HELPER.replace("41 + 1", "43 - 1")})
    assert labels[LATER] == IMPACTED
    # The twin: a function nobody ran in that import reruns its own test only, and the
    # importing test is traced like any other (not incomplete).
    labels = labelled(
        recorded, "other", {"app/helper.py": HELPER.replace("return 0", "return 0 * 1")}
    )
    assert labels[OTHER] == IMPACTED
    assert labels[LATER] == labels[IMPORTER] == SKIP


def test_an_import_in_a_thread_that_outlives_its_test_leaves_the_next_tests_context_alone(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "late", {"data/late.txt": "later\n"})
    assert labels[READER] == IMPACTED  # click read it, in test_reader's context
    assert labels[PLAIN] == labels[POOL] == SKIP


def test_what_another_thread_reads_outside_any_test_counts_for_every_test(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "between", {"data/between.txt": "changed\n"})
    assert labels[PLAIN] == labels[POOL] == IMPACTED
