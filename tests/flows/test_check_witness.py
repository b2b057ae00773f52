"""plan and check with a witness: per-test selection inside the import-closure band's rules."""

from __future__ import annotations

import json

import pytest

from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.text import unwrap

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/core.py": "def lookup():\n    return 1\n\n\ndef other():\n    return 2\n",
    "tests/test_core.py": "from app.core import lookup, other\n\n\n"
    "def test_lookup():\n    assert lookup() == 1\n\n\n"
    "def test_other():\n    assert other() == 2\n",
}


def _plan(repo: GitRepo, base: str) -> dict[str, object]:
    proc = run_agentgate("plan", "--base", base, "--format", "json", cwd=repo.path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_without_a_witness_the_band_is_test_files(repo: GitRepo) -> None:
    repo.files(FILES)
    base = repo.commit("initial")
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch other()")
    data = _plan(repo, base)
    assert data["tests"] == ["tests/test_core.py"]
    assert "witness" not in data
    assert any("witness" in note for note in data["notes"])  # says why none was used


def test_with_a_witness_only_the_tests_that_ran_the_change_run(repo: GitRepo) -> None:
    repo.files(FILES)
    base = repo.commit("initial")
    recorded = run_agentgate("witness", "record", cwd=repo.path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch other()")
    data = _plan(repo, base)
    assert data["tests"] == ["tests/test_core.py::test_other"]
    witness = data["witness"]
    assert isinstance(witness, dict) and witness["counts"]["skipped"] == 1
    # The text counts what ``tests`` lists (issue 12 item 6), not the closure's files.
    text = run_agentgate("plan", "--base", base, cwd=repo.path).stdout
    assert ("  tests: 1 selected by the witness, in 1 of 1 test file(s) (the import "
            "closure: 1 file(s))\n") in text, text
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    results = json.loads(checked.stdout)["results"]
    assert (results["passed"], results["failed"]) == (1, 0)
    # So does the markdown a step summary is made of (new-user trial: "band: 1 of 1 test
    # file(s)" said the whole suite ran).
    shown = run_agentgate("check", "--base", base, "--format", "markdown", cwd=repo.path)
    assert "- band: 1 selected by the witness, in 1 of 1 test file(s)\n" in shown.stdout, (
        shown.stdout)


def test_a_witnessed_band_still_fails_on_a_broken_test(repo: GitRepo) -> None:
    repo.files(FILES)
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 3"))
    repo.commit("break other()")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["results"]["failed_ids"] == [
        "tests/test_core.py::test_other"
    ]
    # The failure says why it ran, what it executed that changed (new-user trial: that was
    # in -v's per-test decisions alone).
    text = run_agentgate("check", "--base", base, cwd=repo.path).stdout
    failed = [line for line in text.splitlines() if line.startswith("    FAILED")]
    assert failed == ["    FAILED tests/test_core.py::test_other  (run:impacted "
                      "app/core.py::other)"], text


def test_a_failing_shadow_sample_is_reported_as_a_witness_bug(repo: GitRepo) -> None:
    """An input the witness cannot see (an undeclared environment variable) makes a skipped
    test fail; the shadow sample (here 100%) runs it anyway, and the check says so."""
    import os

    files = dict(FILES)
    files["pyproject.toml"] = "[tool.agentgate]\nshadow_percent = 100\n"
    files["tests/test_core.py"] = files["tests/test_core.py"].replace(
        "def test_lookup():\n",
        "def test_lookup():\n    import os\n    assert os.environ.get('SHOP_MODE') != 'off'\n",
    )
    repo.files(files)
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch other()")
    env = {**os.environ, "SHOP_MODE": "off"}
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path, env=env)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    data = json.loads(checked.stdout)
    lookup = "tests/test_core.py::test_lookup"
    assert data["witness"]["shadowed"] == [lookup]
    assert data["witness"]["shadow_stats"]["shadow_failures"] == [lookup]
    assert data["witness"]["shadow_stats"]["escalate_ratio"] == 0
    codes = {(r["code"], r["path"]) for r in data["reasons"]}
    assert ("witness-shadow-failure", lookup) in codes
    assert {code for code, _ in codes} == {"tests-failed", "witness-shadow-failure"}


def test_a_witness_narrows_a_plan_with_a_computed_import(repo: GitRepo) -> None:
    # Issue 12 item 3: a computed import no longer promotes, so the witness narrows the plan:
    # coverage saw what the dynamic import loaded, and the loader's test did not run other().
    repo.files({**FILES,
                "app/plugins.py": "import importlib\n\n\ndef load(name):\n"
                "    return importlib.import_module(name)\n",
                "tests/test_plugins.py": "from app.plugins import load\n\n\n"
                "def test_load():\n    assert load('app.core').lookup() == 1\n"})
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch other()")
    data = _plan(repo, base)
    assert data["verdict"] == "scoped"
    assert data["tests"] == ["tests/test_core.py::test_other"]
    assert any(r["code"] == "dynamic-import" for r in data["reasons"])


PARAMETRIZED = ("import pytest\nfrom app.core import lookup, other\n\n\n"
                "@pytest.mark.parametrize('given', [1, 'I:[84]', \"it's\"])\n"
                "def test_lookup(given):\n    assert lookup() == 1\n\n\n"
                "def test_other():\n    assert other() == 2\n")


def test_impacted_cases_with_awkward_ids_run_and_account_cleanly(
    repo: GitRepo,
) -> None:
    """The witness selects an impacted parametrized test as its function, deselecting the
    cases it vouches for (none here: all three ran the change): each case pytest collects
    for it accounts for it, ids with brackets, colons and quotes included, as on a real
    project (click's ``test_int_option[args0-I:[84]]``). (Selected without its parameters,
    every case once was "not collected".)"""
    repo.files({**FILES, "tests/test_core.py": PARAMETRIZED})
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("app/core.py", FILES["app/core.py"].replace("return 1\n", "return 2 - 1\n"))
    repo.commit("patch lookup()")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    data = json.loads(checked.stdout)
    assert data["tests"] == ["tests/test_core.py::test_lookup"]
    assert data["witness"]["deselected"] == []
    assert (data["results"]["passed"], data["results"]["failed"]) == (3, 0)
    # The text says how many run: one entry, three cases (new-user trial: "538 selected"
    # next to "ran 921").
    text = run_agentgate("plan", "--base", base, cwd=repo.path).stdout
    assert "tests: 1 selected by the witness (3 tests with their cases), in 1 of" in text, text


def test_a_case_of_a_selected_parametrized_test_deselected_by_the_harness_fails(
    repo: GitRepo,
) -> None:
    """The attack next to it: a conftest that deselects one case of the selected test."""
    repo.files({**FILES, "tests/test_core.py": PARAMETRIZED})
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("app/core.py", FILES["app/core.py"].replace("return 1\n", "return 2 - 1\n"))
    repo.write("tests/conftest.py", "def pytest_collection_modifyitems(config, items):\n"
               "    dropped = [i for i in items if 'given1' in i.nodeid or 'I:' in i.nodeid]\n"
               "    config.hook.pytest_deselected(items=dropped)\n"
               "    items[:] = [i for i in items if i not in dropped]\n")
    repo.commit("patch lookup(), drop a case")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode != 0, checked.stdout + checked.stderr
    codes = [r["code"] for r in json.loads(checked.stdout)["reasons"]]
    assert "deselected" in codes or "harness-hid-failure" in codes, codes


def test_a_test_failing_since_the_witness_was_recorded_says_so(repo: GitRepo) -> None:
    """A test already failing at the base fails every patch: the check says it failed when
    the witness was recorded too, and points at the attribution (new-user trial)."""
    repo.files({**FILES, "tests/test_core.py": FILES["tests/test_core.py"].replace(
        "assert other() == 2", "assert other() == 3")})
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("app/core.py", FILES["app/core.py"].replace("return 1\n", "return 0 + 1\n"))
    repo.commit("patch lookup()")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    notes = json.loads(checked.stdout)["notes"]
    said = [n for n in notes if "failed when the witness was recorded" in n]
    assert said == ["tests/test_core.py::test_other failed when the witness was recorded too: "
                    "`agentgate attribute tests/test_core.py::test_other` tells whether it is "
                    "pre-existing (and whether a freeze is allowed)"], notes


AUDITED = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 40\n",
    "app/__init__.py": "",
    "app/core.py": "def lookup():\n    return 1\n\n\ndef other():\n    return 2\n",
    "tests/test_many.py": "import time\n\nimport pytest\n\nfrom app.core import lookup, other\n\n\n"
    "@pytest.mark.parametrize('i', range(40))\n"
    # 5 ms each: a quarter of the band's recorded time holds ten quick skips whatever the
    # machine's timer says of a test that does nothing (with the band as quick as the
    # skips, the budget fitted 8 or 10 of them from run to run).
    "def test_lookup(i):\n    time.sleep(0.005)\n    assert lookup() == 1\n\n\n"
    "@pytest.mark.parametrize('i', range(20))\n"
    "def test_quick(i):\n    assert other() == 2\n\n\n"
    "@pytest.mark.parametrize('i', range(5))\n"
    "def test_slow(i):\n    time.sleep(0.3)\n    assert other() == 2\n",
}


