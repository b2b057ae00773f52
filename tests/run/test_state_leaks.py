"""Process state a test leaves changed for the tests after it (``run.leaks``).

The attack (red-team): a patch's code sets ``decimal.getcontext().prec = 4`` as it runs, or as
its module is imported. The band's tests pass; a test the band left out, which never reaches
the changed code, fails in the full suite because it runs after them in the same process.
The check sees the leak the base did not have, promotes, and runs the whole suite. A leak the
base had already, and a patch that leaks nothing, keep the small band.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from agentgate.run import leaks
from agentgate.run.outcomes import changed, process_state
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import patch, recorded_repo

pytest_plugins = ["pytester"]

MONEY = ("import decimal\n\n\n"
         "def total(a, b):\n    return decimal.Decimal(a) + decimal.Decimal(b)\n")
LEAKY_CALL = MONEY.replace("def total(a, b):\n",
                           "def total(a, b):\n    decimal.getcontext().prec = 4\n")
LEAKY_IMPORT = MONEY.replace("import decimal\n",
                             "import decimal\n\ndecimal.getcontext().prec = 4\n")
HARMLESS = MONEY.replace("decimal.Decimal(b)\n", "decimal.Decimal(b) + 0\n")
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/money.py": MONEY,
    "app/report.py": "import decimal\n\n\n"
                     "def third():\n    return str(decimal.Decimal(1) / decimal.Decimal(3))\n",
    # File order: the money test runs first, and leaves the state the report test reads.
    # At the base it already leaves an environment variable set: a leak the base has.
    "tests/test_a_money.py": "import os\n\nfrom app.money import total\n\n\n"
                             "def test_total():\n    os.environ['APP_SEEN'] = '1'\n"
                             "    assert str(total('1.5', '2.25')) == '3.75'\n",
    "tests/test_b_report.py": "from app.report import third\n\n\n"
                              "def test_third():\n    assert third() == '0.' + '3' * 28\n",
}
MONEY_TEST = "tests/test_a_money.py::test_total"
REPORT_TEST = "tests/test_b_report.py::test_third"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def _check(repo: GitRepo, base: str, *args: str) -> tuple[int, dict[str, Any]]:
    done = run_agentgate("check", "--base", base, "--format", "json", *args, cwd=repo.path)
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


def _codes(data: dict[str, Any]) -> list[str]:
    return [r["code"] for r in data["reasons"]]


@pytest.mark.parametrize("money", [LEAKY_CALL, LEAKY_IMPORT], ids=["in-a-call", "at-import"])
def test_a_leak_the_base_did_not_have_runs_the_whole_suite(
    recorded: tuple[GitRepo, str], money: str, request: pytest.FixtureRequest,
) -> None:
    repo, base = recorded
    patch(repo, base, "leak-" + request.node.callspec.id, {"app/money.py": money})
    code, data = _check(repo, base)
    # The witness runs the money test alone; the leak sends the check to the whole suite,
    # where the report test, which never reaches app/money.py, fails.
    assert data["witness"]["skipped"] == [REPORT_TEST]
    assert leaks.PROMOTE_CODE in _codes(data), data["reasons"]
    assert code == 1
    assert data["results"]["scope"] == "full"  # the report shows the run that decided
    failed = [r for r in data["reasons"] if r["code"] == "tests-failed"]
    assert failed and REPORT_TEST in failed[0]["detail"]
    leak = next(r for r in data["reasons"] if r["code"] == leaks.PROMOTE_CODE)
    assert "decimal.prec = 4" in leak["detail"]


def test_a_patch_that_leaks_what_the_base_leaked_keeps_its_band(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, base = recorded
    patch(repo, base, "harmless", {"app/money.py": HARMLESS})
    code, data = _check(repo, base)
    assert code == 0, data["reasons"]
    assert leaks.PROMOTE_CODE not in _codes(data)
    assert data["witness"]["skipped"] == [REPORT_TEST]
    assert [r["label"] for r in data["results"]["runs"]] == ["band"]


# The leak through a shared fixture: a session fixture calls code under test, which at head
# sets the decimal precision. The fixture's set-up is the harness's, not its first test's
# leak, but the state stays for every test after it.
SHARED_FILES = {
    **FILES,
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture(scope='session')\n"
                         "def ready():\n    from app.money import total\n\n"
                         "    return total('1', '2')\n",
    "tests/test_a_money.py": "from app.money import total\n\n\n"
                             "def test_total(ready):\n"
                             "    assert str(total('1.5', '2.25')) == '3.75'\n",
}


@pytest.fixture(scope="module")
def shared_recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, SHARED_FILES)


@pytest.mark.parametrize("money", [LEAKY_CALL, HARMLESS], ids=["leak", "harmless"])
def test_a_leak_a_shared_fixture_sets_up_is_judged_against_the_base(
    shared_recorded: tuple[GitRepo, str], money: str, request: pytest.FixtureRequest,
) -> None:
    repo, base = shared_recorded
    patch(repo, base, "shared-" + request.node.callspec.id, {"app/money.py": money})
    code, data = _check(repo, base)
    assert data["witness"]["skipped"] == [REPORT_TEST]
    if money is HARMLESS:  # the twin: the fixture set up nothing new
        assert (code, leaks.PROMOTE_CODE in _codes(data)) == (0, False), data["reasons"]
        return
    leak = next(r for r in data["reasons"] if r["code"] == leaks.PROMOTE_CODE)
    assert "decimal.prec (fixture ready) = 4" in leak["detail"]
    assert code == 1  # the whole suite ran, and the report test failed after the fixture


LAZY_FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    # A module that sets the environment up as it is first imported: its first importer
    # leaks, whichever test that is.
    "app/lazy.py": "import os\n\nos.environ['LAZY_READY'] = '1'\n\n\n"
                   "def value():\n    return 1\n",
    "app/core.py": "def double(x):\n    return 2 * x\n",
    "tests/test_a_first.py": "def test_first():\n    from app import lazy\n\n"
                             "    assert lazy.value() == 1\n",
    "tests/test_b_second.py": "from app.core import double\n\n\n"
                              "def test_second():\n    from app import lazy\n\n"
                              "    assert lazy.value() + double(1) == 3\n",
}


@pytest.fixture(scope="module")
def lazy_recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, LAZY_FILES)


def test_a_leak_that_moves_to_the_first_importer_in_the_band_keeps_it(
    lazy_recorded: tuple[GitRepo, str],
) -> None:
    # The witness saw test_first leave LAZY_READY set (it imported app.lazy first). The band
    # of a change to app/core.py is test_second alone, which now imports it first and leaves
    # it set: the witness does not say so for test_second, a run of its file at the base does.
    # A new leak is still new after that run (the decimal attack above, with a witness).
    repo, base = lazy_recorded
    patch(repo, base, "core", {"app/core.py": "def double(x):\n    return x * 2\n"})
    code, data = _check(repo, base)
    assert data["witness"]["skipped"] == ["tests/test_a_first.py::test_first"]
    assert leaks.PROMOTE_CODE not in _codes(data), data["reasons"]
    assert code == 0
    assert [r["label"] for r in data["results"]["runs"]] == ["band"]


# The same within one file: the witness saw test_first leave LAZY_READY set; a run of the
# file at the base says the same; the band of a change to app/core.py is test_second alone.
SAME_FILE = {
    **{k: v for k, v in LAZY_FILES.items() if not k.startswith("tests/")},
    "tests/test_lazy.py": "def test_first():\n    from app import lazy\n\n"
                          "    assert lazy.value() == 1\n\n\n"
                          "def test_second():\n    from app import lazy\n"
                          "    from app.core import double\n\n"
                          "    assert lazy.value() + double(1) == 3\n",
}


@pytest.fixture(scope="module")
def same_file_recorded(tmp_path_factory: pytest.TempPathFactory
                       ) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, SAME_FILE)


@pytest.mark.parametrize("core", ["def double(x):\n    return x * 2\n",
                                  "import os\n\n\ndef double(x):\n"
                                  "    os.environ['CORE_SEEN'] = '1'\n    return x * 2\n"],
                         ids=["moved", "new-leak"])
def test_a_leak_that_moves_within_a_file_is_asked_of_the_bands_own_tests(
    same_file_recorded: tuple[GitRepo, str], core: str, request: pytest.FixtureRequest,
) -> None:
    """The band's own tests, run at the base in their order, leave LAZY_READY in
    test_second there too: the band stays. Its twin: a leak the patch adds is still new."""
    repo, base = same_file_recorded
    patch(repo, base, "core-" + request.node.callspec.id, {"app/core.py": core})
    code, data = _check(repo, base)
    assert data["witness"]["skipped"] == ["tests/test_lazy.py::test_first"]
    assert code == 0, data["reasons"]
    if "CORE_SEEN" in core:
        leak = next(r for r in data["reasons"] if r["code"] == leaks.PROMOTE_CODE)
        assert "env:CORE_SEEN = 1" in leak["detail"] and "LAZY_READY" not in leak["detail"]
        assert "the band's own tests run at the base" in leak["detail"], leak
    else:
        assert leaks.PROMOTE_CODE not in _codes(data), data["reasons"]
        assert [r["label"] for r in data["results"]["runs"]] == ["band"]


@pytest.mark.parametrize("args", [("--workers", "0"), ("--workers", "2"),
                                  ("--workers", "2", "--shadow")],
                         ids=["one-process", "two-workers", "two-workers-shadow"])
def test_without_a_witness_a_leak_runs_the_whole_suite(
    repo: GitRepo, args: tuple[str, ...],
) -> None:
    repo.files(FILES)
    base = repo.commit("initial")
    repo.write("app/money.py", LEAKY_CALL)
    repo.commit("leak")
    # With xdist workers too: the whole suite runs in one process, where the leak reaches
    # the tests after it (spread over two workers, the report test passed; the shadow full
    # suite is spread over them too).
    code, data = _check(repo, base, *args)
    assert leaks.PROMOTE_CODE in _codes(data)
    # The money test's file, run at the base, left only APP_SEEN changed there.
    detail = next(r["detail"] for r in data["reasons"] if r["code"] == leaks.PROMOTE_CODE)
    assert "decimal.prec = 4" in detail and "a run of those test files at the base" in detail
    assert "APP_SEEN" not in detail
    assert code == 1


@pytest.mark.parametrize("leaks_at_base", [True, False], ids=["base-leaked-too", "no-leak"])
def test_without_a_witness_a_patch_that_adds_no_leak_keeps_the_closure(
    repo: GitRepo, leaks_at_base: bool,
) -> None:
    # With the money test leaving APP_SEEN set at the base as at head (its file run at the
    # base says so), and with no leak at all.
    seen = "    os.environ['APP_SEEN'] = '1'\n"
    test = FILES["tests/test_a_money.py"]
    repo.files({**FILES, "tests/test_a_money.py": test if leaks_at_base else test.replace(
        seen, "")})
    base = repo.commit("initial")
    repo.write("app/money.py", HARMLESS)
    repo.commit("harmless")
    code, data = _check(repo, base)
    assert code == 0, data["reasons"]
    assert leaks.PROMOTE_CODE not in _codes(data)
    assert [r["label"] for r in data["results"]["runs"]] == ["band"]
    assert data["tests"] == ["tests/test_a_money.py"]


STUBBED = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "app/__init__.py": "",
    "app/money.py": "def total():\n    return 1\n",
    "app/report.py": "def third():\n    return 'ok'\n",
    "tests/test_a_money.py": "from app.money import total\n\n\n"
                             "def test_total():\n    assert total() == 1\n",
    "tests/test_b_report.py": "def test_third():\n    from app.report import third\n\n"
                              "    assert third() == 'ok'\n",
}
STUBBING = ("import sys\nimport types\n\n\n"
            "def total():\n    fake = types.ModuleType('app.report')\n"
            "    fake.third = lambda: 'ok'\n    sys.modules['app.report'] = fake\n"
            "    return 1\n")


def test_a_stub_left_in_sys_modules_buys_no_green(repo: GitRepo) -> None:
    # The attack through the import system: the patch breaks app/report.py, and code the
    # money test runs (first) puts a stub of it in ``sys.modules``. The report test imports
    # the stub and passes, in the band as in the full suite. The check must not say 0.
    repo.files(STUBBED)
    base = repo.commit("initial")
    repo.files({"app/report.py": "def third():\n    return 'broken'\n",
                "app/money.py": STUBBING})
    repo.commit("break the report, stub it")
    code, data = _check(repo, base)
    assert leaks.PROMOTE_CODE in _codes(data), data["reasons"]
    detail = next(r["detail"] for r in data["reasons"] if r["code"] == leaks.PROMOTE_CODE)
    assert "sys.modules:app.report" in detail
    # The whole suite passes with the stub; the band's other tests, run without the test
    # that left it, import the real module and fail.
    assert code == 1
    failed = [r["detail"] for r in data["reasons"] if r["code"] == "tests-failed"]
    assert len(failed) == 1 and "tests/test_b_report.py::test_third" in failed[0]
    assert "run without tests/test_a_money.py::test_total" in failed[0]


# Code under test that replaces a check the tests assert with (red-team round 5): a test
# asserting with it passes whatever the code does, in the band and in the whole suite.
NEUTERED = {
    "module": ("import math\n\nmath.isclose = lambda *a, **k: True\n\n\n",
               "import math\n\nfrom app.calc import half\n\n\n"
               "def test_half():\n    assert math.isclose(half(3), 1.5)\n"),
    # compiled from a string: its code names no file, its module is the tree's (red-team
    # round 7)
    "module-eval": ("import math\n\nmath.isclose = eval('lambda *a, **k: True')\n\n\n",
                    "import math\n\nfrom app.calc import half\n\n\n"
                    "def test_half():\n    assert math.isclose(half(3), 1.5)\n"),
    "class": ("from unittest import mock\n\n"
              "mock.NonCallableMock.assert_called_once_with = lambda *a, **k: None\n\n\n",
              "from unittest import mock\n\nfrom app.calc import half\n\n\n"
              "def test_half():\n    callback = mock.Mock()\n    callback(half(3))\n"
              "    callback.assert_called_once_with(1.5)\n"),
}
HALF = "def half(x):\n    return x / 2\n"


@pytest.mark.parametrize("where", sorted(NEUTERED))
def test_code_under_test_that_replaces_a_library_check_is_blocked(
    repo: GitRepo, where: str,
) -> None:
    neuter, test = NEUTERED[where]
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/calc.py": HALF, "tests/test_calc.py": test})
    base = repo.commit("initial")
    repo.write("app/calc.py", neuter + HALF.replace("x / 2", "x / 3"))
    repo.commit("break half, neuter the check")
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data = json.loads(done.stdout)
    assert done.returncode == 4, data["reasons"]
    assert leaks.SWAP_CODE in _codes(data), data["reasons"]


OVERRIDES = {
    "fixture": "import pytest\n\n\n@pytest.fixture\ndef tol():\n    return 10\n\n\n",
    "setup_module": "def setup_module(module):\n    module.half = lambda x: x / 2\n\n\n",
}
STRICT = ("import pytest\n\n\n@pytest.fixture\ndef tol():\n    return 1e-9\n")
STAR_TEST = ("from app.calc import *  # noqa: F403\n\n\n"
             "def test_half(tol):\n    assert abs(half(3) - 1.5) <= tol  # noqa: F405\n")


@pytest.mark.parametrize("what", sorted(OVERRIDES))
def test_code_under_test_that_overrides_a_test_modules_fixture_is_blocked(
    repo: GitRepo, what: str,
) -> None:
    """A fixture pytest finds in the test module first, brought by the test's star import,
    overrides the conftest's; ``setup_module`` rebinds what the tests call."""
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/calc.py": HALF, "conftest.py": STRICT, "tests/test_calc.py": STAR_TEST})
    base = repo.commit("initial")
    repo.write("app/calc.py", OVERRIDES[what] + HALF.replace("x / 2", "x / 3"))
    repo.commit("break half, loosen the check")
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data = json.loads(done.stdout)
    assert done.returncode == 4, data["reasons"]
    assert leaks.SWAP_CODE in _codes(data), data["reasons"]


