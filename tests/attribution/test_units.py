"""The pure parts of attribution: JUnit outcomes, the verdict table, the run command line.

The verdict table is tested on records built directly (the verdict function takes plain
data); every pytest behaviour it relies on is tested against real pytest runs, here and in
test_attribution.py.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentgate.attribution.runs import (
    PLUGINS_OFF,
    Harness,
    Run,
    RunFolder,
    RunRecord,
    Tree,
    batches,
    find_inifile,
    pytest_args,
    run_env,
)
from agentgate.attribution.summary import AttributionDetail, Summary, build_result
from agentgate.attribution.verdict import Attribution, TreeEvidence, decide, signature
from agentgate.core import config as config_mod
from agentgate.core.model import Verdict
from agentgate.report.render import text_lines
from agentgate.run.junit import (
    Outcome,
    cases_for,
    junit_address,
    outcome_of,
    parse_cases,
    read_outcome,
)
from tests.support.text import unwrap

P, F, E, S = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED
NC, HE, CE = Outcome.NOT_COLLECTED, Outcome.HARNESS_ERROR, Outcome.COLLECTION_ERROR


# --- JUnit ---------------------------------------------------------------------------------

def test_address_mangles_like_pytest() -> None:
    assert junit_address("tests/test_a.py::test_x") == ("tests.test_a", "test_x")
    assert junit_address("./tests/test_a.py::TestK::test_x[a/b::c]") == (
        "tests.test_a.TestK", "test_x[a/b::c]")
    # pytest escapes a parameter's non-ASCII and backslashes, and takes them back so.
    from agentgate.run.junit import normalise_nodeid

    assert normalise_nodeid(".\\tests\\test_w.py::test_w[\\xfc]") == (
        "tests/test_w.py::test_w[\\xfc]")
    assert junit_address("tests/test_w.py::test_w[\\d+]") == ("tests.test_w", "test_w[\\d+]")


def _xml(*cases: str) -> str:
    body = "".join(cases)
    return f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>'


CASE_OK = '<testcase classname="tests.test_a" name="test_x" time="0.1"/>'
CASE_FAIL = ('<testcase classname="tests.test_a" name="test_x"><failure message="assert 0">'
             "trace</failure></testcase>")
CASE_TEARDOWN = ('<testcase classname="tests.test_a" name="test_x"><error message="failed on '
                 'teardown">t</error></testcase>')
CASE_COLLECT = ('<testcase classname="" name="tests.test_a"><error message="collection failure">'
                "ImportError</error></testcase>")


def test_outcome_comes_from_the_testcase_not_the_exit_code() -> None:
    # Exit 1 with our test passing: another test failed; ours did not.
    other = '<testcase classname="tests.test_a" name="test_y"><failure message="x"/></testcase>'
    cases = parse_cases(_xml(CASE_OK, other))
    assert outcome_of(cases, "tests/test_a.py::test_x", 1).outcome is P
    assert outcome_of(cases, "tests/test_a.py::test_y", 1).outcome is F


def test_failure_wins_over_teardown_error_and_keeps_its_message() -> None:
    result = outcome_of(parse_cases(_xml(CASE_FAIL, CASE_TEARDOWN)), "tests/test_a.py::test_x", 1)
    assert result.outcome is F
    assert result.detail == "assert 0; then failed on teardown"  # the error follows it
    assert outcome_of(parse_cases(_xml(CASE_OK, CASE_TEARDOWN)), "tests/test_a.py::test_x",
                      1).outcome is E


def test_parametrised_function_id_takes_the_worst_case() -> None:
    cases = parse_cases(_xml(
        '<testcase classname="tests.test_a" name="test_p[1]"/>',
        '<testcase classname="tests.test_a" name="test_p[2]"><failure message="no"/></testcase>',
    ))
    assert outcome_of(cases, "tests/test_a.py::test_p", 1).outcome is F
    assert outcome_of(cases, "tests/test_a.py::test_p[1]", 1).outcome is P
    assert outcome_of(cases, "tests/test_a.py::test_pp", 1).outcome is NC


def test_missing_case_is_not_collected_collection_error_or_harness_error() -> None:
    nodeid = "tests/test_a.py::test_x"
    assert outcome_of(parse_cases(_xml()), nodeid, 4).outcome is NC  # "not found: ..."
    assert outcome_of(parse_cases(_xml()), nodeid, 5).outcome is NC  # deselected / none
    assert outcome_of(parse_cases(_xml(CASE_COLLECT)), nodeid, 2).outcome is CE
    assert outcome_of(parse_cases(_xml()), nodeid, 2).outcome is HE  # interrupted


def test_read_outcome_without_xml_or_with_broken_xml_is_a_harness_error(tmp_path: Path) -> None:
    xml = tmp_path / "out.xml"
    missing = read_outcome(xml, "t.py::t", 4, "E   SyntaxError: invalid syntax\n")
    assert missing.outcome is HE
    assert "SyntaxError" in missing.detail
    xml.write_text("<testsuites><testsuite>", encoding="utf-8")  # a killed writer's half file
    assert read_outcome(xml, "t.py::t", 1).outcome is HE
    xml.write_text(_xml(CASE_OK), encoding="utf-8")
    assert read_outcome(xml, "tests/test_a.py::test_x", 3).outcome is HE  # internal error
    assert read_outcome(xml, "tests/test_a.py::test_x", 0).outcome is P


def test_real_pytest_reports_are_read(tmp_path: Path) -> None:
    """The shapes above are the ones pytest writes: check them against a real run."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_r.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef f():\n    yield\n    raise RuntimeError('td')\n\n"
        "def test_fail(f):\n    assert 0\n\ndef test_err(f):\n    pass\n\n"
        "@pytest.mark.xfail\ndef test_xf():\n    assert 0\n\ndef test_ok():\n    pass\n",
        encoding="utf-8",
    )
    (tmp_path / "tests" / "test_broken.py").write_text("import nonexistent_mod_xyz\n", "utf-8")
    results = {}
    for name in ("test_fail", "test_err", "test_xf", "test_ok", "test_nope"):
        results[name] = _real_outcome(tmp_path, f"tests/test_r.py::{name}")
    results["broken"] = _real_outcome(tmp_path, "tests/test_broken.py::test_x")
    assert results == {"test_fail": F, "test_err": E, "test_xf": S, "test_ok": P,
                       "test_nope": NC, "broken": CE}


