"""Thaw drills: real ``python -m pytest`` subprocesses, k times, and what they do to a record."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentgate.core import config as config_mod
from agentgate.core.errors import EXIT_USAGE, AgentgateError
from agentgate.core.model import Verdict
from agentgate.flows import thaw as ledger_drill
from agentgate.ledger import records as ledger
from tests.support.git_repo import GitRepo
from tests.support.ledger import write_freeze

TODAY = date(2026, 1, 10)  # records are frozen on this day, for 14 days
LATER = TODAY + timedelta(days=3)
FILE = "tests/test_drill.py"
DRILLED = """\
import os
import time


def test_pass():
    pass


def test_fail():
    assert False, "always fails"


def test_seeded():
    assert os.environ["PYTHONHASHSEED"] != "3", "fails under seed 3"


def test_pinned():
    assert (os.environ.get("TZ"), os.environ.get("LC_ALL")) == ("UTC", "C.UTF-8")


def test_tokyo():
    assert os.environ.get("TZ") == "Asia/Tokyo", "needs the drill's own TZ"


def test_counted():
    with open("drill-runs.log", "a") as log:
        log.write(os.environ["PYTHONHASHSEED"] + "\\n")


def test_slow():
    time.sleep(10)


def test_spawns():
    import subprocess, sys
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open("spawned.pid.tmp", "w") as out:
        out.write(str(child.pid))
    os.replace("spawned.pid.tmp", "spawned.pid")
    time.sleep(10)