# Code under test that rebinds, as the test module finishes importing, a name the module's
# own source binds (red-team round 6: a profile hook set at import; a ``__code__`` swapped).
REBINDS = {
    "imported-name": "mod.half = lambda x: x / 2",
    "test-function": "mod.test_half = _passes",
    "code-object": "mod.test_half.__code__ = _passes.__code__",
    # A stand-in that says it wraps the test: the test's source applies no decorator.
    "wrapped-stand-in": "mod.test_half = __import__('functools').wraps(mod.test_half)(_passes)",
}
HOOKED = (
    "import sys\n\n\n"
    "def _passes():\n    pass\n\n\n"
    "def _hook(frame, event, arg):\n"
    "    if event == 'return' and frame.f_code.co_filename.endswith('test_calc.py') and (\n"
    "            frame.f_code.co_name == '<module>'):\n"
    "        mod = sys.modules[frame.f_globals['__name__']]\n"
    "        {rebind}\n"
    "        sys.setprofile(None)\n\n\n"
    "sys.setprofile(_hook)\n\n\n"
)
PLAIN_TEST = ("from app.calc import half\n\n\n"
              "def test_half():\n    assert half(3) == 1.5\n")


# The test's data in its defaults, replaced the same way (red-team round 6).
DATA_TESTS = {
    "defaults": ("from app.calc import half\n\n\n"
                 "def test_half(x=3, want=1.5):\n    assert half(x) == want\n",
                 "mod.test_half.__defaults__ = (3, 1.0)"),
    "kwdefaults": ("from app.calc import half\n\n\n"
                   "def test_half(*, x=3, want=(1.5,)):\n    assert half(x) in want\n",
                   "mod.test_half.__kwdefaults__ = {'x': 3, 'want': (1.0,)}"),
}
ATTACKS = {**{k: (PLAIN_TEST, v) for k, v in REBINDS.items()}, **DATA_TESTS}


