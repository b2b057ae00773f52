"""The witness gate's interpreter fingerprint (issue 11): computed only where tests run
anyway, never from an interpreter the branch supplies, and failing closed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentgate.core import config
from agentgate.core.errors import ConfigError
from agentgate.witness import select as gate
from tests.support.git_repo import GitRepo, run_agentgate

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n.venv/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/core.py": "def lookup():\n    return 1\n\n\ndef other():\n    return 2\n",
    "tests/test_core.py": "from app.core import lookup, other\n\n\n"
    "def test_lookup():\n    assert lookup() == 1\n\n\n"
    "def test_other():\n    assert other() == 2\n",
}


def _python(repo: GitRepo, body: str) -> None:
    path = repo.write(".venv/bin/python", f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _patched(repo: GitRepo) -> str:
    """A witness at the base, then a patch to ``other()``: the witness narrows to one test."""
    repo.files(FILES)
    base = repo.commit("initial")
    done = run_agentgate("witness", "record", cwd=repo.path)
    assert done.returncode == 0, done.stdout + done.stderr
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch other()")
    return base


def _evaluate(repo: GitRepo, base: str, *, check_env: bool,
              notes: list[str] | None = None) -> gate.WitnessPlan:
    plan = gate.evaluate(repo.path, config.load(repo.path), base=base, head="HEAD",
                         check_env=check_env, notes=notes)
    assert plan is not None
    return plan


def test_the_same_interpreter_confirms_the_witness(repo: GitRepo) -> None:
    base = _patched(repo)
    _python(repo, f'exec "{sys.executable}" "$@"')
    plan = _evaluate(repo, base, check_env=True)
    assert not plan.full_suite and plan.selection == ("tests/test_core.py::test_other",)


def test_an_interpreter_that_cannot_be_fingerprinted_runs_the_whole_suite(repo: GitRepo) -> None:
    """It answers the fingerprint with nothing: that confirms nothing, so the witness must
    not narrow the band (before issue 11 an empty fingerprint counted as a match)."""
    base = _patched(repo)
    _python(repo, f'[ "$1" = "-I" ] && exit 0\nexec "{sys.executable}" "$@"')
    plan = _evaluate(repo, base, check_env=True)
    assert plan.full_suite and plan.selection == ()
    assert "could not be fingerprinted" in plan.ambient_drift[0]


def test_a_package_installed_since_the_recording_is_named(
    repo: GitRepo, tmp_path: Path
) -> None:
    """New-user trial: installing pre-commit after recording ran every check's full suite,
    saying only that "the patch changes the ambient environment". The drift names what was
    installed and says to record again."""
    base = _patched(repo)
    extra = tmp_path / "site"
    (extra / "newtool-1.2.dist-info").mkdir(parents=True)
    _python(repo, f'if [ "$1" = "-I" ]; then exec "{sys.executable}" -I -c '
                  f'"import sys; sys.path.insert(0, \'{extra}\'); exec(sys.argv[1])" "$3"; fi\n'
                  f'exec "{sys.executable}" "$@"')
    plan = _evaluate(repo, base, check_env=True)
    assert plan.full_suite
    assert "installed packages differ from the recording's (+newtool-1.2)" in (
        plan.ambient_drift[0]), plan.ambient_drift
    assert "agentgate witness record" in plan.ambient_drift[0]


def test_without_check_env_nothing_runs_and_the_note_says_so(
    repo: GitRepo, tmp_path: Path
) -> None:
    base = _patched(repo)
    marker = tmp_path / "ran"
    _python(repo, f'echo ran > "{marker}"\nexec "{sys.executable}" "$@"')
    notes: list[str] = []
    plan = _evaluate(repo, base, check_env=False, notes=notes)
    assert not marker.exists() and gate.UNCONFIRMED_ENV in notes
    assert plan.selection == ("tests/test_core.py::test_other",)


def test_a_committed_interpreter_is_refused_before_it_is_fingerprinted(
    repo: GitRepo, tmp_path: Path
) -> None:
    base = _patched(repo)
    marker = tmp_path / "ran"
    _python(repo, f'echo ran > "{marker}"\nexec "{sys.executable}" "$@"')
    repo.git("add", "-f", ".venv/bin/python")
    repo.commit("bring an interpreter")
    with pytest.raises(ConfigError, match="tracked"):
        _evaluate(repo, base, check_env=True)
    assert not marker.exists()
    checked = run_agentgate("check", "--base", base, cwd=repo.path)
    assert checked.returncode == 64 and ".venv/bin/python" in checked.stderr
    assert not marker.exists()
