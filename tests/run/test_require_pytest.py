"""No pytest in the project's interpreter is a configuration error (exit 64), not failed
tests (issue 13)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.chain_app import CHAIN_APP, commit
from tests.support.git_repo import GitRepo, run_agentgate


def test_an_interpreter_without_pytest_exits_64_naming_it(repo: GitRepo, tmp_path: Path) -> None:
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    repo.files({**CHAIN_APP, "pyproject.toml": f'[tool.agentgate]\npython = "{python}"\n'})
    repo.commit("initial")
    repo.git("tag", "base")
    commit(repo, {"app/util.py": "def shout(s):\n    return s.upper() + ''\n"})
    proc = run_agentgate("check", "--base", "base", cwd=repo.path)
    assert proc.returncode == 64, proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert str(python) in line and "no pytest" in line and "[tool.agentgate] python" in line
