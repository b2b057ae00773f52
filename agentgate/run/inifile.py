"""Which pytest configuration file a run in a tree uses, looked for inside the tree only.

agentgate's worktrees live under the checkout's git dir, so pytest's upward search for its
configuration file -- and, from there, for conftests -- walks out of the worktree into the
checkout and picks up a dirty or ignored ``pytest.ini`` or root ``conftest.py`` that is not
head's. Every run therefore names its file (``-c``) and where conftests stop
(``--confcutdir``): the one pytest would find searching from the selection's folder up to the
tree's root, and nothing above it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from agentgate.core import config as config_mod
from agentgate.core.errors import ConfigError


def find_inifile(tree: Path, start: Path, empty: Path) -> Path:
    """The config file pytest would pick from ``start``, searching up to ``tree`` only;
    ``empty`` (an empty file outside the tree) when the tree has none."""
    folder = start
    while True:
        found = _config_in(folder)
        if found is not None:
            return found
        if folder == tree or tree not in folder.parents:
            return empty
        folder = folder.parent


def common_folder(tree: Path, selection: Iterable[str]) -> Path:
    """The folder pytest starts its search from: the common ancestor of the selection's
    folders (node ids stand for their files), the tree for no selection."""
    folders = [os.fspath((tree / s.split("::", 1)[0]).parent) for s in selection]
    if not folders:
        return tree
    common = Path(os.path.commonpath(folders))
    return common if common == tree or tree in common.parents else tree


def harness_args(tree: Path, selection: Iterable[str], empty: Path) -> list[str]:
    """``-c`` and ``--confcutdir`` that keep pytest inside ``tree``."""
    inifile = find_inifile(tree, common_folder(tree, selection), empty)
    cut = inifile.parent if inifile != empty else tree
    return ["-c", os.fspath(inifile), f"--confcutdir={cut}"]


def _config_in(folder: Path) -> Path | None:
    def read(name: str) -> str | None:
        try:
            return (folder / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    try:
        data = config_mod.parse_toml(read(config_mod.PYPROJECT) or "", where="pyproject.toml")
        tables = config_mod.pytest_tables(read, data)
    except ConfigError:
        # A config file that does not parse: let pytest find it and report it, so the run
        # is a harness error in this tree rather than silently running without its config.
        return None
    return folder / next(iter(tables)) if tables else None
