"""``plan`` on real repositories with real commits: the import shapes of the issue's list."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.chain_app import CHAIN_APP, commit
from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.text import unwrap


def plan_json(repo: GitRepo, explain: str | None = None) -> dict[str, Any]:
    return checkrun.plan(repo.path, "base", "HEAD", explain=explain).to_json()


def codes(data: dict[str, Any]) -> list[str]:
    return [r["code"] for r in data["reasons"]]


def test_three_link_chain_through_a_function_level_and_a_relative_import(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": "RATE = 0.25\n"})
    data = plan_json(chain)
    assert data["tests"] == ["tests/test_report.py", "tests/test_session.py"]
    assert data["why"]["tests/test_report.py"] == [
        "tests/test_report.py", "app/report.py", "app/checkout/session.py",
        "app/pricing/tax.py", "app/pricing/rates.py",
    ]
    assert (data["verdict"], data["exit_code"]) == ("scoped", 0)


def test_relative_import_is_an_edge(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/tax.py": CHAIN_APP["app/pricing/tax.py"] + "# edited\n"})
    data = plan_json(chain)
    assert data["why"]["tests/test_session.py"] == [
        "tests/test_session.py", "app/checkout/session.py", "app/pricing/tax.py"]


def test_function_level_import_is_an_edge(chain: GitRepo) -> None:
    commit(chain, {"app/checkout/session.py": CHAIN_APP["app/checkout/session.py"] + "# x\n"})
    assert plan_json(chain)["tests"] == ["tests/test_report.py", "tests/test_session.py"]


def test_unrelated_change_selects_only_its_test(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    data = plan_json(chain)
    assert data["tests"] == ["tests/test_util.py"]
    assert data["suite_size"] == 3


def test_a_computed_import_no_test_reaches_changes_no_verdict(chain: GitRepo) -> None:
    # Issue 12: docs/conf.py's computed __import__ promoted every patch of a real project.
    commit(chain, {"docs/conf.py": "ext = 'sphinx.ext.' + 'autodoc'\n__import__(ext)\n",
                   "app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    data = plan_json(chain)
    assert (data["exit_code"], data["tests"]) == (0, ["tests/test_util.py"])
    [reason] = [r for r in data["reasons"] if r["code"] == "dynamic-import"]
    assert (reason["path"], reason["verdict"]) == ("docs/conf.py", "scoped")
    assert "no test reaches it" in reason["detail"]


def test_a_computed_import_runs_the_tests_that_reach_it(chain: GitRepo) -> None:
    commit(chain, {"app/plugins.py": "import importlib\n\ndef load(name):\n"
                   "    return importlib.import_module('app.' + name)\n",
                   "tests/test_plugins.py": "from app.plugins import load\n\n"
                   "def test_load():\n    assert load('util').shout('a') == 'A'\n"}, "plugins")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/pricing/rates.py": "RATE = 0.25\n"})
    data = plan_json(chain)
    assert data["exit_code"] == 0
    # test_util reaches neither the change nor the loader; the loader may load anything
    assert data["tests"] == ["tests/test_plugins.py", "tests/test_report.py",
                             "tests/test_session.py"]


def test_a_changed_file_that_does_not_parse_runs_its_dependents(chain: GitRepo) -> None:
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper(\n"})
    data = plan_json(chain)
    assert (data["exit_code"], data["tests"]) == (0, ["tests/test_util.py"])
    assert {"code": "syntax-error", "path": "app/util.py", "verdict": "scoped"}.items() <= next(
        r for r in data["reasons"] if r["code"] == "syntax-error").items()


def test_deleted_module_still_imported(chain: GitRepo) -> None:
    chain.rm("app/util.py")
    chain.commit("drop util")
    data = plan_json(chain)
    assert data["tests"] == ["tests/test_util.py"]
    assert data["why"]["tests/test_util.py"] == ["tests/test_util.py", "app/util.py"]


def test_renamed_module_impacts_importers_of_both_names(chain: GitRepo) -> None:
    chain.git("mv", "app/util.py", "app/strings.py")
    chain.write("tests/test_strings.py", "from app.strings import shout\n\n"
                "def test_s():\n    assert shout('b') == 'B'\n")
    chain.commit("rename util")
    data = plan_json(chain)
    assert data["tests"] == ["tests/test_strings.py", "tests/test_util.py"]


def test_conftest_change_impacts_its_folder_only(chain: GitRepo) -> None:
    commit(chain, {"tests/unit/test_fast.py": "def test_fast():\n    pass\n",
                   "tests/unit/conftest.py": "X = 1\n"}, "unit tests")
    chain.git("tag", "-f", "base")
    commit(chain, {"tests/unit/conftest.py": "X = 2\n"})
    data = plan_json(chain)
    assert data["tests"] == ["tests/unit/test_fast.py"]
    assert data["why"]["tests/unit/test_fast.py"] == [
        "tests/unit/test_fast.py", "tests/unit/conftest.py"]
    assert data["exit_code"] == 0


def test_root_conftest_change_promotes(chain: GitRepo) -> None:
    commit(chain, {"conftest.py": "import os\n"})
    data = plan_json(chain)
    assert "root-conftest" in codes(data) and data["exit_code"] == 2


def test_package_data_change_impacts_importers_of_the_package(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/table.csv": "a,b\n"}, "data")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/pricing/table.csv": "a,c\n"})
    data = plan_json(chain)
    assert data["tests"] == ["tests/test_report.py", "tests/test_session.py"]
    assert data["why"]["tests/test_session.py"][-1] == "app/pricing/table.csv"


def test_package_init_change_impacts_importers_of_its_submodules(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/__init__.py": "CURRENCY = 'EUR'\n"})
    data = plan_json(chain)
    assert data["tests"] == ["tests/test_report.py", "tests/test_session.py"]
    assert data["why"]["tests/test_session.py"][-1] == "app/pricing/__init__.py"


def test_docs_change_impacts_nothing(chain: GitRepo) -> None:
    commit(chain, {"README.md": "more\n", "docs/index.md": "# docs\n"})
    data = plan_json(chain)
    assert (data["tests"], data["exit_code"]) == ([], 0)


def test_a_doc_the_code_names_is_read_by_it(chain: GitRepo) -> None:
    """Red-team: ``app/pricing/rates.py`` reads ``RATES.md`` (Markdown, inert by default);
    a patch flipping the value in it ran no test. A file the code names is that code's
    data: the tests reaching the naming module run. Its twin: ``CHANGELOG.md``, named only
    by ``docs/conf.py``, which no test reaches, still runs nothing."""
    commit(chain, {"RATES.md": "0.2\n", "CHANGELOG.md": "- first\n",
                   "app/pricing/rates.py": "from pathlib import Path\n\n"
                   "RATE = float((Path(__file__).parents[2] / 'RATES.md').read_text())\n",
                   "docs/conf.py": "release = open('../CHANGELOG.md').read()\n"}, "read a doc")
    chain.git("tag", "-f", "base")
    commit(chain, {"RATES.md": "0.3\n"})
    data = plan_json(chain)
    assert data["tests"] == ["tests/test_report.py", "tests/test_session.py"]
    assert data["why"]["tests/test_session.py"][-2:] == ["app/pricing/rates.py", "RATES.md"]
    chain.git("tag", "-f", "base")
    commit(chain, {"CHANGELOG.md": "- second\n"})
    assert plan_json(chain)["tests"] == []
    # Both in one range (one lookup for all the docs): each keeps its own readers.
    commit(chain, {"RATES.md": "0.4\n", "CHANGELOG.md": "- third\n"})
    assert plan_json(chain)["tests"] == ["tests/test_report.py", "tests/test_session.py"]


def test_protected_module_reached_transitively_promotes(chain: GitRepo) -> None:
    commit(chain, {"pyproject.toml": '[tool.agentgate]\nprotected = ["app/checkout"]\n'}, "cfg")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/pricing/rates.py": "RATE = 0.3\n"})
    data = plan_json(chain)
    protected = [r for r in data["reasons"] if r["code"] == "protected"]
    assert [r["path"] for r in protected] == ["app/checkout/session.py"]
    assert data["exit_code"] == 2


def test_test_file_deleted_promotes(chain: GitRepo) -> None:
    chain.rm("tests/test_util.py")
    chain.commit("drop a test")
    data = plan_json(chain)
    assert codes(data) == ["test-deleted"] and data["exit_code"] == 2
    assert data["run"] == "full"


def test_skip_marker_added_to_an_existing_test_promotes(chain: GitRepo) -> None:
    commit(chain, {"tests/test_util.py": "import pytest\nfrom app.util import shout\n\n"
                   "@pytest.mark.skip\ndef test_shout():\n    assert shout('a') == 'A'\n"})
    data = plan_json(chain)
    assert codes(data) == ["marker-added"]
    assert data["reasons"][0]["path"] == "tests/test_util.py"


def test_pytest_configuration_change_promotes(chain: GitRepo) -> None:
    commit(chain, {"pyproject.toml": '[project]\nname = "x"\n'}, "project")
    chain.git("tag", "-f", "base")
    commit(chain, {"pyproject.toml": '[project]\nname = "y"\n'})
    assert plan_json(chain)["exit_code"] == 0  # not pytest's table: no change
    commit(chain, {"pyproject.toml": '[project]\nname = "y"\n\n[tool.pytest.ini_options]\n'
                   'addopts = "-k not_util"\n'})
    data = plan_json(chain)
    assert codes(data) == ["pytest-config"] and data["exit_code"] == 2


@pytest.mark.parametrize("path", ["pytest.toml", ".pytest.toml", "tests/pytest.toml",
                                  "tests/.pytest.toml"])
def test_a_pytest9_configuration_file_promotes(chain: GitRepo, path: str) -> None:
    # Attack (issue 11): pytest 9's own files deselect a failing test; agentgate did not
    # know them as pytest configuration at all.
    commit(chain, {path: '[pytest]\naddopts = ["-k", "not shout"]\n'})
    data = plan_json(chain)
    assert codes(data) == ["pytest-config"] and data["exit_code"] == 2


def test_dependency_change_promotes(chain: GitRepo) -> None:
    commit(chain, {"requirements.txt": "attrs==23.1\n",
                   "pyproject.toml": '[project]\nname = "x"\ndependencies = ["attrs"]\n'})
    chain.git("tag", "-f", "base")
    commit(chain, {"requirements.txt": "attrs==24.2\n"})
    data = plan_json(chain)
    assert codes(data) == ["dependencies"] and data["exit_code"] == 2
    assert data["reasons"][0]["path"] == "requirements.txt"
    chain.git("tag", "-f", "base")
    commit(chain, {"pyproject.toml": '[project]\nname = "y"\ndependencies = ["attrs"]\n'})
    assert plan_json(chain)["exit_code"] == 0  # the name, not the dependencies
    commit(chain, {"pyproject.toml": '[project]\nname = "y"\ndependencies = ["attrs<24"]\n'})
    data = plan_json(chain)
    assert codes(data) == ["dependencies"] and data["reasons"][0]["path"] == "pyproject.toml"
    assert "project.dependencies" in data["reasons"][0]["detail"]


def test_invalid_ledger_blocks_the_plan(chain: GitRepo) -> None:
    commit(chain, {".agentgate/freezes/broken.json": "{"}, "ledger")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    data = plan_json(chain)
    assert data["exit_code"] == 4
    assert any(c.startswith("ledger") for c in codes(data))


def test_scope_escape_from_the_base_scope(chain: GitRepo) -> None:
    commit(chain, {".agentgate/scope": "app/checkout\ntests\n"}, "scope")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"},
           "agent edit\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    data = plan_json(chain)
    assert data["exit_code"] == 3
    assert [r["path"] for r in data["reasons"] if r["code"] == "scope-escape"] == ["app/util.py"]


# --- the CLI ------------------------------------------------------------------------------------

def test_plan_json_contract(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": "RATE = 0.25\n"})
    proc = run_agentgate("plan", "--base", "base", "--format", "json", cwd=chain.path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for key in ("verdict", "exit_code", "base", "head", "changed", "tests", "reasons", "why"):
        assert key in data
    assert data["base"] == chain.sha("base") and data["head"] == chain.sha()
    assert data["changed"] == ["app/pricing/rates.py"]
    assert data["tests"] == sorted(data["tests"]) == list(data["why"])


def test_plan_exit_code_is_the_verdict(chain: GitRepo) -> None:
    chain.rm("tests/test_util.py")
    chain.commit("drop")
    proc = run_agentgate("plan", "--base", "base", cwd=chain.path)
    assert proc.returncode == 2
    assert "promote: test-deleted tests/test_util.py" in proc.stdout
    assert "  tests: 0 of 2 test file(s); promoted: check runs the full suite" in proc.stdout


def test_plan_explain_prints_the_chain(chain: GitRepo) -> None:
    commit(chain, {"app/pricing/rates.py": "RATE = 0.25\n"})
    proc = run_agentgate("plan", "--base", "base", "--explain", "tests/test_session.py",
                         cwd=chain.path)
    assert proc.returncode == 0, proc.stderr
    lines = unwrap(proc.stdout).splitlines()  # the why line is wrapped at 100 columns
    assert lines[0] == "agentgate plan: scoped (exit 0)"
    assert "  why tests/test_session.py: tests/test_session.py -> app/checkout/session.py -> " \
           "app/pricing/tax.py -> app/pricing/rates.py" in lines
    by_node = plan_json(chain, explain="tests/test_session.py::test_total")["explain"]
    assert by_node["chain"][0] == "tests/test_session.py"
    other = run_agentgate("plan", "--base", "base", "--explain", "tests/test_util.py",
                          "--format", "json", cwd=chain.path)
    assert json.loads(other.stdout)["explain"] == {
        "test": "tests/test_util.py", "chain": None, "in_suite": True}
    # A source file: the selected test files whose chain passes through it (new-user trial:
    # "not a test file at head; nothing to explain").
    source = run_agentgate("plan", "--base", "base", "--explain", "app/pricing/tax.py",
                           cwd=chain.path)
    assert ("  why app/pricing/tax.py: not a test file; 2 selected test file(s) reach it: "
            "tests/test_report.py -> app/report.py -> app/checkout/session.py -> "
            "app/pricing/tax.py -> app/pricing/rates.py; tests/test_session.py -> "
            "app/checkout/session.py -> app/pricing/tax.py -> app/pricing/rates.py"
            ) in unwrap(source.stdout).splitlines(), source.stdout
    alone = run_agentgate("plan", "--base", "base", "--explain", "app/util.py", cwd=chain.path)
    assert ("  why app/util.py: not a test file at head, and no selected test file's chain "
            "passes through it") in unwrap(alone.stdout).splitlines(), alone.stdout


def test_plan_text_report_shows_each_tests_why(chain: GitRepo) -> None:
    """The count by default; each test file's import chain with -v/--verbose (issue 13)."""
    commit(chain, {"app/checkout/session.py": CHAIN_APP["app/checkout/session.py"] + "# x\n"})
    head = chain.sha()[:10]
    base = chain.sha("base")[:10]
    short = [
        "agentgate plan: scoped (exit 0)",
        f"  range: {base}...{head}",
        "  note: no declared scope (.agentgate/scope absent at base): scope rule off",
        "  note: no witness recorded (agentgate witness record); import-closure band",
        "  tests: 2 of 3 test file(s)",
    ]
    proc = run_agentgate("plan", "--base", "base", cwd=chain.path)
    assert proc.stdout.splitlines() == short
    chains = [
        "    tests/test_report.py: tests/test_report.py -> app/report.py -> "
        "app/checkout/session.py",
        "    tests/test_session.py: tests/test_session.py -> app/checkout/session.py",
    ]
    for flag in ("-v", "--verbose"):
        proc = run_agentgate("plan", "--base", "base", flag, cwd=chain.path)
        assert proc.stdout.splitlines() == short + chains, flag


