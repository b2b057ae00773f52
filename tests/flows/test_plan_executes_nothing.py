"""``plan`` executes nothing from the branch, and ``check`` refuses the branch's interpreter
(issue 11, item 6), through the real CLI on real repositories.

The marker interpreter is untracked and git-ignored, the developer's legitimate kind: that
isolates the question "does plan execute it?" from the question "may it be used?".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentgate.witness import select
from tests.support.git_repo import GitRepo, run_agentgate

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n.venv/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    ".agentgate/scope": "app/\ntests/\n",
    "app/__init__.py": "",
    "app/core.py": "def lookup():\n    return 1\n\n\ndef other():\n    return 2\n",
    "tests/test_core.py": "from app.core import lookup, other\n\n\n"
    "def test_lookup():\n    assert lookup() == 1\n\n\n"
    "def test_other():\n    assert other() == 2\n",
}
BROKEN = FILES["app/core.py"].replace("return 2", "return 3")


def _marker_python(repo: GitRepo, marker: Path) -> None:
    """A ``.venv/bin/python`` that leaves a mark each time it runs, then is the real one."""
    path = repo.write(".venv/bin/python",
                      f'#!/bin/sh\necho ran >> "{marker}"\nexec "{sys.executable}" "$@"\n')
    path.chmod(0o755)


def _witnessed(repo: GitRepo) -> str:
    repo.files(FILES)
    base = repo.commit("initial")
    recorded = run_agentgate("witness", "record", cwd=repo.path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    return base


def test_plan_with_a_witness_runs_no_interpreter(repo: GitRepo, tmp_path: Path) -> None:
    base = _witnessed(repo)
    marker = tmp_path / "ran"
    _marker_python(repo, marker)
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch other()")
    planned = run_agentgate("plan", "--base", base, "--format", "json", cwd=repo.path)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    data = json.loads(planned.stdout)
    assert not marker.exists()
    assert data["tests"] == ["tests/test_core.py::test_other"]  # the witness still narrows
    assert select.UNCONFIRMED_ENV in data["notes"]  # and plan says what it did not confirm
    # check runs tests anyway: it fingerprints the interpreter before the witness narrows
    # (so the marker is a live one, and this test fails if plan starts executing it).
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert marker.exists()


def test_plan_of_a_scope_escape_runs_no_interpreter(repo: GitRepo, tmp_path: Path) -> None:
    base = _witnessed(repo)
    marker = tmp_path / "ran"
    _marker_python(repo, marker)
    repo.write("docs/notes.md", "outside the scope\n")
    repo.write("app/core.py", FILES["app/core.py"].replace("return 2", "return 1 + 1"))
    repo.commit("patch and wander\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    planned = run_agentgate("plan", "--base", base, "--format", "json", cwd=repo.path)
    assert planned.returncode == 3, planned.stdout + planned.stderr
    assert not marker.exists()


def test_check_refuses_a_committed_interpreter_that_exits_0(repo: GitRepo) -> None:
    repo.files(FILES)
    base = repo.commit("initial")
    repo.write("app/core.py", BROKEN)
    fake = repo.write(".venv/bin/python", "#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    repo.git("add", "-f", ".venv/bin/python")
    repo.commit("break other() and bring an interpreter that agrees")
    checked = run_agentgate("check", "--base", base, cwd=repo.path)
    assert checked.returncode == 64, checked.stdout + checked.stderr
    said = checked.stderr.strip().splitlines()
    assert len(said) == 1 and ".venv/bin/python is tracked" in said[0]
    assert "[tool.agentgate] python" in said[0]


def test_check_uses_the_developers_ignored_venv(repo: GitRepo, tmp_path: Path) -> None:
    """The twin: the same broken patch, the interpreter the developer made: tests run, fail."""
    repo.files(FILES)
    base = repo.commit("initial")
    marker = tmp_path / "ran"
    _marker_python(repo, marker)
    repo.write("app/core.py", BROKEN)
    repo.commit("break other()")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["results"]["failed_ids"] == ["tests/test_core.py::test_other"]
    assert marker.exists()


def test_the_interpreter_key_is_read_from_the_base(repo: GitRepo) -> None:
    """A range that points ``python`` at an exit-0 script is judged by the base's config:
    the key it added is not in force, so the real tests run and the break shows."""
    repo.files({**FILES, "tools/python": "#!/bin/sh\nexit 0\n"})
    (repo.path / "tools/python").chmod(0o755)
    base = repo.commit("initial")
    repo.write("pyproject.toml", FILES["pyproject.toml"] + 'python = "tools/python"\n')
    repo.commit("configure the interpreter")  # a trust-only commit of its own
    repo.write("app/core.py", BROKEN)
    repo.commit("break other()")
    checked = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["results"]["failed_ids"] == ["tests/test_core.py::test_other"]
