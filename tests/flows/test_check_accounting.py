"""``check`` accounts for every selected test with agentgate's own outcome plugin (issue 11
item 1): the ways a patch hides a red test from pytest's report and exit status, each next
to the legitimate change that must still pass."""

from __future__ import annotations

from typing import Any

import pytest

from agentgate.flows import check as checkrun
from agentgate.flows import test_side
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo

REWRITE = (
    "import pytest\n\n@pytest.hookimpl(wrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    report = yield\n    report.outcome = 'passed'\n    return report\n"
)
BROKEN_SHOUT = "def shout(s):\n    return s.lower()\n"  # test_util fails


def check_json(repo: GitRepo) -> dict[str, Any]:
    return checkrun.check(repo.path, "base", "HEAD").to_json()


def codes(data: dict[str, Any]) -> list[str]:
    return [r["code"] for r in data["reasons"]]


def test_a_conftest_that_reports_a_failure_as_a_pass_blocks(chain: GitRepo) -> None:
    commit(chain, {"tests/conftest.py": REWRITE,
                   "app/util.py": BROKEN_SHOUT})
    data = check_json(chain)
    assert "outcome-rewritten" in codes(data) and data["exit_code"] == 4
    reason = next(r for r in data["reasons"] if r["code"] == "outcome-rewritten")
    assert "tests/test_util.py::test_shout" in reason["detail"]


def test_a_new_conftest_fixture_for_new_tests_passes(chain: GitRepo) -> None:
    commit(chain, {"tests/conftest.py": "import pytest\n\n@pytest.fixture\n"
                   "def word():\n    return 'a'\n",
                   "tests/test_word.py": "from app.util import shout\n\n"
                   "def test_word(word):\n    assert shout(word) == 'A'\n"})
    data = check_json(chain)
    assert (data["exit_code"], codes(data)) == (0, [])


def test_a_test_that_ends_the_session_with_status_0_fails(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": BROKEN_SHOUT,
                   "tests/test_util.py": "import os\nfrom app.util import shout\n\n"
                   "def test_exit():\n    os._exit(0)\n\n"
                   "def test_shout():\n    assert shout('a') == 'A'\n"})
    data = check_json(chain)
    # 4, not 1: the base oracle also finds the broken test_shout hidden (flows/test_check_oracle)
    assert data["exit_code"] == 4
    assert codes(data)[0] == "session-not-finished"
    assert "tests/test_util.py" in data["reasons"][0]["detail"]


def test_a_test_file_hidden_from_collection_fails(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": BROKEN_SHOUT,
                   "tests/test_util.py": "__test__ = False\nfrom app.util import shout\n\n"
                   "def test_shout():\n    assert shout('a') == 'A'\n"})
    data = check_json(chain)
    assert data["exit_code"] == 4  # the base oracle blocks the suppression (test_check_oracle)
    assert "collected-nothing" in codes(data) or "not-collected" in codes(data)


def test_an_honest_edit_of_the_same_test_file_passes(chain: GitRepo) -> None:
    commit(chain, {"tests/test_util.py": "from app.util import shout\n\n"
                   "def test_shout():\n    assert shout('b') == 'B'\n"})
    data = check_json(chain)
    assert (data["exit_code"], codes(data)) == (0, [])


def test_the_summary_of_a_session_ended_early_is_not_green(chain: GitRepo) -> None:
    """Found in review: a collected test with no outcome read "no tests collected"."""
    from agentgate.report import render

    commit(chain, {"tests/test_util.py": "import os\nfrom app.util import shout\n\n"
                   "def test_exit():\n    os._exit(0)\n\n"
                   "def test_shout():\n    assert shout('a') == 'A'\n"})
    result = checkrun.check(chain.path, "base", "HEAD")
    assert result.exit_code != 0
    last = render.text_lines(result)[-1]
    assert last.startswith("  ran ") and "outcome problem" in last, last
    assert not last.endswith(("all passed", "no tests collected")), last


