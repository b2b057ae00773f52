from __future__ import annotations

import shutil
import subprocess

import pytest

from agentgate.core import config
from agentgate.core.model import Verdict
from agentgate.gate import checks as gate
from agentgate.gate import manifest
from tests.support.git_repo import GitRepo, run_agentgate


@pytest.fixture
def fixtured(app_repo: GitRepo) -> GitRepo:
    app_repo.files(
        {
            "tests/fixtures/rates.json": '{"standard": 0.2}\n',
            "tests/fixtures/nested/b c.txt": "spaced\n",
            "tests/fixtures/zz\\back.txt": "backslash\n",
        }
    )
    proc = run_agentgate("fixtures", "record", cwd=app_repo.path)
    assert proc.returncode == 0, proc.stderr
    app_repo.commit("fixtures and manifest")
    return app_repo


def test_record_is_sorted_and_sha256sum_compatible(fixtured: GitRepo) -> None:
    text = (fixtured.path / ".agentgate/fixtures.sha256").read_text()
    paths = [line.split("  ", 1)[1] for line in text.splitlines()]
    assert paths == sorted(paths)
    assert "tests/fixtures/rates.json" in paths
    if shutil.which("sha256sum"):
        check = subprocess.run(
            ["sha256sum", "-c", ".agentgate/fixtures.sha256"],
            cwd=fixtured.path,
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stdout + check.stderr


def test_render_parse_round_trip_with_odd_names() -> None:
    entries = {"a\nb.txt": "0" * 64, "c\\d.txt": "1" * 64, "plain.txt": "2" * 64}
    assert manifest.parse(manifest.render(entries), where="m") == entries


def test_verify_reports_each_file(fixtured: GitRepo) -> None:
    fixtured.write("tests/fixtures/rates.json", '{"standard": 0.25}\n')
    fixtured.write("tests/fixtures/new.json", "{}\n")
    (fixtured.path / "tests/fixtures/nested/b c.txt").unlink()
    proc = run_agentgate("fixtures", "verify", "--format", "json", cwd=fixtured.path)
    assert proc.returncode == 4
    import json

    reasons = {(r["path"], r["detail"]) for r in json.loads(proc.stdout)["reasons"]}
    assert reasons == {
        ("tests/fixtures/rates.json", "content differs from its manifest entry"),
        ("tests/fixtures/new.json", "is not in the manifest"),
        ("tests/fixtures/nested/b c.txt", "is listed in the manifest but does not exist"),
    }


def test_verify_clean_tree_passes(fixtured: GitRepo) -> None:
    proc = run_agentgate("fixtures", "verify", cwd=fixtured.path)
    assert proc.returncode == 0
    assert "every fixture matches" in proc.stdout


def test_no_manifest_and_no_fixtures_is_fine(app_repo: GitRepo) -> None:
    proc = run_agentgate("fixtures", "verify", cwd=app_repo.path)
    assert proc.returncode == 0 and "nothing to do" in proc.stdout


def test_malformed_manifest_is_one_line_64(fixtured: GitRepo) -> None:
    fixtured.write(".agentgate/fixtures.sha256", "not a manifest line\n")
    proc = run_agentgate("fixtures", "verify", cwd=fixtured.path)
    assert proc.returncode == 64
    assert "line 1 is not '<sha256>  <path>'" in proc.stderr


def test_staged_fixture_without_manifest_update_is_blocked(fixtured: GitRepo) -> None:
    fixtured.write("tests/fixtures/rates.json", '{"standard": 0.25}\n')
    fixtured.add()
    result = gate.check_staged(fixtured.path, {})
    assert result.verdict is Verdict.BLOCKED
    assert [(r.code, r.path) for r in result.reasons] == [
        ("fixture-manifest", "tests/fixtures/rates.json")
    ]


def test_fixtures_with_their_manifest_may_be_committed_by_anyone(fixtured: GitRepo) -> None:
    fixtured.write("tests/fixtures/rates.json", '{"standard": 0.25}\n')
    manifest.record(fixtured.path, config.load(fixtured.path))
    fixtured.add()
    assert gate.check_staged(fixtured.path, {}).reasons == []
    # A snapshot update is everyday agent work too (issue 11)...
    assert gate.check_staged(fixtured.path, {"GEMINI_CLI": "1"}).reasons == []
    # ...but never together with code.
    fixtured.write("app/pricing/tax.py", "RATE = 1\n")
    fixtured.add()
    assert [r.code for r in gate.check_staged(fixtured.path, {}).reasons] == ["trust-mixed"]


def test_range_fixture_change_without_test_is_scope_escape(fixtured: GitRepo) -> None:
    base = fixtured.sha()
    fixtured.write("tests/fixtures/rates.json", '{"standard": 0.25}\n')
    manifest.record(fixtured.path, config.load(fixtured.path))
    head = fixtured.commit("regenerate the manifest too")
    checked = gate.check_range(fixtured.path, base, head)
    assert [(r.code, r.verdict, r.path) for r in checked.reasons] == [
        ("fixture-without-test", Verdict.SCOPE_ESCAPE, "tests/fixtures/rates.json")
    ]


def test_range_fixture_change_with_its_test_is_fine(fixtured: GitRepo) -> None:
    base = fixtured.sha()
    fixtured.write("tests/fixtures/rates.json", '{"standard": 0.25}\n')
    manifest.record(fixtured.path, config.load(fixtured.path))
    fixtured.commit("fixture")
    fixtured.write("tests/test_tax.py", "def test_tax():\n    assert True is not False\n")
    head = fixtured.commit("its test")
    assert gate.check_range(fixtured.path, base, head).reasons == []


def test_range_head_manifest_mismatch_is_blocked(fixtured: GitRepo) -> None:
    base = fixtured.sha()
    fixtured.write("tests/fixtures/rates.json", '{"standard": 0.3}\n')
    fixtured.write("tests/test_tax.py", "def test_tax():\n    assert 1\n")
    head = fixtured.commit("no manifest update, --no-verify")
    codes = [(r.code, r.path) for r in gate.check_range(fixtured.path, base, head).reasons]
    assert codes == [("fixture-manifest", "tests/fixtures/rates.json")]


@pytest.mark.parametrize("tampered", [False, True], ids=["as-recorded", "tampered"])
def test_an_adoption_commit_listing_new_fixture_folders_is_verified_where_they_are(
    app_repo: GitRepo, tampered: bool,
) -> None:
    """New-user trial round 7 (packaging): ``agentgate init`` named four fixture folders,
    and the human's adoption commit of the configuration and the manifest was blocked: the
    configuration in force named only ``tests/fixtures``, so every file the new manifest
    listed elsewhere "does not exist". It is compared where it is; a tampered one is not."""
    app_repo.files({"tests/data/cases.json": '{"a": 1}\n'})
    base = app_repo.commit("test data, before agentgate")
    app_repo.write("pyproject.toml", '[tool.agentgate]\nfixtures = ["tests/data"]\n')
    manifest.record(app_repo.path, config.load(app_repo.path))
    if tampered:
        app_repo.write("tests/data/cases.json", '{"a": 2}\n')
    app_repo.add()
    staged = [(r.code, r.path) for r in gate.check_staged(app_repo.path, {}).reasons
              if r.code == "fixture-manifest"]
    assert staged == ([("fixture-manifest", "tests/data/cases.json")] if tampered else [])
    head = app_repo.commit("adopt agentgate")
    ranged = [(r.code, r.path) for r in gate.check_range(app_repo.path, base, head).reasons
              if r.code == "fixture-manifest"]
    assert ranged == ([("fixture-manifest", "tests/data/cases.json")] if tampered else [])
