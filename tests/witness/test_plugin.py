"""The recording plugin, run in real pytest subprocesses (pytester), read back as a witness."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentgate.core.config import DEFAULT_AMBIENT
from agentgate.witness import depgraph as graph
from agentgate.witness import plugin
from agentgate.witness.blocks import DIR, MODULE, WHOLE

pytest_plugins = ["pytester"]

APP = {
    "app/__init__.py": "",
    "app/lazy.py": "def compute():\n    return 42\n",
    "app/consts.py": "LIMIT = 3\n",
    "app/core.py": (
        "def lazy_user():\n    from app import lazy\n    return lazy.compute()\n\n"
        "def limit():\n    from app import consts\n    return consts.LIMIT\n\n"
        "def plain():\n    return 1\n"
    ),
    "app/slow.py": (
        "def _build():\n    return {'a': 1}\n\nTABLE = _build()\n\n"
        "def lookup(k):\n    return TABLE[k]\n"
    ),
}


def _write(pytester: pytest.Pytester, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = pytester.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _record(pytester: pytest.Pytester, files: dict[str, str], *args: str) -> graph.Witness:
    _write(pytester, {**APP, **files})
    out = pytester.path / "raw.json"
    result = pytester.runpytest_subprocess(
        "-p", "agentgate.witness", "--agentgate-witness", f"--agentgate-witness-out={out}",
        "-p", "no:randomly", "-p", "no:cacheprovider", *args,
    )
    assert out.is_file(), result.stdout.str() + result.stderr.str()
    raw = json.loads(out.read_text(encoding="utf-8"))
    return graph.build(raw, sha="0" * 40, tracked=lambda p: True, data_ok=lambda p: True)


def _deps(witness: graph.Witness, nodeid: str) -> frozenset[tuple[str, str]]:
    return graph.closure(witness, witness.tests[nodeid])


def test_installed_but_not_asked_registers_nothing(pytester: pytest.Pytester) -> None:
    probe = (
        "import sys, importlib._bootstrap as bootstrap\n"
        "def test_probe(pytestconfig):\n"
        "    assert pytestconfig.pluginmanager.has_plugin('agentgate.witness')\n"
        "    state = {\n"
        "        'recorder': pytestconfig.pluginmanager.get_plugin('agentgate-witness-recorder')"
        " is not None,\n"
        "        'tracing': sys.gettrace() is not None or any(\n"
        "            sys.monitoring.get_tool(t) for t in range(6)) if hasattr(sys, 'monitoring')"
        " else sys.gettrace() is not None,\n"
        "        'audit_module': 'agentgate.witness.recorder' in sys.modules,\n"
        "        'import_hook': 'agentgate' in bootstrap._find_and_load.__module__,\n"
        "    }\n"
        "    print('STATE', sorted(k for k, v in state.items() if v))\n"
    )
    pytester.makepyfile(test_probe=probe)
    quiet = pytester.runpytest_subprocess("-s", "-p", "agentgate.witness")
    assert "STATE []" in quiet.stdout.str()
    # The same probe sees all four when asked to record: it can tell them apart.
    out = pytester.path / "raw.json"
    loud = pytester.runpytest_subprocess(
        "-s", "-p", "agentgate.witness", "--agentgate-witness", f"--agentgate-witness-out={out}"
    )
    # Tracing: coverage's trace function before Python 3.12, a sys.monitoring tool after.
    assert "STATE ['audit_module', 'import_hook', 'recorder', 'tracing']" in loud.stdout.str()


def test_lazy_import_counts_for_a_test_that_runs_after_the_first_importer(
    pytester: pytest.Pytester,
) -> None:
    tests = (
        "def test_a_imports_first():\n    from app import lazy\n    assert lazy.compute() == 42\n\n"
        "def test_b_lazy_user():\n    from app.core import lazy_user\n"
        "    assert lazy_user() == 42\n\n"
        "def test_c_plain():\n    from app.core import plain\n    assert plain() == 1\n"
    )
    witness = _record(pytester, {"tests/test_lazy.py": tests})
    b = _deps(witness, "tests/test_lazy.py::test_b_lazy_user")
    assert ("app/lazy.py", "compute") in b
    assert ("app/lazy.py", MODULE) in b
    c = _deps(witness, "tests/test_lazy.py::test_c_plain")
    assert ("app/lazy.py", "compute") not in c
    assert ("app/core.py", "plain") in c and ("app/core.py", "lazy_user") not in c


def test_import_time_code_counts_for_every_user_not_only_the_first_importer(
    pytester: pytest.Pytester,
) -> None:
    tests = (
        "def test_a_imports():\n    import app.slow\n\n"
        "def test_b_uses():\n    from app import slow\n    assert slow.lookup('a') == 1\n\n"
        "def test_c_const():\n    from app.core import limit\n    assert limit() == 3\n"
    )
    witness = _record(pytester, {"tests/test_slow.py": tests})
    b = _deps(witness, "tests/test_slow.py::test_b_uses")
    assert ("app/slow.py", "_build") in b  # ran during test_a's import, counts for test_b
    c = _deps(witness, "tests/test_slow.py::test_c_const")
    assert ("app/consts.py", MODULE) in c  # read through a function-level import
    assert ("app/slow.py", "_build") not in c


def test_subprocess_and_socket_mark_only_their_own_test(pytester: pytest.Pytester) -> None:
    tests = (
        "import socket, subprocess, sys\n\n"
        "def test_sub():\n    subprocess.run(['ls'], stdout=subprocess.DEVNULL, check=True)\n\n"
        "def test_sock():\n    s = socket.socket()\n    try:\n"
        "        s.connect(('127.0.0.1', 9))\n    except OSError:\n        pass\n"
        "    finally:\n        s.close()\n\n"
        "def test_quiet():\n    assert True\n"
    )
    witness = _record(pytester, {"tests/test_io.py": tests})
    assert "subprocess" in str(witness.tests["tests/test_io.py::test_sub"].incomplete)
    assert "socket" in str(witness.tests["tests/test_io.py::test_sock"].incomplete)
    assert witness.tests["tests/test_io.py::test_quiet"].complete


def test_a_subprocess_started_by_pytest_tooling_still_counts(pytester: pytest.Pytester) -> None:
    files = {"tests/test_nested.py": (
        "pytest_plugins = ['pytester']\n\n"
        # pytest's own code starts the program, inside the test (a Python child pytester
        # starts is followed instead: tests/witness/test_children.py).
        "def test_nested(pytester):\n"
        "    assert pytester.run('ls').ret == 0\n"
    )}
    witness = _record(pytester, files)
    assert "subprocess" in str(witness.tests["tests/test_nested.py::test_nested"].incomplete)


def test_a_module_that_spawns_at_import_marks_every_user_in_any_order(
    pytester: pytest.Pytester,
) -> None:
    files = {
        "app/version.py": "import subprocess, sys\n"
        "OUT = subprocess.run(['ls', '-d', '.'], capture_output=True).stdout\n",
        "tests/test_order.py": (
            "def test_first():\n    import app.version\n\n"
            "def test_second():\n    from app import version\n    assert version.OUT\n\n"
            "def test_unrelated():\n    assert True\n"
        ),
    }
    witness = _record(pytester, files)
    for name in ("test_first", "test_second"):
        assert "subprocess" in str(witness.tests[f"tests/test_order.py::{name}"].incomplete)
    assert witness.tests["tests/test_order.py::test_unrelated"].complete


def test_session_fixture_code_counts_for_every_test_using_it(pytester: pytest.Pytester) -> None:
    files = {
        "tests/conftest.py": "import pytest\n\n@pytest.fixture(scope='session')\n"
        "def shared():\n    from app.core import plain\n    return plain()\n",
        "tests/test_fix.py": "def test_one(shared):\n    assert shared == 1\n\n"
        "def test_two(shared):\n    assert shared == 1\n\n"
        "def test_none():\n    assert True\n",
    }
    witness = _record(pytester, files)
    for name in ("test_one", "test_two"):
        assert ("app/core.py", "plain") in _deps(witness, f"tests/test_fix.py::{name}")
    assert ("app/core.py", "plain") not in _deps(witness, "tests/test_fix.py::test_none")


def test_files_read_and_folders_listed_are_recorded_per_test(pytester: pytest.Pytester) -> None:
    files = {
        "tests/fixtures/x.json": '{"v": 1}\n',
        "tests/test_data.py": (
            "import json, os\n\n"
            "def test_reads():\n    with open('tests/fixtures/x.json') as f:\n"
            "        assert json.load(f)['v'] == 1\n\n"
            "def test_lists():\n    assert 'x.json' in os.listdir('tests/fixtures')\n\n"
            "def test_neither():\n    assert True\n"
        ),
    }
    witness = _record(pytester, files)
    assert ("tests/fixtures/x.json", WHOLE) in _deps(witness, "tests/test_data.py::test_reads")
    assert ("tests/fixtures", DIR) in _deps(witness, "tests/test_data.py::test_lists")
    neither = _deps(witness, "tests/test_data.py::test_neither")
    assert not any(path.startswith("tests/fixtures") for path, _ in neither)
    # The test sources pytest itself reads (assertion rewriting) are not data.
    assert ("tests/test_data.py", WHOLE) not in neither


def test_failed_test_is_incomplete_and_ambient_is_recorded(pytester: pytest.Pytester) -> None:
    files = {"tests/test_fail.py": "def test_bad():\n    assert False\n\n"
             "def test_good():\n    pass\n"}
    monkey = pytest.MonkeyPatch()
    monkey.setenv("TZ", "Europe/Paris")
    try:
        witness = _record(pytester, files, "--agentgate-witness-ambient=TZ,LANG")
    finally:
        monkey.undo()
    assert witness.tests["tests/test_fail.py::test_bad"].incomplete == (
        f"{graph.NOT_PASSED}: failed"
    )
    assert witness.tests["tests/test_fail.py::test_good"].complete
    assert witness.ambient["TZ"] == "Europe/Paris"
    assert set(witness.ambient) == {"TZ", "LANG"}


def test_plugin_default_ambient_matches_config() -> None:
    assert plugin.DEFAULT_AMBIENT == DEFAULT_AMBIENT


def test_collection_errors_are_recorded(pytester: pytest.Pytester) -> None:
    files = {"tests/test_broken.py": "import nothing_here_at_all\n", "tests/test_ok.py":
             "def test_ok():\n    pass\n"}
    witness = _record(pytester, files)
    assert "tests/test_broken.py" in witness.collect_errors
    assert "tests/test_ok.py" in witness.collected


def test_outputs_are_plain_json(tmp_path: Path, pytester: pytest.Pytester) -> None:
    witness = _record(pytester, {"tests/test_x.py": "def test_x():\n    pass\n"})
    assert list(witness.tests) == ["tests/test_x.py::test_x"]
    assert witness.tests["tests/test_x.py::test_x"].outcome == "passed"


def test_a_test_that_replaces_the_trace_function_is_incomplete_and_the_next_is_traced(
    pytester: pytest.Pytester,
) -> None:
    tests = (
        "import sys\n\n"
        "def test_a_untraces():\n    sys.settrace(None)\n    from app.core import plain\n"
        "    assert plain() == 1\n\n"
        "def test_b_after():\n    from app.core import limit\n    assert limit() == 3\n"
    )
    witness = _record(pytester, {"tests/test_trace.py": tests})
    a = witness.tests["tests/test_trace.py::test_a_untraces"]
    b = witness.tests["tests/test_trace.py::test_b_after"]
    assert ("app/core.py", "limit") in _deps(witness, b.nodeid)  # traced again
    if sys.version_info < (3, 12):
        # coverage's trace function was gone for the rest of test_a: it cannot be vouched for.
        assert a.incomplete and "trace function" in a.incomplete
    else:
        # sys.monitoring does not depend on the trace function: nothing was hidden.
        assert a.complete and ("app/core.py", "plain") in _deps(witness, a.nodeid)
    assert b.complete


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="coverage's trace function: 3.11")
def test_putting_the_same_trace_function_back_hides_nothing(pytester: pytest.Pytester) -> None:
    # Issue 12 (toolz's doctests): doctest's runner ends with sys.settrace(saved), the very
    # function coverage installed; the test stays complete. The attack next to it unsets the
    # trace, runs code unseen and puts it back: still incomplete, so its skip is not taken.
    tests = (
        "import doctest, sys\n\n"
        "def test_doctest_style():\n    saved = sys.gettrace()\n    sys.settrace(saved)\n"
        "    from app.core import plain\n    assert plain() == 1\n\n"
        "def test_real_doctest():\n    from app import core\n"
        "    doctest.run_docstring_examples(core.plain, {})\n\n"
        "def test_hides_and_restores():\n    saved = sys.gettrace()\n    sys.settrace(None)\n"
        "    from app.core import limit\n    assert limit() == 3\n    sys.settrace(saved)\n"
    )
    witness = _record(pytester, {"tests/test_trace.py": tests})
    same = witness.tests["tests/test_trace.py::test_doctest_style"]
    assert same.complete and ("app/core.py", "plain") in _deps(witness, same.nodeid)
    assert witness.tests["tests/test_trace.py::test_real_doctest"].complete
    hidden = witness.tests["tests/test_trace.py::test_hides_and_restores"]
    assert hidden.incomplete and "trace function" in hidden.incomplete


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="coverage's trace function: 3.11")
def test_a_thread_that_replaces_its_trace_function_is_judged_at_once(
    pytester: pytest.Pytester,
) -> None:
    # The deferred check reads the main thread's trace function; another thread's settrace
    # must not pass it unseen (the recorder judges it at once; coverage's tracer in that
    # thread is another object, which the check at the event catches too).
    tests = (
        "import sys, threading\n\n"
        "def test_thread():\n"
        "    def work():\n        saved = sys.gettrace()\n        sys.settrace(None)\n"
        "        sys.settrace(saved)\n"
        "    t = threading.Thread(target=work)\n    t.start()\n    t.join()\n"
    )
    witness = _record(pytester, {"tests/test_thread.py": tests})
    test = witness.tests["tests/test_thread.py::test_thread"]
    assert test.incomplete and "trace function" in test.incomplete


def test_the_package_carries_the_plugins_hooks() -> None:
    """``-p agentgate.witness`` registers the package: it must carry every plugin hook (boot
    adds the same names to it when it imported the package before pytest)."""
    import agentgate.witness as package

    assert set(package.__all__) == set(plugin.HOOKS)


def test_boot_refuses_a_recording_rooted_elsewhere_than_pytests_rootdir(
    pytester: pytest.Pytester,
) -> None:
    """Run from a subfolder without ``--rootdir``, boot records under the subfolder while
    pytest's rootdir is the configuration's folder: every path would be wrong, so the plugin
    refuses (``witness record`` always passes ``--rootdir``)."""
    _write(pytester, {"pyproject.toml": "[tool.pytest.ini_options]\n",
                      "sub/test_x.py": "def test_x():\n    pass\n"})
    out = pytester.path / "raw.json"
    done = subprocess.run(
        [sys.executable, "-m", "agentgate.witness.boot", "-p", "agentgate.witness",
         "--agentgate-witness", f"--agentgate-witness-out={out}"],
        cwd=pytester.path / "sub", capture_output=True, text=True, check=False,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "pass --rootdir=" in done.stderr and not out.exists()
    done = subprocess.run(
        [sys.executable, "-m", "agentgate.witness.boot", "-p", "agentgate.witness",
         "--agentgate-witness", f"--agentgate-witness-out={out}", f"--rootdir={pytester.path}"],
        cwd=pytester.path / "sub", capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0 and out.is_file(), done.stdout + done.stderr