@pytest.mark.parametrize("what", sorted(ATTACKS))
def test_code_under_test_that_rebinds_a_test_modules_own_names_is_blocked(
    repo: GitRepo, what: str,
) -> None:
    test, rebind = ATTACKS[what]
    code, data = _hooked_attack(repo, test, rebind)
    assert code == 4, data["reasons"]
    assert leaks.SWAP_CODE in _codes(data), data["reasons"]


def _hooked_attack(repo: GitRepo, test: str, edit: str) -> tuple[int, dict[str, Any]]:
    """``test`` at the base; at head ``half`` broken and the profile hook making ``edit`` as
    the test module finishes importing, which the whole suite does not see: check's exit
    code and report."""
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/calc.py": HALF, "tests/test_calc.py": test})
    base = repo.commit("initial")
    repo.write("app/calc.py", HOOKED.replace("{rebind}", edit) + HALF.replace("x / 2", "x / 3"))
    repo.commit("break half, edit the test module")
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                           cwd=repo.path, capture_output=True, text=True)
    assert plain.returncode == 0, plain.stdout  # the attack works on the whole suite
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, data


# What the same hook edits that no binding of the source names (red-team round 7): an
# ``import ... as`` alias, a case list emptied in place, a test class's method. The hook
# itself is the finding: code under test set it while the test modules were imported.
HOOK_ONLY = {
    "module-alias": ("import app.calc as calc\n\n\ndef test_half():\n"
                     "    assert calc.half(3) == 1.5\n",
                     "mod.calc = __import__('types').SimpleNamespace(half=lambda x: x / 2)"),
    "case-list": ("from app.calc import half\n\nCASES = [(3, 1.5)]\n\n\n"
                  "def test_half():\n    for x, want in CASES:\n"
                  "        assert half(x) == want\n", "mod.CASES.clear()"),
    "test-method": ("from app.calc import half\n\n\nclass TestHalf:\n"
                    "    def test_half(self):\n        assert half(3) == 1.5\n",
                    "mod.TestHalf.test_half = lambda self: None"),
}


