"""The interpreter's own folders (``run.installed``), asked without running the patch's code."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agentgate.run import installed


def test_asking_for_the_folders_runs_no_module_of_the_tree(tmp_path: Path) -> None:
    """The tree is on ``PYTHONPATH`` and is the working folder where agentgate asks: a
    ``json.py`` of the patch's there would run before anything is noted (and could plant
    what it likes first). Asked in isolated mode, it does not."""
    tree = tmp_path / "tree"
    tree.mkdir()
    marker = tmp_path / "ran"
    (tree / "json.py").write_text(f"open({os.fspath(marker)!r}, 'w').close()\n"
                                  "def dumps(x):\n    return '[]'\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.fspath(tree)}
    found = installed.folders(sys.executable, env, tree, [tree])
    assert not marker.exists()
    stdlib = Path(os.path.realpath(os.path.dirname(os.__file__)))
    assert stdlib in found and tree not in found


def test_a_file_written_into_a_noted_folder_is_a_change(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "mod.py").write_text("X = 1\n", encoding="utf-8")
    before = installed.note([site])
    assert installed.changed(before, installed.note([site])) == []
    (site / "zz.pth").write_text("import os\n", encoding="utf-8")
    (site / "pkg" / "mod.py").write_text("X = 2\n", encoding="utf-8")
    changed = installed.changed(before, installed.note([site]))
    assert {os.fspath(site / "zz.pth"), os.fspath(site / "pkg" / "mod.py")} <= set(changed)
