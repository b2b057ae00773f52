"""The one-way data flow is a contract, checked by import-linter like its own CI does, and
each contract is shown to fail when the import it forbids is added (issue 10: a contract
that cannot fail checks nothing)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"  # import-linter's console script


def lint(package_parent: Path, *contract: str) -> subprocess.CompletedProcess[str]:
    args = [str(LINT), str(ROOT / "pyproject.toml"), "--no-cache"]
    for cid in contract:
        args += ["--contract", cid]
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(args, cwd=package_parent, env=env, capture_output=True, text=True)


def test_import_contracts_hold() -> None:
    proc = lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 kept, 0 broken" in proc.stdout


@pytest.mark.parametrize(
    ("contract", "module", "added"),
    [
        # git is below the gate: it may not know about trust files
        ("layers", "git/scratch.py", "import agentgate.gate.scope"),
        # the band hands back typed results; it never renders them itself
        ("layers", "run/band.py", "import agentgate.report.render"),
        # two modules of one package importing each other
        ("acyclic", "graph/reverse.py", "import agentgate.graph.types"),
        # the planner reads graph records, never the builder that runs git (issue 10's case)
        ("pure", "plan/planner.py", "import agentgate.graph.builder"),
        ("pure", "plan/markers.py", "import subprocess"),
        # indirect: a value type that imports a module that imports git
        ("pure", "graph/resolve.py", "import agentgate.core.scratch_probe"),
    ],
)
def test_each_contract_fails_when_its_import_is_added(
    tmp_path: Path, contract: str, module: str, added: str
) -> None:
    copy = tmp_path / "agentgate"
    shutil.copytree(ROOT / "agentgate", copy, ignore=shutil.ignore_patterns("__pycache__"))
    if added.endswith("scratch_probe"):  # a new core module that reaches git
        (copy / "core" / "scratch_probe.py").write_text("import agentgate.git.gitio\n")
    target = copy / module
    target.write_text(f"{added}\n" + target.read_text())
    proc = lint(tmp_path, contract)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "0 kept, 1 broken" in proc.stdout
    assert added.split()[-1].rsplit(".", 1)[-1] in proc.stdout