@pytest.mark.parametrize("what", sorted(HOOK_ONLY))
def test_code_under_test_that_sets_a_profile_hook_at_collection_is_blocked(
    repo: GitRepo, what: str,
) -> None:
    test, edit = HOOK_ONLY[what]
    code, data = _hooked_attack(repo, test, edit)
    assert code == 4, data["reasons"]
    found = [r["detail"] for r in data["reasons"] if r["code"] == "harness-altered"]
    assert found and "app/calc.py set a profile function" in found[0], data["reasons"]


def test_a_tracer_the_code_sets_while_a_test_runs_is_the_tests_business(repo: GitRepo) -> None:
    """The twin: a project that is a tracer sets a profile function in the function its
    test calls (pysnooper, line_profiler), and a conftest sets one as it imports."""
    tracer = ("import sys\n\n\ndef calls(f):\n    seen = []\n"
              "    sys.setprofile(lambda frame, event, arg: seen.append(event))\n"
              "    try:\n        f()\n    finally:\n        sys.setprofile(None)\n"
              "    return seen\n")
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/tracer.py": tracer,
                "conftest.py": "import sys\n\nsys.setprofile(None)\n",
                "tests/test_tracer.py": "from app.tracer import calls\n\n\n"
                                        "def test_calls():\n"
                                        "    assert 'call' in calls(lambda: None)\n"})
    base = repo.commit("initial")
    repo.write("app/tracer.py", tracer + "\n\nVERSION = 2\n")
    repo.commit("a version")
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data = json.loads(done.stdout)
    assert done.returncode == 0, data["reasons"]


# The twins: the test module itself wraps what it imported, and a new test file decorates
# its test with the package's own decorator (``functools.wraps``); literal defaults as the
# source gives them, and a mutable default the test fills as it runs (no literal to hold
# it to).
TWINS = {
    "own-wrapper": ("\n\ndef logged(f):\n    import functools\n\n"
                    "    @functools.wraps(f)\n    def run(*a):\n        return f(*a)\n\n"
                    "    return run\n",
                    "from app.calc import half, logged\n\nhalf = logged(half)\n\n\n"
                    "@logged\ndef test_logged():\n    assert half(4) == 2\n"),
    "own-defaults": ("\n\nTWICE = 2\n",
                     "from app.calc import half\n\n\n"
                     "def test_literal(x=-4, want=(-2.0,), *, note='n'):\n"
                     "    assert half(x) in want\n\n\n"
                     "def test_fills(seen=[]):\n    seen.append(half(2))\n"
                     "    assert seen == [1.0]\n"),
}


