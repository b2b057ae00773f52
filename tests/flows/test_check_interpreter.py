"""The patch's code writes into the project interpreter while the band runs: a ``.pth`` file
there runs in every later process of that interpreter (the base oracle's runs, every later
check), so the check blocks (``run.installed``), next to the check that leaves it alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgate.flows import check as checkrun
from tests.attribution.test_untrusted_head import PTH_PLANTER, _interpreter_of_its_own
from tests.support.chain_app import commit
from tests.support.git_repo import GitRepo


@pytest.mark.parametrize("planted", [True, False], ids=["planted", "left-alone"])
def test_a_band_that_writes_into_the_interpreter_blocks(
    chain: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    planted: bool,
) -> None:
    venv = _interpreter_of_its_own(tmp_path)
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    files = {"app/util.py": "def shout(s):\n    return s.upper()  # same\n"}
    if planted:
        files["tests/test_plant.py"] = PTH_PLANTER + "\n\ndef test_plant():\n    pass\n"
    commit(chain, files)
    data = checkrun.check(chain.path, "base", "HEAD").to_json()
    found = [r for r in data["reasons"] if r["code"] == "interpreter-tampered"]
    if planted:
        assert data["exit_code"] == 4 and found, data["reasons"]
        assert "zz_planted.pth" in found[0]["detail"]
    else:
        assert (data["exit_code"], found) == (0, []), data["reasons"]