def _real_outcome(folder: Path, nodeid: str) -> Outcome:
    xml = folder / "out.xml"
    xml.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={xml}", nodeid],
        cwd=folder, capture_output=True, text=True,
    )
    return read_outcome(xml, nodeid, proc.returncode, proc.stderr).outcome


# --- the verdict table -----------------------------------------------------------------------

def _tree(name: str, swept: list[Outcome], matched: dict[int, list[Outcome]] | None = None
          ) -> TreeEvidence:
    records = [RunRecord(Run(name, seed, "swept"), out, "", 0.0) for seed, out in enumerate(swept)]
    for seed, outs in (matched or {}).items():
        records += [RunRecord(Run(name, seed, "matched", i + 1), o, "", 0.0)
                    for i, o in enumerate(outs)]
    return TreeEvidence(name, name * 5, tuple(records))


def _verdict(base: TreeEvidence | None, head: TreeEvidence, problem: str = "") -> tuple[str, bool]:
    decision = decide(base, head, stage="swept", base_problem=problem)
    return str(decision.verdict), decision.freeze_allowed


def test_paired_evidence_blames_the_patch_even_for_one_seed() -> None:
    base = _tree("base", [P, P, P, P], {3: [P, P]})
    head = _tree("head", [P, P, P, F], {3: [F, F]})
    assert _verdict(base, head) == ("PATCH_INDUCED", False)
    # The same single failure without the re-runs is too thin to blame anyone (issue 13).
    thin = decide(_tree("base", [P] * 4), _tree("head", [P, P, P, F]), stage="swept")
    assert (thin.verdict, thin.freeze_allowed) == (Attribution.INCONCLUSIVE, False)
    assert "--runs 20 (runs a tree at which" in thin.detail


def test_a_consistent_failure_on_too_few_runs_is_inconclusive_not_harness_env() -> None:
    """Issue 13: head 3/3 failing, base 0/3, swept once per seed, was HARNESS_ENV. Nothing
    there is flaky; the sample is small. The verdict says so and how many runs settle it."""
    decision = decide(_tree("base", [P] * 3), _tree("head", [F] * 3), stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.INCONCLUSIVE, False)
    assert decision.verdict.gate is Verdict.PROMOTE
    assert decision.detail == (
        "head fails on seeds 0, 1, 2 (3/3 in the swept runs), base never fails; Fisher p = "
        "0.1: the evidence is thin (not significant at 0.05); --runs 4 (runs a tree at which "
        "the difference would be significant if these rates hold) or --mode both (re-runs the "
        "failing seeds on both trees) would settle it")
    # At that many runs the same rates are significant: the patch is blamed.
    settled = decide(_tree("base", [P] * 4), _tree("head", [F] * 4), stage="swept")
    assert settled.verdict is Attribution.PATCH_INDUCED


def test_significant_but_unpaired_difference_blames_the_patch() -> None:
    head = _tree("head", [F, F, F, F, F, F, P, P], {0: [F, P]})  # seed 0 is not consistent
    assert _verdict(_tree("base", [P] * 8), head) == ("PATCH_INDUCED", False)
    weak = _tree("head", [F, P, P, P, P, P, P, P], {0: [F, P]})
    # Head fails now and then, base never: too thin to blame, and no harness to blame either
    # (flake trial: a patch that brought in a ~30% flake was told to fix the harness).
    assert _verdict(_tree("base", [P] * 8), weak) == ("INCONCLUSIVE", False)
    # Base failing now and then, head never: the harness (a flaky base), as before.
    assert _verdict(_tree("base", [F, P, P, P, P, P, P, P], {0: [F, P]}),
                    _tree("head", [P] * 8)) == ("HARNESS_ENV", False)