@pytest.mark.parametrize("what", sorted(TWINS))
def test_a_test_module_rebinding_its_own_names_passes(repo: GitRepo, what: str) -> None:
    code, test = TWINS[what]
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/calc.py": HALF, "tests/test_calc.py": PLAIN_TEST})
    base = repo.commit("initial")
    repo.write("app/calc.py", HALF + code)
    repo.write("tests/test_new.py", test)
    repo.commit("new code and its test")
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data = json.loads(done.stdout)
    assert done.returncode == 0, data["reasons"]


def test_fixtures_a_test_module_takes_from_a_test_helper_are_its_own(repo: GitRepo) -> None:
    """The twin: the star import brings the fixture from a helper under tests/."""
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/calc.py": HALF, "tests/__init__.py": "", "tests/helpers.py": STRICT,
                "tests/test_calc.py": "from app.calc import half\n"
                                      "from tests.helpers import *  # noqa: F403\n\n\n"
                                      "def test_half(tol):\n"
                                      "    assert abs(half(3) - 1.5) <= tol\n"})
    base = repo.commit("initial")
    repo.write("app/calc.py", HALF + "\n\ndef double(x):\n    return x * 2\n")
    repo.commit("a new function beside it")
    code, data = _check(repo, base)
    assert code == 0, data["reasons"]


PROPERTY = ("from hypothesis import given, strategies as st\n\nfrom app.calc import mul\n\n\n"
            "@given(st.integers(), st.integers())\n"
            "def test_mul(a, b):\n    assert mul(a, b) == a * b\n")
MUL = "def mul(a, b):\n    return a * b\n"
FEWER = ("from hypothesis import settings\n\n"
         "settings.register_profile('quick', max_examples=1, database=None)\n"
         "settings.load_profile('quick')\n\n\n")


@pytest.mark.parametrize("who", ["code", "code-beside-a-conftest-change", "conftest"])
def test_a_hypothesis_profile_loaded_by_code_under_test_is_blocked(
    repo: GitRepo, who: str,
) -> None:
    """Red-team round 5: app code loads a profile of one example at import, and the broken
    ``mul`` passes the property test; a conftest change beside it excuses nothing. The twin:
    the base's conftest loads it, as projects do for CI, and a harmless change passes."""
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n.hypothesis/\n",
                "app/__init__.py": "", "app/calc.py": MUL, "tests/test_calc.py": PROPERTY,
                "tests/conftest.py": FEWER if who == "conftest" else ""})
    base = repo.commit("initial")
    if who != "conftest":
        repo.write("app/calc.py", FEWER + MUL.replace("a * b", "a * b if abs(a) < 3 else 0"))
        if who == "code-beside-a-conftest-change":
            repo.write("tests/conftest.py", "# the agent's own conftest\n")
        who = "code"
    else:
        repo.write("app/calc.py", MUL + "\n\ndef add(a, b):\n    return a + b\n")
    repo.commit("change")
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data = json.loads(done.stdout)
    assert done.returncode == (4 if who == "code" else 0), data["reasons"]
    assert (leaks.SWAP_CODE in _codes(data)) is (who == "code")


def test_a_hypothesis_profile_a_humans_pytest_configuration_loads_is_no_swap(
    repo: GitRepo,
) -> None:
    """The twin of the profile rule: a human's trust-only commit loads the base conftest's
    profile through pytest's ``addopts``; pytest's configuration is the gate's to judge."""
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n.hypothesis/\n",
                "app/__init__.py": "", "app/calc.py": MUL, "tests/test_calc.py": PROPERTY,
                "tests/conftest.py": FEWER.replace("settings.load_profile('quick')\n", "")})
    base = repo.commit("initial")
    repo.write("pytest.ini", "[pytest]\naddopts = --hypothesis-profile=quick\n")
    repo.commit("CI runs the quick profile")
    code, data = _check(repo, base)
    assert code in (0, 2), data["reasons"]
    assert leaks.SWAP_CODE not in _codes(data)


def test_the_outcome_plugin_names_test_helpers_as_the_contract_does() -> None:
    from agentgate.flows import test_side
    from agentgate.run import outcomes

    assert outcomes.TEST_WORDS == test_side.TEST_WORDS
    for path in ("app/testing.py", "pkg/_testing/asserts.py", "app/factories.py",
                 "app/latest.py", "app/contest.py", "app/calc.py", "golden/x.py"):
        assert outcomes._named_for_tests(path) is test_side.named_for_tests(path), path


def test_a_new_test_file_taking_fixtures_from_a_package_helper_passes(repo: GitRepo) -> None:
    """The twin of the fixture override: an agent's new test star-imports the fixtures of
    the package's ``app/testing.py`` (named for tests; loosening it is the helper rule's)."""
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/calc.py": HALF, "app/testing.py": STRICT,
                "tests/test_calc.py": "from app.calc import half\n\n\n"
                                      "def test_half():\n    assert half(3) == 1.5\n"})
    base = repo.commit("initial")
    repo.write("tests/test_tol.py", "from app.calc import half\n"
               "from app.testing import *  # noqa: F403\n\n\n"
               "def test_half_within(tol):\n    assert abs(half(5) - 2.5) <= tol\n")
    repo.commit("a new test")
    code, data = _check(repo, base)
    assert code == 0, data["reasons"]


