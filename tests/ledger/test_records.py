"""The freeze ledger's rules: every condition ``ledger check`` fails on, and the contract the
planner (``check``, ``frozen_tests``) and attribution (``new_record``, ``write_record``) use.

The record writers (``freeze_json``, ``write_freeze``) live in tests/support/ledger.py.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

import pytest

from agentgate.core import config as config_mod
from agentgate.core.errors import EXIT_BLOCKED, AgentgateError
from agentgate.core.model import Verdict
from agentgate.ledger import records as ledger
from tests.support.git_repo import GitRepo
from tests.support.ledger import DROP, LEDGER, SESSION, TAX, freeze_json, write_freeze

TODAY = date(2026, 1, 10)
def _check(repo: GitRepo, today: date = TODAY) -> list[Any]:
    return ledger.check(repo.path, config_mod.load(repo.path), today=today)


def _codes(repo: GitRepo, today: date = TODAY) -> list[str]:
    return [r.code for r in _check(repo, today)]


def _frozen(repo: GitRepo, today: date = TODAY) -> frozenset[str]:
    return ledger.frozen_tests(repo.path, config_mod.load(repo.path), today=today)


def _evidence(**changes: Any) -> dict[str, Any]:
    base = {
        "base_fail": [3],
        "head_fail": [3],
        "mode": "matched",
        "seeds": [0, 1, 2, 3],
        "tz": "UTC",
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not DROP}


# --- a valid ledger -----------------------------------------------------------------------


def test_no_ledger_folder_is_valid_and_freezes_nothing(app_repo: GitRepo) -> None:
    assert _check(app_repo) == []
    assert _frozen(app_repo) == frozenset()


def test_valid_record_passes_and_is_frozen(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY)
    assert _check(app_repo) == []
    assert _frozen(app_repo) == {TAX}


def test_helper_records_are_valid_on_the_real_today(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX)
    config = config_mod.load(app_repo.path)
    assert ledger.check(app_repo.path, config) == []
    assert ledger.frozen_tests(app_repo.path, config) == {TAX}


# --- each failure condition ------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"test": "a"',
        b"[1, 2]",
        b'"just a string"',
        b"\xff\xfe{}",
        b'{"owner": "a", "owner": "b"}',
        b'{"seeds": NaN}',
    ],
    ids=["syntax", "truncated", "array", "string", "not-utf8", "duplicate-key", "nan"],
)
def test_malformed_record_is_blocked(app_repo: GitRepo, content: bytes) -> None:
    write_freeze(app_repo, TAX, today=TODAY)
    bad = app_repo.path / LEDGER / "broken.json"
    bad.write_bytes(content)
    reasons = _check(app_repo)
    assert [(r.code, r.path) for r in reasons] == [("ledger-malformed", f"{LEDGER}/broken.json")]
    assert reasons[0].verdict is Verdict.BLOCKED


def test_ledger_path_that_is_a_file_is_blocked(app_repo: GitRepo) -> None:
    app_repo.write(LEDGER, "not a folder\n")
    assert _codes(app_repo) == ["ledger-malformed"]


# The issue's field list, written out here so that dropping a field from the code's own list
# makes this test fail instead of silently testing less.
REQUIRED = [
    "test",
    "verdict",
    "evidence",
    "reason",
    "owner",
    "frozen_at_sha",
    "frozen_at",
    "freeze_until",
    "recheck",
    "drill",
    "state",
    "history",
]
EVIDENCE = ["base_fail", "head_fail", "mode", "seeds", "tz"]


@pytest.mark.parametrize("field", REQUIRED)
def test_missing_field_is_blocked(app_repo: GitRepo, field: str) -> None:
    write_freeze(app_repo, TAX, today=TODAY, name="r.json", **{field: DROP})
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-missing-field"]
    assert field in reasons[0].detail


@pytest.mark.parametrize("key", EVIDENCE)
def test_missing_evidence_key_is_blocked(app_repo: GitRepo, key: str) -> None:
    write_freeze(app_repo, TAX, today=TODAY, evidence=_evidence(**{key: DROP}))
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-missing-field"]
    assert f"evidence.{key}" in reasons[0].detail


@pytest.mark.parametrize("owner", ["", "   "])
def test_empty_owner_is_blocked(app_repo: GitRepo, owner: str) -> None:
    write_freeze(app_repo, TAX, today=TODAY, owner=owner)
    assert _codes(app_repo) == ["ledger-owner"]


@pytest.mark.parametrize("verdict", ["PATCH_INDUCED", "HARNESS_ENV", "NO_REPRO", "pre_existing"])
def test_verdict_other_than_pre_existing_is_blocked(app_repo: GitRepo, verdict: str) -> None:
    write_freeze(app_repo, TAX, today=TODAY, verdict=verdict)
    assert _codes(app_repo) == ["ledger-verdict"]
    assert _frozen(app_repo) == frozenset()


def test_freeze_is_honoured_through_its_last_day_then_expires(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY)  # 14 days: until 2026-01-24
    last_day, day_after = date(2026, 1, 24), date(2026, 1, 25)
    assert _check(app_repo, last_day) == []
    assert _frozen(app_repo, last_day) == {TAX}
    reasons = _check(app_repo, day_after)
    assert [r.code for r in reasons] == ["ledger-expired"]
    assert "expired on 2026-01-24" in reasons[0].detail
    assert f"agentgate unfreeze {TAX}" in reasons[0].detail
    # An expired freeze is not honoured: the test counts again.
    assert _frozen(app_repo, day_after) == frozenset()


def test_freeze_longer_than_the_default_maximum_is_blocked(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY, freeze_until="2026-02-09")  # 30 days
    assert _check(app_repo) == []
    write_freeze(app_repo, TAX, today=TODAY, freeze_until="2026-02-10")  # 31 days
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-too-long"]
    assert "set freeze_until to 2026-02-09 or earlier" in reasons[0].detail


def test_configured_maximum_applies(app_repo: GitRepo) -> None:
    app_repo.write("pyproject.toml", "[tool.agentgate]\nmax_freeze_days = 7\n")
    write_freeze(app_repo, TAX, today=TODAY, freeze_until="2026-01-18")  # 8 days
    assert _codes(app_repo) == ["ledger-too-long"]


def test_maximum_counts_from_the_first_freeze_not_the_renewal(app_repo: GitRepo) -> None:
    # Attack (issue 11): a renewal that restarts the clock keeps a test frozen for ever.
    write_freeze(
        app_repo,
        TAX,
        today=TODAY,
        frozen_at="2025-12-01",
        renewed_at="2026-01-05",
        freeze_until="2026-02-01",
    )
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-too-long"]
    assert "from its first freeze on 2025-12-01" in reasons[0].detail
    assert "re-attribute" in reasons[0].detail


def test_a_renewal_within_the_maximum_is_valid(app_repo: GitRepo) -> None:
    write_freeze(
        app_repo,
        TAX,
        today=TODAY,
        frozen_at="2025-12-20",
        renewed_at="2026-01-05",
        freeze_until="2026-01-19",
    )
    assert _check(app_repo) == []


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"frozen_at": "2026-01-11", "freeze_until": "2026-01-20"}, "in the future"),
        ({"freeze_until": "2026-01-09"}, "before the freeze started"),
        ({"frozen_at": "2026-01-01", "renewed_at": "2025-12-01"}, "renewed_at"),
    ],
    ids=["frozen-in-future", "ends-before-start", "renewed-before-frozen"],
)
def test_impossible_dates_are_blocked(
    app_repo: GitRepo, overrides: dict[str, Any], words: str
) -> None:
    write_freeze(app_repo, TAX, today=TODAY, **overrides)
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-dates"]
    assert words in reasons[0].detail


@pytest.mark.parametrize(
    ("test", "words"),
    [
        ("tests/test_gone.py::test_tax", "tests/test_gone.py does not exist"),
        ("tests/test_tax.py::test_renamed", "defines no test_renamed"),
        ("tests/test_tax.py::TestTax::test_tax", "defines no TestTax::test_tax"),
    ],
    ids=["file-gone", "function-gone", "class-gone"],
)
def test_record_for_a_test_that_no_longer_exists_is_blocked(
    app_repo: GitRepo, test: str, words: str
) -> None:
    write_freeze(app_repo, test, today=TODAY)
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-test-missing"]
    assert words in reasons[0].detail
    assert f"agentgate unfreeze {test}" in reasons[0].detail


def test_deleting_the_frozen_test_blocks_the_ledger(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY)
    app_repo.write("tests/test_tax.py", "def test_other():\n    pass\n")
    assert _codes(app_repo) == ["ledger-test-missing"]


CLASSES = """\
import sys
import pytest
from helpers import Base

