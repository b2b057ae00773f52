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


def test_what_no_interpreter_reads_in_a_sibling_checkout_is_no_change(tmp_path: Path) -> None:
    """Flake trial round 4 (r12): an editable sibling checkout on ``sys.path``, whose
    developer saved NOTES.md and committed while the runs went on: BASE_UNAVAILABLE. Its
    ``.git`` and its prose are not what an interpreter reads; its modules and its
    ``entry_points.txt`` still are."""
    sibling = tmp_path / "sibling"
    (sibling / ".git").mkdir(parents=True)
    (sibling / "lib.dist-info").mkdir()
    (sibling / "lib.py").write_text("X = 1\n", encoding="utf-8")
    before = installed.note([sibling])
    (sibling / "NOTES.md").write_text("# notes\n", encoding="utf-8")
    (sibling / ".git" / "index").write_bytes(b"DIRC")
    assert installed.changed(before, installed.note([sibling])) == []
    (sibling / "lib.dist-info" / "entry_points.txt").write_text("[pytest11]\nx = lib\n",
                                                                encoding="utf-8")
    (sibling / "lib.py").write_text("X = 2\n", encoding="utf-8")
    assert installed.changed(before, installed.note([sibling])) == [
        os.fspath(sibling / "lib.dist-info"), os.fspath(sibling / "lib.dist-info" /
                                                        "entry_points.txt"),
        os.fspath(sibling / "lib.py")]