# A patch's own module under the outcome plugin's old fixed name, where the tree's code is
# imported from (the root here, ``src`` in a src layout): it records every selected test as
# passed and reports them so (red-team, helper-8).
FAKE_OUTCOMES = (
    "import json\nimport pytest\n\n"
    "def pytest_addoption(parser):\n"
    "    parser.addoption('--agentgate-outcomes', dest='fake_out')\n\n"
    "@pytest.hookimpl(wrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    report = yield\n    report.outcome = 'passed'\n    return report\n\n"
    "def pytest_collection_modifyitems(session, config, items):\n"
    "    config._fake_ids = [i.nodeid for i in items]\n\n"
    "def pytest_sessionfinish(session, exitstatus):\n"
    "    session.exitstatus = 0\n"
    "    ids = getattr(session.config, '_fake_ids', [])\n"
    "    seen = {n: dict(setup='passed', call='passed', teardown='passed', reported='passed')"
    " for n in ids}\n"
    "    data = dict(format=1, finished=True, exitstatus=0, collected=ids, deselected=[],"
    " tests=seen)\n"
    "    open(session.config.getoption('fake_out'), 'w').write(json.dumps(data))\n"
)


def test_a_module_under_the_outcome_plugins_name_is_not_loaded(chain: GitRepo) -> None:
    commit(chain, {"_agentgate_outcomes.py": FAKE_OUTCOMES, "app/util.py": BROKEN_SHOUT})
    data = check_json(chain)
    assert data["exit_code"] == 1, data["reasons"]


def test_a_plugin_declared_by_committed_distribution_metadata_is_the_harness(
    chain: GitRepo,
) -> None:
    """Red-team (helper-8): pytest loads the ``pytest11`` entry points of every
    distribution ``importlib.metadata`` finds on the path, a metadata folder committed in
    the tree's root included; this one's plugin xfails every test."""
    commit(chain, {
        "app/util.py": BROKEN_SHOUT,
        "fastmath-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: fastmath\n"
                                           "Version: 1.0\n",
        "fastmath-1.0.dist-info/entry_points.txt": "[pytest11]\nfastmath = fastmath_plugin\n",
        "fastmath_plugin.py": "import pytest\n\n"
                              "def pytest_collection_modifyitems(items):\n"
                              "    for item in items:\n"
                              "        item.add_marker(pytest.mark.xfail)\n",
    })
    data = check_json(chain)
    # the selection fails under the base's harness (no such plugin), not under the patch's
    assert data["exit_code"] == 4 and "harness-hid-failure" in codes(data), data["reasons"]


# A test's helper under tests/ (not a test file, not a conftest), and the only test of
# app/loud.py, which goes through it.
LOUD = "def loud(s):\n    return s.upper() + '!'\n"
HELPER = "def assert_loud(word, expected):\n    assert word == expected\n"
HELPED_TEST = ("from app.loud import loud\nfrom tests.helpers import assert_loud\n\n"
               "def test_helped():\n    assert_loud(loud('a'), 'A!')\n")


def _with_helper(chain: GitRepo) -> None:
    chain.files({"app/loud.py": LOUD, "tests/__init__.py": "", "tests/helpers.py": HELPER,
                 "tests/test_helped.py": HELPED_TEST})
    chain.commit("a helper")
    chain.git("tag", "-f", "base")


def _rewritten(data: dict[str, Any]) -> list[str]:
    return [r["path"] for r in data["reasons"] if r["code"] == "rewritten-test"]


def test_a_weakened_test_helper_does_not_hide_broken_code(chain: GitRepo) -> None:
    """Red-team (helper-8): the patch breaks the code and makes the helper accept anything;
    the band passes, and the base form, run with the base's helper on head's code, fails."""
    _with_helper(chain)
    commit(chain, {"app/loud.py": LOUD.replace("'!'", "'?'"),
                   "tests/helpers.py": HELPER.replace("assert word == expected", "pass")})
    data = check_json(chain)
    assert _rewritten(data) == ["tests/test_helped.py"], data["reasons"]
    # It says what was edited (new-user trial: "was edited" where only a helper was).
    detail = next(r["detail"] for r in data["reasons"] if r["code"] == "rewritten-test")
    assert "was not edited, but test code it runs was (tests/helpers.py)" in detail, detail


def test_a_module_copy_under_the_tests_does_not_stand_in_for_broken_code(
    chain: GitRepo,
) -> None:
    """Red-team (helper-8): a correct copy of the module under tests/, which the test
    imports in place of the broken one (here the package's ``__init__`` puts it there)."""
    _with_helper(chain)
    commit(chain, {"app/loud.py": LOUD.replace("'!'", "'?'"),
                   "tests/__init__.py": "import sys\nfrom tests import loud_copy\n"
                   "sys.modules['app.loud'] = loud_copy\n",
                   "tests/loud_copy.py": LOUD})
    data = check_json(chain)
    assert _rewritten(data) == ["tests/test_helped.py"], data["reasons"]