class TestLocalBase:
    def test_inherited(self):
        pass

class TestChild(TestLocalBase):
    class TestNested:
        def test_deep(self):
            pass

class TestImported(Base):
    pass

if sys.platform:
    def test_conditional():
        pass
else:
    pass

@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    pass

async def test_async():
    pass

test_alias = test_param
"""


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("test_param[1]", None),
        ("test_param[a-b/c::d]", None),
        ("TestChild::test_inherited", None),
        ("TestChild::TestNested::test_deep", None),
        ("test_conditional", None),
        ("test_async", None),
        ("test_alias", None),
        ("TestChild::test_nothing", "ledger-test-missing"),
        ("TestImported::test_from_base", "ledger-test-unresolved"),
    ],
)
def test_node_ids_are_resolved_from_the_syntax_tree(
    app_repo: GitRepo, name: str, code: str | None
) -> None:
    app_repo.write("tests/test_classes.py", CLASSES)
    write_freeze(app_repo, f"tests/test_classes.py::{name}", today=TODAY, name="r.json")
    assert _codes(app_repo) == ([code] if code else [])


@pytest.mark.parametrize(
    "content",
    [
        b"def test_tax(:\n    pass\n",
        b"def test_tax():\n    s = '\xff'\n",
        b"from elsewhere import *\n",
    ],
    ids=["syntax-error", "not-utf8", "star-import"],
)
def test_test_file_that_cannot_be_read_is_reported_not_accepted(
    app_repo: GitRepo, content: bytes
) -> None:
    write_freeze(app_repo, TAX, today=TODAY)
    app_repo.write("tests/test_tax.py", content)
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-test-unresolved"]
    assert _frozen(app_repo) == frozenset()


def test_two_records_for_one_test_are_both_blocked(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY, name="a.json")
    write_freeze(app_repo, TAX, today=TODAY, name="b.json")
    write_freeze(app_repo, SESSION, today=TODAY)
    reasons = _check(app_repo)
    assert [(r.code, r.path) for r in reasons] == [
        ("ledger-duplicate", f"{LEDGER}/a.json"),
        ("ledger-duplicate", f"{LEDGER}/b.json"),
    ]
    assert f"{LEDGER}/b.json" in reasons[0].detail
    assert _frozen(app_repo) == {SESSION}


@pytest.mark.parametrize(
    ("evidence", "words"),
    [
        (_evidence(base_fail=[]), "nothing failed on the base"),
        (_evidence(head_fail=[]), "nothing failed on the patch tree"),
        (_evidence(base_fail=[3], head_fail=[5], seeds=[3, 5]), "base failed on seeds [3]"),
        (_evidence(base_fail=[3, 5], head_fail=[3], seeds=[3, 5]), "but head on [3]"),
        (_evidence(base_fail=[9], head_fail=[9]), "not among the seeds run"),
        (_evidence(base_fail=2, head_fail=2), "lists of integer seeds"),
        (_evidence(base_fail=[True], head_fail=[True]), "lists of integer seeds"),
        (_evidence(seeds=[], base_fail=[], head_fail=[]), "no seeds were run"),
        (_evidence(tz=""), "tz must be"),
        (_evidence(mode=" "), "mode must be"),
    ],
    ids=[
        "base-clean",
        "head-clean",
        "other-seeds",
        "subset",
        "stray-seed",
        "counts",
        "bools",
        "no-seeds",
        "no-tz",
        "no-mode",
    ],
)
def test_evidence_that_does_not_justify_pre_existing_is_blocked(
    app_repo: GitRepo, evidence: dict[str, Any], words: str
) -> None:
    write_freeze(app_repo, TAX, today=TODAY, evidence=evidence)
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-evidence"]
    assert words in reasons[0].detail


def test_evidence_may_carry_extra_keys(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY, evidence={**_evidence(), "runs": 30, "p": 0.01})
    assert _check(app_repo) == []


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"state": "thawed"}, "state must be one of"),
        ({"drill": {"k": 0, "ambient": {}}}, "positive integer"),
        ({"drill": {"k": 2}}, "exactly 'k' and 'ambient'"),
        ({"drill": {"k": 2, "ambient": {}, "extra": 1}}, "exactly 'k' and 'ambient'"),
        ({"drill": {"k": 2, "ambient": []}}, "ambient must be an object"),
        ({"drill": {"k": 2, "ambient": {"TZ": 9}}}, "ambient values must be strings"),
        ({"drill": {"k": 2, "ambient": {"PYTHONHASHSEED": "x"}}}, "PYTHONHASHSEED must be"),
        ({"drill": {"k": 2, "ambient": {"PYTEST_ADDOPTS": "-p evil"}}},
         "only the config's ambient inputs"),
        ({"freeze_until": "2026/01/20"}, "freeze_until must be a date"),
        ({"frozen_at": "20260110"}, "frozen_at must be a date"),
        ({"frozen_at_sha": "HEAD"}, "frozen_at_sha must be a commit id"),
        ({"reason": ""}, "reason must be a non-empty string"),
        ({"recheck": " "}, "recheck must be a non-empty string"),
        ({"history": [{"event": "frozen"}]}, "history must be a list"),
        ({"history": {}}, "history must be a list"),
        ({"version": 2}, "version must be 1"),
        ({"expires": "never"}, "unknown field 'expires'"),
        ({"state": "probation"}, "needs lease_until"),
        ({"test": "tests/test_tax.py"}, "must be a pytest node id"),
        ({"test": "../outside/test_x.py::test_x"}, "relative path inside"),
        ({"test": "/abs/test_x.py::test_x"}, "relative path inside"),
    ],
)
def test_malformed_field_is_blocked(
    app_repo: GitRepo, overrides: dict[str, Any], words: str
) -> None:
    write_freeze(app_repo, TAX, today=TODAY, name="r.json", **overrides)
    reasons = _check(app_repo)
    assert [r.code for r in reasons] == ["ledger-field"]
    assert words in reasons[0].detail


def test_a_drill_with_the_old_command_form_is_refused_with_how_to_migrate(
    app_repo: GitRepo,
) -> None:
    """Issue 11: a record's drill named any command and thaw ran it. The old form is
    refused, on one line, whatever the command says."""
    write_freeze(app_repo, TAX, today=TODAY, drill={"command": "touch pwned", "k": 2})
    [reason] = _check(app_repo)
    assert (reason.code, reason.verdict) == ("ledger-drill-command", Verdict.BLOCKED)
    assert "\n" not in reason.detail
    assert 'migrate: replace the drill with {"k": K, "ambient": {}}' in reason.detail
    assert _frozen(app_repo) == frozenset()


def test_a_drill_may_pin_the_configs_ambient_inputs(app_repo: GitRepo) -> None:
    ambient = {"TZ": "Asia/Tokyo", "PYTHONHASHSEED": "3", "SOURCE_DATE_EPOCH": "0"}
    write_freeze(app_repo, TAX, today=TODAY, drill={"k": 2, "ambient": ambient})
    assert _check(app_repo) == []
    app_repo.write("pyproject.toml", '[tool.agentgate]\nambient = ["LANG"]\n')
    [reason] = _check(app_repo)
    assert "ambient may pin only the config's ambient inputs (LANG), not" in reason.detail


def test_one_reason_per_bad_record_naming_the_file_and_every_problem(app_repo: GitRepo) -> None:
    write_freeze(
        app_repo,
        TAX,
        today=TODAY,
        owner="",
        verdict="HARNESS_ENV",
        freeze_until="2026-01-01",
        name="bad.json",
    )
    reasons = _check(app_repo)
    assert len(reasons) == 1
    only = reasons[0]
    assert (only.code, only.path, only.verdict) == (
        "ledger-verdict",
        f"{LEDGER}/bad.json",
        Verdict.BLOCKED,
    )
    assert only.detail.startswith(f"{TAX}: ")
    for words in ("only PRE_EXISTING justifies", "owner is empty", "before the freeze started"):
        assert words in only.detail


def test_non_json_files_in_the_ledger_folder_are_not_records(app_repo: GitRepo) -> None:
    app_repo.write(f"{LEDGER}/README.md", "the freeze ledger\n")
    write_freeze(app_repo, TAX, today=TODAY)
    assert _check(app_repo) == []


def test_ledger_folder_comes_from_config(app_repo: GitRepo) -> None:
    app_repo.write("pyproject.toml", '[tool.agentgate]\nledger = "quarantine"\n')
    write_freeze(app_repo, TAX, today=TODAY)  # in the default folder: not the ledger now
    assert _frozen(app_repo) == frozenset()
    path = app_repo.write("quarantine/x.json", json.dumps(freeze_json(TAX, today=TODAY)))
    assert _frozen(app_repo) == {TAX}
    path.write_text("{", encoding="utf-8")
    found = [(r.code, r.path) for r in _check(app_repo)]
    assert found == [("ledger-malformed", "quarantine/x.json")]


# --- frozen_tests -------------------------------------------------------------------------------


def test_probation_and_invalid_records_are_not_frozen(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY, state="probation", lease_until="2026-01-17")
    write_freeze(app_repo, SESSION, today=TODAY, owner="")
    assert _frozen(app_repo) == frozenset()
    assert _codes(app_repo) == ["ledger-owner"]


# --- new_record / write_record (the attribution contract) --------------------------------------


def _new(test: str = TAX, **changes: Any) -> ledger.FreezeRecord:
    args: dict[str, Any] = {
        "test": test,
        "verdict": "PRE_EXISTING",
        "evidence": _evidence(),
        "reason": "set-order dependence under PYTHONHASHSEED=3",
        "owner": "alice",
        "frozen_at_sha": "0123456789abcdef0123456789abcdef01234567",
        "freeze_until": TODAY + timedelta(days=10),
        "recheck": f"agentgate attribute {test}",
        "drill_k": 5,
        "drill_ambient": {"TZ": "Asia/Tokyo"},
        "today": TODAY,
    }
    args.update(changes)
    return ledger.new_record(**args)


def test_written_record_passes_check_and_round_trips(app_repo: GitRepo) -> None:
    record = _new()
    config = config_mod.load(app_repo.path)
    path = ledger.write_record(app_repo.path, config, record, today=TODAY)
    assert path.parent == app_repo.path / LEDGER
    assert _check(app_repo) == []
    assert _frozen(app_repo) == {TAX}
    data = json.loads(path.read_text(encoding="utf-8"))
    assert ledger.FreezeRecord.from_json(data) == record
    assert data["frozen_at"] == "2026-01-10"
    assert data["drill"] == {"k": 5, "ambient": {"TZ": "Asia/Tokyo"}}
    assert data["history"][0]["event"] == "frozen"
    assert not list((app_repo.path / LEDGER).glob(".*.tmp"))


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"evidence": _evidence(base_fail=[])}, "nothing failed on the base"),
        ({"verdict": "PATCH_INDUCED"}, "only PRE_EXISTING"),
        ({"owner": ""}, "owner is empty"),
        ({"freeze_until": TODAY + timedelta(days=31)}, "max_freeze_days = 30"),
        ({"freeze_until": TODAY - timedelta(days=1)}, "before the freeze started"),
        ({"test": "tests/test_tax.py::test_nope"}, "no longer exists"),
    ],
)
def test_write_record_refuses_what_check_would_block(
    app_repo: GitRepo, changes: dict[str, Any], words: str
) -> None:
    config = config_mod.load(app_repo.path)
    with pytest.raises(AgentgateError) as caught:
        ledger.write_record(app_repo.path, config, _new(**changes), today=TODAY)
    assert caught.value.exit_code == EXIT_BLOCKED
    assert words in caught.value.message
    assert "\n" not in caught.value.message
    assert not (app_repo.path / LEDGER).exists()


def test_write_record_refuses_a_second_freeze_of_one_test(app_repo: GitRepo) -> None:
    config = config_mod.load(app_repo.path)
    first = ledger.write_record(app_repo.path, config, _new(), today=TODAY)
    with pytest.raises(AgentgateError, match="already frozen by"):
        ledger.write_record(app_repo.path, config, _new(owner="bob"), today=TODAY)
    assert json.loads(first.read_text(encoding="utf-8"))["owner"] == "alice"


def test_record_file_names_are_distinct_for_similar_node_ids() -> None:
    names = {
        ledger.record_file_name(t)
        for t in ("tests/t.py::test_x[a/b]", "tests/t.py::test_x[a-b]", "tests/t.py::test_x[a_b]")
    }
    assert len(names) == 3
    assert all(n.endswith(".json") and "/" not in n for n in names)


# --- the shipped schema --------------------------------------------------------------------------


def _schema() -> dict[str, Any]:
    from importlib.resources import files

    text = files("agentgate.ledger").joinpath(ledger.SCHEMA).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def test_schema_ships_with_the_package_and_lists_the_issue_fields() -> None:
    schema = _schema()
    assert schema["required"] == REQUIRED
    assert schema["properties"]["evidence"]["required"] == EVIDENCE
    assert set(schema["properties"]) == set(freeze_json(TAX, today=TODAY))


def test_schema_agrees_with_the_rules_on_record_shape(app_repo: GitRepo) -> None:
    jsonschema = pytest.importorskip("jsonschema")  # see the report: asked for as a test extra
    validator = jsonschema.Draft202012Validator(_schema())
    config = config_mod.load(app_repo.path)
    path = ledger.write_record(app_repo.path, config, _new(), today=TODAY)
    assert list(validator.iter_errors(json.loads(path.read_text(encoding="utf-8")))) == []
    for bad in (
        freeze_json(TAX, owner=""),
        freeze_json(TAX, verdict="HARNESS_ENV"),
        freeze_json(TAX, state="probation"),
        freeze_json(TAX, drill={"command": "x", "k": 2}),
        freeze_json(TAX, drill={"k": 2, "ambient": {"TZ": 9}}),
        freeze_json(TAX, evidence=_evidence(base_fail=[])),
        freeze_json(TAX, x=1),
        freeze_json(TAX, frozen_at="20260110"),
        freeze_json(TAX, history=DROP),
    ):
        assert list(validator.iter_errors(bad)), bad
