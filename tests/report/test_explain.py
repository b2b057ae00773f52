"""``plan --explain NODEID`` on real repositories with a real recording: the witness's
decision for one test and its reason, next to its file's import chain."""

from __future__ import annotations

import json
from typing import Any

from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.text import unwrap

CORE = "def one():\n    return 1\n\n\ndef two():\n    return 2\n"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/core.py": CORE,
    "tests/test_core.py": "import pytest\n\nfrom app.core import one, two\n\n\n"
    "def test_one():\n    assert one() == 1\n\n\n"
    "def test_two():\n    assert two() == 2\n\n\n"
    "@pytest.mark.parametrize('n', [1, 2])\ndef test_param(n):\n    assert one() * n == n\n",
    "tests/test_io.py": "import subprocess\nimport sys\n\n\n"
    "def test_sub():\n    subprocess.run(['ls'], stdout=subprocess.DEVNULL, check=True)\n",
}


def _recorded(repo: GitRepo, files: dict[str, str]) -> None:
    repo.files(files)
    repo.commit("initial")
    repo.git("tag", "base")
    done = run_agentgate("witness", "record", cwd=repo.path)
    assert done.returncode == 0, done.stdout + done.stderr
    repo.write("app/core.py", CORE.replace("return 1", "return 2 - 1"))
    repo.commit("patch one()")


def _explain(repo: GitRepo, asked: str) -> tuple[list[str], dict[str, Any]]:
    text = run_agentgate("plan", "--base", "base", "--explain", asked, cwd=repo.path)
    data = run_agentgate("plan", "--base", "base", "--explain", asked, "--format", "json",
                         cwd=repo.path)
    assert text.returncode == data.returncode == 0, text.stdout + text.stderr
    lines = [line for line in unwrap(text.stdout).splitlines() if line.startswith("  why ")
             or line.startswith("    ")]
    return lines, json.loads(data.stdout)["explain"]


def test_a_node_id_gives_the_witness_decision_and_its_reason(repo: GitRepo) -> None:
    _recorded(repo, FILES)
    chain = "    file tests/test_core.py: tests/test_core.py -> app/core.py"
    lines, data = _explain(repo, "tests/test_core.py::test_one")
    assert lines == ["  why tests/test_core.py::test_one: run:impacted app/core.py::one", chain]
    assert data["decisions"] == [{"nodeid": "tests/test_core.py::test_one",
                                  "label": "run:impacted", "reason": "app/core.py::one",
                                  "audit": False}]
    assert data["chain"] == ["tests/test_core.py", "app/core.py"]  # the file's, as for a path
    lines, data = _explain(repo, "tests/test_core.py::test_two")
    assert lines == ["  why tests/test_core.py::test_two: skip:witnessed nothing it executed "
                     "or read changed", chain]
    lines, _ = _explain(repo, "tests/test_core.py::test_param")
    assert lines == ["  why tests/test_core.py::test_param: 2 of 2 parameter(s) run",
                     "    tests/test_core.py::test_param[1]: run:impacted app/core.py::one",
                     "    tests/test_core.py::test_param[2]: run:impacted app/core.py::one",
                     chain]
    lines, data = _explain(repo, "tests/test_io.py::test_sub")
    assert lines[0].startswith("  why tests/test_io.py::test_sub: escalate:incomplete-witness "
                               "ran a subprocess")
    assert lines[1] == "    file tests/test_io.py: not impacted (no import chain to a changed file)"


def test_an_unknown_node_id_is_one_clear_line(repo: GitRepo) -> None:
    _recorded(repo, FILES)
    lines, data = _explain(repo, "tests/test_core.py::test_nope")
    witness = data["witness"][:10]
    assert lines[0] == (f"  why tests/test_core.py::test_nope: unknown node id: the witness at "
                        f"{witness} has no such test and the plan decides nothing for it")
    assert data["decisions"] == []
    lines, _ = _explain(repo, "app/core.py::one")
    assert lines == ["  why app/core.py::one: not a test at head; nothing to explain"]


def test_without_a_witness_the_file_decides(repo: GitRepo) -> None:
    repo.files(FILES)
    repo.commit("initial")
    repo.git("tag", "base")
    repo.write("app/core.py", CORE.replace("return 1", "return 2 - 1"))
    repo.commit("patch one()")
    lines, data = _explain(repo, "tests/test_core.py::test_two")
    assert lines == ["  why tests/test_core.py::test_two: no witness decides single tests; the "
                     "band runs its whole file",
                     "    file tests/test_core.py: tests/test_core.py -> app/core.py"]
    assert (data["witness"], data["decisions"]) == (None, [])


def test_an_audited_skip_says_it_runs_anyway(repo: GitRepo) -> None:
    _recorded(repo, {**FILES, "pyproject.toml": "[tool.agentgate]\nshadow_percent = 100\n"})
    lines, data = _explain(repo, "tests/test_core.py::test_two")
    assert lines[0] == ("  why tests/test_core.py::test_two: skip:witnessed nothing it executed "
                        "or read changed; runs anyway in the shadow sample (audit)")
    assert data["decisions"][0]["audit"] is True


def test_a_node_id_typed_from_a_subfolder_is_found(repo: GitRepo) -> None:
    repo.files(FILES)
    repo.commit("initial")
    repo.git("tag", "base")
    proc = run_agentgate("plan", "--base", "base", "--explain", "test_core.py::test_one",
                         "--format", "json", cwd=repo.path / "tests")
    assert json.loads(proc.stdout)["explain"]["node"] == "tests/test_core.py::test_one"
