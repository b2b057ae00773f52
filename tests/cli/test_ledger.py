"""The ledger commands through the real CLI: exit codes, one-line errors, exact reports."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

import pytest

from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.ledger import LEDGER, SESSION, TAX, write_freeze
from tests.support.text import unwrap

TODAY = "2026-01-10"
TAX_FILE = f"{LEDGER}/tests_test_tax.py_test_tax-"  # + hash + .json


def _agentgate(repo: GitRepo, *args: str) -> tuple[int, str, str]:
    proc = run_agentgate(*args, cwd=repo.path)
    assert "Traceback" not in proc.stderr
    return proc.returncode, unwrap(proc.stdout), proc.stderr  # one line per item


def _one_line_error(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("agentgate: ")
    return lines[0]


def _record_path(repo: GitRepo) -> Path:
    [path] = (repo.path / LEDGER).glob("*.json")
    return path


# --- ledger check ------------------------------------------------------------------------------


def test_check_passes_on_a_valid_ledger(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, name="tax.json")
    code, out, _ = _agentgate(app_repo, "ledger", "check")
    assert code == 0
    assert out == (
        "agentgate ledger check: ok (exit 0)\n"
        f"  note: 1 freeze record(s) in {LEDGER}, all valid\n"
    )


def test_check_blocks_with_one_line_per_bad_record(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, name="a.json", owner="")
    write_freeze(app_repo, SESSION, name="b.json", verdict="HARNESS_ENV", owner="")
    (app_repo.path / LEDGER / "c.json").write_text("{", encoding="utf-8")
    code, out, _ = _agentgate(app_repo, "ledger", "check")
    assert code == 4
    assert out.splitlines() == [
        "agentgate ledger check: blocked (exit 4)",
        f"  blocked: ledger-owner {LEDGER}/a.json: {TAX}: owner is empty; name the person "
        "who answers for this freeze",
        f"  blocked: ledger-verdict {LEDGER}/b.json: {SESSION}: verdict is 'HARNESS_ENV', and "
        "only PRE_EXISTING justifies a freeze; fix the test, or remove the record (agentgate "
        "unfreeze); owner is empty; name the person who answers for this freeze",
        f"  blocked: ledger-malformed {LEDGER}/c.json: malformed JSON (Expecting property name "
        "enclosed in double quotes: line 1 column 2 (char 1)); fix the file or delete it",
    ]


def test_check_expiry_follows_today(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, name="tax.json")
    code, out, _ = _agentgate(app_repo, "ledger", "check", "--today", "2099-01-01")
    assert code == 4
    assert "ledger-expired" in out


def test_check_json_lists_reasons(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, name="tax.json", owner="")
    code, out, _ = _agentgate(app_repo, "ledger", "check", "--format", "json")
    data = json.loads(out)
    assert (code, data["verdict"], data["exit_code"]) == (4, "blocked", 4)
    assert [(r["code"], r["path"]) for r in data["reasons"]] == [
        ("ledger-owner", f"{LEDGER}/tax.json")
    ]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["ledger", "check", "--today", "2026-13-01"], "is not a date YYYY-MM-DD"),
        (["ledger", "check", "--today", "20260110"], "is not a date YYYY-MM-DD"),
        (["ledger", "list", "--format", "yaml"], "yaml"),
    ],
)
def test_bad_options_are_usage_errors(app_repo: GitRepo, args: list[str], words: str) -> None:
    code, _, err = _agentgate(app_repo, *args)
    assert code == 64
    assert words in _one_line_error(err)


def test_bad_config_is_a_usage_error(app_repo: GitRepo) -> None:
    app_repo.write("pyproject.toml", "[tool.agentgate]\nmax_freeze_days = 'long'\n")
    code, _, err = _agentgate(app_repo, "ledger", "check")
    assert code == 64
    assert "max_freeze_days" in _one_line_error(err)


# --- ledger list -------------------------------------------------------------------------------


def _listed_repo(app_repo: GitRepo) -> GitRepo:
    write_freeze(app_repo, TAX, today=_day(TODAY), name="a.json")
    history = [
        {"at": "2026-01-10", "event": "frozen"},
        {"at": "2026-01-11", "event": "drill", "result": "pass", "passed": 2, "k": 2},
    ]
    write_freeze(
        app_repo,
        SESSION,
        today=_day(TODAY),
        name="b.json",
        state="probation",
        lease_until="2026-01-18",
        owner="bob",
        history=history,
    )
    return app_repo


def _day(text: str) -> date:
    return date.fromisoformat(text)


def test_list_text_shows_state_owner_days_left_and_last_drill(app_repo: GitRepo) -> None:
    repo = _listed_repo(app_repo)
    code, out, _ = _agentgate(repo, "ledger", "list", "--today", "2026-01-12")
    assert code == 0
    assert out.splitlines() == [
        "agentgate ledger list: ok (exit 0)",
        "  state      left  owner  last drill           test",
        "  frozen     12d   alice  never                tests/test_tax.py::test_tax",
        "  probation  12d   bob    2026-01-11 pass 2/2  tests/test_session.py::test_total",
    ]


def test_list_json_rows(app_repo: GitRepo) -> None:
    repo = _listed_repo(app_repo)
    code, out, _ = _agentgate(repo, "ledger", "list", "-f", "json", "--today", "2026-01-12")
    rows = json.loads(out)["records"]
    assert code == 0
    assert rows[1] == {
        "test": SESSION,
        "file": f"{LEDGER}/b.json",
        "state": "probation",
        "owner": "bob",
        "freeze_until": "2026-01-24",
        "days_left": 12,
        "lease_until": "2026-01-18",
        "last_drill": {"at": "2026-01-11", "result": "pass", "passed": 2, "k": 2},
        "valid": True,
        "problem": None,
    }


def test_list_markdown(app_repo: GitRepo) -> None:
    repo = _listed_repo(app_repo)
    code, out, _ = _agentgate(repo, "ledger", "list", "-f", "markdown", "--today", "2026-01-12")
    assert code == 0
    lines = out.splitlines()
    assert "| state | left | owner | last drill | test |" in lines
    assert f"| frozen | 12d | alice | never | `{TAX}` |" in lines


def test_list_marks_bad_records_and_exits_blocked(app_repo: GitRepo) -> None:
    repo = _listed_repo(app_repo)
    code, out, _ = _agentgate(repo, "ledger", "list", "--today", "2026-02-01")
    assert code == 4
    assert "  frozen (ledger-expired)     expired" in out
    assert out.count("blocked: ledger-expired") == 2


def test_list_of_an_empty_ledger(app_repo: GitRepo) -> None:
    code, out, _ = _agentgate(app_repo, "ledger", "list")
    assert (code, out) == (
        0,
        f"agentgate ledger list: ok (exit 0)\n  note: no freeze records in {LEDGER}\n",
    )


# --- freeze / unfreeze ---------------------------------------------------------------------------

FREEZE = [
    "freeze",
    TAX,
    "--owner",
    "alice",
    "--reason",
    "set order under PYTHONHASHSEED=3",
    "--seeds",
    "0,1,2,3",
    "--today",
    TODAY,
]


def test_freeze_writes_a_valid_record(app_repo: GitRepo) -> None:
    code, out, _ = _agentgate(
        app_repo,
        *FREEZE,
        "--base-fail",
        "3",
        "--head-fail",
        "3",
        "--until",
        "2026-01-20",
        "--k",
        "5",
        "--ambient",
        "TZ=Asia/Tokyo",
    )
    assert code == 0
    path = _record_path(app_repo)
    assert path.relative_to(app_repo.path).as_posix().startswith(TAX_FILE)
    assert "commit the ledger change on its own, as a human" in out
    data = json.loads(path.read_text(encoding="utf-8"))
    assert (data["owner"], data["frozen_at"], data["freeze_until"]) == (
        "alice",
        TODAY,
        "2026-01-20",
    )
    assert data["frozen_at_sha"] == app_repo.sha()
    assert data["evidence"] == {
        "base_fail": [3],
        "head_fail": [3],
        "mode": "manual",
        "seeds": [0, 1, 2, 3],
        "tz": "UTC",
    }
    assert data["drill"] == {"k": 5, "ambient": {"TZ": "Asia/Tokyo"}}
    assert _agentgate(app_repo, "ledger", "check", "--today", TODAY)[0] == 0


@pytest.mark.parametrize(
    ("ambient", "exit_code", "words"),
    [("TZ", 64, "is not a comma-separated list of NAME=VALUE"),
     ("PYTEST_ADDOPTS=-x", 4, "ambient may pin only the config's ambient inputs")],
)
def test_freeze_refuses_a_drill_ambient_outside_the_config(
    app_repo: GitRepo, ambient: str, exit_code: int, words: str
) -> None:
    code, out, err = _agentgate(app_repo, *FREEZE, "--base-fail", "3", "--head-fail", "3",
                                "--ambient", ambient)
    assert code == exit_code
    assert words in out + err
    assert not (app_repo.path / ".agentgate/freezes").exists()


def test_freeze_defaults_to_the_maximum_length(app_repo: GitRepo) -> None:
    code, _, _ = _agentgate(app_repo, *FREEZE, "--base-fail", "3", "--head-fail", "3")
    assert code == 0
    data = json.loads(_record_path(app_repo).read_text(encoding="utf-8"))
    assert data["freeze_until"] == "2026-02-09"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--base-fail", "", "--head-fail", "3"], "nothing failed on the base"),
        (["--base-fail", "1", "--head-fail", "3"], "base failed on seeds [1] but head on [3]"),
        (["--base-fail", "3", "--head-fail", "3", "--until", "2026-03-01"], "max_freeze_days"),
        (["--base-fail", "3", "--head-fail", "3", "--owner", " "], "owner is empty"),
    ],
)
def test_freeze_refuses_what_the_ledger_would_block(
    app_repo: GitRepo, args: list[str], words: str
) -> None:
    code, _, err = _agentgate(app_repo, *FREEZE, *args)
    assert code == 4
    assert words in _one_line_error(err)
    assert not (app_repo.path / LEDGER).exists()


def test_freeze_twice_is_refused(app_repo: GitRepo) -> None:
    args = [*FREEZE, "--base-fail", "3", "--head-fail", "3"]
    assert _agentgate(app_repo, *args)[0] == 0
    code, _, err = _agentgate(app_repo, *args)
    assert code == 4
    assert "already frozen by" in _one_line_error(err)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--base-fail", "three", "--head-fail", "3"], "--base-fail"),
        (["--base-fail", "3", "--head-fail", "3", "--until", "soon"], "--until"),
        (["--base-fail", "3", "--head-fail", "3", "--k", "0"], "--k"),
    ],
)
def test_freeze_usage_errors(app_repo: GitRepo, args: list[str], words: str) -> None:
    code, _, err = _agentgate(app_repo, *FREEZE, *args)
    assert code == 64
    assert words in _one_line_error(err)


def test_unfreeze_removes_the_record(app_repo: GitRepo) -> None:
    path = write_freeze(app_repo, TAX)
    code, out, _ = _agentgate(app_repo, "unfreeze", TAX)
    assert code == 0
    assert not path.exists()
    assert f"unfroze {TAX}" in out
    code, _, err = _agentgate(app_repo, "unfreeze", TAX)
    assert code == 64
    assert f"no freeze record for {TAX}" in _one_line_error(err)


# --- thaw ----------------------------------------------------------------------------------------


@pytest.fixture
def thaw_repo(app_repo: GitRepo) -> GitRepo:
    app_repo.files(
        {
            "pyproject.toml": f"[tool.agentgate]\npython = {json.dumps(sys.executable)}\n",
            "tests/test_broken.py": "def test_broken():\n    assert False\n",
        }
    )
    app_repo.commit("a broken test")
    for test in (TAX, "tests/test_broken.py::test_broken"):
        write_freeze(app_repo, test, today=_day(TODAY))
    return app_repo


def test_thaw_exit_codes_and_messages(thaw_repo: GitRepo) -> None:
    broken = "tests/test_broken.py::test_broken"
    code, out, _ = _agentgate(thaw_repo, "thaw", TAX, "--today", "2026-01-12")
    assert code == 0
    assert "2/2 drill runs passed; on probation" in out
    code, out, _ = _agentgate(thaw_repo, "thaw", broken, "--today", "2026-01-12")
    assert code == 1
    assert "failed: ledger-drill-failed" in out and "freeze NOT renewed" in out
    code, _, err = _agentgate(thaw_repo, "thaw", broken, "--cause", "still flaky")
    assert code == 64
    assert "too vague" in _one_line_error(err)
    code, out, _ = _agentgate(
        thaw_repo,
        "thaw",
        broken,
        "--cause",
        "LC_ALL collation",
        "--today",
        "2026-01-12",
        "-f",
        "json",
    )
    assert code == 1
    [drill] = json.loads(out)["drills"]
    assert (drill["state"], drill["freeze_until"]) == ("frozen", "2026-01-26")
    code, out, _ = _agentgate(thaw_repo, "thaw", "--due", "--today", "2026-01-19")
    assert code == 0
    assert f"{TAX}: 2/2 drill runs passed" in out


def test_thaw_needs_a_test_or_due(thaw_repo: GitRepo) -> None:
    code, _, err = _agentgate(thaw_repo, "thaw")
    assert code == 64
    assert "--due" in _one_line_error(err)
