"""pytest-xdist for the band (issue 13 item 3): real xdist workers, and the outcome accounting
still catching what a worker hides -- a test that never reports, a worker that ends itself
with status 0, a rewritten report -- on the controller."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from agentgate.core import config as config_mod
from agentgate.core.errors import ConfigError
from agentgate.run import accounting, band
from agentgate.run.band import BandSpec, Tree
from tests.run.test_outcomes import DESELECT_ALL_BUT_FIRST, NEUTERING_APP, REWRITE_CONFTEST
from tests.support.git_repo import GitRepo, run_agentgate

pytest.importorskip("xdist")
pytest_plugins = ["pytester"]

# Passes only in an xdist worker: a green band proves the workers really ran it.
IN_WORKER = "import os\n\ndef test_{0}():\n    assert os.environ.get('PYTEST_XDIST_WORKER')\n"
THREE = "def test_a():\n    pass\n\ndef test_b():\n    pass\n\ndef test_c():\n    pass\n"
SELECTION = ["test_it.py::test_a", "test_it.py::test_b", "test_it.py::test_c"]


def _account(pytester: pytest.Pytester, selection: list[str]) -> list[accounting.Problem]:
    out = pytester.path / "outcomes.json"
    result = pytester.runpytest_subprocess(
        "-p", "agentgate.run.outcomes", f"--agentgate-outcomes={out}", "-n", "2", *selection
    )
    data = json.loads(out.read_text()) if out.exists() else None
    return accounting.account(data, selection, int(result.ret))


def _codes(problems: list[accounting.Problem]) -> list[tuple[str, tuple[str, ...]]]:
    return [(p.code, p.nodeids) for p in problems]


def test_every_phase_reaches_the_controller(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=THREE + "\ndef test_d():\n    assert 0\n")
    out = pytester.path / "outcomes.json"
    pytester.runpytest_subprocess("-p", "agentgate.run.outcomes",
                                  f"--agentgate-outcomes={out}", "-n", "2")
    data: dict[str, Any] = json.loads(out.read_text())
    assert sorted(data["collected"]) == [*SELECTION, "test_it.py::test_d"]
    assert data["tests"]["test_it.py::test_a"] == {
        "setup": "passed", "call": "passed", "teardown": "passed", "reported": "passed"}
    assert data["tests"]["test_it.py::test_d"]["call"] == "failed"


def test_a_green_selection_under_xdist_accounts_cleanly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=THREE)
    assert _account(pytester, SELECTION) == []


def test_a_test_a_worker_never_runs_nor_reports_fails(pytester: pytest.Pytester) -> None:
    # Attack: a conftest that, on the workers only, skips one test's protocol: no report
    # reaches the controller, xdist itself is content, the run exits 0.
    pytester.makeconftest(
        "import os, pytest\n\n@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_runtest_protocol(item, nextitem):\n"
        "    if os.environ.get('PYTEST_XDIST_WORKER') and item.name == 'test_b':\n"
        "        return True\n"
    )
    pytester.makepyfile(test_it=THREE)
    assert _codes(_account(pytester, SELECTION)) == [("no-outcome", ("test_it.py::test_b",))]


def test_a_worker_that_exits_with_status_0_fails(pytester: pytest.Pytester) -> None:
    # Attack: os._exit(0) inside a test ends its worker; xdist replaces the worker and the
    # session goes on. The tests the dead worker ran have no phases on the controller.
    pytester.makepyfile(test_it="import os\n\n" + THREE.replace(
        "def test_b():\n    pass", "def test_b():\n    os._exit(0)"))
    problems = _account(pytester, SELECTION)
    assert problems and all(p.verdict.name == "FAILED" for p in problems)
    unaccounted = {n for p in problems for n in p.nodeids}
    assert "test_it.py::test_b" in unaccounted


def test_a_report_rewritten_on_a_worker_still_blocks(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(REWRITE_CONFTEST)
    pytester.makepyfile(test_it="def test_a():\n    assert 0\n")
    problems = _account(pytester, ["test_it.py::test_a"])
    assert _codes(problems) == [("outcome-rewritten", ("test_it.py::test_a",))]


def test_code_under_test_that_xfails_its_test_on_a_worker_still_blocks(
    pytester: pytest.Pytester,
) -> None:
    """An xfail the code under test raised is told apart from a marker's on the controller
    too (``hidden_by`` travels with the worker's phases)."""
    pytester.makepyfile(helper_app="import pytest\n\ndef rate():\n    pytest.xfail('known')\n",
                        test_it="from helper_app import rate\n\ndef test_a():\n    rate()\n")
    problems = _account(pytester, ["test_it.py::test_a"])
    assert _codes(problems) == [("outcome-rewritten", ("test_it.py::test_a",))]


def test_code_under_test_that_changes_pytest_on_a_worker_still_blocks(
    pytester: pytest.Pytester,
) -> None:
    """What a worker saw the code under test do to pytest travels to the controller."""
    pytester.makepyfile(helper_app=NEUTERING_APP["registered-wrapper"],
                        test_it="from helper_app import config\n\ndef test_a():\n    assert 0\n")
    problems = _account(pytester, ["test_it.py::test_a"])
    assert _codes(problems) == [("harness-altered", ("test_it.py::test_a",))]


def test_deselection_on_the_workers_is_seen(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DESELECT_ALL_BUT_FIRST)
    pytester.makepyfile(test_it=THREE)
    codes = _codes(_account(pytester, SELECTION))
    assert codes == [("deselected", ("test_it.py::test_b", "test_it.py::test_c"))]


# --- the band with workers, on a real repository -----------------------------------------

def _band(root: Path, selection: tuple[str, ...] | None, workers: int | str,
          suite_files: int = 0) -> band.BandReport:
    config = config_mod.load(root)
    spec = BandSpec(selection, config.property_band, config.hypothesis_seed,
                    workers=workers, suite_files=suite_files)
    return band.run_band(root, config, Tree(root, worktree=False), spec)


def test_the_band_runs_on_two_workers_and_accounts_cleanly(repo: GitRepo) -> None:
    repo.files({f"tests/test_w{i}.py": IN_WORKER.format(i) for i in range(3)})
    repo.commit("tests that pass only in a worker")
    report = _band(repo.path, ("tests/test_w0.py", "tests/test_w1.py", "tests/test_w2.py"), 2)
    assert report.problems == ()
    assert report.runs[0].passed == 3 and report.runs[0].green
    serial = _band(repo.path, ("tests/test_w0.py",), 0)  # the legitimate one-process twin
    assert not serial.runs[0].green


def test_a_band_whose_worker_dies_is_not_green(repo: GitRepo) -> None:
    repo.files({"tests/test_w.py": "import os\n\n" + THREE.replace(
        "def test_b():\n    pass", "def test_b():\n    os._exit(0)")})
    repo.commit("a test that ends its worker")
    report = _band(repo.path, ("tests/test_w.py::test_a", "tests/test_w.py::test_b",
                               "tests/test_w.py::test_c"), 2)
    assert "tests/test_w.py::test_b" in {n for p in report.problems for n in p.nodeids}


def test_the_full_suite_runs_on_workers_under_auto_when_large(repo: GitRepo) -> None:
    repo.files({f"tests/test_w{i}.py": IN_WORKER.format(i) for i in range(2)})
    repo.commit("two worker-only tests")
    large = _band(repo.path, None, "auto", suite_files=band.AUTO_MIN_FILES)
    assert (large.problems, large.runs[0].green) == ((), True)
    small = _band(repo.path, None, "auto", suite_files=2)  # too small to pay for workers
    assert not small.runs[0].green


def test_xdist_args() -> None:
    big, small = band.AUTO_MIN_FILES, band.AUTO_MIN_FILES - 1
    assert band.xdist_args("auto", big, True, "py") == ("-n", "auto")
    assert band.xdist_args("auto", small, True, "py") == ()
    assert band.xdist_args(0, big, True, "py") == ("-n", "0")  # overrides a project's -n
    assert band.xdist_args(3, 1, True, "py") == ("-n", "3")
    assert band.xdist_args("auto", big, False, "py") == ()
    assert band.xdist_args(0, big, False, "py") == ()
    with pytest.raises(ConfigError, match="workers = 3 needs pytest-xdist"):
        band.xdist_args(3, big, False, "py")


def test_property_runs_keep_one_process() -> None:
    spec = BandSpec(("tests/test_a.py",), workers=4)
    run = band.RunSpec("property", ("tests/test_a.py",), 1)
    assert band.with_workers(run, spec, True, "py") is run


def test_workers_config_and_option(tmp_path: Path) -> None:
    ok = "[tool.agentgate]\nworkers = 2\n"
    assert config_mod.load(tmp_path, ok).workers == 2
    assert config_mod.load(tmp_path, "").workers == "auto"
    for bad in ('"many"', "-1", "true"):
        with pytest.raises(ConfigError, match="'workers' must be"):
            config_mod.load(tmp_path, f"[tool.agentgate]\nworkers = {bad}\n")
    assert (config_mod.parse_workers("auto"), config_mod.parse_workers("4")) == ("auto", 4)
    with pytest.raises(ConfigError, match="--workers 'x'"):
        config_mod.parse_workers("x")
    assert dataclasses.replace(config_mod.load(tmp_path, ok), workers=0).workers == 0


def test_check_and_the_pre_push_hook_take_workers(repo: GitRepo) -> None:
    repo.files({"app/__init__.py": "", "tests/test_w0.py": IN_WORKER.format(0)})
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "patch")
    repo.files({"tests/test_w0.py": IN_WORKER.format(0) + "\n# touched\n"})
    repo.commit("touch the worker-only test")
    on_workers = run_agentgate("check", "--base", "main", "--workers", "2", cwd=repo.path)
    assert on_workers.returncode == 0, on_workers.stdout + on_workers.stderr
    # The config's 0 (one process) is what runs without the option: the test fails there.
    repo.git("checkout", "-q", "main")
    repo.files({"pyproject.toml": "[tool.agentgate]\nworkers = 0\n"})
    repo.commit("one process")
    repo.git("checkout", "-q", "patch")
    repo.git("rebase", "-q", "main")
    serial = run_agentgate("check", "--base", "main", cwd=repo.path)
    assert serial.returncode == 1, serial.stdout + serial.stderr
    for args in (("check", "--base", "main"), ("hook", "pre-push")):
        bad = run_agentgate(*args, "--workers", "lots", cwd=repo.path)
        assert bad.returncode == 64 and "--workers 'lots'" in bad.stdout + bad.stderr, args