def test_a_helper_improved_with_the_code_passes(chain: GitRepo) -> None:
    """The legitimate twin: a helper's new message, the code unchanged in behaviour."""
    _with_helper(chain)
    commit(chain, {"app/loud.py": LOUD.replace("'!'", "'!'  # loud"),
                   "tests/helpers.py": HELPER.replace(
                       "assert word == expected", "assert word == expected, word")})
    data = check_json(chain)
    assert (data["exit_code"], codes(data)) == (0, []), data["reasons"]


# The helper outside the test roots (red-team round 4): in the source package, as numpy's
# ``numpy.testing``; in ``tests/`` above ``testpaths``. Each is loosened with the bug.
HELPER_HOMES = {
    "package": ({}, "app/testing.py", "app.testing", "tests/test_helped.py"),
    "above-testpaths": ({"pyproject.toml": '[tool.pytest.ini_options]\n'
                         'testpaths = ["tests/unit"]\n', "tests/unit/__init__.py": ""},
                        "tests/helpers.py", "tests.helpers", "tests/unit/test_helped.py"),
    # named like code, written for the tests: it defines an ``assert...`` function
    "named-like-code": ({}, "app/asserts.py", "app.asserts", "tests/test_helped.py"),
}


def _with_helper_at(chain: GitRepo, home: str) -> tuple[str, str]:
    files, helper, module, test = HELPER_HOMES[home]
    chain.files({**files, "app/loud.py": LOUD, "tests/__init__.py": "", helper: HELPER,
                 test: HELPED_TEST.replace("tests.helpers", module)})
    chain.commit("a helper outside the test roots")
    chain.git("tag", "-f", "base")
    return helper, test


@pytest.mark.parametrize("home", sorted(HELPER_HOMES))
def test_a_weakened_helper_outside_the_test_roots_does_not_hide_broken_code(
    chain: GitRepo, home: str
) -> None:
    helper, test = _with_helper_at(chain, home)
    commit(chain, {"app/loud.py": LOUD.replace("'!'", "'?'"),
                   helper: HELPER.replace("assert word == expected", "pass")})
    data = check_json(chain)
    assert _rewritten(data) == [test], data["reasons"]
    detail = next(r["detail"] for r in data["reasons"] if r["code"] == "rewritten-test")
    assert f"{test}" in detail and "was not edited" in detail, detail


@pytest.mark.parametrize("home", sorted(HELPER_HOMES))
def test_a_helper_outside_the_test_roots_improved_with_the_code_passes(
    chain: GitRepo, home: str
) -> None:
    helper, _ = _with_helper_at(chain, home)
    commit(chain, {"app/loud.py": LOUD.replace("'!'", "'!'  # loud"),
                   helper: HELPER.replace("assert word == expected",
                                          "assert word == expected, word")})
    data = check_json(chain)
    assert (data["exit_code"], codes(data)) == (0, []), data["reasons"]


def test_a_module_named_for_tests_that_the_code_imports_is_code(chain: GitRepo) -> None:
    """``app/testing.py`` that ``app/loud.py`` itself uses is code under test: the base's
    form of it is no contract, so no base form runs with it (nothing to block here, where
    only the helper changed in a way its own caller's test sees)."""
    chain.files({"app/testing.py": HELPER, "tests/__init__.py": "",
                 "app/loud.py": "from app.testing import assert_loud\n\n" + LOUD,
                 "tests/test_helped.py": HELPED_TEST.replace("tests.helpers", "app.testing")})
    chain.commit("a helper the code uses")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/testing.py": HELPER.replace("assert word == expected", "pass")})
    data = check_json(chain)
    assert (data["exit_code"], codes(data)) == (0, []), data["reasons"]
    assert not (data["results"]["base_oracle"] or {}).get("ran"), data["results"]