LOGGER = ("import logging\n\n\nclass Loud(logging.Logger):\n    pass\n\n\n"
          "logging.setLoggerClass(Loud)\n\n\n")


@pytest.mark.parametrize("where", ["the-base-did-too", "test-side"])
def test_a_library_the_base_or_the_tests_change_is_no_swap(repo: GitRepo, where: str) -> None:
    """The twins: ``logging.setLoggerClass`` at import, which the base did too; a conftest
    replacing ``time.sleep`` with its own fake."""
    code = LOGGER if where == "the-base-did-too" else ""
    conftest = ("import time\n\n\ndef _no_sleep(seconds):\n    return None\n\n\n"
                "time.sleep = _no_sleep\n") if where == "test-side" else ""
    repo.files({".gitignore": "__pycache__/\n.pytest_cache/\n", "app/__init__.py": "",
                "app/calc.py": code + HALF, "tests/conftest.py": conftest,
                "tests/test_calc.py": "from app.calc import half\n\n\n"
                                      "def test_half():\n    assert half(3) == 1.5\n"})
    base = repo.commit("initial")
    repo.write("app/calc.py", code + HALF + "\n\ndef double(x):\n    return x * 2\n")
    repo.commit("a new function beside it")
    code_, data = _check(repo, base)
    assert code_ == 0, data["reasons"]
    assert leaks.SWAP_CODE not in _codes(data)


# --- the readings -----------------------------------------------------------------------------


def test_the_readings_name_what_changed() -> None:
    import decimal
    import os

    before = process_state()
    old = decimal.getcontext().prec
    os.environ["AGENTGATE_LEAK_PROBE"] = "x"
    try:
        decimal.getcontext().prec = old + 1
        after = process_state()
    finally:
        decimal.getcontext().prec = old
        del os.environ["AGENTGATE_LEAK_PROBE"]
    assert changed(before, after) == {"decimal.prec": repr(old + 1),
                                      "env:AGENTGATE_LEAK_PROBE": "x"}
    assert changed(before, process_state()) == {}


def test_a_library_function_left_replaced_is_a_leak(pytester: pytest.Pytester) -> None:
    # Code under test that patches the standard library in place and never puts it back
    # (the same attack through ``json.dumps``), next to a test that restores what it patched.
    pytester.makepyfile(app="import json\n\n\ndef compact():\n"
                            "    json.dumps = lambda value, **kw: 'x'\n")
    pytester.makepyfile(test_patch="import json\n\nimport app\n\n\n"
                        "def test_compact():\n    app.compact()\n\n\n"
                        "def test_restores(monkeypatch):\n"
                        "    monkeypatch.setattr(json, 'loads', lambda text: 0)\n")
    out = pytester.path / "leaks.json"
    result = pytester.runpytest_subprocess("-p", "agentgate.run.outcomes",
                                           f"--agentgate-leaks={out}")
    assert result.ret == 0
    data = json.loads(out.read_text())
    assert list(data["leaks"]) == ["test_patch.py::test_compact"]
    assert list(data["leaks"]["test_patch.py::test_compact"]) == ["json.dumps"]


IMPORTS = ("import sys\nimport types\n\n\n"
           "class Finder:\n    def find_spec(self, name, path=None, target=None):\n"
           "        return None\n\n\n"
           "def stub():\n    sys.modules['app_rates'] = types.ModuleType('app_rates')\n\n\n"
           "def replace():\n    sys.modules['colorsys'] = types.ModuleType('colorsys')\n\n\n"
           "def drop():\n    del sys.modules['xml.dom.minidom']\n\n\n"
           "def path():\n    sys.path.insert(0, '/nonexistent-agentgate')\n\n\n"
           "def finder():\n    sys.meta_path.append(Finder())\n")
IMPORT_TESTS = ("import colorsys\nimport sys\n\nimport app\n\n\n"
                "def test_stub():\n    app.stub()\n\n\n"
                "def test_replace():\n    app.replace()\n\n\n"
                "def test_lazy_import():\n    import xml.dom.minidom  # noqa: F401\n\n\n"
                "def test_drop():\n    app.drop()\n\n\n"
                "def test_path():\n    app.path()\n\n\n"
                "def test_finder():\n    app.finder()\n\n\n"
                "def test_restores(monkeypatch):\n"
                "    monkeypatch.setitem(sys.modules, 'app_other', object())\n"
                "    monkeypatch.syspath_prepend('/put-back')\n")


def test_the_import_system_left_changed_is_a_leak(pytester: pytest.Pytester) -> None:
    # A module stubbed, replaced or taken out of ``sys.modules``, a folder put on the path, a
    # finder added: the tests after it import something else. A module a test imports, and
    # what monkeypatch puts back, are no leak; nor is what pytest puts on the path itself as
    # it collects (the test file's folder).
    pytester.makepyfile(app=IMPORTS)
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_imports.py").write_text(IMPORT_TESTS)
    out = pytester.path / "leaks.json"
    result = pytester.runpytest_subprocess("-p", "agentgate.run.outcomes",
                                           f"--agentgate-leaks={out}")
    assert result.ret == 0
    data = json.loads(out.read_text())
    assert {t.split("::")[1]: sorted(keys) for t, keys in data["leaks"].items()} == {
        "test_stub": ["sys.modules:app_rates"], "test_replace": ["sys.modules:colorsys"],
        "test_drop": ["sys.modules:xml.dom.minidom"], "test_path": ["sys.path"],
        "test_finder": ["sys.meta_path"]}
    assert data["collection_leaks"] == {}


