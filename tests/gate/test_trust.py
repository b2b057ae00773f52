from __future__ import annotations

import os

import pytest

from agentgate.core.model import Verdict
from agentgate.gate import checks as gate
from tests.support.git_repo import GitRepo

PYPROJECT = (
    '[project]\nname = "shop"\nversion = "1.0"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
)


def _codes(result_or_reasons: object) -> list[tuple[str, str | None]]:
    reasons = getattr(result_or_reasons, "reasons", result_or_reasons)
    return [(r.code, r.path) for r in reasons]  # type: ignore[attr-defined]


@pytest.fixture
def trusted(app_repo: GitRepo) -> GitRepo:
    app_repo.files(
        {
            "pyproject.toml": PYPROJECT,
            ".agentgate/scope": ".\n",
            ".pre-commit-config.yaml": "repos: []\n",
            "hooks/pre-commit": "#!/bin/sh\n",
        }
    )
    app_repo.commit("trust files")
    return app_repo


def _stage(repo: GitRepo, files: dict[str, str]) -> None:
    repo.files(files)
    repo.add()


@pytest.mark.parametrize(
    "trust_file",
    [
        ".agentgate/scope",
        ".pre-commit-config.yaml",
        "hooks/pre-commit",
        "pytest.ini",
        ".agentgate/freezes/t.json",
        ".agentgate/fixtures.sha256",
    ],
)
def test_trust_file_with_code_is_blocked(trusted: GitRepo, trust_file: str) -> None:
    _stage(trusted, {trust_file: "changed\n", "app/pricing/tax.py": "RATE = 1\n"})
    result = gate.check_staged(trusted.path, {})
    assert result.verdict is Verdict.BLOCKED and result.exit_code == 4
    [reason] = [r for r in result.reasons if r.code == "trust-mixed"]
    assert reason.path == trust_file
    assert "app/pricing/tax.py" in reason.detail
    assert "commit the trust change on its own, as a human" in reason.detail


def test_trust_file_alone_by_a_human_is_allowed(trusted: GitRepo) -> None:
    _stage(trusted, {".agentgate/scope": "app\n"})
    assert gate.check_staged(trusted.path, {}).reasons == []


def test_agent_env_blocks_any_trust_change(trusted: GitRepo) -> None:
    _stage(trusted, {".agentgate/scope": "app\n"})
    result = gate.check_staged(trusted.path, {"CLAUDECODE": "1"})
    assert _codes(result) == [("trust-agent", ".agentgate/scope")]
    assert "CLAUDECODE" in result.reasons[0].detail


def test_agent_env_without_trust_change_is_fine(trusted: GitRepo) -> None:
    _stage(trusted, {"app/pricing/tax.py": "RATE = 1\n"})
    result = gate.check_staged(trusted.path, {"CODEX_SANDBOX": "seatbelt"})
    assert result.reasons == [] and any("agent commit" in n for n in result.notes)