def test_a_helper_a_conftest_hands_out_serves_the_tests_under_it(chain: GitRepo) -> None:
    """The test takes the helper from a conftest fixture and imports nothing of it: the
    helper, which raises ``AssertionError`` itself, serves every test file under that
    conftest, and is loosened with the bug."""
    checker = ("def loud_ok(word, expected):\n    if word != expected:\n"
               "        raise AssertionError(word)\n")
    chain.files({"app/loud.py": LOUD, "app/verify.py": checker,
                 "tests/conftest.py": "import pytest\n\nfrom app.verify import loud_ok\n\n\n"
                                      "@pytest.fixture\ndef ok():\n    return loud_ok\n",
                 "tests/test_helped.py": "from app.loud import loud\n\n\n"
                                         "def test_helped(ok):\n    ok(loud('a'), 'A!')\n"})
    chain.commit("a helper handed out by a fixture")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/loud.py": LOUD.replace("'!'", "'?'"),
                   "app/verify.py": checker.replace("raise AssertionError(word)", "pass")})
    data = check_json(chain)
    assert _rewritten(data) == ["tests/test_helped.py"], data["reasons"]


# A test whose body lives in a code module (red-team round 6): a contract mixin shipped in
# the package, whose ``test_*`` methods the test classes inherit, and a function a test
# module binds under a test's name. The test file is untouched and the node id the same.
CONTRACTS = {
    "mixin": ("class LoudContract:\n    def test_loud(self):\n"
              "        assert self.loud('a') == 'A!'\n",
              "from app.contract import LoudContract\nfrom app.loud import loud\n\n\n"
              "class TestLoud(LoudContract):\n    loud = staticmethod(loud)\n"),
    "bound": ("from app.loud import loud\n\n\ndef check_loud():\n"
              "    assert loud('a') == 'A!'\n",
              "from app.contract import check_loud\n\ntest_loud = check_loud\n"),
    "bound-dotted": ("from app.loud import loud\n\n\ndef check_loud():\n"
                     "    assert loud('a') == 'A!'\n",
                     "import app.contract\n\ntest_loud = app.contract.check_loud\n"),
}


def _with_contract(chain: GitRepo, shape: str, loud: str, check: str) -> dict[str, Any]:
    """A base whose test takes its body from ``app/contract.py`` (``CONTRACTS``), then a
    commit changing ``loud``'s suffix to ``loud`` and the contract's check to ``check``."""
    contract, test = CONTRACTS[shape]
    chain.files({"app/loud.py": LOUD, "app/contract.py": contract, "tests/__init__.py": "",
                 "tests/test_contract.py": test})
    chain.commit("a contract the tests take their bodies from")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/loud.py": LOUD.replace("'!'", loud),
                   "app/contract.py": contract.replace("== 'A!'", check)})
    return check_json(chain)


@pytest.mark.parametrize("shape", sorted(CONTRACTS))
def test_a_test_body_in_a_code_module_loosened_with_the_bug_is_caught(
    chain: GitRepo, shape: str,
) -> None:
    data = _with_contract(chain, shape, "'?'", "in ('A!', 'A?')")
    assert _rewritten(data) == ["tests/test_contract.py"], data["reasons"]


@pytest.mark.parametrize("shape", sorted(CONTRACTS))
def test_a_contract_module_improved_with_the_code_passes(chain: GitRepo, shape: str) -> None:
    data = _with_contract(chain, shape, "'!'  # loud", "== 'A!', 'shouted'")
    assert (data["exit_code"], codes(data)) == (0, []), data["reasons"]


@pytest.mark.parametrize(("text", "acts"), [
    ("import pytest\n", True), ("from unittest import mock\n", True),
    ("import hypothesis.strategies as st\n", True),
    ("def assert_total(cart, total):\n    pass\n", True),
    ("class Checks:\n    def assertPrice(self, p):\n        pass\n", True),
    ("def ok(x):\n    if not x:\n        raise AssertionError(x)\n", True),
    ("class Contract:\n    def test_mul(self):\n        pass\n", True),
    ("def mul(a, b):\n    assert isinstance(a, int)\n    return a * b\n", False),
    ("from .unittest import runner\n", False), ("import pytesting\n", False),
    ("def f(:\n", False), (None, False),
])
def test_modules_written_for_tests(text: str | None, acts: bool) -> None:
    assert test_side.acts_for_tests(text) is acts