def test_code_under_test_that_unregisters_the_readings_alters_the_harness(
    pytester: pytest.Pytester,
) -> None:
    # The attack on the defence itself: code under test finds pytest's plugin manager and
    # takes agentgate's state readings out before it leaks. The twin (nothing unregisters
    # them) is every other run here: ``altered`` stays empty.
    pytester.makepyfile(app="import decimal\nimport gc\n\nimport pytest\n\n\n"
                            "def configure():\n"
                            "    for obj in gc.get_objects():\n"
                            "        if isinstance(obj, pytest.Config):\n"
                            "            obj.pluginmanager.unregister("
                            "name='agentgate-state-leaks')\n"
                            "    decimal.getcontext().prec = 4\n")
    pytester.makepyfile(test_it="import app\n\n\ndef test_it():\n    app.configure()\n")
    out = pytester.path / "outcomes.json"
    result = pytester.runpytest_subprocess("-p", "agentgate.run.outcomes",
                                           f"--agentgate-outcomes={out}")
    assert result.ret == 0
    data = json.loads(out.read_text())
    assert data["leaks"] == {}  # unseen: the readings were gone
    assert data["altered"] == ["agentgate's state readings were unregistered (test_it.py::test_it)"]


def test_the_base_leaks_are_matched_by_test_and_key() -> None:
    head = {MONEY_TEST: {"env:APP_SEEN": "1", "decimal.prec": "4"},
            leaks.COLLECTION: {"locale.LC_NUMERIC": "'de_DE'"}}
    base = frozenset(leaks.entries({MONEY_TEST: {"env:APP_SEEN": "1"}}))
    lines = leaks.new(head, base)
    assert lines == ["collection leaves locale.LC_NUMERIC = 'de_DE' changed for the tests after it",
                     f"{MONEY_TEST} leaves decimal.prec = 4 changed for the tests after it"]
    assert leaks.new(head, frozenset(leaks.entries(head))) == []
    assert len(leaks.new(head, None)) == 2
    # Values count: the same key left at another value is a leak the base did not have; a
    # witness that kept keys only still explains the key.
    moved = {MONEY_TEST: {"env:APP_SEEN": "2"}}
    assert leaks.new(moved, base) == [
        f"{MONEY_TEST} leaves env:APP_SEEN = 2 changed for the tests after it"]
    assert leaks.new(moved, frozenset({f"{MONEY_TEST}\tenv:APP_SEEN"})) == []


def _seen(value: str, tree: str = "/x/repo") -> dict[str, dict[str, str]]:
    return leaks.found([{"leaks": {MONEY_TEST: {"env:APP_PATH": value}}}], [tree])


def test_leaked_values_are_compared_without_what_differs_from_run_to_run() -> None:
    """The tree the run took place in, temporary folders, object addresses, and where a long
    value was cut (after a tree path of another length) are not the patch's doing; another
    path is (an attacker's ``/etc/lenient.cfg`` where the base left ``/etc/strict.cfg``)."""
    temp = tempfile.gettempdir()
    trees, lib = "/r/.git/agentgate/worktrees", "/usr/lib/python3.11/site-packages/a.zip"
    pairs = [
        (_seen("/x/repo/src"), _seen("/y/other/src", tree="/y/other")),
        (_seen(f"{temp}/tmpab12"), _seen(f"{temp}/tmpzz99/x")),
        (_seen("/r/.git/agentgate/worktrees/witness-tmp-1/src"),
         _seen("/r/.git/agentgate/worktrees/c0ffee/src")),
        (_seen(f"{trees}/{'c0ffee' * 6}abcd/repo/src"),  # a worktree, named as the checkout
         _seen(f"{trees}/{'c0ffee' * 2}-tmp-0a1b2c3d4e5f/repo/src")),
        (_seen(f"{trees}/{'c0ffee' * 6}abcd/repo/src"), _seen("/x/repo/src")),
        (_seen("(<Finder object at 0x7f3a2b1c>,)"), _seen("(<Finder object at 0x7e00ffee>,)")),
        (_seen(str((f"{trees}/witness-tmp-f54716f02c86", lib))[:80]),
         _seen(str((f"{trees}/cd72316676cb9e16794ff208ec072a524b1f", lib))[:80])),
    ]
    assert len(str((f"{trees}/witness-tmp-f54716f02c86", lib))) > 80  # cut: two places
    for base, head in pairs:
        assert leaks.new(head, frozenset(leaks.entries(base))) == [], (base, head)
    assert leaks.new(_seen("/etc/lenient.cfg"), frozenset(leaks.entries(_seen("/etc/strict.cfg"))))
    assert leaks.new(_seen("stricter"), frozenset(leaks.entries(_seen("strict"))))


def test_a_leaked_key_is_compared_without_an_object_id_in_it() -> None:
    """New-user trial (Jinja2): ``sys.modules[f"_jinja2_module_templates_{id(self):x}"]``
    is a new key in every run; base and head left the same thing. Another name is not."""
    def seen(key: str) -> dict[str, dict[str, str]]:
        return leaks.found([{"leaks": {MONEY_TEST: {key: "'jinja2.loaders.ProxyType'"}}}])

    base = frozenset(leaks.entries(seen("sys.modules:_jinja2_module_templates_7fe0a82e39d0")))
    assert leaks.new(seen("sys.modules:_jinja2_module_templates_7f4c1e0b2a90"), base) == []
    assert leaks.new(seen("sys.modules:_jinja2_module_templates_140234556677123"), base) == []
    assert leaks.new(seen("sys.modules:_jinja2_module_overrides_7f4c1e0b2a90"), base)
    assert leaks.new(seen("sys.modules:app.deadbeef"),
                     frozenset(leaks.entries(seen("sys.modules:app.cafebabe"))))


