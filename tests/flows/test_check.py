"""``check``: plan, then run the band (or the full suite) on a clean tree of head."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.chain_app import CHAIN_APP, commit
from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.ledger import write_freeze
from tests.witness.test_import_effects import FILES as IMPORT_EFFECT_FILES

BROKEN_RATES = "RATE = 0.5\n"  # total(10) == 15: test_session and test_report fail


def check_json(repo: GitRepo, *, shadow: bool = False) -> dict[str, Any]:
    return checkrun.check(repo.path, "base", "HEAD", shadow=shadow).to_json()


def test_green_band_runs_only_the_impact_set(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    data = check_json(chain)
    assert (data["verdict"], data["exit_code"], data["verdict_plan"]) == ("scoped", 0, "scoped")
    results = data["results"]
    assert (results["scope"], results["selected"], results["passed"]) == ("band", 1, 1)
    assert results["failed_ids"] == [] and results["suite_size"] == 3
    assert results["pinned_env"] == {"PYTHONHASHSEED": "0", "TZ": "UTC", "LC_ALL": "C.UTF-8"}
    assert results["worktree"] is False and results["tree"] == str(chain.path)
    assert results["interpreter"]


def test_failing_band_exits_one_with_the_failed_ids(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    data = check_json(chain)
    assert data["exit_code"] == 1
    assert data["results"]["failed_ids"] == [
        "tests/test_report.py::test_render", "tests/test_session.py::test_total"]
    assert [r["code"] for r in data["reasons"]] == ["tests-failed"]


def test_dirty_working_tree_is_not_what_the_band_tests(chain: GitRepo) -> None:
    """The committed head passes; an uncommitted edit that breaks it must not be tested."""
    commit(chain, {"app/pricing/rates.py": "RATE = 0.2  # same value\n"})
    chain.write("app/pricing/rates.py", BROKEN_RATES)  # not committed
    data = check_json(chain)
    assert data["exit_code"] == 0
    assert data["results"]["worktree"] is True
    assert data["results"]["passed"] == 2
    # The same edit committed does fail: the band really runs what is committed.
    chain.commit("commit the break")
    assert check_json(chain)["exit_code"] == 1


def test_main_checkout_on_the_path_does_not_leak_into_the_band(repo: GitRepo) -> None:
    """src layout, as an editable install has it: the caller's PYTHONPATH points at the main
    checkout's src/, whose uncommitted edit breaks the tests. The band runs in a worktree
    of head and must import the worktree's src/, not the checkout's."""
    repo.files({(f"src/{k}" if k.startswith("app/") else k): v for k, v in CHAIN_APP.items()})
    repo.commit("initial")
    repo.git("tag", "base")
    commit(repo, {"src/app/pricing/rates.py": "RATE = 0.2  # same\n"})
    repo.write("src/app/pricing/rates.py", BROKEN_RATES)  # dirty, never committed
    env = {**os.environ, "PYTHONPATH": str(repo.path / "src")}
    proc = run_agentgate("check", "--base", "base", "--format", "json", cwd=repo.path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert (results["worktree"], results["passed"]) == (True, 2)


def test_promoted_plan_runs_the_full_suite_and_passes_with_zero(chain: GitRepo) -> None:
    commit(chain, {"conftest.py": "# root conftest\n"})
    data = check_json(chain)
    assert data["verdict_plan"] == "promote"
    assert (data["verdict"], data["exit_code"]) == ("scoped", 0)
    assert data["results"]["scope"] == "full" and data["results"]["passed"] == 3
    assert any("full suite ran and passed" in n for n in data["notes"])
    assert "root-conftest" in [r["code"] for r in data["reasons"]]


def test_promoted_plan_with_a_failing_full_suite_exits_one(chain: GitRepo) -> None:
    # The root conftest is a trust file: a human commits it on its own, then the code.
    commit(chain, {"conftest.py": "# root\n"})
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    data = check_json(chain)
    assert (data["verdict_plan"], data["exit_code"]) == ("promote", 1)
    assert data["results"]["failed"] == 2
    failed = next(r for r in data["reasons"] if r["code"] == "tests-failed")
    assert failed["detail"].startswith("2 test(s) failed in the full suite: ")


def test_blocked_range_runs_no_tests(chain: GitRepo) -> None:
    commit(chain, {".agentgate/freezes/broken.json": "{"}, "ledger")
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    data = check_json(chain)
    assert data["exit_code"] == 4
    assert data["results"] == {"ran": False}


def test_ledger_that_counts_is_the_pushed_heads(chain: GitRepo) -> None:
    commit(chain, {".agentgate/freezes/broken.json": "{"}, "ledger")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    (chain.path / ".agentgate/freezes/broken.json").unlink()  # fixed on disk only
    data = check_json(chain)
    assert data["exit_code"] == 4
    assert data["results"] == {"ran": False}


def test_scope_escape_wins_over_a_green_band(chain: GitRepo) -> None:
    commit(chain, {".agentgate/scope": "app/checkout\ntests\n"}, "scope")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"},
           "agent edit\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    data = check_json(chain)
    assert data["exit_code"] == 3
    assert data["results"]["green"] is True


def test_frozen_test_failure_does_not_fail_the_band(chain: GitRepo) -> None:
    write_freeze(chain, "tests/test_session.py::test_total")
    chain.commit("freeze test_total")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/checkout/session.py": "from ..pricing import tax as tax_mod\n\n"
                   "def total(x):\n    return x + tax_mod.tax(x) + 0.0001\n"})
    commit(chain, {"tests/test_report.py": "from app.report import render\n\n"
                   "def test_render():\n    assert render(10) == '12.00'\n\n# touched\n"})
    data = check_json(chain)
    assert data["results"]["frozen_failed_ids"] == ["tests/test_session.py::test_total"]
    assert data["results"]["failed_ids"] == []
    assert data["exit_code"] == 0
    assert any("frozen test failed" in n for n in data["notes"])


def test_uncommitted_freeze_record_excuses_nothing(chain: GitRepo) -> None:
    """The ledger that counts is the one in the pushed head, not a record left on disk."""
    commit(chain, {"app/checkout/session.py": "from ..pricing import tax as tax_mod\n\n"
                   "def total(x):\n    return x + tax_mod.tax(x) + 0.0001\n"})
    write_freeze(chain, "tests/test_session.py::test_total")  # never committed
    data = check_json(chain)
    assert data["results"]["worktree"] is True
    assert data["results"]["failed_ids"] == ["tests/test_session.py::test_total"]
    assert data["exit_code"] == 1


def test_shadow_reports_full_suite_failures_the_band_missed(chain: GitRepo) -> None:
    # A test reading a file the config calls inert (docs), by a name it computes (a name
    # written out would make it the file's reader): the planner believes no test can.
    commit(chain, {"docs/greeting.txt": "hello\n",
                   "tests/test_data.py": "from pathlib import Path\n\ndef test_greeting():\n"
                   "    name = 'greet' + 'ing.txt'\n"
                   "    assert (Path('docs') / name).read_text() == 'hello\\n'\n"}, "data")
    chain.git("tag", "-f", "base")
    commit(chain, {"docs/greeting.txt": "bye\n"})
    plain = check_json(chain)
    assert (plain["exit_code"], plain["results"]) == (0, {"ran": False})
    data = check_json(chain, shadow=True)
    assert data["shadow"]["missed"] == ["tests/test_data.py::test_greeting"]
    assert data["exit_code"] == 1
    assert "shadow-missed" in [r["code"] for r in data["reasons"]]
    assert not any(n.startswith("shadow full suite") for n in data["notes"])
    # New-user trial: a shadow run that missed nothing said nothing of it.
    commit(chain, {"docs/greeting.txt": "hello\n", "app/util.py":
                   "def shout(s):\n    return s.upper()  # same\n"})
    agreed = check_json(chain, shadow=True)
    assert agreed["exit_code"] == 0, agreed["reasons"]
    assert any(n.startswith("shadow full suite: ") and n.endswith("the band missed nothing")
               for n in agreed["notes"]), agreed["notes"]


def test_shadow_fails_a_band_test_that_fails_only_in_the_full_suites_order(
    chain: GitRepo,
) -> None:
    """Red-team round 6: a test the band ran and passed failed in the shadow full suite,
    after an earlier test left a module global changed; ``--shadow`` printed the failure and
    still said the band missed nothing. A case of a selected test is the band's too (new-user
    trial: a parametrized test the band ran was called missed)."""
    commit(chain, {"app/flags.py": "LOUD = True\n",
                   "tests/test_a_quiet.py": "import app.flags\n\n\ndef test_quiet():\n"
                   "    app.flags.LOUD = False\n",
                   "tests/test_b_shout.py": "import pytest\n\nfrom app.util import shout\n\n\n"
                   "@pytest.mark.parametrize('s', ['a', 'b'])\ndef test_shout(s):\n"
                   "    assert shout(s) == s.upper()\n"}, "flags")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "from app import flags\n\n\ndef shout(s):\n"
                   "    return s.upper() if flags.LOUD else s\n"})
    plain = check_json(chain)
    assert plain["exit_code"] == 0, plain["reasons"]
    data = check_json(chain, shadow=True)
    assert data["exit_code"] == 1
    [reason] = [r for r in data["reasons"] if r["code"].startswith("shadow-")]
    assert reason["code"] == "shadow-disagrees"
    assert "tests/test_b_shout.py::test_shout[a]" in reason["detail"]
    assert not any(n.startswith("shadow full suite") for n in data["notes"])


def test_property_band_failure_blocks_and_names_the_seed(chain: GitRepo) -> None:
    commit(chain, {
        "pyproject.toml": '[tool.agentgate]\nproperty_band = ["tests/property"]\n'
        "hypothesis_seed = 4242\n",
        "tests/property/test_props.py": "from hypothesis import given, strategies as st\n"
        "from app.util import shout\n\n@given(st.text())\ndef test_upper(s):\n"
        "    assert shout(s) == s.upper()\n",
    }, "property band")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() if len(s) < 3 else s\n"})
    data = check_json(chain)
    assert data["exit_code"] == 4
    reason = next(r for r in data["reasons"] if r["code"] == "property-band")
    assert "--hypothesis-seed=4242" in reason["detail"]
    assert reason["path"] == "tests/property/test_props.py"
    runs = {r["label"]: r for r in data["results"]["runs"]}
    assert runs["property"]["hypothesis_seed"] == 4242
    assert data["results"]["hypothesis_seed"] == 4242


def test_github_step_summary_is_appended(chain: GitRepo, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    proc = run_agentgate("check", "--base", "base", cwd=chain.path, env=env)
    assert proc.returncode == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n")
    assert "### agentgate check: `failed` (exit 1)" in text
    assert "`tests-failed`" in text
    assert "- band: 2 of 3 test file(s)" in text
    assert "- results: 0 passed, 2 failed" in text
    assert "- time: " in text


def test_check_text_report_lists_failures(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": BROKEN_RATES})
    proc = run_agentgate("check", "--base", "base", cwd=chain.path)
    assert proc.returncode == 1
    assert "agentgate check: failed (exit 1)" in proc.stdout
    assert "    FAILED tests/test_session.py::test_total" in proc.stdout


def test_nothing_impacted_runs_nothing(chain: GitRepo) -> None:
    commit(chain, {"README.md": "more\n"})
    data = check_json(chain)
    assert (data["exit_code"], data["results"]) == (0, {"ran": False})


def test_uncommitted_changes_are_said_to_be_left_out(chain: GitRepo) -> None:
    """New-user trial: an uncommitted bug on the checked branch gave 'scoped (exit 0)' with
    no word that the work tree held it."""
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper()  # same\n"})
    assert not [n for n in check_json(chain)["notes"] if n.startswith("not checked")]
    chain.write("app/pricing/rates.py", BROKEN_RATES)
    chain.git("mv", "app/util.py", "app/utils.py")
    data = check_json(chain)
    assert data["exit_code"] == 0
    assert ("not checked: uncommitted changes to 2 tracked file(s) (app/pricing/rates.py, "
            "app/utils.py); check judges the range's commits: commit them to have them "
            "checked") in data["notes"], data["notes"]
    text = run_agentgate("check", "--base", "base", cwd=chain.path).stdout
    assert "not checked: uncommitted changes" in text, text


TYPING_CASE = "from app.core import f\n\nraise RuntimeError('for mypy only, never collected')\n"


def test_files_pytest_never_recurses_into_are_no_band(repo: GitRepo) -> None:
    """New-user trial (marshmallow's ``tests/mypy_test_cases``): a folder in
    ``norecursedirs`` holds files named like tests that pytest never collects. They were
    selected, pytest collected them when named, and a harmless patch failed. pytest's
    default patterns (``build``, ``.*``...) hold when the configuration sets none."""
    for ini, skipped in (('norecursedirs = ["tests/typing_cases", ".*"]\n',
                          "tests/typing_cases/test_types.py"), ("", "tests/build/test_b.py")):
        repo.files({
            "pyproject.toml": f'[tool.pytest.ini_options]\ntestpaths = ["tests"]\n{ini}',
            "app/__init__.py": "", "app/core.py": "def f(x):\n    return x + 1\n",
            "tests/test_core.py": "from app.core import f\n\n\ndef test_f():\n"
                                  "    assert f(1) == 2\n",
            skipped: TYPING_CASE,
        })
        repo.commit("base")
        repo.git("tag", "-f", "base")
        repo.files({"app/core.py": "def f(x):\n    return 1 + x\n"})
        repo.commit("harmless")
        data = check_json(repo)
        assert data["exit_code"] == 0, data["reasons"]
        assert data["results"]["passed"] == 1
        plan = checkrun.plan(repo.path, "base", "HEAD").to_json()
        assert plan["tests"] == ["tests/test_core.py"], plan["tests"]
        repo.rm(skipped)


def test_a_plugin_addopts_load_reaches_every_test(repo: GitRepo) -> None:
    """Red-team round 4: ``addopts = "-p app.testing"`` loads a plugin whose fixture uses
    ``app.core``; a test that takes the fixture imports nothing of either, and a broken
    ``app.core`` ran no test. The plugin is every test's, as the root conftest is; a module
    it does not reach still runs only its own tests."""
    repo.files({
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
                          'addopts = "-p app.testing"\n',
        "app/__init__.py": "", "app/core.py": "def f(x):\n    return x + 1\n",
        "app/other.py": "def g():\n    return 2\n",
        "app/testing.py": "import pytest\n\nfrom app.core import f\n\n\n@pytest.fixture\n"
                          "def two():\n    return f(1)\n",
        "tests/test_two.py": "def test_two(two):\n    assert two == 2\n",
        "tests/test_other.py": "from app.other import g\n\n\ndef test_g():\n    assert g() == 2\n",
    })
    repo.commit("base")
    repo.git("tag", "-f", "base")
    repo.files({"app/core.py": "def f(x):\n    return x + 2\n"})
    repo.commit("broken")
    data = check_json(repo)
    assert data["exit_code"] == 1, data["reasons"]
    assert data["results"]["failed_ids"] == ["tests/test_two.py::test_two"]
    repo.git("reset", "-q", "--hard", "base")
    repo.files({"app/other.py": "def g():\n    return 1 + 1\n"})
    repo.commit("other")
    plan = checkrun.plan(repo.path, "base", "HEAD").to_json()
    assert plan["tests"] == ["tests/test_other.py"], plan["tests"]


# The scenario of the witness's twin (tests/witness/test_import_effects.py), without a witness.
EFFECT_FILES = {k: v for k, v in IMPORT_EFFECT_FILES.items() if k.startswith(("app/", "tests/"))}


def test_an_import_time_effect_runs_the_tests_of_what_the_module_imports(repo: GitRepo) -> None:
    """Red-team round 4: app/other.py gained a top-level ``calc.configure(fast=True)``; in
    the full suite, collection imports it and test_mul fails, but the import closure ran
    app.other's importers only. A module whose top level gains a call or a store into
    another object (or that the patch adds with one) reaches the modules it imports."""
    repo.files(EFFECT_FILES)
    repo.commit("base")
    repo.git("tag", "-f", "base")
    other = EFFECT_FILES["app/other.py"]
    for change, expected in (
        ("from app import calc\n\ncalc.configure(fast=True)\n", ["tests/test_calc.py",
                                                                 "tests/test_other.py"]),
        # through a from-import: an edge to app.calc.configure, app.calc's own
        ("from app.calc import configure\n\nconfigure(fast=True)\n",
         ["tests/test_calc.py", "tests/test_other.py"]),
        ("from app import calc\n\nLIMIT = 3\n", ["tests/test_other.py"]),  # binds a name only
    ):
        repo.git("checkout", "-q", "-B", "patch", "base")
        repo.files({"app/other.py": other.replace("from app import calc\n", change)})
        repo.commit("patch")
        plan = checkrun.plan(repo.path, "base", "HEAD").to_json()
        assert plan["tests"] == expected, plan["tests"]
    repo.git("checkout", "-q", "-B", "patch", "base")
    repo.files({"app/hotfix.py": "from app import calc\n\ncalc.mul = lambda a, b: a * b + 1\n",
                "app/other.py": other.replace("import calc", "import calc, hotfix  # noqa")})
    repo.commit("patch")
    data = check_json(repo)
    assert data["exit_code"] == 1 and data["results"]["failed_ids"] == [
        "tests/test_calc.py::test_mul"], data["reasons"]


REGISTRY_FILES = {
    "app/__init__.py": "",
    "app/registry.py": "HANDLERS = {}\n\n\nclass Handler:\n    name = ''\n\n\n"
    "def handlers():\n    return {c.name: c for c in Handler.__subclasses__()}\n\n\n"
    "def register(name):\n    def store(func):\n        HANDLERS[name] = func\n"
    "        return func\n    return store\n\n\ndef wrap(func):\n    return func\n",
    "app/csvh.py": "from app.registry import Handler\n\n\nclass Csv(Handler):\n"
    "    name = 'csv'\n\n    def render(self, rows):\n        return ','.join(rows)\n",
    "app/tsv.py": "from app.registry import register\n\n\n@register('tsv')\n"
    "def render(rows):\n    return '\\t'.join(rows)\n",
    "app/plain.py": "from app.registry import wrap\n\n\n@wrap\ndef shout(s):\n"
    "    return s.upper()\n",
    "tests/test_registry.py": "from app.registry import HANDLERS, handlers\n\n\n"
    "def test_render():\n    assert handlers()['csv']().render(['a', 'b']) == 'a,b'\n\n\n"
    "def test_tsv():\n    assert HANDLERS['tsv'](['a', 'b']) == 'a\\tb'\n",
    "tests/test_plugins.py": "from app.csvh import Csv\nfrom app import tsv, plain\n\n\n"
    "def test_names():\n    assert Csv.name == 'csv' and tsv.render and plain.shout\n",
}


@pytest.mark.parametrize(("path", "old", "new", "expected"), [
    ("app/csvh.py", "','.join", "';'.join", ["tests/test_plugins.py", "tests/test_registry.py"]),
    ("app/tsv.py", "'\\t'.join", "' '.join", ["tests/test_plugins.py", "tests/test_registry.py"]),
    # the twin: a decorator that keeps nothing registers nothing
    ("app/plain.py", "s.upper()", "s.upper() + ''", ["tests/test_plugins.py"]),
], ids=["subclass", "decorator", "wrapper"])
def test_a_module_registering_into_another_runs_the_registrys_tests(
    repo: GitRepo, path: str, old: str, new: str, expected: list[str],
) -> None:
    """Red-team round 4 (01 registry): tests/test_registry.py imports app.registry only and
    reaches ``Csv.render`` through ``Handler.__subclasses__()``, filled because another test
    file's collection imported app/csvh.py; the import closure of app/csvh.py left it out,
    and the broken ``render`` passed. A changed module that registers into a module it
    imports reaches that module, as an import-time effect does."""
    repo.files(REGISTRY_FILES)
    repo.commit("base")
    repo.git("tag", "-f", "base")
    repo.files({path: REGISTRY_FILES[path].replace(old, new)})
    repo.commit("patch")
    plan = checkrun.plan(repo.path, "base", "HEAD").to_json()
    assert plan["tests"] == expected, plan["tests"]
    if len(expected) == 2:
        data = check_json(repo)
        assert data["exit_code"] == 1 and data["results"]["failed_ids"], data["reasons"]


def test_a_registry_a_package_re_exports_is_judged_where_it_is_defined(repo: GitRepo) -> None:
    """``from app import Handler``, which app/__init__.py re-exports from app.registry: the
    subclass registers into app.registry all the same."""
    json_handler = ("from app import Handler\n\n\nclass Json(Handler):\n    name = 'json'\n\n"
                    "    def render(self, rows):\n        return '|'.join(rows)\n")
    repo.files({**REGISTRY_FILES, "app/__init__.py": "from app.registry import Handler\n",
                "app/jsonh.py": json_handler})
    repo.commit("base")
    repo.git("tag", "-f", "base")
    repo.files({"app/jsonh.py": json_handler.replace("'|'", "'/'")})
    repo.commit("patch")
    plan = checkrun.plan(repo.path, "base", "HEAD").to_json()
    assert "tests/test_registry.py" in plan["tests"], plan["tests"]


def test_package_data_read_from_elsewhere_by_its_path_runs_the_readers_tests(
    repo: GitRepo,
) -> None:
    """Red-team round 4: ``lib/render.py`` reads ``app/templates/greeting.txt`` by a path
    built from its own ``__file__``, never importing ``app``; a change to the template ran
    only ``app``'s importers. Code that names a changed package data file is its reader."""
    repo.files({
        "app/__init__.py": "", "app/templates/greeting.txt": "hello",
        "app/core.py": "def one():\n    return 1\n",
        "lib/__init__.py": "",
        "lib/render.py": "from pathlib import Path\n\nROOT = Path(__file__).resolve().parents[1]\n"
                         "\n\ndef greet():\n"
                         "    return (ROOT / 'app' / 'templates' / 'greeting.txt').read_text()\n",
        "tests/test_render.py": "from lib.render import greet\n\n\ndef test_greet():\n"
                                "    assert greet() == 'hello'\n",
        "tests/test_core.py": "from app.core import one\n\n\ndef test_one():\n"
                              "    assert one() == 1\n",
        "tests/test_plain.py": "def test_plain():\n    pass\n",
    })
    repo.commit("base")
    repo.git("tag", "-f", "base")
    repo.files({"app/templates/greeting.txt": "goodbye"})
    repo.commit("template")
    data = check_json(repo)
    assert data["exit_code"] == 1, data["reasons"]
    assert data["results"]["failed_ids"] == ["tests/test_render.py::test_greet"]
    plan = checkrun.plan(repo.path, "base", "HEAD").to_json()
    assert plan["tests"] == ["tests/test_core.py", "tests/test_render.py"], plan["tests"]


def test_the_summary_tells_xfailed_from_skipped(chain: GitRepo) -> None:
    """New-user trial (dateutil): JUnit writes both as skipped, and 17 xfailed tests were
    counted as skipped; the outcome plugin tells them apart."""
    commit(chain, {"tests/test_util.py": "import pytest\n\n"
                   + CHAIN_APP["tests/test_util.py"]
                   + "\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n"
                   "\n\n@pytest.mark.xfail(strict=True)\ndef test_known_bug():\n"
                   "    assert shout('b') == 'b'\n"}, "a skip and a known bug")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    text = run_agentgate("check", "--base", "base", cwd=chain.path).stdout
    assert "1 passed, 1 skipped, 1 xfailed" in text, text