"""


@pytest.fixture
def drill_repo(repo: GitRepo) -> GitRepo:
    """Tiny tests that pass, fail, or depend on the ambient inputs; drills use this Python."""
    repo.files(
        {
            "pyproject.toml": f"[tool.agentgate]\npython = {json.dumps(sys.executable)}\n",
            FILE: DRILLED,
        }
    )
    repo.commit("tests to drill")
    return repo


def _freeze(
    repo: GitRepo, name: str, *, k: int = 2, ambient: dict[str, str] | None = None,
    **overrides: Any,
) -> Path:
    test = f"{FILE}::{name}"
    drill = {"k": k, "ambient": ambient or {}}
    return write_freeze(repo, test, today=TODAY, drill=drill, **overrides)


def _thaw(repo: GitRepo, name: str | None, *, today: date = LATER, **kwargs: Any) -> Any:
    config = config_mod.load(repo.path)
    test = f"{FILE}::{name}" if name else None
    return ledger_drill.thaw(repo.path, config, test=test, today=today, **kwargs)


def _data(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _runs(repo: GitRepo) -> list[str]:
    log = repo.path / "drill-runs.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def _seeds(base: list[int]) -> dict[str, Any]:
    return {
        "base_fail": base,
        "head_fail": base,
        "mode": "matched",
        "seeds": list(range(6)),
        "tz": "UTC",
    }


def _check(repo: GitRepo, today: date = LATER) -> list[str]:
    return [r.code for r in ledger.check(repo.path, config_mod.load(repo.path), today=today)]


def _frozen(repo: GitRepo, today: date = LATER) -> frozenset[str]:
    return ledger.frozen_tests(repo.path, config_mod.load(repo.path), today=today)


# --- outcomes ----------------------------------------------------------------------------------


def test_k_of_k_passes_puts_the_record_on_probation(drill_repo: GitRepo) -> None:
    path = _freeze(drill_repo, "test_counted", k=3, evidence=_seeds([3, 5]))
    result = _thaw(drill_repo, "test_counted")
    assert (result.exit_code, result.reasons) == (0, [])
    # k real runs, in the repository root, under the seeds the failure reproduced with.
    assert _runs(drill_repo) == ["3", "5", "3"]
    data = _data(path)
    assert (data["state"], data["lease_until"]) == ("probation", "2026-01-20")
    assert data["freeze_until"] == "2026-01-24"  # unchanged
    drill = data["history"][-1]
    assert {k: drill[k] for k in ("at", "event", "result", "passed", "k", "seeds")} == {
        "at": "2026-01-13",
        "event": "drill",
        "result": "pass",
        "passed": 3,
        "k": 3,
        "seeds": [3, 5],
    }
    assert drill["env"] == {"TZ": "UTC", "LC_ALL": "C.UTF-8"}
    assert "next drill due 2026-01-20" in result.notes[0]
    # On probation the test counts again, and the record is still a valid one.
    assert _frozen(drill_repo) == frozenset()
    assert _check(drill_repo) == []


def test_failure_without_cause_is_reported_and_not_renewed(drill_repo: GitRepo) -> None:
    path = _freeze(drill_repo, "test_fail")
    result = _thaw(drill_repo, "test_fail")
    assert result.exit_code == Verdict.FAILED.exit_code
    [reason] = result.reasons
    assert (reason.code, reason.path) == (
        "ledger-drill-failed",
        path.relative_to(drill_repo.path).as_posix(),
    )
    assert "2/2 drill runs failed" in reason.detail
    assert "NOT renewed" in reason.detail and "--cause" in reason.detail
    data = _data(path)
    assert (data["state"], data["freeze_until"], data["renewed_at"]) == (
        "frozen",
        "2026-01-24",
        None,
    )
    assert [e["event"] for e in data["history"]] == ["frozen", "drill"]
    assert data["history"][-1]["result"] == "fail"
    assert "always fails" in data["history"][-1]["failure"]


def test_failure_with_cause_renews_the_freeze(drill_repo: GitRepo) -> None:
    path = _freeze(drill_repo, "test_fail")
    result = _thaw(drill_repo, "test_fail", cause="TZ: compares against local midnight")
    assert result.exit_code == Verdict.FAILED.exit_code
    assert "renewed until 2026-01-27" in result.reasons[0].detail
    data = _data(path)
    # Renewed for the same 14-day period, counted from the renewal.
    assert (data["state"], data["renewed_at"], data["freeze_until"]) == (
        "frozen",
        "2026-01-13",
        "2026-01-27",
    )
    assert [e["event"] for e in data["history"]] == ["frozen", "drill", "renewed"]
    assert data["history"][-1]["cause"] == "TZ: compares against local midnight"
    assert _check(drill_repo, date(2026, 1, 27)) == []
    assert _frozen(drill_repo, date(2026, 1, 27)) == {f"{FILE}::test_fail"}


def test_drill_runs_under_the_seeds_that_failed(drill_repo: GitRepo) -> None:
    failing = _freeze(drill_repo, "test_seeded", evidence=_seeds([3]))
    assert _thaw(drill_repo, "test_seeded").exit_code == 1
    assert "PYTHONHASHSEED=3" in _data(failing)["history"][-1]["failure"]
    _freeze(drill_repo, "test_seeded", evidence=_seeds([4]))
    assert _thaw(drill_repo, "test_seeded").exit_code == 0


def test_drill_pins_the_ambient_inputs(
    drill_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    monkeypatch.setenv("LC_ALL", "POSIX")
    _freeze(drill_repo, "test_pinned")
    assert _thaw(drill_repo, "test_pinned").exit_code == 0


def test_a_drill_that_times_out_fails(drill_repo: GitRepo) -> None:
    drill_repo.write(
        "pyproject.toml", f"[tool.agentgate]\npython = {json.dumps(sys.executable)}\ntimeout = 1\n"
    )
    path = _freeze(drill_repo, "test_slow", k=1)
    assert _thaw(drill_repo, "test_slow").exit_code == 1
    assert "timed out after 1s" in _data(path)["history"][-1]["failure"]


def test_a_drill_that_times_out_takes_what_its_test_started_with_it(
    drill_repo: GitRepo,
) -> None:
    """The drill's whole process group dies at the limit, not only pytest (a plain
    ``subprocess.run(timeout=...)`` would leave the test's child running)."""
    drill_repo.write(
        "pyproject.toml", f"[tool.agentgate]\npython = {json.dumps(sys.executable)}\ntimeout = 2\n"
    )
    _freeze(drill_repo, "test_spawns", k=1)
    assert _thaw(drill_repo, "test_spawns").exit_code == 1
    spawned = int((drill_repo.path / "spawned.pid").read_text())
    deadline = time.monotonic() + 5
    while _running(spawned):
        assert time.monotonic() < deadline, "the drill's test left its child running"
        time.sleep(0.05)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is not running