# --- whose leak: the test's code, not a wider fixture's set-up ---------------------------------

SCOPES = '''import os

import pytest

from app import configure


@pytest.fixture(scope="session")
def session_env():
    os.environ["SESSION_WIDE"] = "1"  # the harness's, for every test after
    yield


@pytest.fixture
def configured():
    configure()  # code under test, called by the test's own fixture


def test_uses_session(session_env):
    pass


def test_configured(configured):
    pass


def test_restores(monkeypatch):
    monkeypatch.setenv("PUT_BACK", "1")


def test_leaves_a_variable():
    os.environ["LEFT_SET"] = "1"
'''


def test_a_leak_is_what_the_tests_own_code_left_changed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(app="import decimal\n\n\ndef configure():\n"
                            "    decimal.getcontext().rounding = decimal.ROUND_DOWN\n")
    pytester.makepyfile(test_scopes=SCOPES)
    out = pytester.path / "outcomes.json"
    result = pytester.runpytest_subprocess("-p", "agentgate.run.outcomes",
                                           f"--agentgate-outcomes={out}")
    assert result.ret == 0
    data = json.loads(out.read_text())
    assert data["leaks"] == {
        "test_scopes.py::test_configured": {"decimal.rounding": "'ROUND_DOWN'"},
        "test_scopes.py::test_leaves_a_variable": {"env:LEFT_SET": "1"},
    }
    assert data["collection_leaks"] == {}


def test_an_incremental_witness_carries_only_the_carried_tests_leaks() -> None:
    from agentgate.witness import depgraph as graph
    from agentgate.witness.depgraph import TestEntry, Witness
    from agentgate.witness.incremental import Basis

    def entry(nodeid: str) -> TestEntry:
        return TestEntry(nodeid, nodeid.split("::")[0], frozenset(), frozenset(), (), (),
                         "passed", 0.0, "")

    def witness(sha: str, tests: list[str], leaked: list[str]) -> Witness:
        return Witness(sha, 0.0, "python", "", {}, {}, {t: entry(t) for t in tests},
                       frozenset(tests), frozenset(), {graph.STATE_LEAKS: leaked})

    carried, again = "tests/test_a.py::test_kept", "tests/test_b.py::test_rerun"
    old = witness("w", [carried, again], [f"{carried}\tenv:A", f"{again}\tenv:B", "\tumask"])
    fresh = witness("n", [again], [f"{again}\tenv:C"])
    both = Basis(old, frozenset({carried}), frozenset()).combine(fresh, frozenset({carried, again}))
    assert both.info[graph.STATE_LEAKS] == [f"{carried}\tenv:A", f"{again}\tenv:C"]
    # A part that does not say makes the whole not say: every leak at head is then new.
    silent = witness("n", [again], [])
    del silent.info[graph.STATE_LEAKS]
    combined = Basis(old, frozenset({carried}), frozenset()).combine(silent, frozenset({carried}))
    assert graph.STATE_LEAKS not in combined.info


# A leak the base had, at another value: the money code sets the mode every later caller
# reads; the base's is "strict", the patch's "lenient". The mode test never reaches
# app/money.py, so the witness skips it; it fails after the money test in the full suite.
MODE_FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/mode.py": "import os\n\n\ndef strict():\n"
                   "    return os.environ.get('APP_MODE', 'strict') == 'strict'\n",
    "app/money.py": "import os\nimport tempfile\n\n\ndef total(a, b):\n"
                    "    os.environ['APP_MODE'] = 'strict'\n"
                    "    os.environ['APP_TMP'] = tempfile.mkdtemp()\n"
                    "    return a + b\n",
    "tests/test_a_money.py": "from app.money import total\n\n\n"
                             "def test_total():\n    assert total(1, 2) == 3\n",
    "tests/test_b_mode.py": "from app.mode import strict\n\n\n"
                            "def test_strict():\n    assert strict()\n",
}
MODE_TEST = "tests/test_b_mode.py::test_strict"


@pytest.fixture(scope="module")
def mode_recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, MODE_FILES)


@pytest.mark.parametrize(("mode", "expected"), [("'lenient'", 1), ("'str' + 'ict'", 0)],
                         ids=["another-value", "same-value"])
def test_a_leak_the_base_had_at_another_value_runs_the_whole_suite(
    mode_recorded: tuple[GitRepo, str], mode: str, expected: int,
    request: pytest.FixtureRequest,
) -> None:
    """The attack: the key was leaked at the base too, so compared by key it was explained
    and the band (the money test alone) passed. The twin: the same value, written another
    way, with a temporary folder's name that differs in every run beside it, keeps the band."""
    repo, base = mode_recorded
    money = MODE_FILES["app/money.py"].replace("'strict'", mode)
    patch(repo, base, "mode-" + request.node.callspec.id, {"app/money.py": money})
    code, data = _check(repo, base)
    assert data["witness"]["skipped"] == [MODE_TEST]
    assert code == expected, data["reasons"]
    if expected:
        leak = next(r for r in data["reasons"] if r["code"] == leaks.PROMOTE_CODE)
        assert "env:APP_MODE = lenient" in leak["detail"], leak
        failed = [r for r in data["reasons"] if r["code"] == "tests-failed"]
        assert failed and MODE_TEST in failed[0]["detail"], data["reasons"]
    else:
        assert leaks.PROMOTE_CODE not in _codes(data), data["reasons"]
        assert [r["label"] for r in data["results"]["runs"]] == ["band"]
