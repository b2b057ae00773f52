"""The band: real pytest subprocesses on real repositories, results read from JUnit XML."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentgate.core import config as config_mod
from agentgate.run import band, junit, outcomes
from agentgate.run.band import BandSpec, Tree
from tests.support.git_repo import GitRepo

MIXED = """\
import pytest

class TestCart:
    def test_ok(self):
        pass

    @pytest.mark.parametrize("v", [1, 2])
    def test_param(self, v):
        assert v == 1

def test_skipped():
    pytest.skip("not here")

@pytest.fixture
def broken():
    yield
    raise RuntimeError("teardown")

def test_teardown(broken):
    pass
"""


def _run(
    root: Path,
    selection: tuple[str, ...] | None,
    *,
    tree: Tree | None = None,
    frozen: frozenset[str] = frozenset(),
    **overrides: object,
) -> band.BandReport:
    config = dataclasses.replace(config_mod.load(root), **overrides)  # type: ignore[arg-type]
    spec = BandSpec(selection, config.property_band, config.hypothesis_seed)
    return band.run_band(root, config, tree or Tree(root, worktree=False), spec, frozen)


def test_counts_and_failing_node_ids_from_junit(repo: GitRepo) -> None:
    repo.write("tests/test_mixed.py", MIXED)
    repo.commit("mixed")
    run = _run(repo.path, ("tests/test_mixed.py",)).runs[0]
    assert (run.label, run.selected) == ("band", 1)
    assert (run.passed, run.failed, run.errors, run.skipped) == (2, 1, 1, 1)
    assert run.failed_ids == (
        "tests/test_mixed.py::TestCart::test_param[2]",
        "tests/test_mixed.py::test_teardown",
    )
    assert not run.green


def test_green_band_and_empty_collection(repo: GitRepo) -> None:
    repo.files({"tests/test_ok.py": "def test_ok():\n    pass\n", "tests/test_none.py": "X = 1\n"})
    repo.commit("ok")
    ok = _run(repo.path, ("tests/test_ok.py",)).runs[0]
    assert (ok.passed, ok.green, ok.exit_code) == (1, True, 0)
    empty = _run(repo.path, ("tests/test_none.py",)).runs[0]
    assert (empty.exit_code, empty.green) == (band.NO_TESTS, True)


def test_collection_error_is_a_failure(repo: GitRepo) -> None:
    repo.write("tests/test_broken.py", "import not_a_module_anywhere\n")
    repo.commit("broken")
    run = _run(repo.path, ("tests/test_broken.py",)).runs[0]
    assert run.failed_ids == ("tests/test_broken.py",)
    assert not run.green and run.output_tail


def test_a_coloured_output_is_quoted_as_plain_text(repo: GitRepo) -> None:
    # A project whose addopts colour pytest's output (humanize's ``--color=yes``): the report
    # quotes the run's last lines, and the base oracle finds a test's "FAILED" line in them.
    from agentgate.run.suppress import failure_line

    repo.files({"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--color=yes -rfE"\n',
                "tests/test_red.py": "def test_red():\n    assert 1 == 2\n"})
    repo.commit("coloured")
    run = _run(repo.path, ("tests/test_red.py",)).runs[0]
    assert run.failed_ids == ("tests/test_red.py::test_red",)
    assert run.output_tail and not any("\x1b" in line for line in run.output_tail)
    assert failure_line("tests/test_red.py::test_red", run.output_tail).startswith(
        "FAILED tests/test_red.py::test_red - assert 1 == 2")


def test_frozen_failure_is_reported_but_does_not_fail(repo: GitRepo) -> None:
    repo.write(
        "tests/test_flaky.py", "def test_flaky():\n    assert False\n\ndef test_fine():\n    pass\n"
    )
    repo.commit("flaky")
    frozen = frozenset({"tests/test_flaky.py::test_flaky"})
    run = _run(repo.path, ("tests/test_flaky.py",), frozen=frozen).runs[0]
    assert run.failed_ids == ()
    assert run.frozen_failed_ids == ("tests/test_flaky.py::test_flaky",)
    assert run.green
    unfrozen = _run(repo.path, ("tests/test_flaky.py",)).runs[0]
    assert not unfrozen.green


def test_five_thousand_node_ids_beyond_the_argument_limit(repo: GitRepo) -> None:
    """The selection travels in a file: an argv this long could not even be exec'd.
    (50 modules of 100 tests: pytest matches each id against its module's tests, so one
    module of 5,000 would spend its time in pytest, not in agentgate.)"""
    count, modules = 5000, 50
    arg_max = os.sysconf("SC_ARG_MAX")
    width = max(arg_max // count + 40, 60)
    ids = []
    for m in range(modules):
        names = [f"test_{i:05d}_" + "x" * width for i in range(m, count, modules)]
        repo.write(f"tests/test_m{m:02d}.py", "".join(f"def {n}():\n    pass\n" for n in names))
        ids += [f"tests/test_m{m:02d}.py::{n}" for n in names]
    repo.commit("many")
    if arg_max < 16 * 1024 * 1024:
        with pytest.raises(OSError):
            subprocess.run(["true", *ids], check=False)
    run = _run(repo.path, tuple(ids)).runs[0]
    assert (run.passed, run.failed, run.selected) == (count, 0, count)


def test_pinned_environment_wins_over_the_callers(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write(
        "tests/test_env.py",
        "import os\n\ndef test_env():\n"
        "    assert os.environ['TZ'] == 'UTC'\n"
        "    assert os.environ['PYTHONHASHSEED'] == '7'\n"
        "    assert os.environ['LC_ALL'] == 'C.UTF-8'\n"
        "    assert 'PYTEST_ADDOPTS' not in os.environ\n",
    )
    repo.commit("env")
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x --no-such-option")
    report = _run(repo.path, ("tests/test_env.py",), pythonhashseed=7)
    assert report.runs[0].green
    assert report.pinned_env == {"PYTHONHASHSEED": "7", "TZ": "UTC", "LC_ALL": "C.UTF-8"}


def test_dirty_edit_is_not_what_the_band_tests(app_repo: GitRepo) -> None:
    head = app_repo.sha()
    app_repo.write("app/pricing/tax.py", "RATE = 0.5\n\ndef tax(x):\n    return x * RATE\n")
    # In the dirty checkout the edit breaks the test ...
    dirty = _run(app_repo.path, ("tests/test_tax.py",)).runs[0]
    assert dirty.failed_ids == ("tests/test_tax.py::test_tax",)
    # ... but the band tests the committed head, in a worktree of it.
    with band.clean_tree(app_repo.path, head) as tree:
        assert tree.worktree and tree.path != app_repo.path
        assert not (tree.path / "app" / "pricing" / "tax.py").read_text().startswith("RATE = 0.5")
        run = _run(app_repo.path, ("tests/test_tax.py",), tree=tree).runs[0]
    assert run.green and run.passed == 1


def test_clean_checkout_at_head_is_used_directly(app_repo: GitRepo) -> None:
    head = app_repo.sha()
    with band.clean_tree(app_repo.path, head) as tree:
        assert tree == Tree(app_repo.path, worktree=False)
    app_repo.write("notes.txt", "untracked\n")  # an untracked file could be imported
    with band.clean_tree(app_repo.path, head) as tree:
        assert tree.worktree


def test_ignored_files_count_against_the_roots_given_and_every_file_by_default(
    app_repo: GitRepo,
) -> None:
    app_repo.write(".gitignore", "*.log\n.venv/\npytest.ini\n")
    head = app_repo.commit("ignore")
    app_repo.write(".venv/lib/conftest.py", "raise SystemExit(3)\n")
    app_repo.write("run.log", "x\n")
    config = config_mod.load(app_repo.path)
    with band.clean_tree(app_repo.path, head, config) as tree:
        assert not tree.worktree  # a log outside the test roots, a .venv: nothing a run reads
    with band.clean_tree(app_repo.path, head) as tree:
        assert tree.worktree  # no roots given: any ignored file could matter (fail closed)
    app_repo.write("pytest.ini", "[pytest]\naddopts = -p no:python\n")  # pytest reads it
    with band.clean_tree(app_repo.path, head, config) as tree:
        assert tree.worktree and not (tree.path / "pytest.ini").exists()


def test_head_not_checked_out_uses_a_worktree_of_head(app_repo: GitRepo) -> None:
    head = app_repo.sha()
    app_repo.write("app/pricing/tax.py", "RATE = 0.5\n\ndef tax(x):\n    return x * RATE\n")
    app_repo.commit("break tax")
    with band.clean_tree(app_repo.path, head) as tree:
        assert tree.worktree
        run = _run(app_repo.path, ("tests/test_tax.py",), tree=tree).runs[0]
    assert run.green


def test_pythonpath_to_another_checkout_does_not_leak(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """src layout: the tree's src/ must come before a caller's PYTHONPATH (and before any
    editable install's .pth entry, which site-packages adds after PYTHONPATH)."""
    repo.files({"src/app/__init__.py": "", "src/app/tax.py": "def tax(x):\n    return x / 5\n",
                "tests/test_tax.py": "import app.tax as t\n\ndef test_tax():\n"
                "    assert t.tax(10) == 2\n    assert 'decoy-checkout' not in t.__file__\n"})
    repo.commit("src layout")
    decoy = tmp_path / "decoy-checkout"
    (decoy / "app").mkdir(parents=True)
    (decoy / "app" / "__init__.py").write_text("")
    (decoy / "app" / "tax.py").write_text("def tax(x):\n    return 0\n")
    monkeypatch.setenv("PYTHONPATH", str(decoy))
    probe = subprocess.run(
        [sys.executable, "-c", "import app.tax as t; print(t.__file__)"],
        cwd=repo.path, capture_output=True, text=True, check=True,
    )
    assert probe.stdout.startswith(str(decoy))  # the caller's environment is poisoned
    run = _run(repo.path, ("tests/test_tax.py",)).runs[0]
    assert run.green and run.passed == 1


PROPERTY = """\
from hypothesis import given, strategies as st

def test_seed_is_pinned(request):
    assert request.config.getoption("hypothesis_seed") == "1234"

@given(st.integers())
def test_ints(n):
    assert isinstance(n, int)
"""


def test_property_band_runs_apart_with_the_pinned_seed(repo: GitRepo) -> None:
    repo.files(
        {
            "tests/property/test_props.py": PROPERTY,
            "tests/test_plain.py": "def test_plain(request):\n"
            "    assert request.config.getoption('hypothesis_seed') is None\n",
        }
    )
    repo.commit("props")
    report = _run(
        repo.path,
        ("tests/property/test_props.py", "tests/test_plain.py"),
        property_band=("tests/property",),
        hypothesis_seed=1234,
    )
    runs = {r.label: r for r in report.runs}
    assert set(runs) == {"band", "property"}
    assert (runs["band"].passed, runs["band"].green) == (1, True)
    assert (runs["property"].passed, runs["property"].seed) == (2, 1234)
    assert runs["property"].green


def test_property_band_by_marker(repo: GitRepo) -> None:
    repo.files(
        {
            "pytest.ini": "[pytest]\nmarkers =\n    prop: property tests\n",
            "tests/test_mixed.py": "import pytest\n\n@pytest.mark.prop\ndef test_p(request):\n"
            "    assert request.config.getoption('hypothesis_seed') == '9'\n\n"
            "def test_q(request):\n"
            "    assert request.config.getoption('hypothesis_seed') is None\n",
        }
    )
    repo.commit("marked")
    report = _run(
        repo.path, ("tests/test_mixed.py",), property_band=("marker:prop",), hypothesis_seed=9
    )
    runs = {r.label: r for r in report.runs}
    assert set(runs) == {"band", "property-marked"}
    assert runs["band"].passed == 1 and runs["property-marked"].passed == 1
    assert all(r.green for r in report.runs)


def test_timeout_kills_the_run(repo: GitRepo) -> None:
    repo.write("tests/test_slow.py", "import time\n\ndef test_slow():\n    time.sleep(60)\n")
    repo.commit("slow")
    run = _run(repo.path, ("tests/test_slow.py",), timeout=2).runs[0]
    assert run.timed_out and not run.green
    assert run.duration < 30


def test_full_suite_runs_without_a_selection(repo: GitRepo) -> None:
    repo.files(
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "tests/test_b.py": "def test_b():\n    pass\n",
            "elsewhere/test_c.py": "def test_c():\n    assert False\n",
        }
    )
    repo.commit("suite")
    run = _run(repo.path, None).runs[0]
    assert (run.label, run.selected, run.passed, run.green) == ("full", None, 2, True)