def test_drill_leaves_only_the_record_changed(
    drill_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # the drill must set it
    path = _freeze(drill_repo, "test_pass")
    drill_repo.commit("freeze")
    assert _thaw(drill_repo, "test_pass").exit_code == 0
    changed = drill_repo.git("status", "--porcelain", "--untracked-files=all").splitlines()
    assert changed == [f" M {path.relative_to(drill_repo.path).as_posix()}"]


# --- probation leases ----------------------------------------------------------------------------


def _on_probation(repo: GitRepo, name: str, lease: str, **overrides: Any) -> Path:
    return _freeze(repo, name, state="probation", lease_until=lease, **overrides)


def test_due_drills_only_the_leases_that_ran_out(drill_repo: GitRepo) -> None:
    due = _on_probation(drill_repo, "test_counted", "2026-01-13", evidence=_seeds([2]))
    later = _on_probation(drill_repo, "test_pass", "2026-01-14")
    frozen = _freeze(drill_repo, "test_fail")
    untouched = {p: p.read_bytes() for p in (later, frozen)}
    result = _thaw(drill_repo, None, due=True)
    assert result.exit_code == 0
    assert _runs(drill_repo) == ["2", "2"]
    assert _data(due)["lease_until"] == "2026-01-20"  # renewed lease
    assert {p: p.read_bytes() for p in untouched} == untouched
    assert [d["test"] for d in result.to_json()["drills"]] == [f"{FILE}::test_counted"]


def test_due_with_nothing_due_says_so(drill_repo: GitRepo) -> None:
    _on_probation(drill_repo, "test_pass", "2026-01-20")
    result = _thaw(drill_repo, None, due=True)
    assert (result.exit_code, result.notes) == (0, ["no drill is due"])


def test_due_reports_invalid_records(drill_repo: GitRepo) -> None:
    _freeze(drill_repo, "test_pass", owner="")
    result = _thaw(drill_repo, None, due=True)
    assert [r.code for r in result.reasons] == ["ledger-owner"]
    assert result.exit_code == 4


def test_probation_failure_without_cause_stays_on_probation(drill_repo: GitRepo) -> None:
    path = _on_probation(drill_repo, "test_fail", "2026-01-13")
    assert _thaw(drill_repo, None, due=True).exit_code == 1
    data = _data(path)
    # No cause, no renewal: the test keeps counting (probation), and the failure is on record.
    assert (data["state"], data["history"][-1]["result"]) == ("probation", "fail")
    assert _frozen(drill_repo) == frozenset()


def test_probation_failure_with_cause_refreezes(drill_repo: GitRepo) -> None:
    path = _on_probation(drill_repo, "test_fail", "2026-01-13")
    _thaw(drill_repo, None, due=True, cause="shared temp dir between tests")
    data = _data(path)
    assert (data["state"], data["lease_until"], data["freeze_until"]) == (
        "frozen",
        None,
        "2026-01-27",
    )
    assert _frozen(drill_repo) == {f"{FILE}::test_fail"}


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cause", ["still flaky", "flaky", "Flaky!", "unknown", "  ", "still failing on CI", "idk"]
)
def test_vague_causes_are_refused_before_any_drill(drill_repo: GitRepo, cause: str) -> None:
    path = _freeze(drill_repo, "test_counted")
    before = path.read_bytes()
    with pytest.raises(AgentgateError, match="too vague") as caught:
        _thaw(drill_repo, "test_counted", cause=cause)
    assert caught.value.exit_code == EXIT_USAGE
    assert (path.read_bytes(), _runs(drill_repo)) == (before, [])