@pytest.mark.parametrize(("path", "named"), [
    ("app/testing.py", True), ("pkg/_testing/asserts.py", True), ("tests/helpers.py", True),
    ("app/test_utils.py", True), ("app/factories.py", True), ("app/cases.py", True),
    ("app/latest.py", False), ("app/contest.py", False), ("app/attestation.py", False),
    ("app/calc.py", False),
])
def test_modules_named_for_tests(path: str, named: bool) -> None:
    assert test_side.named_for_tests(path) is named


HELPERS = ("import unittest\n\nfrom app.util import shout\n\n\n"
           "class Case(unittest.TestCase):  # a base for the project's tests: no test of its own\n"
           "    def assert_shouted(self, s):\n        self.assertEqual(shout(s), s.upper())\n")


def test_a_helper_module_named_as_tests_are_with_no_test_at_the_base_passes(
    chain: GitRepo,
) -> None:
    """New-user check (Markdown's ``markdown/test_tools.py``): a module pytest's patterns
    name a test file, holding only a base class, collects nothing at head as at the base;
    every check reaching it failed with ``not-collected``."""
    commit(chain, {"tests/test_tools.py": HELPERS}, "test helpers")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper()  # same\n"})
    data = check_json(chain)
    assert (data["exit_code"], codes(data)) == (0, [])


def test_a_file_whose_tests_vanished_still_is_not_collected(chain: GitRepo) -> None:
    """The attack next to it: the base collects ``test_shout`` from ``tests/test_util.py``;
    at head the file collects nothing beside another file that does. The base has tests
    there: the file's tests vanished, and ``not-collected`` says so."""
    commit(chain, {"tests/test_more.py": "from app.util import shout\n\n\n"
                   "def test_more():\n    assert shout('') == ''\n"}, "another test")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": BROKEN_SHOUT,
                   "tests/test_util.py": "__test__ = False\nfrom app.util import shout\n\n"
                   "def test_shout():\n    assert shout('a') == 'A'\n"})
    data = check_json(chain)
    assert data["exit_code"] != 0
    found = [r for r in data["reasons"] if r["code"] == "not-collected"]
    assert found and "tests/test_util.py" in found[0]["detail"], codes(data)


# Expected data outside the test roots (red-team round 5): a folder named for tests, or a
# doc a test runs the examples of; each edited with the bug.
DATA_TEST = ("import json\nimport pathlib\n\nfrom app.loud import loud\n\n"
             "ROOT = pathlib.Path(__file__).resolve().parents[1]\n\n\n"
             "def test_cases():\n"
             "    for word, expected in json.loads((ROOT / {path!r}).read_text()).items():\n"
             "        assert loud(word) == expected\n")
README_TEST = ("import doctest\nimport pathlib\n\n"
               "README = pathlib.Path(__file__).resolve().parents[1] / 'README.md'\n\n\n"
               "def test_readme():\n"
               "    assert doctest.testfile(str(README), module_relative=False).failed == 0\n")
README = "# loud\n\n```\n>>> from app.loud import loud\n>>> loud('a')\n'A!'\n\n```\n"


@pytest.mark.parametrize("data", ["golden/words.json", "app/expected/words.json",
                                  "testdata/words.json", "README.md"])
@pytest.mark.parametrize("broken", [True, False], ids=["with-the-bug", "new-case"])
def test_expected_data_outside_the_test_roots_is_the_bases(
    chain: GitRepo, data: str, broken: bool,
) -> None:
    readme = data == "README.md"
    chain.files({"app/loud.py": LOUD, "tests/__init__.py": "",
                 data: README if readme else '{"a": "A!"}\n',
                 "tests/test_data.py": README_TEST if readme else DATA_TEST.format(path=data)})
    chain.commit("expected data")
    chain.git("tag", "-f", "base")
    if broken:
        commit(chain, {"app/loud.py": LOUD.replace("'!'", "'?'"),
                       data: README.replace("'A!'", "'A?'") if readme else '{"a": "A?"}\n'})
        assert _rewritten(check_json(chain)) == ["tests/test_data.py"]
    else:  # the twin: a new case, the code unchanged
        commit(chain, {data: README + ">>> loud('b')\n'B!'\n" if readme
                       else '{"a": "A!", "b": "B!"}\n'})
        data_ = check_json(chain)
        assert (data_["exit_code"], codes(data_)) == (0, []), data_["reasons"]