def test_head_clean_base_failing_is_patch_masks() -> None:
    base = _tree("base", [F, P, F, P], {0: [F, F], 2: [F, F]})
    head = _tree("head", [P, P, P, P], {0: [P, P], 2: [P, P]})
    assert _verdict(base, head) == ("PATCH_MASKS", False)
    S = Outcome.SKIPPED  # a skip added at head: it never ran there, and the detail says so
    skipped = decide(base, _tree("head", [S] * 4, {0: [S, S], 2: [S, S]}), stage="swept")
    assert skipped.verdict is Attribution.PATCH_MASKS
    assert "head skips or xfails it in every run" in skipped.detail


def test_pre_existing_needs_the_same_seeds_failing_every_time() -> None:
    base = _tree("base", [F, P, P, F], {0: [F, F], 3: [F, F]})
    head = _tree("head", [F, P, P, F], {0: [F, F], 3: [F, F]})
    assert _verdict(base, head) == ("PRE_EXISTING", True)
    # Swept only: same seeds, but never shown to fail every time: no freeze.
    assert _verdict(_tree("base", [F, P, P, F]), _tree("head", [F, P, P, F])) == (
        "PRE_EXISTING", False)
    # Different seeds, or a seed that also passes: the harness, not the code.
    assert _verdict(_tree("base", [F, P, P, P]), _tree("head", [P, P, P, F]))[0] == "HARNESS_ENV"
    flaky = _tree("head", [F, P, P, F], {0: [F, P], 3: [F, F]})
    assert _verdict(base, flaky) == ("HARNESS_ENV", False)


def test_no_failure_anywhere_is_no_repro_and_skips_count_as_not_failing() -> None:
    assert _verdict(_tree("base", [P, P]), _tree("head", [P, S])) == ("NO_REPRO", False)


def test_trees_that_cannot_run_the_test() -> None:
    ok = _tree("head", [P, P])
    assert _verdict(None, ok, "cannot check out") == ("BASE_UNAVAILABLE", False)
    assert _verdict(_tree("base", [NC, NC]), ok) == ("NOT_COLLECTED", False)
    assert _verdict(_tree("base", [HE, CE]), ok) == ("BASE_UNAVAILABLE", False)
    assert _verdict(_tree("base", [HE, HE]), _tree("head", [HE, HE])) == ("HARNESS_ENV", False)
    assert _verdict(_tree("base", [P, P]), _tree("head", [CE, CE])) == ("PATCH_INDUCED", False)
    # A harness that fails only sometimes is unreliable, whatever else happened.
    assert _verdict(_tree("base", [P, HE]), _tree("head", [F, F])) == ("HARNESS_ENV", False)


def test_exit_code_mapping() -> None:
    assert {a: a.gate for a in Attribution} == {
        Attribution.PATCH_INDUCED: Verdict.FAILED,
        Attribution.PRE_EXISTING: Verdict.SCOPED,
        Attribution.NO_REPRO: Verdict.SCOPED,
        Attribution.HARNESS_ENV: Verdict.PROMOTE,
        Attribution.PATCH_MASKS: Verdict.PROMOTE,
        Attribution.NOT_COLLECTED: Verdict.PROMOTE,
        Attribution.BASE_UNAVAILABLE: Verdict.PROMOTE,
        Attribution.INCONCLUSIVE: Verdict.PROMOTE,
    }


# --- the run's command line and environment -------------------------------------------------

def _harness(tmp_path: Path, context: str = "alone") -> Harness:
    config = config_mod.Config(root=tmp_path, sources=("src",), tz="UTC", lc_all="C.UTF-8")
    return Harness(config=config, python=sys.executable, nodeid="tests/test_a.py::test_x",
                   scratch=tmp_path / "scratch", timeout=5.0, context=context)


def test_pytest_args_disable_reordering_and_rerun_plugins(tmp_path: Path) -> None:
    tree = Tree("head", "0" * 40, tmp_path / "wt", tmp_path / "scratch" / "pytest.ini")
    args = pytest_args(_harness(tmp_path), tree, tmp_path / "x.xml")
    assert args[:2] == ["-m", "pytest"]
    for name in PLUGINS_OFF:
        assert f"no:{name}" in args
    assert args[args.index("--rootdir") + 1] == os.fspath(tree.path)
    assert args[args.index("--confcutdir") + 1] == os.fspath(tree.path)
    assert args[args.index("-c") + 1] == os.fspath(tree.inifile)
    assert args[-1] == "tests/test_a.py::test_x"
    file_args = pytest_args(_harness(tmp_path, "file"), tree, tmp_path / "x.xml")
    assert file_args[-1] == "tests/test_a.py"
    assert "_agentgate_order" in file_args


def test_a_project_giving_randomlys_options_keeps_it_loaded_in_our_order(tmp_path: Path) -> None:
    """Flake trial round 3: ``addopts = --randomly-seed=1234`` with ``-p no:randomly`` made
    every run a usage error, so a patch's failure was HARNESS_ENV."""
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\naddopts = -q --randomly-seed=1234\n", encoding="utf-8")
    args = pytest_args(_harness(tmp_path), Tree("head", "0" * 40, tmp_path, ini),
                       tmp_path / "x.xml")
    assert "no:randomly" not in args and "--randomly-dont-reorganize" in args
    assert "no:rerunfailures" in args
    ini.write_text("[pytest]\naddopts = -q\n", encoding="utf-8")
    args = pytest_args(_harness(tmp_path), Tree("head", "0" * 40, tmp_path, ini),
                       tmp_path / "x.xml")
    assert "no:randomly" in args and "--randomly-dont-reorganize" not in args


