"""The outcome plugin in real pytest subprocesses: what agentgate saw, next to what the
harness reported, for the ways a patch can make a red test look green (issue 11)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentgate.core.model import Verdict
from agentgate.run import accounting, outcomes

pytest_plugins = ["pytester"]

# Attacks played here and again under xdist (tests/run/test_xdist.py).
REWRITE_CONFTEST = (
    "import pytest\n\n@pytest.hookimpl(wrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    report = yield\n    report.outcome = 'passed'\n    return report\n"
)
DESELECT_ALL_BUT_FIRST = (
    "def pytest_collection_modifyitems(config, items):\n"
    "    config.hook.pytest_deselected(items=items[1:])\n"
    "    items[:] = items[:1]\n"
)


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


# --- accounting: the plugin's file against the selection ----------------------------------

def _account(
    pytester: pytest.Pytester, selection: list[str], *args: str
) -> list[accounting.Problem]:
    out = pytester.path / "outcomes.json"
    result = pytester.runpytest_subprocess(
        "-p", "agentgate.run.outcomes", f"--agentgate-outcomes={out}", *args, *selection
    )
    data = json.loads(out.read_text()) if out.exists() else None
    return accounting.account(data, selection, int(result.ret))


def _codes(problems: list[accounting.Problem]) -> list[tuple[str, tuple[str, ...]]]:
    return [(p.code, p.nodeids) for p in problems]


def test_a_green_selection_accounts_cleanly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it="def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    assert _account(pytester, ["test_it.py::test_a", "test_it.py"]) == []


def test_a_test_renamed_out_of_collection_is_named(pytester: pytest.Pytester) -> None:
    # Attack: the selected test no longer collects (renamed, or __test__ = False).
    pytester.makepyfile(test_it="def test_a():\n    pass\n\ndef check_b():\n    assert 0\n")
    problems = _account(pytester, ["test_it.py::test_a", "test_it.py::test_b"])
    # pytest refuses a run with a node id it cannot find: nothing ran, and all are named
    assert _codes(problems) == [("not-collected", ("test_it.py::test_a", "test_it.py::test_b"))]
    assert problems[0].verdict == Verdict.FAILED


def test_a_file_whose_tests_are_hidden_is_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it="__test__ = False\n\ndef test_a():\n    assert 0\n",
                        test_other="def test_ok():\n    pass\n")
    problems = _account(pytester, ["test_it.py", "test_other.py"])
    assert _codes(problems) == [("not-collected", ("test_it.py",))]


def test_a_selection_that_collects_nothing_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it="__test__ = False\n\ndef test_a():\n    assert 0\n")
    problems = _account(pytester, ["test_it.py"])
    assert _codes(problems) == [("collected-nothing", ("test_it.py",))]


def test_an_early_exit_with_status_0_fails_naming_the_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_it="import os\n\ndef test_a():\n    pass\n\ndef test_b():\n    os._exit(0)\n\n"
                "def test_c():\n    assert 0\n"
    )
    problems = _account(pytester, ["test_it.py::test_a", "test_it.py::test_b",
                                   "test_it.py::test_c"])
    assert _codes(problems) == [
        ("session-not-finished", ("test_it.py::test_a", "test_it.py::test_b",
                                  "test_it.py::test_c"))]


def test_pytest_exit_inside_a_test_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_it="import pytest\n\ndef test_a():\n    pytest.exit('bye', returncode=0)\n"
    )
    problems = _account(pytester, ["test_it.py::test_a"])
    assert ("no-outcome", ("test_it.py::test_a",)) in _codes(problems)


def test_deselection_by_the_harness_fails(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DESELECT_ALL_BUT_FIRST)
    pytester.makepyfile(test_it="def test_a():\n    pass\n\ndef test_b():\n    assert 0\n")
    problems = _account(pytester, ["test_it.py::test_a", "test_it.py::test_b"])
    assert _codes(problems) == [("deselected", ("test_it.py::test_b",))]


def test_a_file_whose_tests_the_harness_all_deselected_is_named_as_deselected(
    pytester: pytest.Pytester,
) -> None:
    # A file selected whole (no witness) whose every test a conftest deselects: the harness
    # dropped them, they did not fail to collect (new-user trial: "not collected").
    pytester.makeconftest(DESELECT_ALL_BUT_FIRST)
    pytester.makepyfile(test_a_first="def test_kept():\n    pass\n",
                        test_b_gone="def test_b():\n    assert 0\n")
    problems = _account(pytester, ["test_a_first.py", "test_b_gone.py"])
    assert _codes(problems) == [("deselected", ("test_b_gone.py",))]


def test_a_rewritten_outcome_blocks(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(REWRITE_CONFTEST)
    pytester.makepyfile(test_it="def test_a():\n    assert 0\n")
    problems = _account(pytester, ["test_it.py::test_a"])
    assert _codes(problems) == [("outcome-rewritten", ("test_it.py::test_a",))]
    assert problems[0].verdict == Verdict.BLOCKED


def test_an_xfail_marker_is_a_suppression_not_a_rewrite(pytester: pytest.Pytester) -> None:
    # The legitimate twin: pytest's own xfail handling is left to the base oracle.
    pytester.makepyfile(
        test_it="import pytest\n\n@pytest.mark.xfail\ndef test_a():\n    assert 0\n"
    )
    assert _account(pytester, ["test_it.py::test_a"]) == []


def test_no_file_at_all_fails() -> None:
    problems = accounting.account(None, ["tests/test_a.py"], 0)
    assert _codes(problems) == [("no-outcomes", ())]
    assert "exit status 0" in problems[0].detail


def test_the_plugin_and_the_accounting_agree_on_the_option_and_format() -> None:
    assert (outcomes.OPTION, outcomes.FORMAT) == (accounting.OPTION, accounting.FORMAT)


def test_the_band_does_not_import_pytest() -> None:
    # pre-commit's hook environment has agentgate but not necessarily pytest.
    probe = ("import sys\nsys.modules['pytest'] = None\nsys.modules['_pytest'] = None\n"
             "import agentgate.run.band, agentgate.run.accounting\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --- skips the code under test decides (red-team, issue 11) -------------------------------

# The code under test hides its own failure from every test that reaches it.
SELF_SKIPPING_APP = {
    "skip": "import os, pytest\n\ndef rate():\n"
            "    if 'PYTEST_CURRENT_TEST' in os.environ:\n        pytest.skip('flaky')\n"
            "    return 0\n",
    "xfail": "import pytest\n\ndef rate():\n    pytest.xfail('known')\n",
    "importorskip": "import pytest\n\ndef rate():\n    pytest.importorskip('no_such_mod')\n",
    "skiptest": "import unittest\n\ndef rate():\n    raise unittest.SkipTest('later')\n",
}


@pytest.mark.parametrize("how", sorted(SELF_SKIPPING_APP))
def test_code_under_test_that_skips_its_tests_blocks(pytester: pytest.Pytester,
                                                      how: str) -> None:
    pytester.mkpydir("app").joinpath("tax.py").write_text(SELF_SKIPPING_APP[how])
    tests = pytester.mkdir("tests")
    tests.joinpath("test_tax.py").write_text(
        "from app.tax import rate\n\ndef test_rate():\n    assert rate() == 7\n")
    problems = _account(pytester, ["tests/test_tax.py::test_rate"], "-p", "no:cacheprovider",
                        "--rootdir", str(pytester.path), "-o", "pythonpath=.")
    assert _codes(problems) == [("outcome-rewritten", ("tests/test_tax.py::test_rate",))]
    assert problems[0].verdict == Verdict.BLOCKED


def test_skips_decided_by_test_side_code_stay_skips(pytester: pytest.Pytester) -> None:
    """The legitimate twins: a test, a helper in the test folder, a conftest fixture and
    ``unittest.SkipTest`` raised by a test skip it, also after calling code under test."""
    pytester.mkpydir("app").joinpath("tax.py").write_text("def rate():\n    return 7\n")
    tests = pytester.mkdir("tests")
    tests.joinpath("helpers.py").write_text(
        "import pytest\n\ndef needs_network():\n    pytest.skip('offline')\n")
    tests.joinpath("conftest.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef windows():\n    pytest.skip('windows only')\n")
    tests.joinpath("test_tax.py").write_text(
        "import sys, unittest, pytest\nsys.path.insert(0, __file__.rsplit('/', 1)[0])\n"
        "from app.tax import rate\nfrom helpers import needs_network\n\n"
        "def test_own():\n    assert rate() == 7\n    pytest.skip('enough')\n\n"
        "def test_helper():\n    needs_network()\n\n"
        "def test_fixture(windows):\n    pass\n\n"
        "def test_unittest_skip():\n    raise unittest.SkipTest('not here')\n\n"
        "def test_xfail():\n    rate()\n    pytest.xfail('known')\n"
    )
    names = ["test_own", "test_helper", "test_fixture", "test_unittest_skip", "test_xfail"]
    problems = _account(pytester, [f"tests/test_tax.py::{n}" for n in names],
                        "-p", "no:cacheprovider", "--rootdir", str(pytester.path),
                        "-o", "pythonpath=.")
    assert problems == []


# --- the code under test changing pytest in process (red-team a11) --------------------------

_FIND_CONFIG = ("import gc\nimport pytest\n\n"
                "config = next(o for o in gc.get_objects() if isinstance(o, pytest.Config))\n")
# Each turns the failing test below green from app/tax.py, imported while collecting it.
NEUTERING_APP = {
    "registered-wrapper": _FIND_CONFIG + (
        "class Quiet:\n    @pytest.hookimpl(wrapper=True, trylast=True)\n"
        "    def pytest_runtest_call(self, item):\n        try:\n            return (yield)\n"
        "        except AssertionError:\n            return None\n\n\n"
        "config.pluginmanager.register(Quiet())\n"),
    "replaced-runtest": "import _pytest.python\n\n"
        "_pytest.python.Function.runtest = lambda self: None\n",
    "injected-impl": _FIND_CONFIG + (
        "import pluggy\n\n\ndef call(item):\n    return True\n\n\n"
        "caller = config.pluginmanager.hook.pytest_pyfunc_call\n"
        "impl = pluggy.HookImpl(object(), 'x', call, {'tryfirst': True, 'hookwrapper': False,\n"
        "    'wrapper': False, 'optionalhook': False, 'trylast': False,\n"
        "    'specname': None})\ncaller._add_hookimpl(impl)\n"),
    "replaced-fail": "import pytest\n\npytest.fail = lambda *a, **k: None\n",
    "replaced-by-a-builtin": "import pytest\n\npytest.fail = print\n",
    "replaced-test-function": "import _pytest.python\n\n"
        "_pytest.python.Function._getobj = lambda self: (lambda **kw: None)\n",
    "replaced-by-the-stdlib": "import logging\nimport pytest\n\npytest.fail = logging.debug\n",
    "replaced-unittest-assert": "import unittest\n\n"
        "unittest.TestCase.assertEqual = lambda self, a, b, msg=None: None\n",
    # Red-team: the collector wrapped so each test's code becomes a no-op; the skip marks
    # evaluated as a skip; a failed assert raising a skip.
    "wrapped-collector": "import _pytest.python\n\n_collect = _pytest.python.PyCollector.collect\n"
        "\n\ndef collect(self):\n    found = _collect(self)\n    for item in found:\n"
        "        obj = getattr(item, 'obj', None)\n"
        "        if hasattr(obj, '__code__') and not isinstance(obj, type):\n"
        "            obj.__code__ = (lambda *a, **k: None).__code__\n    return found\n\n\n"
        "_pytest.python.PyCollector.collect = collect\n",
    "skip-marks": "import _pytest.skipping\nfrom _pytest.skipping import Skip\n\n"
        "_pytest.skipping.evaluate_skip_marks = lambda item: Skip('later')\n",
    "assertion-a-skip": "import builtins\nimport pytest\n\n\n"
        "class Quiet(pytest.skip.Exception):\n    pass\n\n\n"
        "builtins.AssertionError = Quiet\n",
    # Red-team: an unpinned part (the item's setup) that sets the test's function to a no-op.
    "obj-replaced-in-setup": "import _pytest.python\n\n_setup = _pytest.python.Function.setup\n"
        "\n\ndef setup(self):\n    _setup(self)\n    self._obj = lambda *a, **k: None\n\n\n"
        "_pytest.python.Function.setup = setup\n",
}


def _tax_project(pytester: pytest.Pytester, app: str, test: str) -> None:
    pytester.mkpydir("app").joinpath("tax.py").write_text(app + "\n\ndef rate():\n    return 0\n")
    pytester.mkdir("tests").joinpath("test_tax.py").write_text(
        "import pytest\nfrom app.tax import rate\n\n" + test)


@pytest.mark.parametrize("when", ["collected", "at-start-up"])
@pytest.mark.parametrize("how", sorted(NEUTERING_APP))
def test_code_under_test_that_changes_pytest_in_process_blocks(
    pytester: pytest.Pytester, how: str, when: str
) -> None:
    """Imported while a test file is collected, or at start-up by a root conftest that
    imports the code under test (as many do, for their fixtures)."""
    if when == "at-start-up":
        pytester.makeconftest("import app.tax\n")
    _tax_project(pytester, NEUTERING_APP[how],
                 "import unittest\n\n\nclass TestRate(unittest.TestCase):\n"
                 "    def test_rate(self):\n        self.assertEqual(rate(), 7)\n"
                 "        pytest.fail('wrong rate')\n\n\n"
                 "def test_rate():\n    assert rate() == 7\n    pytest.fail('wrong rate')\n")
    test = "TestRate::test_rate" if "unittest" in how else "test_rate"
    problems = _account(pytester, [f"tests/test_tax.py::{test}"], "-p", "no:cacheprovider",
                        "--rootdir", str(pytester.path), "-o", "pythonpath=.")
    said = [(p.code, p.detail[:60]) for p in problems]
    assert "harness-altered" in [p.code for p in problems], said
    assert [p.verdict for p in problems if p.code == "harness-altered"] == [Verdict.BLOCKED]


def test_code_under_test_that_a_conftest_hook_calls_to_register_a_plugin_blocks(
    pytester: pytest.Pytester,
) -> None:
    """No import in between: the root conftest's ``pytest_configure`` calls ``app.setup``,
    which the patch made register a wrapper that swallows failures."""
    _tax_project(pytester, "import pytest\n\n\nclass Quiet:\n"
                 "    @pytest.hookimpl(wrapper=True, trylast=True)\n"
                 "    def pytest_runtest_call(self, item):\n        try:\n"
                 "            return (yield)\n        except AssertionError:\n"
                 "            return None\n\n\n"
                 "def setup(config):\n    config.pluginmanager.register(Quiet())\n",
                 "def test_rate():\n    assert rate() == 7\n")
    pytester.makeconftest("import app.tax\n\n\ndef pytest_configure(config):\n"
                          "    app.tax.setup(config)\n")
    problems = _account(pytester, ["tests/test_tax.py::test_rate"], "-p", "no:cacheprovider",
                        "--rootdir", str(pytester.path), "-o", "pythonpath=.")
    assert "harness-altered" in [p.code for p in problems], problems


def test_a_plugin_projects_own_registrations_at_start_up_are_its_business(
    pytester: pytest.Pytester,
) -> None:
    """The legitimate twin at start-up: a plugin of the tree (a pytest plugin project's
    own, loaded with ``-p``) whose ``pytest_configure`` registers another plugin, and a
    root conftest that imports the code under test and registers a plugin at its import."""
    _tax_project(pytester, "", "def test_rate():\n    assert rate() == 0\n")
    pytester.path.joinpath("app", "plugin.py").write_text(
        "class Session:\n    pass\n\n\ndef pytest_configure(config):\n"
        "    config.pluginmanager.register(Session(), 'app-session')\n")
    pytester.makeconftest("import app.tax\n\n\nclass Helper:\n    pass\n\n\n"
                          "import gc\nimport pytest\n\n"
                          "next(o for o in gc.get_objects() if isinstance(o, pytest.Config))"
                          ".pluginmanager.register(Helper())\n")
    problems = _account(pytester, ["tests/test_tax.py::test_rate"], "-p", "no:cacheprovider",
                        "--rootdir", str(pytester.path), "-o", "pythonpath=.", "-p",
                        "app.plugin")
    assert problems == []


def test_plugins_registered_by_test_side_code_and_patches_undone_are_the_tests_own(
    pytester: pytest.Pytester,
) -> None:
    """The legitimate twins: a conftest that registers a plugin (at start-up and while
    collecting its folder), a test that registers one, ``monkeypatch`` on pytest's parts
    undone by its teardown, and code under test that imports pytest and uses it."""
    _tax_project(pytester, "import pytest\n\nAPPROX = pytest.approx(0.5)\n",
                 "import _pytest.python\n\n\nclass Probe:\n    pass\n\n\n"
                 "def test_rate():\n    assert rate() == 0\n\n\n"
                 "def test_registers(pytestconfig):\n"
                 "    pytestconfig.pluginmanager.register(Probe())\n\n\n"
                 "def test_monkeypatch(monkeypatch):\n"
                 "    monkeypatch.setattr(_pytest.python.Function, 'runtest', lambda s: None)\n")
    pytester.makeconftest("class Start:\n    pass\n\n\ndef pytest_configure(config):\n"
                          "    config.pluginmanager.register(Start())\n")
    pytester.mkdir("tests/sub").joinpath("test_sub.py").write_text(
        "import pytest\n\n\ndef test_close():\n    assert 1.0001 == pytest.approx(1)\n")
    pytester.path.joinpath("tests", "sub", "conftest.py").write_text(
        "import pytest\n\n_approx = pytest.approx\n\n\n"
        "def approx(expected, **kwargs):  # a folder's own tolerance, set as it is collected\n"
        "    return _approx(expected, **{'rel': 1e-3, **kwargs})\n\n\n"
        "pytest.approx = approx\n\n\n"
        "class Late:\n    pass\n\n\ndef pytest_configure(config):\n"
        "    config.pluginmanager.register(Late())\n")
    names = ["test_rate", "test_registers", "test_monkeypatch"]
    # tests/sub/conftest.py loads while collecting: after the session began
    problems = _account(pytester, [f"tests/test_tax.py::{n}" for n in names],
                        "-p", "no:cacheprovider", "--rootdir", str(pytester.path),
                        "-o", "pythonpath=.", "tests")  # tests/sub/ collected from here
    assert problems == []
