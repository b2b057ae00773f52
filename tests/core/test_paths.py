"""The one path-prefix rule and the one test-file rule (``agentgate.core.paths``).

Where the old copies disagreed, the kept answer is pytest's: ``src/test_foo.py`` outside the
test roots and ``tests/fixtures/test_data.py`` under a fixture folder are not test files.
The repository tests show that answer reaching the range gate, ``agentgate plan`` and the
witness patch through their real code paths.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgate.core.config import Config, pytest_python_files
from agentgate.core.paths import (
    DEFAULT_PYTHON_FILES,
    TestFiles,
    function_id,
    is_test_file,
    sibling_conftests,
    under,
)
from agentgate.gate import checks as gate
from agentgate.gate import manifest
from agentgate.gate.scope import Scope
from agentgate.graph.expand import link_escalations
from agentgate.graph.types import Listing
from agentgate.witness.patch import compute
from tests.support.git_repo import GitRepo, run_agentgate


@pytest.mark.parametrize(
    ("path", "prefix", "expected"),
    [
        ("app/pay/x.py", "app/pay", True),
        ("app/payments/x.py", "app/pay", False),  # whole components, never a string prefix
        ("app/pay.py", "app/pay", False),
        ("app/pay", "app/pay", True),  # exact match: a prefix may name a file
        ("app/pay/x.py", "app/pay/", True),  # a trailing slash is ignored
        ("app", "app/pay", False),  # a parent is not inside its child
        ("anything/at/all.py", ".", True),  # "." is the whole repository
        ("top.py", ".", True),
        ("top.py", "", True),
        (".agentgate/scope", ".agentgate", True),
    ],
)
def test_under(path: str, prefix: str, expected: bool) -> None:
    assert under(path, prefix) is expected


def _layout(tests: tuple[str, ...] = ("tests",), fixtures: tuple[str, ...] = ("tests/fixtures",),
            ) -> Config:
    return Config(root=Path("."), tests=tests, fixtures=fixtures)


CHECK = ("check_*.py",)


@pytest.mark.parametrize(
    ("path", "layout", "patterns", "expected"),
    [
        ("tests/test_a.py", _layout(), DEFAULT_PYTHON_FILES, True),
        ("tests/sub/foo_test.py", _layout(), DEFAULT_PYTHON_FILES, True),
        # The old gate rule said yes ("test_*" anywhere): pytest never collects it there.
        ("src/test_foo.py", _layout(), DEFAULT_PYTHON_FILES, False),
        # The old witness rule said yes (it ignored fixture folders): it is fixture data.
        ("tests/fixtures/test_data.py", _layout(), DEFAULT_PYTHON_FILES, False),
        ("tests/fixtures/test_data.py", _layout(fixtures=()), DEFAULT_PYTHON_FILES, True),
        ("tests/helpers.py", _layout(), DEFAULT_PYTHON_FILES, False),
        ("tests/conftest.py", _layout(), DEFAULT_PYTHON_FILES, False),
        ("tests/test_notes.txt", _layout(), DEFAULT_PYTHON_FILES, False),
        ("tests/check_cart.py", _layout(), CHECK, True),  # python_files = check_*.py
        ("tests/test_cart.py", _layout(), CHECK, False),
        ("tests/sub/check_a.py", _layout(), ("sub/check_*.py",), True),  # a path pattern
        ("tests/check_a.py", _layout(), ("sub/check_*.py",), False),
        # A flat layout: every file of the repository is under the test root ".".
        ("src/test_foo.py", _layout(tests=(".",)), DEFAULT_PYTHON_FILES, True),
        ("test_top.py", _layout(tests=(".",)), DEFAULT_PYTHON_FILES, True),
        ("tests/fixtures/test_data.py", _layout(tests=(".",)), DEFAULT_PYTHON_FILES, False),
        ("test_a.py", _layout(tests=("test_a.py",)), DEFAULT_PYTHON_FILES, True),  # a file root
    ],
)
def test_test_file_rule(path: str, layout: Config, patterns: tuple[str, ...],
                        expected: bool) -> None:
    assert TestFiles(layout, patterns).match(path) is expected
    assert is_test_file(path, layout, patterns) is expected


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        ({}, DEFAULT_PYTHON_FILES),
        ({"pytest.ini": "[pytest]\npython_files = check_*.py  *_check.py\n"},
         ("check_*.py", "*_check.py")),
        ({"pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n'},
         ("check_*.py",)),
        # pytest reads the first file with a pytest section only, even if it names none.
        ({"pytest.ini": "[pytest]\n", "pyproject.toml":
          '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n'}, DEFAULT_PYTHON_FILES),
        ({"pytest.ini": "[pytest\n"}, DEFAULT_PYTHON_FILES),  # malformed: the plan promotes
    ],
)
def test_python_files_from_the_configuration(texts: dict[str, str | None],
                                             expected: tuple[str, ...]) -> None:
    assert pytest_python_files(texts) == expected


def test_dot_is_the_whole_repository_in_scope_and_manifest() -> None:
    assert Scope(prefixes=(".",), source="scope").allows("any/where.py")
    assert not Scope(prefixes=("app/pay",), source="scope").allows("app/payments/x.py")
    # Before, manifest's copy had no "." case: fixtures = ["."] matched nothing at all.
    assert manifest.is_fixture("data/x.json", _layout(fixtures=(".",)))
    assert not manifest.is_fixture("data/x.json", _layout())


def test_link_to_the_repository_root_is_a_link_into_code() -> None:
    tree = Listing(python={"top.py": "b", "pkg/a.py": "c"}, names={}, links={})
    links = {"alias": ("l", "."), "pkg/up": ("l", ".."), "docs/img": ("l", "../assets")}
    # Before, a link to "." matched no folder (top-level files sit in "", not "."): missed.
    assert [p for p, _ in link_escalations(tree, links)] == ["alias", "pkg/up"]


# --- through the real code paths, on real repositories ----------------------------------------


# pytest collects under ``testpaths`` only: src/test_foo.py is never collected.
TESTPATHS = {"pytest.ini": "[pytest]\ntestpaths = tests\n"}


@pytest.fixture
def fixtured(app_repo: GitRepo) -> GitRepo:
    app_repo.files({"tests/fixtures/rates.json": '{"standard": 0.2}\n',
                    "src/test_foo.py": "def test_foo():\n    pass\n", **TESTPATHS})
    proc = run_agentgate("fixtures", "record", cwd=app_repo.path)
    assert proc.returncode == 0, proc.stderr
    app_repo.commit("fixtures and manifest")
    return app_repo


def _move_fixture_with(repo: GitRepo, path: str) -> tuple[str, str]:
    """A human fixture update in its own commit, then a commit that touches only ``path``."""
    base = repo.sha()
    repo.write("tests/fixtures/rates.json", f'{{"standard": 0.25, "for": "{path}"}}\n')
    manifest.record(repo.path, gate.config_at(repo.path, base))
    repo.commit("fixture")
    repo.write(path, "def test_more():\n    pass\n")
    return base, repo.commit(f"touch {path}")


def _codes(repo: GitRepo, base: str, head: str) -> list[str]:
    return [r.code for r in gate.check_range(repo.path, base, head).reasons]


def test_a_file_pytest_does_not_collect_cannot_excuse_a_fixture_change(fixtured: GitRepo) -> None:
    # The attack: src/test_foo.py looks like a test but lies outside the test roots.
    base, head = _move_fixture_with(fixtured, "src/test_foo.py")
    assert _codes(fixtured, base, head) == ["fixture-without-test"]
    proc = run_agentgate("plan", "--base", base, "--format", "json", cwd=fixtured.path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert [r["code"] for r in json.loads(proc.stdout)["reasons"]] == ["fixture-without-test"]


def test_a_collected_test_excuses_a_fixture_change(fixtured: GitRepo) -> None:
    base, head = _move_fixture_with(fixtured, "tests/test_tax.py")
    assert _codes(fixtured, base, head) == []


def test_without_testpaths_a_test_module_anywhere_is_collected(fixtured: GitRepo) -> None:
    """New-user trial (tabulate's ``test/``): without ``testpaths`` pytest collects from the
    root, so src/test_foo.py is a test file, for the gate as for pytest."""
    fixtured.write("pytest.ini", "[pytest]\n")
    fixtured.commit("pytest collects from the root")
    base, head = _move_fixture_with(fixtured, "src/test_foo.py")
    assert _codes(fixtured, base, head) == []
    base, head = _move_fixture_with(fixtured, ".venv/lib/test_foo.py")  # never collected
    assert _codes(fixtured, base, head) == ["fixture-without-test"]


def test_a_fixture_folder_test_name_cannot_excuse_a_fixture_change(fixtured: GitRepo) -> None:
    base, head = _move_fixture_with(fixtured, "tests/fixtures/test_data.py")
    assert "fixture-without-test" in _codes(fixtured, base, head)


def test_the_gate_reads_python_files_from_the_base(fixtured: GitRepo) -> None:
    fixtured.write("pytest.ini", "[pytest]\ntestpaths = tests\npython_files = check_*.py\n")
    fixtured.commit("pytest collects check_*.py")
    base, head = _move_fixture_with(fixtured, "tests/check_tax.py")
    assert _codes(fixtured, base, head) == []
    base, head = _move_fixture_with(fixtured, "tests/test_tax.py")  # not collected any more
    assert _codes(fixtured, base, head) == ["fixture-without-test"]


def test_witness_patch_uses_the_one_rule_with_the_heads_python_files(app_repo: GitRepo) -> None:
    app_repo.files(TESTPATHS)
    old = app_repo.commit("pytest collects under tests/")
    app_repo.files({
        "tests/test_new.py": "def test_new():\n    pass\n",
        "tests/fixtures/test_data.py": "VALUE = 1\n",  # the old witness rule: a test file
        "src/test_foo.py": "def test_foo():\n    pass\n",
    })
    new = app_repo.commit("a test, fixture data, a file outside the test roots")
    config = gate.config_at(app_repo.path, new)
    assert compute(app_repo.path, old, new, config, set()).test_files == {
        "tests/test_new.py": "added"}
    app_repo.write("pytest.ini", "[pytest]\ntestpaths = tests\npython_files = check_*.py\n")
    app_repo.write("tests/check_new.py", "def test_checked():\n    pass\n")
    head = app_repo.commit("pytest collects check_*.py")
    assert compute(app_repo.path, old, head, config, set()).test_files == {
        "tests/check_new.py": "added"}



def test_function_id_drops_the_parameters_only() -> None:
    # Parameters may hold "::" (sqlparse's SQL casts) and "[", a path may hold "[".
    assert function_id("tests/a.py::C::test_x[1-a::b]") == "tests/a.py::C::test_x"
    assert function_id("tests/x[1]/a.py::test_x[2]") == "tests/x[1]/a.py::test_x"
    assert function_id("tests/a.py::test_x[y[0]]") == "tests/a.py::test_x"
    assert function_id("tests/a.py::test_x") == "tests/a.py::test_x"
    assert function_id("tests/a.py") == "tests/a.py"


def test_sibling_conftests_are_those_the_whole_run_loads_and_the_selection_would_not() -> None:
    """Red-team round 6: a band naming files never loaded a sibling folder's conftest."""
    conftests = ["conftest.py", "tests/conftest.py", "tests/unit/conftest.py",
                 "tests/integration/conftest.py", "tests/fixtures/sample/conftest.py",
                 "docs/conftest.py", "tests/.cache/conftest.py"]
    layout = Config(root=Path("."), tests=("tests",), fixtures=("tests/fixtures",))
    # pytest walks agentgate's fixture folders too (red-team round 7): their conftests load.
    assert sibling_conftests(conftests, layout, ["tests/unit/test_calc.py::test_mul"]) == [
        "tests/fixtures/sample", "tests/integration"]
    assert sibling_conftests(conftests, layout, ["tests/integration/test_x.py",
                                                 "tests/unit/test_y.py"]) == [
        "tests/fixtures/sample"]
    anywhere = Config(root=Path("."), tests=("tests",), fixtures=("tests/fixtures",),
                      collect_anywhere=True)
    assert sibling_conftests(conftests, anywhere, ["tests/unit/test_y.py"]) == [
        "docs", "tests/fixtures/sample", "tests/integration"]