def test_run_env_pins_inputs_and_puts_the_tree_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p randomly")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    monkeypatch.setenv("TZ", "America/New_York")
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    tree = Tree("head", "0" * 40, tmp_path / "wt", tmp_path / "pytest.ini")
    monkeypatch.setenv("XDG_CACHE_HOME", "/elsewhere/cache")
    env = run_env(_harness(tmp_path), tree, 7, RunFolder(tmp_path / "run"))
    assert (env["PYTHONHASHSEED"], env["TZ"], env["LC_ALL"]) == ("7", "UTC", "C.UTF-8")
    assert (env["HOME"], env["TMPDIR"]) == (os.fspath(tmp_path / "run" / "home"),
                                            os.fspath(tmp_path / "run" / "home" / "tmp"))
    assert "XDG_CACHE_HOME" not in env
    assert env["PYTHONNOUSERSITE"] == "1"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == os.fspath((tmp_path / "wt" / "src").resolve())
    assert "/elsewhere" not in env["PYTHONPATH"]
    assert "PYTEST_ADDOPTS" not in env and "GIT_DIR" not in env
    file_env = run_env(_harness(tmp_path, "file"), tree, 7, RunFolder(tmp_path / "run"))
    assert file_env["AGENTGATE_ORDER_SEED"] == "7"
    assert file_env["PYTHONPATH"].split(os.pathsep)[-1] == os.fspath(tmp_path / "run" / "plugins")


def test_run_env_keeps_the_users_git_identity_and_nothing_else_of_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user"
    (user / ".config" / "git").mkdir(parents=True)
    (user / ".config" / "git" / "config").write_text("[user]\n\tname = U\n", encoding="utf-8")
    monkeypatch.setenv("HOME", os.fspath(user))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    tree = Tree("head", "0" * 40, tmp_path / "wt", tmp_path / "pytest.ini")
    env = run_env(_harness(tmp_path), tree, 7, RunFolder(tmp_path / "run"))
    assert env["GIT_CONFIG_GLOBAL"] == os.fspath(user / ".config" / "git" / "config")
    assert env["HOME"] == os.fspath(tmp_path / "run" / "home")
    (user / ".gitconfig").write_text("", encoding="utf-8")
    env = run_env(_harness(tmp_path), tree, 7, RunFolder(tmp_path / "run"))
    assert env["GIT_CONFIG_GLOBAL"] == os.fspath(user / ".gitconfig")


