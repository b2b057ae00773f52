"""The base is the contract (issue 11 items 2-5): a patch that breaks a test and hides it --
a skip, a deletion, a rename out of collection, a deselecting conftest, a rewritten
assertion -- is judged by the base's form of that test on head's code. Each attack next to
the legitimate change that must pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgate.flows import check as checkrun
from agentgate.report import render
from tests.support.chain_app import CHAIN_APP as CHAIN_APP_FILES
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo, run_agentgate

BROKEN_SHOUT = "def shout(s):\n    return s.lower()\n"  # the base's test_util fails
SKIPPED_TEST = ("import pytest\nfrom app.util import shout\n\n@pytest.mark.skip\n"
                "def test_shout():\n    assert shout('a') == 'A'\n")
SKIP_CALL_TEST = ("import pytest\nfrom app.util import shout\n\ndef test_shout():\n"
                  "    pytest.skip('later')\n    assert shout('a') == 'A'\n")
XFAIL_TEST = SKIPPED_TEST.replace("mark.skip", "mark.xfail")
REWRITTEN_TEST = "from app.util import shout\n\ndef test_shout():\n    assert shout('a') == 'a'\n"
DESELECT = ("def pytest_collection_modifyitems(config, items):\n"
            "    gone = [i for i in items if i.name == 'test_shout']\n"
            "    items[:] = [i for i in items if i not in gone]\n"
            "    config.hook.pytest_deselected(items=gone)\n")
AGENT = "bot (aider)"  # an identity the default agent patterns match
SHOUT = "tests/test_util.py::test_shout"


def check_json(repo: GitRepo) -> dict[str, Any]:
    return checkrun.check(repo.path, "base", "HEAD").to_json()


def reason(data: dict[str, Any], code: str) -> dict[str, Any]:
    return next(r for r in data["reasons"] if r["code"] == code)


def codes(data: dict[str, Any]) -> list[str]:
    return [r["code"] for r in data["reasons"]]


def oracle(data: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = data["results"]["base_oracle"]
    return found


@pytest.mark.parametrize(("test_text", "hidden"), [
    (SKIPPED_TEST, "skipped"), (SKIP_CALL_TEST, "skipped"), (XFAIL_TEST, "xfailed"),
], ids=["marker", "call", "xfail"])
def test_a_skip_added_to_the_broken_test_blocks(
    chain: GitRepo, test_text: str, hidden: str
) -> None:
    commit(chain, {"app/util.py": BROKEN_SHOUT, "tests/test_util.py": test_text})
    data = check_json(chain)
    assert data["exit_code"] == 4
    found = reason(data, "suppressed-failure")
    assert SHOUT in found["detail"] and f"{hidden} at head" in found["detail"]
    assert "AssertionError" in found["detail"] or "assert" in found["detail"]


def test_a_skip_on_a_test_whose_base_form_passes_is_harmless(chain: GitRepo) -> None:
    commit(chain, {"tests/test_util.py": SKIPPED_TEST})
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    assert any(n.startswith(f"harmless suppression: {SHOUT}") for n in data["notes"])
    assert oracle(data)["suppressed"][0]["base_form"] == "passed"
    # Issue 11 item 3: the report lists it, in the text of a passing check too (not only -v).
    text = run_agentgate("check", "--base", "base", cwd=chain.path).stdout
    assert f"note: harmless suppression: {SHOUT}" in " ".join(text.split()), text


def test_the_harmless_cases_of_one_parametrized_test_are_one_note() -> None:
    from agentgate.flows.base_contract import _harmless
    from agentgate.run.suppress import Judged

    cases = [Judged(f"tests/test_n.py::test_ordinal[{i}]", "skipped", "passed") for i in range(18)]
    notes = _harmless([*cases, Judged(SHOUT, "skipped", "passed"),
                       Judged("tests/test_n.py::test_ordinal[x]", "deselected", "passed")])
    assert notes == [
        "harmless suppression: tests/test_n.py::test_ordinal, 18 cases (skipped at head; the "
        "base form of each passes on head's code)",
        f"harmless suppression: {SHOUT} (skipped at head; its base form passes on head's code)",
        "harmless suppression: tests/test_n.py::test_ordinal[x] (deselected at head; its base "
        "form passes on head's code)"]


def test_the_hidden_cases_of_one_parametrized_test_are_one_reason() -> None:
    from agentgate.flows.base_contract import _suppressed
    from agentgate.run.suppress import Judged

    cases = [Judged(f"tests/test_u.py::test_styling[{i}]", "deselected", "failed",
                    f"FAILED case {i}") for i in range(35)]
    found = _suppressed([*cases, Judged(SHOUT, "skipped", "failed", "FAILED shout")])
    assert [(r.code, r.verdict.exit_code, r.path) for r in found] == [
        ("suppressed-failure", 4, "tests/test_u.py"),
        ("suppressed-failure", 4, "tests/test_util.py")]
    assert found[0].detail == (
        "tests/test_u.py::test_styling: 35 cases fail in their base form on head's code "
        "(tests/test_u.py::test_styling[0], tests/test_u.py::test_styling[1], "
        "tests/test_u.py::test_styling[2] and 32 more; the first: FAILED case 0) and the patch "
        "hid them: deselected at head; a human accepts each case id (--format json lists "
        "them) by listing it in .agentgate/accepted in a commit of its own")
    assert found[1].detail == (f"{SHOUT} fails in its base form on head's code (FAILED shout) "
                               "and the patch hid it: skipped at head; a human accepts it by "
                               "listing it in .agentgate/accepted in a commit of its own")


def test_the_cases_a_harness_hid_are_one_reason_per_test() -> None:
    from agentgate.flows.base_contract import reasons as oracle_reasons
    from agentgate.run.oracle import OracleReport

    found, _notes = oracle_reasons(OracleReport(harness_hidden=(
        "tests/t.py::f[1]", "tests/t.py::f[2]", "tests/t.py::g")), "block", frozenset())
    assert [(r.code, r.detail) for r in found] == [
        ("harness-hid-failure", "tests/t.py::f: 2 cases (tests/t.py::f[1], tests/t.py::f[2]) "
         "fail under the base's harness on head's code but not under the patch's harness"),
        ("harness-hid-failure", "tests/t.py::g fails under the base's harness on head's code "
         "but not under the patch's harness")]


def test_the_broken_test_file_deleted_blocks(chain: GitRepo) -> None:
    chain.rm("tests/test_util.py")
    commit(chain, {"app/util.py": BROKEN_SHOUT})
    data = check_json(chain)
    assert data["exit_code"] == 4
    assert "deleted at head" in reason(data, "suppressed-failure")["detail"]


def test_a_human_renaming_a_test_passes(chain: GitRepo) -> None:
    chain.git("mv", "tests/test_util.py", "tests/test_upper.py")
    commit(chain, {"tests/test_upper.py": "from app.util import shout\n\n"
                   "def test_upper():\n    assert shout('a') == 'A'\n"})
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    assert "rewritten-test" not in codes(data)


def test_a_rename_out_of_collection_blocks(chain: GitRepo) -> None:
    chain.git("mv", "tests/test_util.py", "tests/util_check.py")
    commit(chain, {"app/util.py": BROKEN_SHOUT})
    data = check_json(chain)
    assert data["exit_code"] == 4
    assert SHOUT in reason(data, "suppressed-failure")["detail"]


def test_test_false_on_the_broken_test_blocks(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": BROKEN_SHOUT, "tests/test_util.py":
                   "__test__ = False\nfrom app.util import shout\n\n"
                   "def test_shout():\n    assert shout('a') == 'A'\n"})
    data = check_json(chain)
    assert data["exit_code"] == 4
    assert "not collected at head" in reason(data, "suppressed-failure")["detail"]


def test_a_conftest_below_the_root_deselecting_the_broken_test_blocks(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": BROKEN_SHOUT, "tests/conftest.py": DESELECT})
    data = check_json(chain)
    assert data["exit_code"] == 4
    assert SHOUT in reason(data, "harness-hid-failure")["detail"]


def test_a_new_conftest_fixture_used_by_new_tests_passes(chain: GitRepo) -> None:
    commit(chain, {"tests/conftest.py": "import pytest\n\n@pytest.fixture\n"
                   "def word():\n    return 'a'\n",
                   "tests/test_word.py": "from app.util import shout\n\n"
                   "def test_word(word):\n    assert shout(word) == 'A'\n"})
    data = check_json(chain)
    assert (data["exit_code"], codes(data)) == (0, [])
    assert oracle(data)["ran"] is True


def test_an_agent_rewriting_the_assertion_it_breaks_is_blocked(chain: GitRepo) -> None:
    chain.files({"app/util.py": BROKEN_SHOUT, "tests/test_util.py": REWRITTEN_TEST})
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == 4
    found = reason(data, "rewritten-test")
    assert found["verdict"] == "blocked" and SHOUT in found["detail"]
    assert oracle(data)["rewritten"][0]["nodeid"] == SHOUT


def test_a_human_rewriting_an_assertion_is_reported_not_blocked(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": BROKEN_SHOUT, "tests/test_util.py": REWRITTEN_TEST})
    result = checkrun.check(chain.path, "base", "HEAD")
    data = result.to_json()
    assert data["exit_code"] == 0
    assert reason(data, "rewritten-test")["verdict"] == "scoped"
    # Shown where a human looks: the text report and the CI step summary.
    assert any("rewritten-test" in line and SHOUT in line for line in render.text_lines(result))
    assert "REWRITTEN TEST" in render.markdown(result)


def test_a_human_acceptance_lets_the_rewritten_test_through(chain: GitRepo) -> None:
    chain.files({"app/util.py": BROKEN_SHOUT, "tests/test_util.py": REWRITTEN_TEST})
    chain.commit("agent change", author=AGENT)
    commit(chain, {".agentgate/accepted": f"{SHOUT}  # lower() is the new contract\n"},
           "accept the rewritten test")
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    assert f"accepted in .agentgate/accepted: {SHOUT} (rewritten)" in data["notes"]


def test_a_range_that_touches_no_test_runs_no_base_form(chain: GitRepo) -> None:
    """Every base test of the files the band ran whole ran at head: no base form runs (the
    base's inventory of those files is collected, once per base)."""
    commit(chain, {"app/pricing/rates.py": "RATE = 0.2  # same\n"})
    data = check_json(chain)
    assert data["exit_code"] == 0 and not oracle(data)["ran"]


def test_an_agent_cannot_accept_its_own_rewritten_test(chain: GitRepo) -> None:
    chain.files({"app/util.py": BROKEN_SHOUT, "tests/test_util.py": REWRITTEN_TEST})
    chain.commit("agent change", author=AGENT)
    chain.files({".agentgate/accepted": f"{SHOUT}\n"})
    chain.commit("accept", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == 4
    assert any(r["path"] == ".agentgate/accepted" for r in data["reasons"])


def test_rewritten_tests_block_blocks_a_humans_range_too(chain: GitRepo) -> None:
    commit(chain, {"pyproject.toml": "[tool.agentgate]\nrewritten_tests = \"block\"\n"},
           "policy")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": BROKEN_SHOUT, "tests/test_util.py": REWRITTEN_TEST})
    data = check_json(chain)
    assert data["exit_code"] == 4
    assert reason(data, "rewritten-test")["verdict"] == "blocked"


def test_a_bad_rewritten_tests_value_is_one_line_and_64(chain: GitRepo) -> None:
    commit(chain, {"pyproject.toml": "[tool.agentgate]\nrewritten_tests = \"ignore\"\n"})
    chain.git("tag", "-f", "base")
    done = run_agentgate("check", "--base", "base", cwd=chain.path)
    assert done.returncode == 64
    assert "'rewritten_tests' must be \"report\" or \"block\"" in done.stderr
    assert "Traceback" not in done.stderr


def test_with_trust_signers_only_a_signed_acceptance_accepts(
    chain: GitRepo, tmp_path: Path,
) -> None:
    """Attack (found in review): with trust_signers configured, an unsigned commit that only
    looks like a human's accepted the agent's rewritten test on identity alone. Only an
    acceptance signed by an allowed key counts; the same acceptance signed passes."""
    from tests.gate.test_govern import SIGNERS, _allowed, _key, _signed

    key = _key(tmp_path, "human")
    chain.write("pyproject.toml", f'[tool.agentgate]\ntrust_signers = "{SIGNERS}"\n')
    chain.write(SIGNERS, _allowed(key))
    chain.commit("trust signers")
    chain.git("tag", "-f", "base")
    chain.files({"app/util.py": BROKEN_SHOUT, "tests/test_util.py": REWRITTEN_TEST})
    chain.commit("agent change", author=AGENT)
    commit(chain, {".agentgate/accepted": f"{SHOUT}\n"}, "accept the rewritten test")
    data = check_json(chain)
    assert data["exit_code"] == 4 and "rewritten-test" in codes(data), data["reasons"]
    chain.git("reset", "-q", "--hard", "HEAD~1")
    chain.files({".agentgate/accepted": f"{SHOUT}\n"})
    _signed(chain, "accept the rewritten test", key)
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]


STRICT_WARNINGS = {  # Jinja2's and itsdangerous's configuration, and a cache plugin turned off
    "strict": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
    "strict-no-cache": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
                       'addopts = "-p no:cacheprovider"\n',
}


@pytest.mark.parametrize("pyproject", STRICT_WARNINGS.values(), ids=STRICT_WARNINGS.keys())
def test_warnings_as_errors_leave_the_base_forms_runnable(repo: GitRepo, pyproject: str) -> None:
    """A new test in an edited test file sends the file's tests to the base-form run. There,
    agentgate's own options must not raise a warning the project makes an error (an unknown
    ``cache_dir`` stopped every run: every edited test was 'rewritten', exit 4)."""
    repo.files({**CHAIN_APP_FILES, "pyproject.toml": pyproject})
    repo.commit("initial")
    repo.git("tag", "base")
    repo.files({"tests/test_util.py": CHAIN_APP_FILES["tests/test_util.py"]
                + "\ndef test_shout_empty():\n    assert shout('') == ''\n"})
    repo.commit("an agent's new test", author=AGENT)
    data = check_json(repo)
    assert data["exit_code"] == 0, data["reasons"]
    assert oracle(data)["ran"] and not oracle(data)["problems"] and not oracle(data)["rewritten"]
    # The attack next to it: the broken test skipped is still judged by its base form.
    commit(repo, {"app/util.py": BROKEN_SHOUT, "tests/test_util.py": SKIPPED_TEST})
    broken = check_json(repo)
    assert broken["exit_code"] == 4
    assert SHOUT in reason(broken, "suppressed-failure")["detail"]


def test_a_base_form_run_that_dies_fails_the_check_in_one_line(chain: GitRepo) -> None:
    """The attack: the skipped test's code ends the process as its base form runs, so no base
    form reports. That is no evidence either way: one line says the run did not finish, and
    the check fails."""
    chain.files({"app/util.py": "import os\n\n\ndef shout(s):\n    os._exit(0)\n",
                 "tests/test_util.py": SKIPPED_TEST})
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == 1, data["reasons"]
    found = [r for r in data["reasons"] if r["code"] == "base-oracle-incomplete"]
    assert len(found) == 1 and "did not finish" in found[0]["detail"], data["reasons"]
    assert "suppressed-failure" not in codes(data)


CONTRACT = ("class ShoutContract:\n    def test_shout_contract(self):\n"
            "        assert self.shout('a') == 'A'\n")
CONTRACT_FILES = {
    "app/testing.py": CONTRACT,  # a contract-test mixin the package ships
    "app/cases.py": "CASES = ['a', 'b']\n",
    "tests/test_contract.py": "import pytest\n\nfrom app.cases import CASES\n"
    "from app.testing import ShoutContract\nfrom app.util import shout\n\n\n"
    "class TestShout(ShoutContract):\n    shout = staticmethod(shout)\n\n\n"
    "@pytest.mark.parametrize('c', CASES)\ndef test_cases(c):\n    assert shout(c) == c.upper()\n"
    "\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    assert False\n",
}
BREAK_B = "def shout(s):\n    return s if s == 'b' else s.upper()\n"


@pytest.mark.parametrize("files", [
    {"app/util.py": "def shout(s):\n    return s\n",
     "app/testing.py": CONTRACT.replace("class ShoutContract:\n",
                                        "class ShoutContract:\n    __test__ = False\n\n")},
    {"app/util.py": BREAK_B, "app/cases.py": "CASES = ['a']\n"},
    # The failing case swapped for a passing one: the base collects test_cases[b] again, so
    # test_cases[c] is a new case, not the base form of the vanished one (oracle._unstable_ids).
    {"app/util.py": BREAK_B, "app/cases.py": "CASES = ['a', 'c']\n"},
], ids=["test-false-on-a-mixin", "parametrize-case-dropped", "parametrize-case-swapped"])
def test_code_under_test_that_makes_an_untouched_test_vanish_blocks(
    chain: GitRepo, files: dict[str, str],
) -> None:
    """Red-team: no test file is touched, yet the base's failing test is gone at head. The
    mixin the package ships turned ``__test__`` off for every subclass, or the case list the
    parametrize reads lost the failing case: the band ran green."""
    commit(chain, CONTRACT_FILES, "contract tests")
    chain.git("tag", "-f", "base")
    chain.files(files)
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == 4, data["reasons"]
    assert "not collected at head" in reason(data, "suppressed-failure")["detail"]


def test_a_change_that_keeps_every_test_of_an_untouched_file_passes(
    chain: GitRepo,
) -> None:
    """The twin: the mixin and the case list change harmlessly; every base test still runs at
    head (or is skipped by its own unchanged marker). Only tests use ``app/testing.py`` and
    ``app/cases.py``: they are the tests' helpers, so the base forms of the files they serve
    run with them as at the base (red-team round 4), and pass."""
    commit(chain, CONTRACT_FILES, "contract tests")
    chain.git("tag", "-f", "base")
    chain.files({"app/testing.py": '"""Contracts."""\n' + CONTRACT,
                 "app/cases.py": "CASES = ['a', 'b', 'c']\n"})
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    assert oracle(data)["ran"] and not oracle(data)["rewritten"]
    assert all(j["base_form"] != "failed" for j in oracle(data)["suppressed"])


PID_TEST = ("import os\n\nimport pytest\n\nfrom app.util import shout\n\n\n"
            "@pytest.mark.parametrize('n', [1, os.getpid()])\n"
            "def test_pid(n):\n    assert shout('a') == 'A'\n")


@pytest.mark.parametrize(("code", "expected"), [
    ("def shout(s):\n    return s.upper()  # same\n", 0),
    (BROKEN_SHOUT, 4),
], ids=["legitimate", "broken"])
def test_a_case_whose_id_differs_in_every_process_is_judged_by_its_new_id(
    chain: GitRepo, code: str, expected: int,
) -> None:
    """A case whose id the base's own collection makes anew in every process (a pid, a
    random value): an edited test file's base inventory names it with an id no later run
    collects. Its base form could not be found and the check blocked a legitimate change;
    now the case the base form's run collects instead stands for it. The attack next to it:
    the code breaks and the agent skips the whole test -- the new id's failure blocks."""
    commit(chain, {"tests/test_pid.py": PID_TEST}, "a pid-parametrized test")
    chain.git("tag", "-f", "base")
    test = (PID_TEST + "\n\ndef test_more():\n    assert shout('b') == 'B'\n"
            if expected == 0 else PID_TEST.replace("@pytest.mark.parametrize",
                                                   "@pytest.mark.skip\n@pytest.mark.parametrize"))
    chain.files({"app/util.py": code, "tests/test_pid.py": test})
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == expected, data["reasons"]
    if expected:
        # Both cases block: test_pid[1] skipped at head, the pid case by its new id (which
        # comes first depends on the pid's digits).
        found = [r["detail"] for r in data["reasons"] if r["code"] == "suppressed-failure"]
        assert any("tests/test_pid.py::test_pid[" in d for d in found), data["reasons"]
        assert any("its id differs in every collection of the base: its base form ran as "
                   "test_pid[" in d for d in found), found
    else:
        # Nothing was suppressed: the note says the id is unstable and which case stood in.
        notes = data["notes"]
        assert not any(n.startswith("harmless suppression") for n in notes), notes
        unstable = [n for n in notes if n.startswith("unstable case id: tests/test_pid.py::")]
        assert len(unstable) == 1 and "its base form ran as test_pid[" in unstable[0], notes
        assert unstable[0].endswith("and passes on head's code"), unstable


ENV_CASE_TEST = ("import os\n\nimport pytest\n\nfrom app.util import shout\n\n\n"
                 "@pytest.mark.parametrize('n', ['x', os.environ.get('CASE', 'a')])\n"
                 "def test_case(n):\n    assert shout('a') == 'A'\n")


def test_an_unstable_id_the_second_collection_shares_with_the_run_still_stands_in(
    chain: GitRepo, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """New-user trial (marshmallow: a case id holding the time to the second): the cached
    base inventory named the case ``[22:25:35]``; the base form's run and the base's second
    collection, within one second, both named it ``[22:25:36]``, so no case was new to
    both collections, none stood in, and a harmless patch blocked 1 run in 4. The id
    changing here between the inventory and the later runs plays that, every time."""
    commit(chain, {"tests/test_case.py": ENV_CASE_TEST}, "a case id from the environment")
    chain.git("tag", "-f", "base")
    chain.files({"app/util.py": "def shout(s):\n    return s.upper()  # same\n"})
    chain.commit("agent change", author=AGENT)
    monkeypatch.setenv("CASE", "a")
    assert check_json(chain)["exit_code"] == 0  # the base inventory, cached, says [a]
    monkeypatch.setenv("CASE", "b")
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    assert any(n.startswith("unstable case id: tests/test_case.py::test_case[a]")
               for n in data["notes"]), data["notes"]
    # Shown with --verbose: it passed, and says how the band was judged, nothing to act on.
    assert all(checkrun.routine(n) for n in data["notes"] if n.startswith("unstable case id"))


KNOWN_BUG = ("\n\n@pytest.mark.xfail(reason='known bug', strict=True)\n"
             "def test_known_bug():\n    assert shout('a') == 'a'\n")


@pytest.mark.parametrize("files", [
    {"tests/test_util.py": "import pytest\n" + CHAIN_APP_FILES["tests/test_util.py"] + KNOWN_BUG
     + "\n\ndef test_shout_twice():\n    assert shout('ab') == 'AB'\n"},
    {"tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef word():\n    return 'ab'\n",
     "tests/test_word.py": "from app.util import shout\n\n\n"
     "def test_word(word):\n    assert shout(word) == 'AB'\n"},
], ids=["test-appended", "conftest-added"])
def test_a_base_test_its_own_marker_xfails_is_no_hidden_failure(
    chain: GitRepo, files: dict[str, str],
) -> None:
    """A strict xfail the base itself carries xfails at head too, and its base form xfails
    on head's code, as the base expects: an agent's new test next to it, or a new conftest
    fixture, is green (new-user trial: both were blocked as hiding a failure)."""
    commit(chain, {"tests/test_util.py": "import pytest\n" + CHAIN_APP_FILES["tests/test_util.py"]
                   + KNOWN_BUG}, "a known bug")
    chain.git("tag", "-f", "base")
    chain.files(files)
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    # The attack next to it: the marker taken off and the code broken the other way.
    chain.files({"app/util.py": "def shout(s):\n    return s.lower()\n",
                 "tests/test_util.py": "import pytest\n" + CHAIN_APP_FILES["tests/test_util.py"]
                 + KNOWN_BUG.replace("strict=True", "strict=False")})
    chain.commit("agent change 2", author=AGENT)
    assert check_json(chain)["exit_code"] != 0


PLUGIN = ("import pytest\n\n\n@pytest.fixture\ndef shouted():\n    return 'A'\n")
SWALLOW = PLUGIN + ("\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_pyfunc_call(pyfuncitem):\n"
                    "    outcome = yield\n    outcome.force_result(True)\n"
                    "    if outcome.excinfo is not None:\n        outcome.force_exception(None)\n")


# How the base loads its plugin module: the root conftest's ``pytest_plugins``; ``-p`` in
# its addopts; a package whose ``__init__`` takes the hooks from a submodule (red-team
# round 4: the submodule, and the ``-p`` plugin, were code, not harness).
LOADED = {
    "conftest": ({"conftest.py": "pytest_plugins = ['app.testing']\n"}, "app/testing.py"),
    "addopts": ({"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p app.testing"\n'},
                "app/testing.py"),
    "package": ({"conftest.py": "pytest_plugins = ['app.testing']\n",
                 "app/testing/__init__.py": "from app.testing.hooks import *  # noqa: F403\n"},
                "app/testing/hooks.py"),
    # a helper module of the plugin, outside its package, that only test-side code imports
    "helper": ({"conftest.py": "pytest_plugins = ['app.testing']\n",
                "app/testing.py": "from app.checks import *  # noqa: F403\n"},
               "app/checks.py"),
    # and what that helper imports that is written for the tests (it imports pytest)
    "helper-of-helper": ({"conftest.py": "pytest_plugins = ['app.testing']\n",
                          "app/testing.py": "from app.checks import *  # noqa: F403\n",
                          "app/checks.py": "from app.swallow import *  # noqa: F403\n"},
                         "app/swallow.py"),
}


@pytest.mark.parametrize("loaded", sorted(LOADED))
@pytest.mark.parametrize(("plugin", "code"), [
    ("\n\ndef helper():\n    return 1\n", 0),  # the twin: a harmless change to the plugin
    (SWALLOW[len(PLUGIN):], 4),  # the attack: its new hook swallows the broken test's failure
], ids=["harmless", "swallows-failures"])
def test_a_plugin_module_the_base_loads_is_harness(
    chain: GitRepo, plugin: str, code: int, loaded: str,
) -> None:
    """Red-team: the base loads ``app/testing.py`` as a plugin; an agent adds a
    ``pytest_pyfunc_call`` there that turns the broken test green. That module is harness:
    the selection also runs under the base's version of it."""
    files, module = LOADED[loaded]
    commit(chain, {**files, module: PLUGIN,
                   "tests/test_shouted.py": "def test_shouted(shouted):\n"
                                            "    assert shouted == 'A'\n"}, "a plugin")
    chain.git("tag", "-f", "base")
    chain.files({module: PLUGIN + plugin,
                 **({"app/util.py": BROKEN_SHOUT} if code else {})})
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == code, data["reasons"]
    if code:
        assert SHOUT in reason(data, "harness-hid-failure")["detail"]


# A test file the patch adds runs code as pytest imports it, and as its tests run, in the
# process that would run the base's tests beside it (red-team, helper-15).
PATCHED_BACK = ("import app.util\n\napp.util.shout = lambda s: s.upper()\n\n\n"
                "def test_cover():\n    assert True\n")
CODE_SWAPPED = ("import test_util\n\ntest_util.test_shout.__code__ = (lambda: None).__code__\n\n\n"
                "def test_cover():\n    assert True\n")
NEW_TEST = ("from app.util import whisper\n\n\ndef test_whisper():\n"
            "    assert whisper('A') == 'a'\n")


@pytest.mark.parametrize("cover", [PATCHED_BACK, CODE_SWAPPED], ids=["patched-back", "code"])
def test_a_new_test_file_cannot_make_a_base_test_pass_beside_it(
    chain: GitRepo, cover: str,
) -> None:
    """The new file sorts first, so pytest imports it before the base's test file: run in
    one process, the base's broken test passed. The range's test files run apart."""
    commit(chain, {"app/util.py": BROKEN_SHOUT, "tests/test_aaa_cover.py": cover},
           "agent change")
    data = check_json(chain)
    assert data["exit_code"] == 1, data["reasons"]
    assert SHOUT in reason(data, "tests-failed")["detail"]
    runs = {r["label"]: r for r in data["results"]["runs"]}
    assert runs["band"]["failed"] == 1 and runs["patch-tests"]["passed"] == 1


def test_a_new_test_file_for_new_code_runs_apart_and_passes(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper()\n\n\n"
                                  "def whisper(s):\n    return s.lower()\n",
                   "tests/test_whisper.py": NEW_TEST})
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    runs = {r["label"]: r for r in data["results"]["runs"]}
    assert runs["band"]["passed"] == 1 and runs["patch-tests"]["passed"] == 1
    text = run_agentgate("check", "--base", "base", "-v", cwd=chain.path).stdout
    assert "the patch's test files, run apart: 1 passed" in text, text


def test_a_promoted_range_runs_the_new_test_file_apart_from_the_suite(chain: GitRepo) -> None:
    commit(chain, {"conftest.py": "# root\n"}, "a human's root conftest")  # promotes
    commit(chain, {"app/util.py": BROKEN_SHOUT, "tests/test_aaa_cover.py": PATCHED_BACK})
    data = check_json(chain)
    assert (data["verdict_plan"], data["exit_code"]) == ("promote", 1), data["reasons"]
    assert SHOUT in reason(data, "tests-failed")["detail"]
    assert [r["label"] for r in data["results"]["runs"]] == ["full", "patch-tests"]


def test_a_new_test_file_that_leaves_state_runs_with_the_suite_once_more(chain: GitRepo) -> None:
    """Apart, what a new test leaves changed never reaches the base's tests after it; where
    pytest runs the whole suite in one process it does: the suite runs so once more."""
    commit(chain, {"conftest.py": "# root\n"}, "a human's root conftest")
    commit(chain, {"tests/test_aaa_mode.py": "import os\n\n\ndef test_mode():\n"
                                             "    os.environ['APP_MODE'] = 'lenient'\n"})
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    runs = data["results"]["runs"]
    assert [r["label"] for r in runs] == ["full"] and runs[0]["passed"] == 4


# Code under test that puts a skip on the test module importing it: no test file changes,
# the base's test is collected and reported skipped (red-team, helper-15).
INJECTS = ("import sys\n\n\ndef shout(s):\n    return s.lower()\n\n\n"
           "def _importer():\n    frame = sys._getframe(1)\n    while frame is not None:\n"
           "        if frame.f_globals.get('__name__', '').startswith('test_'):\n"
           "            return frame.f_globals\n        frame = frame.f_back\n\n\n"
           "_found = _importer()\nif _found is not None:\n    import pytest\n\n"
           "    _found.setdefault('pytestmark', pytest.mark.{mark}(reason='platform'))\n")


@pytest.mark.parametrize("mark", ["skip", "xfail"])
def test_code_under_test_that_marks_its_importer_alters_the_harness(
    chain: GitRepo, mark: str,
) -> None:
    commit(chain, {"app/util.py": INJECTS.replace("{mark}", mark)}, "agent change")
    data = check_json(chain)
    assert data["exit_code"] == 4, data["reasons"]
    found = reason(data, "harness-altered")["detail"]
    assert "tests/test_util.py holds a pytestmark its source does not set" in found


def test_a_pytestmark_the_test_module_sets_itself_is_its_own(chain: GitRepo) -> None:
    commit(chain, {"tests/test_util.py": "import pytest\n\nfrom app.util import shout\n\n"
                                         "if True:\n    pytestmark = [pytest.mark.filterwarnings("
                                         "'ignore')]\n\n\ndef test_shout():\n"
                                         "    assert shout('a') == 'A'\n"}, "a human's marker")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper()  # same\n"})
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]


@pytest.mark.parametrize(("source", "binds"), [
    ("pytestmark = 1\n", True),
    ("from marks import slow as pytestmark\n", True),
    ("from marks import *\n# pytestmark comes from there\n", True),
    ("try:\n    import x\nexcept ImportError:\n    pytestmark = 1\n", True),
    ("pytestmark: list = []\n", True),
    ("(a, pytestmark) = (1, 2)\n", True),
    ("# pytestmark = 1\n", False),
    ("def f():\n    pytestmark = 1\n", False),
    ("class C:\n    pytestmark = 1\n", False),
    ("x = 'pytestmark'\n", False),
    ("def broken(:\n    pytestmark\n", True),  # pytest reports the syntax error itself
], ids=["assign", "import", "star", "except", "annotated", "tuple", "comment", "function",
        "class", "string", "unparsable"])
def test_which_sources_bind_pytestmark(tmp_path: Path, source: str, binds: bool) -> None:
    from agentgate.run.outcomes import binds_pytestmark

    path = tmp_path / "test_m.py"
    path.write_text(source)
    assert binds_pytestmark(str(path)) is binds


SHARED = "VALUE = 1\n\n\ndef test_shared():\n    assert VALUE == 1\n"
IMPORTS_SHARED = ("import test_a_shared  # noqa: F401\nfrom app.util import shout\n\n\n"
                  "def test_shout():\n    assert shout('a') == 'A'\n")


@pytest.mark.parametrize(("shared", "code"), [
    (SHARED + "\n\ndef test_more():\n    assert VALUE + 1 == 2\n", 0),  # the twin
    ("import app.util\n\napp.util.shout = lambda s: s.upper()\n" + SHARED, 4),  # the attack
], ids=["new-test", "patches-back"])
def test_a_changed_test_module_another_test_file_imports_is_its_helper(
    chain: GitRepo, shared: str, code: int,
) -> None:
    """Run apart, the range's test files cannot reach the base's tests, unless a base test
    file imports one: then it is that file's helper, laid over as at the base."""
    commit(chain, {"tests/test_a_shared.py": SHARED, "tests/test_util.py": IMPORTS_SHARED},
           "a shared test module")
    chain.git("tag", "-f", "base")
    chain.files({"tests/test_a_shared.py": shared,
                 **({"app/util.py": BROKEN_SHOUT} if code else {})})
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == code, data["reasons"]
    if code:
        assert SHOUT in reason(data, "rewritten-test")["detail"]


# --- a skip the patch's code decides (no test file touched) -----------------------------------

FLAGS = "ON = True\n\ndef value():\n    return 1\n"
FLAGGED = "tests/test_flagged.py::test_flagged"
SKIPIF_ON_CODE = ("import pytest\n\nfrom app import flags\n\n"
                  "@pytest.mark.skipif(not flags.ON, reason='feature off')\n"
                  "def test_flagged():\n    assert flags.value() == 1\n")
XFAIL_ON_CODE = SKIPIF_ON_CODE.replace("skipif(", "xfail(")
IMPORTORSKIP = ("import pytest\n\ndef test_flagged():\n"
                "    flags = pytest.importorskip('app.flags')\n    assert flags.value() == 1\n")
MODULE_IMPORTORSKIP = ("import pytest\n\nflags = pytest.importorskip('app.flags')\n\n"
                       "def test_flagged():\n    assert flags.value() == 1\n")
BROKEN_FLAGS = "ON = True\n\ndef value():\n    return 2\n"


UNIMPORTABLE = "import a_module_nobody_has\n" + BROKEN_FLAGS


@pytest.mark.parametrize(("test_text", "head", "code"), [
    (SKIPIF_ON_CODE, BROKEN_FLAGS.replace("True", "False"), "skipped-by-code"),
    (XFAIL_ON_CODE, BROKEN_FLAGS.replace("True", "False"), "skipped-by-code"),
    (IMPORTORSKIP, UNIMPORTABLE, "skipped-by-code"),
    (MODULE_IMPORTORSKIP, UNIMPORTABLE, "suppressed-failure"),  # not collected at head
], ids=["skipif", "xfail-condition", "importorskip", "module-importorskip"])
def test_code_that_makes_an_untouched_test_skip_itself_blocks(
    chain: GitRepo, test_text: str, head: str, code: str,
) -> None:
    """Red-team: the patch breaks ``value`` and, in the same module, turns off what the
    base's test checks for (a flag its ``skipif`` reads, the condition of an ``xfail``, the
    module ``importorskip`` imports). No test file is touched; the test reports skipped (or
    xfailed) and the band ran green. The base ran it: ``skipped-by-code`` blocks (a test
    module ``importorskip`` skips whole is not collected: its base form fails)."""
    commit(chain, {"app/flags.py": FLAGS, "tests/test_flagged.py": test_text}, "flagged test")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/flags.py": head}, "agent change")
    data = check_json(chain)
    assert data["exit_code"] == 4, data["reasons"]
    assert code in codes(data)
    found = reason(data, code)
    assert found["path"] == "tests/test_flagged.py"
    if code == "skipped-by-code":
        assert codes(data) == [code]
        assert found["detail"].startswith(
            f"{FLAGGED} passed on the base and is skipped or xfailed")


def test_a_test_the_base_skips_too_is_no_skip_by_code_and_its_base_run_is_cached(
    chain: GitRepo,
) -> None:
    """The twin: the flag was off at the base already (a platform skip, a feature not yet
    on); the patch changes other code. Nothing blocks, and the base's own run of the skipped
    test is made once per base: a second check on it runs nothing at the base."""
    off = FLAGS.replace("True", "False")
    commit(chain, {"app/flags.py": off, "tests/test_flagged.py": SKIPIF_ON_CODE}, "flagged test")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/flags.py": off.replace("False", "False  # not yet")}, "agent change")
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    cached = list((chain.path / ".git" / "agentgate" / "inventory").glob("at-base-*.json"))
    assert len(cached) == 1 and FLAGGED in cached[0].read_text(encoding="utf-8")
    made = cached[0].stat().st_mtime_ns
    assert check_json(chain)["exit_code"] == 0
    assert cached[0].stat().st_mtime_ns == made


def test_a_human_acceptance_lets_a_skip_by_code_through(chain: GitRepo) -> None:
    """A feature the patch retires on purpose: a human lists the test in
    ``.agentgate/accepted`` in a commit of its own; the check passes and says so."""
    commit(chain, {"app/flags.py": FLAGS, "tests/test_flagged.py": SKIPIF_ON_CODE},
           "flagged test")
    chain.git("tag", "-f", "base")
    chain.files({"app/flags.py": FLAGS.replace("True", "False")})
    chain.commit("agent change", author=AGENT)
    commit(chain, {".agentgate/accepted": f"{FLAGGED}  # the feature is retired\n"},
           "accept the retired feature's test")
    data = check_json(chain)
    assert data["exit_code"] == 0, data["reasons"]
    assert (f"accepted in .agentgate/accepted: {FLAGGED} (skipped at head, passed on the "
            "base)") in data["notes"]


# --- result files rewritten after the tests ---------------------------------------------------

FORGER = (
    "import atexit, json, os, re, sys\n\n\n"
    "def shout(s):\n    return s.lower()\n\n\n"
    "def _args():\n    out = list(sys.argv)\n    for a in sys.argv[1:]:\n"
    "        try:\n            out += json.load(open(a))\n        except Exception:\n"
    "            pass\n    return [str(a) for a in out]\n\n\n"
    "def _tidy():\n    args = _args()\n"
    "    for p in [a.split('=', 1)[1] for a in args if a.startswith('--agentgate-outcomes=')]:\n"
    "        d = json.load(open(p))\n"
    "        for t in d.get('tests', {}).values():\n"
    "            for k, v in list(t.items()):\n"
    "                if v in ('failed', 'error'):\n                    t[k] = 'passed'\n"
    "        d['exitstatus'] = 0\n        json.dump(d, open(p, 'w'))\n"
    "    for p in [a.split('=', 1)[1] for a in args if a.startswith('--junitxml=')]:\n"
    "        x = re.sub(r'<failure.*?</failure>', '', open(p).read(), flags=re.S)\n"
    "        open(p, 'w').write(re.sub(r'failures=\"\\d+\"', 'failures=\"0\"', x))\n"
    "    sys.stdout.flush()\n    os._exit(0)\n\n\n"
    "if any(a.startswith('--agentgate-outcomes=') for a in _args()):\n"
    "    atexit.register(_tidy)\n"
)


def test_result_files_rewritten_after_the_tests_do_not_hide_a_failure(chain: GitRepo) -> None:
    """Red-team: the code under test, only under agentgate, registers an ``atexit`` handler
    that rewrites the outcome plugin's file and the JUnit XML to "passed" and exits 0. What
    each test ended with came through a pipe as it ended: the check fails and says why."""
    commit(chain, {"app/util.py": FORGER}, "agent change")
    data = check_json(chain)
    assert data["exit_code"] == 1, data["reasons"]
    assert SHOUT in reason(data, "tests-failed")["detail"]
    assert "the files written at the run's end said otherwise" in json.dumps(data)


DOCTEST = ">>> from app.util import shout\n>>> shout('a')\n'A'\n"


@pytest.mark.parametrize(("doc", "code", "expected"), [
    (DOCTEST.replace("'A'", "'a'"), BROKEN_SHOUT, 4),  # the bug's output written in
    ("Shouting.\n\n" + DOCTEST, "def shout(s):\n    return s.upper()  # same\n", 0),
], ids=["rewritten", "reworded"])
def test_a_doctest_file_is_a_test_of_the_contract(
    chain: GitRepo, doc: str, code: str, expected: int,
) -> None:
    """Red-team: the base's ``tests/test_shout.txt`` (pytest's doctest glob collects it)
    checked ``shout``; the agent broke ``shout`` and wrote the broken output into the file.
    Its base form fails on head's code: a rewritten test. Rewording it is fine."""
    commit(chain, {"tests/test_shout.txt": DOCTEST}, "doctest")
    chain.git("tag", "-f", "base")
    chain.files({"app/util.py": code, "tests/test_shout.txt": doc})
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == expected, data["reasons"]
    if expected:
        assert "tests/test_shout.txt::test_shout.txt" in reason(data, "rewritten-test")["detail"]


def test_a_feed_taken_over_before_the_tests_does_not_hide_a_failure(chain: GitRepo) -> None:
    """The attack's next step: the code under test also points the feed's descriptor at
    /dev/null as it is imported, so the failure never reaches the pipe. A test the files
    say ran whose outcome never came through the feed fails."""
    silencer = FORGER.replace(
        "if any(a.startswith('--agentgate-outcomes=') for a in _args()):\n",
        "for a in _args():\n    if a.startswith('--agentgate-progress=fd:'):\n"
        "        os.dup2(os.open(os.devnull, os.O_WRONLY), int(a.rsplit(':', 1)[1]))\n\n"
        "if any(a.startswith('--agentgate-outcomes=') for a in _args()):\n")
    commit(chain, {"app/util.py": silencer}, "agent change")
    data = check_json(chain)
    assert data["exit_code"] == 1, data["reasons"]
    assert SHOUT in reason(data, "tests-failed")["detail"]
    assert "never came through the run's live feed" in json.dumps(data)


DOCUMENTED = ('def shout(s):\n    """Shout.\n\n    >>> shout("a")\n    \'A\'\n    """\n'
              "    return s.upper()\n")


@pytest.mark.parametrize(("code", "expected"), [
    (DOCUMENTED.replace("'A'", "'a'").replace("s.upper()", "s.lower()"), 4),
    (DOCUMENTED.replace('    """\n', '    >>> shout("b")\n    \'B\'\n    """\n'), 0),
    ('def shout(s):\n    return s.lower()\n', 4),  # the docstring, examples and all, gone
], ids=["expectation-rewritten", "example-added", "docstring-removed"])
def test_a_docstring_example_the_patch_rewrites_is_a_rewritten_test(
    chain: GitRepo, code: str, expected: int,
) -> None:
    """Red-team: with ``--doctest-modules`` the base's example in ``shout``'s docstring was
    its test; the agent broke ``shout`` and made the example expect the broken output, in
    the same file, so no base form could be laid over. The changed expectation is the
    rewrite. Adding an example is fine."""
    commit(chain, {"app/util.py": DOCUMENTED, "pyproject.toml":
                   '[tool.pytest.ini_options]\naddopts = "--doctest-modules"\n'}, "doctests")
    chain.git("tag", "-f", "base")
    chain.files({"app/util.py": code})
    chain.commit("agent change", author=AGENT)
    data = check_json(chain)
    assert data["exit_code"] == expected, data["reasons"]
    if expected:
        found = reason(data, "rewritten-test")
        assert found["path"] == "app/util.py"
        assert "app/util.py::app.util.shout" in found["detail"] and "'A'" in found["detail"]


def test_which_docstring_examples_a_patch_rewrote() -> None:
    """The module's, a class's and a method's examples by pytest's doctest ids; an example
    removed or its source edited is gone from head; a head that does not parse fails to
    collect (the band reports it)."""
    from agentgate.run import docexamples

    base = ('"""\n>>> 1 + 1\n2\n"""\n\n\nclass Box:\n    def size(self):\n'
            '        """\n        >>> Box().size()\n        3\n        """\n        return 3\n')
    head = base.replace("2\n", "3\n").replace("        3\n", "        4\n")
    found = docexamples.rewritten("app/box.py", "app.box", base, head)
    assert [(r.nodeid, r.source, r.base, r.head) for r in found] == [
        ("app/box.py::app.box", "1 + 1", "2", "3"),
        ("app/box.py::app.box.Box.size", "Box().size()", "3", "4")]
    # Removed, or its source edited (a directive added): the base's example is gone.
    for head in (base.replace(">>> 1 + 1\n2\n", ""),
                 base.replace("1 + 1", "1 + 1  # doctest: +SKIP")):
        assert [(r.nodeid, r.head) for r in docexamples.rewritten("a.py", "a", base, head)] == [
            ("a.py::a", docexamples.GONE)]
    assert docexamples.rewritten("a.py", "a", base, base) == []
    assert docexamples.rewritten("a.py", "a", base, "def (\n") == []  # collection fails


def test_a_docstring_example_must_run_after_the_examples_the_base_had_before_it() -> None:
    """Red-team (round 3): an example added before the base's rebound the name it uses
    (``>>> add = lambda a, b: 5``), so it passed as written on the broken ``add``. The
    base's examples must open head's docstring as the base wrote them; new ones may follow.
    """
    from agentgate.run import docexamples

    base = ('def add(a, b):\n    """\n    >>> add(2, 3)\n    5\n    >>> add(1, 1)\n    2\n'
            '    """\n    return a + b\n')
    rebind = base.replace("    >>> add(2, 3)", "    >>> add = lambda a, b: 5\n    >>> add(2, 3)")
    assert [(r.source, r.head) for r in docexamples.rewritten("a.py", "a", base, rebind)] == [
        ("add(2, 3)", docexamples.MOVED), ("add(1, 1)", docexamples.MOVED)]
    dropped = base.replace("    >>> add(2, 3)\n    5\n", "")
    assert [(r.source, r.head) for r in docexamples.rewritten("a.py", "a", base, dropped)] == [
        ("add(2, 3)", docexamples.GONE), ("add(1, 1)", docexamples.MOVED)]
    appended = base.replace('    2\n    """', '    2\n    >>> add(0, 0)\n    0\n    """')
    assert docexamples.rewritten("a.py", "a", base, appended) == []
    prose = base.replace('    """\n    >>> add(2, 3)', '    """Add.\n\n    >>> add(2, 3)')
    assert docexamples.rewritten("a.py", "a", base, prose) == []


PLANTER = ("import pathlib, subprocess\n\n"
           "_common = subprocess.run(['git', 'rev-parse', '--git-common-dir'], text=True,\n"
           "                         capture_output=True).stdout.strip()\n"
           "_state = pathlib.Path(_common).resolve() / 'agentgate' / 'inventory'\n"
           "_state.mkdir(parents=True, exist_ok=True)\n"
           "(_state / 'at-base-planted.json').write_text('{}')\n\n\n"
           "def shout(s):\n    return s.upper()\n")


@pytest.mark.parametrize("planted", ["inventory/at-base-planted.json",
                                     "witness/witness.sqlite3-journal"])
def test_the_patchs_code_writing_agentgates_state_blocks(chain: GitRepo, planted: str) -> None:
    """Red-team (round 3): head's code wrote ``.git/agentgate/inventory/at-base-*.json`` (and
    a base inventory) saying what it skipped or made vanish was so on the base too, which the
    check read after the band. Any file of agentgate's state that changed while the patch's
    code ran, not by agentgate, blocks. The twin: the caches agentgate writes itself (a
    skipped test's run on the base) block nothing."""
    # A hot journal next to the witness store would change what SQLite reads from it.
    commit(chain, {"app/util.py": PLANTER.replace("'inventory'", repr(planted.split("/")[0]))
                   .replace("'at-base-planted.json'", repr(planted.split("/")[1]))},
           "agent change")
    data = check_json(chain)
    assert data["exit_code"] == 4, data["reasons"]
    assert planted in reason(data, "state-tampered")["detail"]
    # The twin: a platform skip whose base run agentgate caches itself.
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper()\n",
                   "tests/test_skip.py": "import pytest\n\nfrom app.util import shout\n\n\n"
                   "@pytest.mark.skip\ndef test_later():\n    assert shout('a') == 'A'\n"},
           "a skipped test")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper()  # same\n"})
    (chain.path / ".git" / "agentgate" / planted).unlink()
    clean = check_json(chain)
    assert clean["exit_code"] == 0, clean["reasons"]
    assert list((chain.path / ".git" / "agentgate" / "inventory").glob("at-base-*.json"))