def test_a_full_suite_that_collects_nothing_is_not_a_pass(repo: GitRepo) -> None:
    repo.files({"pytest.ini": "[pytest]\ntestpaths = tests\n", "tests/helpers.py": "X = 1\n"})
    repo.commit("no tests at all")
    run = _run(repo.path, None).runs[0]
    assert (run.label, run.exit_code, run.green) == ("full", band.NO_TESTS, False)


def test_band_runs_split_and_shadow() -> None:
    spec = BandSpec(("tests/p/test_x.py", "tests/test_y.py"), ("tests/p",), 3, shadow=True)
    runs = band.band_runs(spec, Path("."))
    # The band walks the top folder of what it selects, collecting only that (red-team
    # round 7: naming files loaded every folder's conftest before any module imported).
    assert [(r.label, r.args) for r in runs] == [
        ("band", ("--agentgate-select=tests/test_y.py", "tests")),
        ("property", ("--hypothesis-seed=3", "tests/p/test_x.py")),
        ("shadow", ("--hypothesis-seed=3",)),
    ]
    assert band.band_runs(BandSpec(("-odd.py",)), Path("."))[0].args == (
        "--agentgate-select=-odd.py", "./-odd.py")


def test_nodeid_of_xunit1_attributes() -> None:
    assert (
        junit.nodeid_of("tests/test_a.py", "tests.test_a", "test_x[1]")
        == "tests/test_a.py::test_x[1]"
    )
    assert (
        junit.nodeid_of("tests/test_a.py", "tests.test_a.TestC.TestD", "test_y")
        == "tests/test_a.py::TestC::TestD::test_y"
    )
    assert junit.nodeid_of("tests/test_a.py", "", "tests.test_a") == "tests/test_a.py"


def test_node_ids_go_to_the_outcome_plugin_in_a_file(tmp_path: Path) -> None:
    """New-user trial (packaging): 22,673 ``--deselect`` options took pytest some 75 s a run
    to parse; the runner hands node ids to the outcome plugin in one file instead."""
    runner = band.Runner("python", tmp_path, {}, tmp_path, 60)
    cases = [f"tests/test_v.py::test_v[{i}]" for i in range(5000)]
    spec = band.RunSpec("band", ("-m", "not slow", *(f"--deselect={c}" for c in cases),
                                 f"{band.SELECT_OPTION}=tests/test_v.py", "tests"), 1)
    args = runner._node_lists(spec)
    assert args == [f"{band.NODES_OPTION}={tmp_path / 'band.nodes.json'}", "-m", "not slow",
                    "tests"]
    written = json.loads((tmp_path / "band.nodes.json").read_text(encoding="utf-8"))
    assert written == {"select": ["tests/test_v.py"], "deselect": cases}
    assert band.NODES_OPTION == outcomes.NODES_OPTION