def test_find_inifile_stays_inside_the_tree(tmp_path: Path) -> None:
    outer = tmp_path / "main"
    tree = outer / ".git" / "agentgate" / "worktrees" / "abc"
    (tree / "tests").mkdir(parents=True)
    (outer / "pytest.ini").write_text("[pytest]\naddopts = --bogus\n", encoding="utf-8")
    empty = tmp_path / "empty.ini"
    assert find_inifile(tree, "tests/test_a.py::t", empty) == empty
    (tree / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    assert find_inifile(tree, "tests/test_a.py::t", empty) == empty  # no pytest table
    (tree / "tox.ini").write_text("[pytest]\n", encoding="utf-8")
    assert find_inifile(tree, "tests/test_a.py::t", empty) == tree / "tox.ini"
    (tree / "tests" / "pytest.ini").write_text("", encoding="utf-8")
    assert find_inifile(tree, "tests/test_a.py::t", empty) == tree / "tests" / "pytest.ini"


def test_text_report_exact_output() -> None:
    base = _tree("base", [P, P, P, P], {3: [P, P]})
    head = _tree("head", [P, P, P, F], {3: [F, F]})
    summary = Summary(
        nodeid="tests/test_a.py::test_x", mode="both", context="alone", seeds=(0, 1, 2, 3),
        runs=4, repeats=2, stage="swept", jobs=2, serial=False, python="python3",
        env={"TZ": "UTC", "LC_ALL": "C.UTF-8"}, base=base, head=head, reverted=None,
        base_problem="", base_sha=base.sha, head_sha=head.sha, wall_seconds=3.25,
    )
    decision = decide(base, head, stage="swept")
    result = build_result(summary, decision, "agentgate attribute tests/test_a.py::test_x")
    assert unwrap("\n".join(text_lines(result))).splitlines() == [
        "agentgate attribute: failed (exit 1)",
        "  range: basebaseba...headheadhe",
        "  failed: attribute-patch-induced tests/test_a.py::test_x: head fails on seeds 3 "
        "(1/4 in the swept runs), base never fails; Fisher p = 1; every re-run of those seeds "
        "agrees",
        "  test: tests/test_a.py::test_x (context alone, mode both, seeds 0-3, 2 repeats, "
        "TZ=UTC LC_ALL=C.UTF-8)",
        "  verdict: PATCH_INDUCED; freeze not allowed",
        "  base basebaseba: 0/4 failed in the swept runs (0.0%, 95% CI 0.0%-60.2%); "
        "failing seeds: none",
        "  head headheadhe: 1/4 failed in the swept runs (25.0%, 95% CI 0.6%-80.6%); "
        "failing seeds: 3; failed",
        "    seed 3: base failed 0/3, head failed 3/3",
        "  head vs base: Fisher exact p = 1 (two-sided, swept runs)",
        "  runs: 12 in 3.2 s, 2 jobs, python python3",
        "  recheck: agentgate attribute tests/test_a.py::test_x",
    ]
    assert result.exit_code == 1
    assert isinstance(result.detail, AttributionDetail)
    assert result.detail.decision.verdict is Attribution.PATCH_INDUCED
    assert result.to_json()["verdict"] == "PATCH_INDUCED"  # the detail's verdict wins in JSON


def test_head_failing_more_than_base_blames_the_patch() -> None:
    """Flake trial: base fails on seeds 0, 1, 2, 4, 6, 9 every time, head on all ten every
    time: "failures on different seeds ... fix the harness". Seeds 3, 5, 7, 8 pass on base
    and fail on head in every re-run: the patch. And a test failing at random on base that
    head fails always, significantly more often."""
    on_base = {0, 1, 2, 4, 6, 9}
    base = _tree("base", [F if s in on_base else P for s in range(10)],
                 {s: [F, F] if s in on_base else [P, P] for s in range(10)})
    head = _tree("head", [F] * 10, {s: [F, F] for s in range(10)})
    decision = decide(base, head, stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PATCH_INDUCED, False)
    assert "seeds 3, 5, 7, 8 fail on head every time and never on base" in decision.detail
    random_base = _tree("base", [F, P, P, P, F, P, P, F, P, P] * 2)
    assert _verdict(random_base, _tree("head", [F] * 20)) == ("PATCH_INDUCED", False)
    # Head failing no more often than base is no evidence against the patch.
    assert _verdict(random_base, _tree("head", [P, F, P, P, P, F, P, P, F, P] * 2))[0] == (
        "HARNESS_ENV")


def test_timeouts_on_both_trees_allow_no_freeze() -> None:
    """Flake trial: a 3 s test under --timeout 2 was PRE_EXISTING with a freeze allowed."""
    T = Outcome.TIMEOUT
    base = _tree("base", [T, T], {0: [T, T], 1: [T, T]})
    head = _tree("head", [T, T], {0: [T, T], 1: [T, T]})
    decision = decide(base, head, stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PRE_EXISTING, False)
    assert "longer --timeout" in decision.detail
    failing = _tree("head", [F, T], {0: [F, F], 1: [T, T]})  # one real failure: as before
    assert decide(_tree("base", [F, T], {0: [F, F], 1: [T, T]}), failing,
                  stage="swept").freeze_allowed


def _failing(name: str, details: list[str], outcome: Outcome = F) -> TreeEvidence:
    """Every seed fails on every run (swept and two matched), each seed with its detail."""
    records = [RunRecord(Run(name, seed, stage, attempt), outcome, detail, 0.0)
               for seed, detail in enumerate(details)
               for stage, attempt in (("swept", 0), ("matched", 1), ("matched", 2))]
    return TreeEvidence(name, name * 5, tuple(records))


@pytest.mark.parametrize(("base", "head"), [
    # Flake trial: the same seeds fail, base with its assertion, head with a new TypeError.
    (["assert 1 == 2"] * 2, ["TypeError: unsupported operand"] * 2),
    # A fixture's teardown error at the base; the test body failing at head.
    (['failed on teardown with "KeyError: \'td\'"'] * 2, ["assert 0"] * 2),
    # Base fails on an assertion, head hangs past pytest-timeout's limit.
    (["assert 0"] * 2, ["Failed: Timeout >2.0s"] * 2),
    # A parametrized function's id: base fails one case, head another.
    (["cases test_sq[three]: assert 9 == 8"] * 2, ["cases test_sq[two]: assert 4 == 5"] * 2),
], ids=["new-exception", "teardown-then-call", "failure-then-hang", "other-cases"])
def test_a_failure_head_shows_and_base_never_does_allows_no_freeze(
    base: list[str], head: list[str],
) -> None:
    decision = decide(_failing("base", base), _failing("head", head), stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PATCH_INDUCED, False)
    assert ("the patch changed how it fails" in decision.detail
            or "the patch broke it" in decision.detail), decision.detail  # other cases


def test_the_same_failure_with_other_values_is_pre_existing_and_freezable() -> None:
    """The twin: the same exception in the same phase and cases, its values differing from
    run to run (a timestamp, an address), is the base's failure."""
    base = _failing("base", ["TypeError: bad 0x7f01"] * 2)
    head = _failing("head", ["TypeError: bad 0x7e99"] * 2)
    decision = decide(base, head, stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PRE_EXISTING, True)


def test_pytest_timeouts_on_both_trees_allow_no_freeze() -> None:
    """Flake trial: a project's own pytest-timeout reports a hang as a plain failure
    ("Failed: Timeout"), which the time-limit rule did not see: a freeze was allowed."""
    hang = ["Failed: Timeout >2.0s"] * 2
    decision = decide(_failing("base", hang), _failing("head", hang), stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PRE_EXISTING, False)


def test_seeds_head_always_fails_and_base_never_blame_the_patch_at_any_rate() -> None:
    """Flake trial: base fails seeds 1, 3, 4; the patch fixes those and breaks 6, 7 (head
    fails less often in all): "failures on different seeds ... fix the harness"."""
    on_base, on_head = {1, 3, 4}, {6, 7}
    base = _tree("base", [F if s in on_base else P for s in range(8)],
                 {s: [F, F] if s in on_base else [P, P] for s in range(8)})
    head = _tree("head", [F if s in on_head else P for s in range(8)],
                 {s: [F, F] if s in on_head else [P, P] for s in range(8)})
    decision = decide(base, head, stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PATCH_INDUCED, False)
    assert "seeds 6, 7 fail on head every time and never on base" in decision.detail


def test_a_parametrized_functions_id_names_the_cases_that_failed() -> None:
    """Flake trial: base failing ``test_sq[three]`` and head ``test_sq[two]`` looked like one
    failure of ``test_sq``; the detail names the failing cases, so ``signature`` tells."""
    case = ('<testcase classname="tests.test_a" name="test_x[{0}]" file="tests/test_a.py" '
            'time="0.1">{1}</testcase>')
    failed = '<failure message="assert 0">x</failure>'
    xml = _xml(case.format("one", failed), case.format("two", ""), case.format("three", failed))
    result = outcome_of(parse_cases(xml), "tests/test_a.py::test_x", 1)
    assert result.detail == "cases test_x[one], test_x[three]: assert 0"
    one = outcome_of(parse_cases(xml), "tests/test_a.py::test_x[one]", 1)
    assert one.detail == "assert 0"  # a case's own id: its message alone


def test_a_class_id_is_every_test_of_the_class() -> None:
    """Flake trial: ``tests/test_a.py::TestX`` exited 64 ("pytest collects no test"), though
    pytest runs the class; its tests are its cases, a nested class's too, and no other."""
    case = '<testcase classname="{0}" name="{1}" time="0.1">{2}</testcase>'
    failed = '<failure message="assert 0">x</failure>'
    xml = _xml(case.format("tests.test_a.TestX", "test_one", failed),
               case.format("tests.test_a.TestX.Inner", "test_two", ""),
               case.format("tests.test_a.TestXY", "test_three", failed),
               case.format("tests.test_a", "test_x", failed))
    cases = parse_cases(xml)
    assert [c.name for c in cases_for(cases, "tests/test_a.py::TestX")] == ["test_one", "test_two"]
    result = outcome_of(cases, "tests/test_a.py::TestX", 1)
    assert (result.outcome, result.detail) == (F, "cases test_one: assert 0")


def test_a_nested_classs_test_of_the_same_name_is_another_case() -> None:
    """Flake trial round 3: ``TestX::test_a`` failing at the base and ``TestX::TestY::test_a``
    at head were one name, so one failure: PRE_EXISTING, freezable."""
    case = '<testcase classname="{0}" name="test_a" time="0.1">{1}</testcase>'
    failed = '<failure message="assert 0">x</failure>'
    base = outcome_of(parse_cases(_xml(case.format("tests.test_a.TestX", failed),
                                       case.format("tests.test_a.TestX.TestY", ""))),
                      "tests/test_a.py::TestX", 1)
    head = outcome_of(parse_cases(_xml(case.format("tests.test_a.TestX", failed),
                                       case.format("tests.test_a.TestX.TestY", failed))),
                      "tests/test_a.py::TestX", 1)
    assert base.detail == "cases test_a: assert 0"
    assert head.detail == "cases TestY.test_a, test_a: assert 0"


def test_two_assertions_of_one_test_are_two_failures() -> None:
    """Flake trial round 3: the base failed one assertion, the patch broke an earlier one;
    both AssertionError in call, so one failure: PRE_EXISTING. The test file's line the
    failure went through is part of it; lines of the code under test are not."""
    case = ('<testcase classname="tests.test_a" name="test_x" file="tests/test_a.py" '
            'time="0.1"><failure message="assert 1 == 2">{0}</failure></testcase>')
    trace = ("def test_x():\n&gt;       assert a() == {0}\nE   assert 1 == 2\n\n"
             "app/core.py:{1}: in a\n    x = 1\ntests/test_a.py:{2}: AssertionError")
    def record(line: int, app: int) -> RunRecord:
        xml = _xml(case.format(trace.format(2, app, line)))
        detail = outcome_of(parse_cases(xml), "tests/test_a.py::test_x", 1).detail
        return RunRecord(Run("head", 0, "swept"), F, detail, 0.1)

    assert signature(record(5, 3)) != signature(record(6, 3))
    assert signature(record(5, 3)) == signature(record(5, 9))  # the code moved, not the test
    assert signature(record(5, 3)) == "failed in call: AssertionError at tests/test_a.py:5"


def test_a_collection_error_only_head_shows_on_some_seeds_blames_the_patch() -> None:
    """Flake trial: the patch added a set-order error at import, so head's module fails to
    import on some seeds: "the harness is unreliable; fix it first". Base always ran it."""
    CE = Outcome.COLLECTION_ERROR
    base = _tree("base", [P, P, P, P])
    head = _tree("head", [P, CE, P, CE])
    decision = decide(base, head, stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PATCH_INDUCED, False)
    assert "fail to import on seeds 1, 3" in decision.detail
    # The twin: both trees fail to collect now and then: the harness, as before.
    assert _verdict(_tree("base", [P, CE, P, P]), head) == ("HARNESS_ENV", False)


@pytest.mark.parametrize(("ini", "distributes"), [
    ("[pytest]\naddopts = -n 2 -q\n", True),
    ("[pytest]\naddopts = --numprocesses=auto\n", True),
    ("[pytest]\naddopts = -n4\n", True),
    ("[pytest]\naddopts = -p no:xdist -q\n", False),  # then -n 0 would be unknown
    ("", False),
])
def test_xdist_is_turned_off_the_way_the_project_needs(
    tmp_path: Path, ini: str, distributes: bool,
) -> None:
    """Flake trial: a project's ``addopts = -n 2`` next to ``-p no:xdist`` made every run a
    usage error; with xdist installed such a project gets ``-n 0``, any other ``-p no:xdist``."""
    (tmp_path / "scratch").mkdir(exist_ok=True)
    (tmp_path / "pytest.ini").write_text(ini, encoding="utf-8")
    tree = Tree("head", "0" * 40, tmp_path / "wt", tmp_path / "pytest.ini")
    harness = dataclasses.replace(_harness(tmp_path), xdist=True)
    args = pytest_args(harness, tree, tmp_path / "x.xml")
    assert ("no:xdist" not in args, "-n" in args) == (distributes, distributes)


def test_runs_go_in_batches_of_one_tree_that_alternate() -> None:
    """No code of the patch runs beside a base run (flake trial f11); the trees still
    alternate a few seeds at a time."""
    from agentgate.attribution.stages import matched as _matched
    from agentgate.attribution.stages import swept as _swept

    swept = _swept([0, 1, 2, 3, 4], ["base", "head"], 2, False)
    assert [[(r.tree, r.seed) for r in b] for b in batches(swept, 2)] == [
        [("base", 0), ("base", 1)], [("head", 0), ("head", 1)],
        [("base", 2), ("base", 3)], [("head", 2), ("head", 3)], [("base", 4)], [("head", 4)]]
    matched = _matched([7], ["base", "head"], 3, 1, 2, False)
    assert [[(r.tree, r.attempt) for r in b] for b in batches(matched, 2)] == [
        [("base", 1), ("base", 2)], [("head", 1), ("head", 2)], [("base", 3)], [("head", 3)]]
    serial = _swept([0, 1], ["base", "head"], 1, True)
    assert [[(r.tree, r.seed) for r in b] for b in batches(serial, 1)] == [
        [("base", 0)], [("base", 1)], [("head", 0)], [("head", 1)]]
    mixed = [Run("base", 0, "swept"), Run("reverted", 0, "swept"), Run("base", 1, "swept")]
    assert [len(b) for b in batches(mixed, 8)] == [1, 1, 1]


# --- flake trial round 4: how a failure fails ---------------------------------------------------

CASE_FAIL_THEN_TEARDOWN = (
    '<testcase classname="tests.test_a" name="test_x"><failure message="assert 0">trace'
    '</failure><error message="failed on teardown with &quot;AssertionError: leaked&quot;">t'
    "</error></testcase>")


def test_a_teardown_error_after_the_failure_is_part_of_how_it_failed() -> None:
    """pytest writes a teardown's error into the call's ``<testcase>`` after its failure;
    only the failure was read, so a leaked thread the patch added went unseen (r15)."""
    alone = outcome_of(parse_cases(_xml(CASE_FAIL)), "tests/test_a.py::test_x", 1)
    # pytest 9 writes the teardown's error as a second testcase of the same name; the same
    # testcase holds both elsewhere.
    second = CASE_TEARDOWN.replace('message="failed on teardown"',
                                   'message="failed on teardown with &quot;AssertionError: '
                                   'leaked&quot;"')
    for xml in (_xml(CASE_FAIL, second), _xml(CASE_FAIL_THEN_TEARDOWN)):
        both = outcome_of(parse_cases(xml), "tests/test_a.py::test_x", 1)
        assert both.outcome is alone.outcome is F
        decision = decide(_failing("base", [alone.detail] * 2),
                          _failing("head", [both.detail] * 2), stage="swept")
        assert (decision.verdict, decision.freeze_allowed) == (Attribution.PATCH_INDUCED, False)
        assert "then error in teardown: AssertionError" in decision.detail


@pytest.mark.parametrize(("base", "head", "verdict"), [
    # A loop's assert: the same line and exception, another item, each tree steady (r02).
    (["AssertionError: b (at tests/test_t.py:5)"] * 2,
     ["AssertionError: a (at tests/test_t.py:5)"] * 2, "PATCH_INDUCED"),
    # The twin: values that differ between the trees only (an address, a path).
    (["KeyError: <Obj at 0x7f01> /tmp/x/1.json"] * 2,
     ["KeyError: <Obj at 0x7e99> /tmp/y/2.json"] * 2, "PRE_EXISTING"),
    # A number each tree gives every run, another at head: the patch changed the value the
    # assert saw (flake trial round 5, r25: masked, the two were alike, and it was frozen).
    (["assert 29 == 30 (at tests/test_t.py:5)"] * 2,
     ["assert 0 == 30 (at tests/test_t.py:5)"] * 2, "PATCH_INDUCED"),
], ids=["other-message", "other-values", "other-steady-number"])
def test_each_trees_steady_message_must_agree_for_a_freeze(
    base: list[str], head: list[str], verdict: str,
) -> None:
    decision = decide(_failing("base", base), _failing("head", head), stage="swept")
    assert str(decision.verdict) == verdict, decision.detail
    assert decision.freeze_allowed is (verdict == "PRE_EXISTING")


def test_numbers_that_differ_from_run_to_run_are_masked() -> None:
    """The twin of r25: a duration in the message, another in every run of either tree."""
    def tree(name: str, times: list[str]) -> TreeEvidence:
        return TreeEvidence(name, name * 5, tuple(
            RunRecord(Run(name, 0, stage, attempt), F, f"TimeoutError: took {t} s", 0.0)
            for (stage, attempt), t in zip((("swept", 0), ("matched", 1), ("matched", 2)),
                                           times, strict=True)))
    decision = decide(tree("base", ["3.2", "3.4", "3.1"]), tree("head", ["4.0", "4.2", "3.9"]),
                      stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PRE_EXISTING, True)


def test_messages_that_differ_from_run_to_run_say_nothing() -> None:
    base = TreeEvidence("base", "b" * 5, tuple(
        RunRecord(Run("base", 0, stage, attempt), F, f"AssertionError: {word}", 0.0)
        for (stage, attempt), word in zip((("swept", 0), ("matched", 1), ("matched", 2)),
                                          ("abc", "xyz", "qrs"), strict=True)))
    head = _failing("head", ["AssertionError: def"])
    decision = decide(base, head, stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PRE_EXISTING, True)


def test_a_port_in_use_on_both_trees_is_the_machines_doing() -> None:
    """r17: the developer's run left the port in TIME_WAIT; every run of both trees died at
    ``bind``: PRE_EXISTING and a freeze."""
    busy = ["OSError: [Errno 98] Address already in use (at tests/test_srv.py:9)"] * 2
    decision = decide(_failing("base", busy), _failing("head", busy), stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.HARNESS_ENV, False)


def test_head_failing_every_run_where_base_flakes_asks_for_more_runs() -> None:
    """r13: base fails now and then, head every run: not significant at four runs, which
    was "fix the harness"; more runs settle it."""
    base = _tree("base", [F, P, P, P], {0: [F, P]})
    head = _tree("head", [F, F, F, F], {0: [F, F]})
    decision = decide(base, head, stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.INCONCLUSIVE, False)
    assert "--runs" in decision.detail


def _runs(name: str, details: list[str | None]) -> TreeEvidence:
    """One swept run per seed: a failure with that detail, or a pass (None)."""
    return TreeEvidence(name, name * 5, tuple(
        RunRecord(Run(name, seed, "swept"), P if d is None else F, d or "", 0.0)
        for seed, d in enumerate(details)))


def test_a_case_head_always_fails_is_the_patchs_beside_a_flaky_case() -> None:
    """r08: case [2] flakes on both trees; head broke case [1] for good. The id's runs were
    "fix the harness"."""
    flake, broken = "cases test_scale[2]: assert 0", "cases test_scale[1]: assert 1 == 2"
    both = "cases test_scale[1], test_scale[2]: assert 1 == 2"
    base = _runs("base", [None, flake, None, None, flake, None])
    head = _runs("head", [broken, both, broken, broken, both, broken])
    decision = decide(base, head, stage="swept")
    assert (decision.verdict, decision.freeze_allowed) == (Attribution.PATCH_INDUCED, False)
    assert "case test_scale[1] fails in all 6 runs on head" in decision.detail
    # The twin: the same flaky case on both trees, nothing broken: no blame.
    same = decide(base, _runs("head", [None, flake, None, flake, None, None]), stage="swept")
    assert same.verdict is not Attribution.PATCH_INDUCED


def test_a_signature_less_its_identity_keeps_the_teardown_that_follows() -> None:
    """The confirming full run records no identity; comparing it with the runs' signatures
    drops the identity only, not what follows it."""
    from agentgate.attribution.verdict import failure_signature, without_identity

    detail = "test#abc: assert 0 (at tests/t.py:3); then failed on teardown with \"OSError: x\""
    plain = "assert 0 (at tests/t.py:3); then failed on teardown with \"OSError: x\""
    assert without_identity(failure_signature(F, detail)) == failure_signature(F, plain)
    assert "then error in teardown: OSError" in failure_signature(F, plain)
