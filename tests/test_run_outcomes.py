"""The outcome plugin in real pytest subprocesses: what agentgate saw, next to what the
harness reported, for the ways a patch can make a red test look green (issue 11)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from agentgate.run import outcomes

pytest_plugins = ["pytester"]

TESTS = """
import pytest

def test_pass():
    pass

def test_fail():
    assert 1 == 2

def test_skip():
    pytest.skip("not today")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.fixture
def broken():
    raise RuntimeError("setup broke")

def test_setup_error(broken):
    pass
"""


def _run(pytester: pytest.Pytester, *args: str) -> tuple[dict[str, Any], int]:
    out = pytester.path / "outcomes.json"
    result = pytester.runpytest_subprocess(
        "-p", "agentgate.run.outcomes", f"--agentgate-outcomes={out}", *args
    )
    return json.loads(out.read_text()), int(result.ret)


def _seen(data: dict[str, Any], name: str) -> dict[str, str]:
    return data["tests"][f"test_it.py::{name}"]  # type: ignore[no-any-return]


def test_every_outcome_is_recorded_raw_and_as_reported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TESTS)
    data, ret = _run(pytester)
    assert (data["finished"], data["exitstatus"], ret) == (True, 1, 1)
    assert len(data["collected"]) == 5
    assert _seen(data, "test_pass") == {
        "setup": "passed", "call": "passed", "teardown": "passed", "reported": "passed"}
    assert (_seen(data, "test_fail")["call"], _seen(data, "test_fail")["reported"]) == (
        "failed", "failed")
    assert (_seen(data, "test_skip")["call"], _seen(data, "test_skip")["reported"]) == (
        "skipped", "skipped")
    assert (_seen(data, "test_xfail")["call"], _seen(data, "test_xfail")["reported"]) == (
        "failed", "xfailed")
    assert _seen(data, "test_setup_error")["setup"] == "failed"
    assert "call" not in _seen(data, "test_setup_error")
    assert _seen(data, "test_setup_error")["reported"] == "error"


def test_a_conftest_that_rewrites_the_report_does_not_change_what_was_seen(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
"""
    )
    pytester.makepyfile(test_it="def test_fail():\n    assert 1 == 2\n")
    data, ret = _run(pytester)
    assert ret == 0  # the harness says green
    assert _seen(data, "test_fail")["call"] == "failed"  # agentgate saw red
    assert _seen(data, "test_fail")["reported"] == "passed"


def test_a_conftest_that_swallows_the_failure_does_not_hide_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    try:
        return (yield)
    except AssertionError:
        return None
"""
    )
    pytester.makepyfile(test_it="def test_fail():\n    assert 1 == 2\n")
    data, ret = _run(pytester)
    assert ret == 0
    assert _seen(data, "test_fail")["call"] == "failed"


def test_a_process_ended_early_with_status_0_is_not_finished(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_it="import os\n\ndef test_a():\n    os._exit(0)\n\ndef test_b():\n    assert 0\n"
    )
    data, ret = _run(pytester)
    assert ret == 0
    assert data["finished"] is False and data["exitstatus"] is None


def test_deselected_and_uncollected_tests_are_visible(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_collection_modifyitems(config, items):
    dropped = [i for i in items if i.name == "test_dropped"]
    items[:] = [i for i in items if i.name != "test_dropped"]
    config.hook.pytest_deselected(items=dropped)
"""
    )
    pytester.makepyfile(
        test_it="def test_kept():\n    pass\n\ndef test_dropped():\n    assert 0\n",
        test_hidden="__test__ = False\n\ndef test_hidden():\n    assert 0\n",
    )
    data, _ = _run(pytester)
    assert data["collected"] == ["test_it.py::test_kept"]
    assert data["deselected"] == ["test_it.py::test_dropped"]
    assert "test_hidden.py::test_hidden" not in data["tests"]


def test_inert_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it="def test_a():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "agentgate.run.outcomes")
    assert result.ret == 0
    assert not list(pytester.path.glob("*.json"))


def test_the_plugin_runs_as_a_standalone_copy_without_agentgate(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    # The band loads a copy into the project's interpreter, which may not have agentgate.
    shim = tmp_path / "shim"
    shim.mkdir()
    shutil.copy(outcomes.__file__, shim / "_agentgate_outcomes.py")
    pytester.makepyfile(test_it="def test_a():\n    pass\n")
    out = pytester.path / "o.json"
    result = pytester.run(
        sys.executable, "-I", "-c",
        # sys.modules[name] = None makes every ``import agentgate`` fail
        f"import sys; sys.path.insert(0, {str(shim)!r}); sys.modules['agentgate'] = None; "
        "import pytest; raise SystemExit(pytest.main(['-p', '_agentgate_outcomes', "
        f"'--agentgate-outcomes={out}', '-p', 'no:agentgate.witness']))",
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert json.loads(out.read_text())["tests"]["test_it.py::test_a"]["call"] == "passed"