def test_plan_needs_a_base(chain: GitRepo) -> None:
    """None given and no base branch to default to: one line, exit 64, naming --base."""
    branch = chain.git("branch", "--show-current").strip()
    chain.git("branch", "-m", branch, "trunk")
    proc = run_agentgate("plan", cwd=chain.path)
    assert proc.returncode == 64
    assert "--base" in proc.stderr


def test_generated_code_too_big_to_scan_stays_local(chain: GitRepo) -> None:
    # Issue 12: a 60,000-term expression killed the planner with SIGSEGV in the scanner, and
    # a deeply nested test file with a RecursionError in the marker scan.
    huge = "X = " + " + ".join(["1"] * 60_000) + "\n"
    deep = "Y = " + " + ".join(["1"] * 5_000) + "\n\ndef test_deep():\n    assert Y\n"
    commit(chain, {"app/generated.py": huge, "tests/test_generated.py":
                   "from app.generated import X\n\ndef test_x():\n    assert X\n"}, "gen")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n",
                   "tests/test_deep.py": deep})
    proc = run_agentgate("plan", "--base", "base", "--format", "json", cwd=chain.path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["tests"] == ["tests/test_deep.py", "tests/test_generated.py", "tests/test_util.py"]
    [reason] = [r for r in data["reasons"] if r["code"] == "too-complex"]
    assert reason["path"] == "app/generated.py"


LOADER = {
    "app/formats/__init__.py": "",
    "app/formats/csv.py": "def read():\n    return 'csv'\n",
    "app/formats/nested/__init__.py": "",
    "app/formats/nested/xml.py": "def read():\n    return 'xml'\n",
    "app/loader.py": "import importlib\n\nPREFIX = 'app.formats.'\n\n"
    "def load(kind):\n    return importlib.import_module(PREFIX + kind).read()\n",
    "tests/test_loader.py": "from app.loader import load\n\n"
    "def test_load():\n    assert load('csv') == 'csv'\n",
}


def test_a_computed_import_under_a_constant_prefix_depends_on_that_prefix(
    chain: GitRepo,
) -> None:
    # Issue 12: "PREFIX + name" loads a module under PREFIX, not just anything.
    commit(chain, LOADER, "loader")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/formats/nested/xml.py": "def read():\n    return 'XML'\n"})
    data = plan_json(chain)
    assert (data["exit_code"], data["tests"]) == (0, ["tests/test_loader.py"])
    assert {r["code"] for r in data["reasons"]} == {"dynamic-prefix"}


def test_a_change_outside_the_prefix_does_not_reach_the_loader(chain: GitRepo) -> None:
    commit(chain, LOADER, "loader")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    assert plan_json(chain)["tests"] == ["tests/test_util.py"]


def test_a_module_added_under_the_prefix_reaches_the_loader(chain: GitRepo) -> None:
    commit(chain, LOADER, "loader")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/formats/yaml.py": "def read():\n    return 'yaml'\n"})
    assert plan_json(chain)["tests"] == ["tests/test_loader.py"]


TOP_LOADER = {
    "plugins/__init__.py": "",
    "plugins/greet.py": "def run():\n    return 'hi'\n",
    "tools/__init__.py": "",
    "tools/runner.py": "import importlib\n\n\ndef run(name):\n"
    "    return importlib.import_module('plugins.' + name).run()\n",
    "tests/test_runner.py": "from tools.runner import run\n\n\n"
    "def test_run():\n    assert run('greet') == 'hi'\n",
}


def test_a_prefix_of_one_top_level_package_depends_on_that_package(chain: GitRepo) -> None:
    # "plugins." + name loads a module of the package plugins: a change elsewhere does not
    # reach the runner (it did: only a prefix with two parts was narrowed).
    commit(chain, TOP_LOADER, "loader")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    assert plan_json(chain)["tests"] == ["tests/test_util.py"]
    commit(chain, {"plugins/greet.py": "def run():\n    return 'hello'\n"})
    assert "tests/test_runner.py" in plan_json(chain)["tests"]


def test_a_prefix_without_a_whole_package_name_still_depends_on_everything(
    chain: GitRepo,
) -> None:
    # "plug" + name may be "plugins.greet" or "pluggy": anything at all.
    commit(chain, {**TOP_LOADER, "tools/runner.py": TOP_LOADER["tools/runner.py"].replace(
        "'plugins.' + name", "'plug' + name")}, "loader")
    chain.git("tag", "-f", "base")
    commit(chain, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    assert "tests/test_runner.py" in plan_json(chain)["tests"]


def test_a_data_file_read_at_run_time_selects_the_tests(chain: GitRepo) -> None:
    commit(chain, {"rates/vat.json": '{"rate": 0.2}\n',
                   "app/pricing/rates.py": "import json\nimport pathlib\n\n"
                   "RATE = json.loads((pathlib.Path(__file__).parents[2] / 'rates' / "
                   "'vat.json').read_text())['rate']\n"}, "rates from data")
    chain.git("tag", "-f", "base")
    commit(chain, {"rates/vat.json": '{"rate": 0.5}\n'})
    data = plan_json(chain)
    assert "tests/test_session.py" in data["tests"] and data["exit_code"] == 0