def test_agent_identity_blocks_at_commit_time(
    trusted: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Paul (aider)")
    _stage(trusted, {".agentgate/scope": "app\n"})
    assert _codes(gate.check_staged(trusted.path, {})) == [("trust-agent", ".agentgate/scope")]


def test_unrelated_pyproject_edit_is_not_trust(trusted: GitRepo) -> None:
    _stage(
        trusted,
        {"pyproject.toml": PYPROJECT.replace('"1.0"', '"1.1"'), "app/pricing/tax.py": "RATE = 1\n"},
    )
    assert gate.check_staged(trusted.path, {}).reasons == []


@pytest.mark.parametrize(
    "edit",
    [
        PYPROJECT.replace('"-q"', '"-q -p no:cacheprovider"'),
        PYPROJECT + "\n[tool.agentgate]\nprotected = []\n",
        PYPROJECT.replace('[tool.pytest.ini_options]\naddopts = "-q"\n', ""),
        "[project\nbroken",
    ],
    ids=["pytest-table", "agentgate-table", "pytest-table-removed", "unparsable"],
)
def test_pyproject_trust_tables(trusted: GitRepo, edit: str) -> None:
    _stage(trusted, {"pyproject.toml": edit, "app/pricing/tax.py": "RATE = 1\n"})
    codes = _codes(gate.check_staged(trusted.path, {}))
    assert codes[0] == ("trust-mixed", "pyproject.toml")
    # A pyproject.toml that does not parse is also refused as the configuration it leaves.
    assert codes[1:] == ([("config-invalid", "pyproject.toml")] if "broken" in edit else [])


@pytest.mark.parametrize(
    ("name", "before", "after_unrelated", "after_trust"),
    [
        (
            "setup.cfg",
            "[metadata]\nname = a\n[tool:pytest]\naddopts = -q\n",
            "[metadata]\nname = b\n[tool:pytest]\naddopts = -q\n",
            "[metadata]\nname = a\n[tool:pytest]\naddopts = -x\n",
        ),
        (
            "tox.ini",
            "[tox]\nenvlist = py\n[pytest]\naddopts = -q\n",
            "[tox]\nenvlist = py311\n[pytest]\naddopts = -q\n",
            "[tox]\nenvlist = py\n[pytest]\naddopts = -x\n",
        ),
    ],
)
def test_ini_pytest_sections(
    trusted: GitRepo, name: str, before: str, after_unrelated: str, after_trust: str
) -> None:
    trusted.write(name, before)
    trusted.commit(f"add {name}")
    _stage(trusted, {name: after_unrelated, "app/pricing/tax.py": "RATE = 1\n"})
    assert gate.check_staged(trusted.path, {}).reasons == []
    _stage(trusted, {name: after_trust})
    assert _codes(gate.check_staged(trusted.path, {})) == [("trust-mixed", name)]


def test_rename_of_a_trust_file_counts(trusted: GitRepo) -> None:
    trusted.git("mv", ".agentgate/scope", "scope.bak")
    _stage(trusted, {"app/pricing/tax.py": "RATE = 1\n"})
    reasons = gate.check_staged(trusted.path, {}).reasons
    assert ("trust-mixed", ".agentgate/scope") in _codes(reasons)
    assert "renamed" in reasons[0].detail


def test_deleting_a_trust_file_counts(trusted: GitRepo) -> None:
    trusted.rm(".pre-commit-config.yaml")
    _stage(trusted, {"app/pricing/tax.py": "RATE = 1\n"})
    reasons = gate.check_staged(trusted.path, {}).reasons
    assert _codes(reasons) == [("trust-mixed", ".pre-commit-config.yaml")]
    assert "deleted" in reasons[0].detail


def test_symlinked_trust_file_counts(trusted: GitRepo) -> None:
    target = trusted.path / ".agentgate" / "scope"
    trusted.write("elsewhere.txt", "app\ntests\n")
    target.unlink()
    os.symlink("../elsewhere.txt", target)
    trusted.add()
    reasons = gate.check_staged(trusted.path, {}).reasons
    assert ("trust-mixed", ".agentgate/scope") in _codes(reasons)
    assert "symlink" in reasons[0].detail


def test_symlinked_pyproject_counts(trusted: GitRepo) -> None:
    trusted.write("real.toml", PYPROJECT)
    (trusted.path / "pyproject.toml").unlink()
    os.symlink("real.toml", trusted.path / "pyproject.toml")
    trusted.add()
    reasons = gate.check_staged(trusted.path, {}).reasons
    assert ("trust-mixed", "pyproject.toml") in _codes(reasons)


def test_range_checks_every_commit_even_no_verify_ones(trusted: GitRepo) -> None:
    base = trusted.sha()
    trusted.files({".agentgate/scope": "app\ntests\ndocs\n", "app/pricing/tax.py": "RATE=1\n"})
    bad = trusted.commit("sneaky")  # made with --no-verify by the helper
    trusted.write("app/pricing/tax.py", "RATE = 2\n")
    trusted.commit("innocent")
    checked = gate.check_range(trusted.path, base, "HEAD")
    assert [(r.code, r.commit) for r in checked.reasons] == [("trust-mixed", bad)]


@pytest.mark.parametrize(
    ("author", "email", "message"),
    [
        ("Paul (aider)", "paul@example.com", "edit"),
        ("Copilot", "198982749+Copilot@users.noreply.github.com", "edit"),
        ("openhands", "openhands@all-hands.dev", "edit"),
        ("renovate[bot]", "bot@example.com", "edit"),
        ("Human", "h@example.com", "edit\n\nCo-authored-by: Claude <noreply@anthropic.com>"),
        ("Human", "h@example.com", "edit\n\nCo-authored-by: aider (gpt) <noreply@aider.dev>"),
    ],
)
def test_agent_commits_in_a_range(trusted: GitRepo, author: str, email: str, message: str) -> None:
    base = trusted.sha()
    trusted.write(".agentgate/scope", "app\n")
    sha = trusted.commit(message, author=author, email=email)
    checked = gate.check_range(trusted.path, base, sha)
    assert [(r.code, r.commit) for r in checked.reasons] == [("trust-agent", sha)]


def test_human_trust_commit_in_a_range_passes(trusted: GitRepo) -> None:
    base = trusted.sha()
    trusted.write(".agentgate/scope", "app\n")
    sha = trusted.commit("narrow scope")
    assert gate.check_range(trusted.path, base, sha).reasons == []


def test_config_from_the_patch_does_not_govern_it(trusted: GitRepo) -> None:
    """An agent moving the scope file via [tool.agentgate] is still judged by the base's."""
    trusted.write(".agentgate/scope", "app\ntests\n")
    base = trusted.commit("narrow the scope")
    trusted.write("pyproject.toml", PYPROJECT + '\n[tool.agentgate]\nscope_file = "none"\n')
    trusted.commit("move scope", author="bot[bot]", email="b@example.com")
    trusted.write("elsewhere/x.py", "x = 1\n")
    trusted.commit("code outside scope", author="bot[bot]", email="b@example.com")
    codes = _codes(gate.check_range(trusted.path, base, "HEAD").reasons)
    assert ("trust-agent", "pyproject.toml") in codes
    assert ("scope-escape", "elsewhere/x.py") in codes


def test_extra_identity_patterns_from_config(trusted: GitRepo) -> None:
    trusted.write(
        "pyproject.toml",
        PYPROJECT + '\n[tool.agentgate.agents]\nidentities = ["*<robot@corp.example>"]\n',
    )
    base = trusted.commit("configure agents")
    trusted.write(".agentgate/scope", "app\n")
    sha = trusted.commit("edit", author="Robo", email="robot@corp.example")
    assert [r.code for r in gate.check_range(trusted.path, base, sha).reasons] == ["trust-agent"]


def test_first_commit_may_create_trust_files_with_code(repo: GitRepo) -> None:
    repo.files({"pyproject.toml": PYPROJECT, "app/x.py": "x = 1\n", ".agentgate/scope": "app\n"})
    repo.add()
    assert gate.check_staged(repo.path, {}).reasons == []
    # ...but not by an agent.
    codes = {r.code for r in gate.check_staged(repo.path, {"CLAUDECODE": "1"}).reasons}
    assert codes == {"trust-agent"}
    sha = repo.commit("initial")
    checked = gate.check_range(repo.path, None, sha)
    assert [r.code for r in checked.reasons] == []


def test_sha256_repository_commits_are_read(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "sha256"
    import subprocess

    subprocess.run(
        ["git", "init", "-q", "--object-format=sha256", "-b", "main", str(path)], check=True
    )
    repo = GitRepo(path)
    repo.write("a.py", "a = 1\n")
    base = repo.commit("base")
    repo.files({".agentgate/scope": "a.py\n", "a.py": "a = 2\n"})
    bad = repo.commit("mixed\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    assert len(bad) == 64
    checked = gate.check_range(repo.path, base, bad)
    assert {(r.code, r.commit) for r in checked.reasons} == {
        ("trust-mixed", bad),
        ("trust-agent", bad),
    }


# --- issue 11: the trust files, complete ---------------------------------------------------

@pytest.mark.parametrize(
    ("trust_file", "content"),
    [
        ("tests/pytest.ini", "[pytest]\naddopts = -k 'not tax'\n"),
        ("pytest.toml", '[pytest]\naddopts = ["-k", "not tax"]\n'),
        ("tests/.pytest.toml", "[pytest]\n"),
        ("conftest.py", "def pytest_collection_modifyitems(items):\n    items.clear()\n"),
        (".github/workflows/ci.yml", "on: push\n"),
        (".gitlab-ci.yml", "test:\n  script: 'true'\n"),
    ],
)
def test_an_agent_mixing_code_with_a_trust_file_is_blocked_without_a_scope_file(
    repo: GitRepo, trust_file: str, content: str
) -> None:
    # Attack: with no scope file, an agent's commit of code plus a harness or CI change
    # passed the commit hook.
    repo.files({"app/__init__.py": "", "app/tax.py": "RATE = 0.2\n",
                "tests/test_tax.py": "def test_t():\n    pass\n"})
    repo.commit("base")
    _stage(repo, {trust_file: content, "app/tax.py": "RATE = 0.3\n"})
    result = gate.check_staged(repo.path, {"CLAUDECODE": "1"})
    assert ("trust-mixed", trust_file) in _codes(result)
    assert ("trust-agent", trust_file) in _codes(result)
    assert result.exit_code == 4


def test_a_pytest11_entry_point_is_trust(trusted: GitRepo) -> None:
    plugin = PYPROJECT + '\n[project.entry-points.pytest11]\nrewrite = "app.rewrite"\n'
    _stage(trusted, {"pyproject.toml": plugin, "app/pricing/tax.py": "RATE = 1\n"})
    assert _codes(gate.check_staged(trusted.path, {})) == [("trust-mixed", "pyproject.toml")]


def test_a_nested_test_file_named_like_a_config_is_not_trust(trusted: GitRepo) -> None:
    # The legitimate twin: only pytest's own file names count, not lookalikes.
    _stage(trusted, {"tests/test_pytest_ini.py": "def test_x():\n    pass\n",
                     "app/pricing/tax.py": "RATE = 1\n", "sub/conftest.py": "X = 1\n"})
    assert gate.check_staged(trusted.path, {}).reasons == []


def test_configured_trust_paths_are_trust(trusted: GitRepo) -> None:
    trusted.write("pyproject.toml", PYPROJECT + '\n[tool.agentgate]\ntrust_paths = ["ci"]\n')
    trusted.commit("configure trust paths")
    _stage(trusted, {"ci/run": "#!/bin/sh\n", "app/pricing/tax.py": "RATE = 1\n"})
    assert _codes(gate.check_staged(trusted.path, {})) == [("trust-mixed", "ci/run")]


def test_a_trust_only_table_edit_outside_the_scope_is_no_scope_escape(trusted: GitRepo) -> None:
    # Issue 11: a human's [tool.agentgate] edit was refused as a scope escape (exit 3)
    # when pyproject.toml lies outside the declared scope.
    trusted.write(".agentgate/scope", "app\n")
    base = trusted.commit("narrow the scope")
    edit = PYPROJECT + "\n[tool.agentgate]\nprotected = []\n"
    _stage(trusted, {"pyproject.toml": edit})
    assert gate.check_staged(trusted.path, {}).reasons == []
    sha = trusted.commit("configure agentgate")
    assert gate.check_range(trusted.path, base, sha).reasons == []


def test_a_metadata_edit_outside_the_scope_is_still_an_escape(trusted: GitRepo) -> None:
    # The attack twin: the same file's other tables are code like any other file.
    trusted.write(".agentgate/scope", "app\n")
    trusted.commit("narrow the scope")
    edit = PYPROJECT.replace('"1.0"', '"2.0"') + "\n[tool.agentgate]\nprotected = []\n"
    _stage(trusted, {"pyproject.toml": edit})
    codes = _codes(gate.check_staged(trusted.path, {"CLAUDECODE": "1"}))
    assert ("scope-escape", "pyproject.toml") in codes


# --- issue 11: a snapshot update is everyday work, for anyone -----------------------------

def _manifest_for(files: dict[str, str]) -> str:
    from agentgate.gate import manifest

    entries = {path: manifest.digest(text.encode()) for path, text in files.items()}
    return manifest.render(entries).decode()


@pytest.fixture
def snapshots(trusted: GitRepo) -> GitRepo:
    files = {"tests/fixtures/a.json": "1\n", "tests/fixtures/b.json": "2\n"}
    trusted.files({**files, ".agentgate/fixtures.sha256": _manifest_for(files),
                   "tests/test_snap.py": "def test_snap():\n    pass\n"})
    trusted.commit("snapshots")
    return trusted


def test_an_agents_snapshot_update_is_allowed(snapshots: GitRepo) -> None:
    new = {"tests/fixtures/a.json": "10\n", "tests/fixtures/b.json": "2\n"}
    _stage(snapshots, {"tests/fixtures/a.json": "10\n",
                       ".agentgate/fixtures.sha256": _manifest_for(new),
                       "tests/test_snap.py": "def test_snap():\n    assert 1\n"})
    result = gate.check_staged(snapshots.path, {"CLAUDECODE": "1"})
    assert [r.code for r in result.reasons] == []


def test_a_manifest_entry_for_a_fixture_the_commit_does_not_change_is_blocked(
    snapshots: GitRepo,
) -> None:
    # Attack: re-blessing another fixture's digest in the same "snapshot update".
    blessed = {"tests/fixtures/a.json": "10\n", "tests/fixtures/b.json": "tampered\n"}
    _stage(snapshots, {"tests/fixtures/a.json": "10\n",
                       ".agentgate/fixtures.sha256": _manifest_for(blessed)})
    codes = [r.code for r in gate.check_staged(snapshots.path, {"CLAUDECODE": "1"}).reasons]
    assert "trust-agent" in codes and "trust-mixed" in codes


def test_a_snapshot_update_with_code_is_blocked(snapshots: GitRepo) -> None:
    new = {"tests/fixtures/a.json": "10\n", "tests/fixtures/b.json": "2\n"}
    _stage(snapshots, {"tests/fixtures/a.json": "10\n", "app/pricing/tax.py": "RATE = 1\n",
                       ".agentgate/fixtures.sha256": _manifest_for(new)})
    codes = [r.code for r in gate.check_staged(snapshots.path, {"CLAUDECODE": "1"}).reasons]
    assert "trust-mixed" in codes