@pytest.mark.parametrize(
    "cause",
    [
        "TZ",
        "pythonhashseed set order",
        "shared temp dir between tests",
        "network: test reaches example.com",
    ],
)
def test_specific_causes_are_accepted(drill_repo: GitRepo, cause: str) -> None:
    config = config_mod.load(drill_repo.path)
    assert ledger_drill.check_cause(f" {cause} ", config) == cause


def test_an_expired_freeze_is_not_drilled_back_to_life(drill_repo: GitRepo) -> None:
    path = _freeze(drill_repo, "test_counted")
    before = path.read_bytes()
    result = _thaw(drill_repo, "test_counted", today=date(2026, 1, 25), cause="TZ offset")
    assert [r.code for r in result.reasons] == ["ledger-expired"]
    assert result.exit_code == 4
    assert (path.read_bytes(), _runs(drill_repo)) == (before, [])


def test_unknown_test_and_missing_target_are_usage_errors(drill_repo: GitRepo) -> None:
    _freeze(drill_repo, "test_pass")
    with pytest.raises(AgentgateError, match="no freeze record for") as caught:
        _thaw(drill_repo, "test_other")
    assert caught.value.exit_code == EXIT_USAGE
    with pytest.raises(AgentgateError, match="--due"):
        _thaw(drill_repo, None)
    with pytest.raises(AgentgateError, match="--due"):
        _thaw(drill_repo, "test_pass", due=True)


def test_a_drill_that_names_a_command_is_refused_and_nothing_runs(drill_repo: GitRepo) -> None:
    """The attack (issue 11): a record whose drill is any command, which thaw used to run.
    The old form is refused before anything runs; the record is left as it was."""
    path = write_freeze(drill_repo, f"{FILE}::test_pass", today=TODAY,
                        drill={"command": "touch pwned", "k": 1})
    before = path.read_bytes()
    result = _thaw(drill_repo, "test_pass")
    assert [r.code for r in result.reasons] == ["ledger-drill-command"]
    assert result.exit_code == 4
    assert not (drill_repo.path / "pwned").exists()
    assert path.read_bytes() == before


def test_a_drill_cannot_smuggle_options_through_its_ambient(drill_repo: GitRepo) -> None:
    """PYTEST_ADDOPTS is not an ambient input: a drill may pin only the config's names."""
    path = _freeze(drill_repo, "test_fail", ambient={"PYTEST_ADDOPTS": "--deselect x"})
    before = path.read_bytes()
    result = _thaw(drill_repo, "test_fail")
    assert [r.code for r in result.reasons] == ["ledger-field"]
    assert path.read_bytes() == before


def test_a_structured_drill_runs_its_test_k_times_with_its_ambient(drill_repo: GitRepo) -> None:
    """The legitimate twin: agentgate builds the pytest command for the record's test."""
    _freeze(drill_repo, "test_counted", k=4)
    assert _thaw(drill_repo, "test_counted").exit_code == 0
    assert _runs(drill_repo) == ["3", "3", "3", "3"]  # under the seed that failed
    path = _freeze(drill_repo, "test_tokyo", ambient={"TZ": "Asia/Tokyo"})
    assert _thaw(drill_repo, "test_tokyo").exit_code == 0
    assert _data(path)["history"][-1]["env"] == {"TZ": "Asia/Tokyo", "LC_ALL": "C.UTF-8"}
    _freeze(drill_repo, "test_tokyo")  # the same test without its TZ fails
    assert _thaw(drill_repo, "test_tokyo").exit_code == 1