def test_the_audit_passes_over_skips_its_band_cannot_pay_for(repo: GitRepo) -> None:
    """Issue 12 item 5: the shadow sample is bounded in time. Forty 5 ms tests run the
    change; the audit (40% of the 25 skips, capped at 10) takes quick skips only, since a
    slow one alone would cost more than a quarter of the band's recorded time; the report
    states the budget. Without the time bound the patch's sample holds slow skips."""
    repo.files(AUDITED)
    base = repo.commit("initial")
    recorded = run_agentgate("witness", "record", cwd=repo.path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    repo.write("app/core.py", AUDITED["app/core.py"].replace("return 1", "return 0 + 1"))
    repo.commit("patch lookup()")
    witness = _plan(repo, base)["witness"]
    assert isinstance(witness, dict)
    assert witness["counts"]["impacted"] == 40 and witness["counts"]["skipped"] == 25
    audit = witness["audit"]
    assert audit["sampled"] == 10, audit
    assert 0 < audit["budget_seconds"] < 0.3, audit
    shadowed = witness["shadowed"]
    assert len(shadowed) == 10 and all("test_quick[" in n for n in shadowed), shadowed


def test_tests_the_witness_left_out_of_an_edited_file_are_no_suppression(repo: GitRepo) -> None:
    """New-user trial (Jinja2): one line added to one test listed every other test of its
    file as a harmless suppression ("not collected at head") and ran their base forms. The
    witness left them out; a test the patch deletes is still judged."""
    repo.files(FILES)
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    tests = FILES["tests/test_core.py"]
    repo.write("tests/test_core.py", tests + "    assert other() != 3\n")
    repo.commit("one more assertion in test_other")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    data = json.loads(checked.stdout)
    assert data["results"]["passed"] == 1
    assert not [n for n in data["notes"] if "suppression" in n], data["notes"]
    assert not (data["results"]["base_oracle"] or {}).get("suppressed")
    repo.write("tests/test_core.py", tests.split("def test_lookup")[0]
               + "def test_other():\n    assert other() == 2\n")
    repo.commit("test_lookup deleted")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data = json.loads(checked.stdout)
    assert [n for n in data["notes"] if "harmless suppression: tests/test_core.py::test_lookup"
            in n], data["notes"]


def test_a_test_the_base_skipped_too_is_no_suppression(repo: GitRepo) -> None:
    """New-user trial (dateutil): a comment in a conftest listed 64 platform skips as
    harmless suppressions and ran their base forms. The witness saw them skipped at the
    base; a test the patch newly skips is still judged (tested beside it)."""
    skipping = ("import pytest\n\nfrom app.core import lookup\n\n\n"
                "@pytest.mark.skipif(True, reason='not on this platform')\n"
                "def test_windows():\n    assert lookup() == 1\n\n\n"
                "def test_here():\n    assert lookup() == 1\n")
    repo.files({**FILES, "tests/conftest.py": "# shared fixtures\n",
                "tests/test_platform.py": skipping})
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("tests/conftest.py", "# shared fixtures, none yet\n")
    repo.commit("a comment in the conftest")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    data = json.loads(checked.stdout)
    assert not [n for n in data["notes"] if "suppression" in n], data["notes"]
    repo.write("tests/test_platform.py", skipping.replace("def test_here", "@pytest.mark.skip\n"
                                                          "def test_here"))
    repo.commit("test_here skipped")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data = json.loads(checked.stdout)
    assert [n for n in data["notes"] if "harmless suppression: tests/test_platform.py::"
            "test_here" in n], data["notes"]
    assert not [n for n in data["notes"] if "test_windows" in n], data["notes"]


def test_a_skip_the_patch_adds_to_a_test_the_recording_skipped_is_judged(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The witness saw test_mode skipped only because the recording's environment set a
    variable; here it runs. A patch that breaks the code and writes a skip on it cannot lean
    on the recording's skip: its file changed, so its base form is judged on head's code."""
    repo.files({**FILES, "tests/test_mode.py": (
        "import os\n\nimport pytest\n\nfrom app.core import lookup\n\n\n"
        "@pytest.mark.skipif(os.environ.get('RECORDING_SHORTCUT') == '1', reason='slow')\n"
        "def test_mode():\n    assert lookup() == 1\n")})
    base = repo.commit("initial")
    monkeypatch.setenv("RECORDING_SHORTCUT", "1")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    monkeypatch.delenv("RECORDING_SHORTCUT")
    repo.write("app/core.py", FILES["app/core.py"].replace("return 1", "return 0"))
    mode = (repo.path / "tests/test_mode.py").read_text()
    repo.write("tests/test_mode.py", mode.replace(
        "def test_mode", "@pytest.mark.skip(reason='flaky')\ndef test_mode"))
    repo.commit("break lookup, skip its test")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    data = json.loads(checked.stdout)
    assert checked.returncode in (1, 4), checked.stdout
    suppressed = [r for r in data["reasons"] if r["code"] == "suppressed-failure"]
    assert any("tests/test_mode.py::test_mode" in r["detail"] for r in suppressed), \
        data["reasons"]


def test_a_range_no_test_can_reach_audits_nothing(repo: GitRepo) -> None:
    """New-user trial (L3): a README-only push ran three audit tests. The import closure
    bounds what any test can see of a range; where it finds no test, the audit has nothing to
    check. The twin: a change to a function no test ran is reached by the closure, and its
    skips are audited (that is what the audit is for)."""
    files = {**FILES, "pyproject.toml": "[tool.agentgate]\nshadow_percent = 50\n",
             "app/core.py": FILES["app/core.py"] + "\n\ndef unused():\n    return 3\n",
             "README.md": "# shop\n"}
    repo.files(files)
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("README.md", "# shop\n\nHow to use it.\n")
    repo.commit("docs")
    witness = _plan(repo, base)["witness"]
    assert isinstance(witness, dict)
    assert witness["shadowed"] == [] and witness["audit"]["percent"] == 0, witness
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["results"] == {"ran": False}, checked.stdout
    repo.write("app/core.py", files["app/core.py"].replace("return 3", "return 4"))
    repo.commit("patch unused()")
    witness = _plan(repo, base)["witness"]
    assert isinstance(witness, dict)
    assert witness["counts"]["impacted"] == 0
    assert len(witness["shadowed"]) >= 1, witness


def test_explain_of_a_path_counts_what_the_witness_runs(repo: GitRepo) -> None:
    """New-user trial (L10): ``plan --explain src/x.py`` said "12 selected test file(s) reach
    it" where the witness ran 5 tests. With a witness it says what the witness runs of the
    files the closure found, for a source path and for a test file."""
    repo.files(FILES)
    base = repo.commit("initial")
    assert run_agentgate("witness", "record", cwd=repo.path).returncode == 0
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch other()")
    source = run_agentgate("plan", "--base", base, "--explain", "app/core.py", cwd=repo.path)
    assert ("  why app/core.py: not a test file; 1 test file(s) of the import closure reach "
            "it: tests/test_core.py -> app/core.py; the witness runs 1 of their test(s): "
            "tests/test_core.py::test_other") in unwrap(source.stdout).splitlines(), source.stdout
    test = run_agentgate("plan", "--base", base, "--explain", "tests/test_core.py",
                         "--format", "json", cwd=repo.path)
    assert json.loads(test.stdout)["explain"]["witness_runs"] == [
        "tests/test_core.py::test_other"], test.stdout
