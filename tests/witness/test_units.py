"""Pure parts of the witness: ambient drift rules, the shadow sample, the summary."""

from __future__ import annotations

from agentgate.core.config import DEFAULT_AMBIENT
from agentgate.core.model import Verdict
from agentgate.report import witness as summary
from agentgate.witness import ambient, shadow
from agentgate.witness.select import ESCALATE, IMPACTED, SKIP, Decision, WitnessPlan


def _drift(path: str, old: str | None, new: str | None) -> list[str]:
    return ambient.patch_drift({path: (old, new)}, DEFAULT_AMBIENT)


def test_environment_writes_of_ambient_names_drift() -> None:
    assert _drift("tests/conftest.py", "", "import os\nos.environ['TZ'] = 'Asia/Tokyo'\n")
    assert _drift("app/setup.py", "x = 1\n", "x = 1\nos.putenv('LANG', 'de_DE')\n")
    assert _drift("tests/test_x.py", "", "monkeypatch.setenv('SOURCE_DATE_EPOCH', '0')\n")
    assert _drift("app/clock.py", "", "import time\ntime.tzset()\n")
    assert _drift("pytest.ini", "[pytest]\n", "[pytest]\nenv =\n    TZ=UTC\n")
    assert _drift("pyproject.toml", "", "[tool.pytest.ini_options]\nenv = ['LC_ALL=C']\n")


def test_unrelated_changes_do_not_drift() -> None:
    assert not _drift("app/x.py", "", "TZ_NAME = 'label'\nprint(os.environ.get('HOME'))\n")
    assert not _drift("app/x.py", "", "# the TZ handling lives elsewhere\nx = 1\n")
    assert not _drift("README.md", "", "set TZ with os.environ\n")
    assert not _drift("tests/conftest.py", "import os\n", "import os\nimport sys\n")