def test_a_drill_that_pins_the_seed_runs_every_time_under_it(drill_repo: GitRepo) -> None:
    _freeze(drill_repo, "test_counted", k=3, evidence=_seeds([3, 5]),
            ambient={"PYTHONHASHSEED": "4"})
    assert _thaw(drill_repo, "test_counted").exit_code == 0
    assert _runs(drill_repo) == ["4", "4", "4"]


# --- pieces --------------------------------------------------------------------------------------


def _record(period: int) -> ledger.FreezeRecord:
    return ledger.new_record(
        test=f"{FILE}::test_pass",
        verdict="PRE_EXISTING",
        evidence=_seeds([1]),
        reason="r",
        owner="o",
        frozen_at_sha="abcdef1",
        freeze_until=TODAY + timedelta(days=period),
        recheck="r",
        drill_k=2,
        today=TODAY,
    )


def test_renewal_keeps_the_period_but_never_exceeds_the_maximum() -> None:
    assert ledger_drill.renewal_end(_record(14), LATER, 30) == LATER + timedelta(days=14)
    assert ledger_drill.renewal_end(_record(7), LATER, 10) == LATER + timedelta(days=7)
    assert ledger_drill.renewal_end(_record(0), LATER, 30) == LATER + timedelta(days=1)


def test_renewal_never_runs_past_the_cap_from_the_first_freeze() -> None:
    """max_freeze_days counts from frozen_at: a renewal up to the cap is fine, one past it is
    refused (None), however short the period (issue 11)."""
    assert ledger_drill.renewal_end(_record(14), LATER, 17) == TODAY + timedelta(days=17)
    assert ledger_drill.renewal_end(_record(14), LATER, 16) is None
    assert ledger_drill.renewal_end(_record(30), LATER, 10) is None
    renewed = dataclasses.replace(_record(14), renewed_at=TODAY + timedelta(days=14),
                                  freeze_until=TODAY + timedelta(days=28))
    assert ledger_drill.renewal_end(renewed, TODAY + timedelta(days=28), 30) is None


def _capped(repo: GitRepo, max_days: int) -> None:
    repo.write("pyproject.toml", f"[tool.agentgate]\npython = {json.dumps(sys.executable)}\n"
               f"max_freeze_days = {max_days}\n")


def test_a_renewal_past_the_cap_is_refused_and_needs_a_new_attribution(
    drill_repo: GitRepo,
) -> None:
    _capped(drill_repo, 16)  # frozen on TODAY for 14 days; renewing on LATER would reach 17
    path = _freeze(drill_repo, "test_fail")
    result = _thaw(drill_repo, "test_fail", cause="TZ: compares against local midnight")
    assert result.exit_code == Verdict.FAILED.exit_code
    [reason] = result.reasons
    assert "freeze NOT renewed: a renewal would run past 2026-01-26" in reason.detail
    assert f"agentgate attribute {FILE}::test_fail --freeze" in reason.detail
    data = _data(path)
    assert (data["freeze_until"], data["renewed_at"]) == ("2026-01-24", None)
    assert [e["event"] for e in data["history"]] == ["frozen", "drill"]


def test_a_renewal_up_to_the_cap_is_allowed(drill_repo: GitRepo) -> None:
    _capped(drill_repo, 17)
    path = _freeze(drill_repo, "test_fail")
    _thaw(drill_repo, "test_fail", cause="TZ: compares against local midnight")
    data = _data(path)
    assert (data["freeze_until"], data["renewed_at"]) == ("2026-01-27", "2026-01-13")
    assert _check(drill_repo, date(2026, 1, 27)) == []


def test_the_drill_is_the_project_interpreter_running_pytest_on_the_node_id(
    drill_repo: GitRepo,
) -> None:
    config = config_mod.load(drill_repo.path)
    argv = ledger_drill.drill_argv(drill_repo.path, config, "-a b.py::t; rm -rf x")
    assert argv[:3] == [sys.executable, "-m", "pytest"]
    assert argv[-2:] == ["--", "-a b.py::t; rm -rf x"]  # one argument, never an option