def test_env_drift_compares_recorded_and_current_values() -> None:
    recorded = {"TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    assert ambient.env_drift(recorded, dict(recorded)) == []
    assert ambient.env_drift(recorded, {**recorded, "TZ": "Asia/Tokyo"})
    # LC_ALL overrides LANG: a different LANG under the same LC_ALL changes nothing.
    assert ambient.env_drift(recorded, {**recorded, "LANG": "de_DE.UTF-8"}) == []
    assert ambient.env_drift({"LANG": "C"}, {"LANG": "de_DE.UTF-8"})
    assert ambient.env_drift({}, {"SOURCE_DATE_EPOCH": "0"})


def test_shadow_sample_is_a_function_of_the_diff_and_node_id() -> None:
    ids = [f"tests/test_x.py::test_{i}" for i in range(200)]
    one = shadow.sample(shadow.patch_digest(b"diff one"), ids, 10)
    assert one == shadow.sample(shadow.patch_digest(b"diff one"), list(reversed(ids)), 10)
    assert one != shadow.sample(shadow.patch_digest(b"diff two"), ids, 10)
    assert 5 <= len(one) <= 40  # about 10% of 200
    assert shadow.sample("x", ids, 0) == ()
    assert len(shadow.sample("x", ids, 100)) == 200
    frozen = frozenset(ids[:50])
    assert not set(shadow.sample("x", ids, 100, frozen=frozen)) & frozen


def _plan(**extra: object) -> WitnessPlan:
    decisions = (
        Decision("tests/a.py::test_1", SKIP),
        Decision("tests/a.py::test_2", IMPACTED, "app/x.py::f"),
        Decision("tests/a.py::test_3", ESCALATE, "ran a subprocess: git"),
    )
    base: dict[str, object] = dict(
        witness="a" * 40, recorded_at=1000.0, age_commits=2, decisions=decisions,
        selection=("tests/a.py::test_2", "tests/a.py::test_3"), shadow=("tests/a.py::test_1",),
        ambient_drift=(), patch_digest="d" * 64, shadow_percent=10.0,
    )
    base.update(extra)
    return WitnessPlan(**base)  # type: ignore[arg-type]


def test_summary_json_counts_and_lists() -> None:
    data = summary.to_json(_plan(), now=1000.0 + 7200)
    assert data["revision"] == "a" * 40
    assert data["age"] == {"commits": 2, "seconds": 7200}
    assert data["ambient_drift"] is False
    assert data["counts"]["skipped"] == 1 and data["counts"]["shadowed"] == 1
    assert data["impacted"] == ["tests/a.py::test_2"]
    assert data["escalated"] == ["tests/a.py::test_3"]
    assert data["reasons"]["tests/a.py::test_2"] == "run:impacted: app/x.py::f"


def test_summary_text_is_exact() -> None:
    assert summary.text_lines(_plan(), now=1000.0 + 7200) == [
        "witness aaaaaaaaaaaa (2 commit(s), 2 h old)",
        "  skipped 1, escalated 1, impacted 1, fixture drift 0, ambient 0, frozen 0, new 0,"
        " shadowed 1 (10%, 3 to 10)",
        "  run:impacted tests/a.py::test_2: app/x.py::f",
        "  escalate:incomplete-witness tests/a.py::test_3: ran a subprocess: git",
    ]
    md = summary.markdown_lines(_plan(ambient_drift=("TZ changed",)))
    assert md[0].endswith("ambient drift: yes")


def test_a_failing_shadow_test_is_a_witness_bug() -> None:
    stats, reasons = summary.shadow_stats(_plan(), {"tests/a.py::test_1", "tests/a.py::test_2"})
    assert stats["shadow_failures"] == ["tests/a.py::test_1"]
    assert stats["escalate_ratio"] == round(1 / 3, 4) and stats["shadow_sampled"] == 1
    assert [r.code for r in reasons] == ["witness-shadow-failure"]
    assert reasons[0].verdict is Verdict.FAILED
    clean, none = summary.shadow_stats(_plan(), ["tests/a.py::test_2"])
    assert clean["shadow_failures"] == [] and none == []


def test_the_shadow_sample_has_a_floor_and_a_cap() -> None:
    # Issue 12 item 5: a share of the skips, at least FLOOR and at most CAP, so a small band
    # is not dominated by its audit and a tiny one is still audited.
    ids = [f"tests/t.py::test_{i}" for i in range(1000)]
    assert len(shadow.sample("x", ids, 10)) == shadow.CAP
    assert len(shadow.sample("x", ids[:5], 10)) == shadow.FLOOR
    assert len(shadow.sample("x", ids[:2], 10)) == 2
    assert len(shadow.sample("x", ids[:100], 10)) == 10
    assert len(shadow.sample("x", ids, 100)) == 1000  # asked for every skip: no cap
    assert shadow.sample("x", ids, 0) == ()
    # patch-keyed: the same diff audits the same tests, another diff others
    assert shadow.sample("x", ids, 10) == shadow.sample("x", list(reversed(ids)), 10)
    assert shadow.sample("x", ids, 10) != shadow.sample("y", ids, 10)


def test_the_audit_never_outnumbers_a_small_band() -> None:
    # Issue 12 (mutation benchmark): 18 audit tests next to 6 impacted. The cap is relative
    # to the band: at most max(FLOOR, ceil(band / 4)), still at most CAP, still patch-keyed.
    ids = [f"tests/t.py::test_{i}" for i in range(1000)]
    assert len(shadow.sample("x", ids, 10, band=6)) == shadow.FLOOR
    assert len(shadow.sample("x", ids, 10, band=30)) == 8  # a quarter of the band
    assert len(shadow.sample("x", ids, 10, band=0)) == shadow.FLOOR  # an empty band: audited
    assert len(shadow.sample("x", ids, 10, band=500)) == shadow.CAP
    assert len(shadow.sample("x", ids[:30], 10, band=6)) == 3  # the share is below the cap
    assert len(shadow.sample("x", ids, 100, band=6)) == 1000  # every skip asked for
    assert set(shadow.sample("x", ids, 10, band=6)) < set(shadow.sample("x", ids, 10))
    assert shadow.sample("x", ids, 10, band=6) != shadow.sample("y", ids, 10, band=6)


def test_the_report_states_the_audit_rule() -> None:
    plan = _plan(band=24)
    data = summary.to_json(plan, now=1000.0)
    assert data["audit"] == {"percent": 10.0, "floor": 3, "cap": 10, "band": 24, "limit": 6,
                             "sampled": 1, "budget_seconds": None}
    assert data["shadow_bounds"] == [3, 6]
    assert summary.text_lines(plan, now=1000.0)[1].endswith(
        " shadowed 1 (10%, 3 to 6 (a quarter of the band))")
    timed = _plan(band=24, audit_budget=1.5)
    assert summary.to_json(timed, now=1000.0)["audit"]["budget_seconds"] == 1.5
    assert summary.text_lines(timed, now=1000.0)[1].endswith(
        " shadowed 1 (10%, 3 to 6 (a quarter of the band), within 1.50 s recorded)")


def test_the_audit_is_bounded_in_time() -> None:
    # Issue 12 (mutation benchmark): one skip taking 14% of the suite's time was audited
    # next to a band of 20%. The audit costs at most a quarter of the band's recorded time
    # (or FLOOR median skips): a skip that does not fit is passed over for the next one.
    ids = [f"tests/t.py::test_{i}" for i in range(100)]
    quick = {n: 0.01 for n in ids}
    untimed = shadow.sample("x", ids, 10, band=40)
    assert len(untimed) == 10
    slow = {**quick, **{n: 5.0 for n in untimed[:4]}}
    timed = shadow.sample("x", ids, 10, band=40, durations=slow, band_seconds=1.0)
    assert len(timed) == 10 and not set(timed) & set(untimed[:4])
    assert set(untimed[4:]) < set(timed)  # the others keep their places in the patch's order
    assert sum(slow[n] for n in timed) <= max(1.0 / 4, 3 * 0.01)
    # a band that can pay for the slow skips audits them
    paid = shadow.sample("x", ids, 10, band=40, durations=slow, band_seconds=100.0)
    assert paid == untimed
    # an empty band still gets its floor, from skips no slower than the median
    floor = shadow.sample("x", ids, 10, band=0, durations=slow, band_seconds=0.0)
    assert len(floor) == shadow.FLOOR and all(slow[n] <= 0.01 for n in floor)
    # no durations (an older witness) or 100%: the count bounds alone
    assert shadow.sample("x", ids, 10, band=40, durations={}, band_seconds=0.0) == untimed
    assert len(shadow.sample("x", ids, 100, durations=slow, band_seconds=0.0)) == 100
    assert shadow.budget(8.0, 0.5) == 2.0 and shadow.budget(0.0, 0.5) == 1.5
