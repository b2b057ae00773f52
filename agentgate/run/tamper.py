"""agentgate's own state, written only by agentgate while a check runs the patch's code.

A check runs the patch's code (the band, the base forms, the base's own runs) in processes
that can write anywhere the user can, ``.git/agentgate/`` included, where the base
inventory, the base's own outcomes and the witness store are kept and read afterwards
(red-team: head's code wrote an ``inventory/at-base-*.json`` saying the test it skipped was
skipped on the base too, and a base inventory without the case it made vanish). Before the
runs the state's files are noted; afterwards every file that changed or appeared must hold
exactly what agentgate itself wrote there (``wrote``), else the check says which, and blocks.
Worktrees and scratch folders (``worktrees/``) are the runs' own. SQLite's side files count
like any other: reading the witness store makes none, and a journal or WAL planted next to
it would change what SQLite reads.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from agentgate.git import gitio

_OWN = ("worktrees",)
_WRITTEN: dict[str, str] = {}  # real path -> sha256 of what agentgate last wrote there

Snapshot = dict[str, tuple[int, int, int]]  # path from the state dir -> (size, mtime, inode)


def wrote(path: Path, data: bytes) -> None:
    """Note what agentgate itself just wrote at ``path``."""
    _WRITTEN[os.path.realpath(path)] = hashlib.sha256(data).hexdigest()


def write(path: Path, data: bytes) -> None:
    """The one way agentgate writes a file of its state: whole (a temporary file beside it,
    then renamed over it, so a reader never sees half of it), and noted (``wrote``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    wrote(path, data)


def snapshot(root: Path) -> Snapshot:
    state = gitio.state_dir(root)
    found: Snapshot = {}
    for path in _files(state):
        try:
            st = path.lstat()
        except OSError:
            continue
        found[path.relative_to(state).as_posix()] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return found


def changed(root: Path, before: Snapshot) -> list[str]:
    """The state's files that changed, appeared or went since ``before`` and do not hold
    what agentgate wrote there (a file gone counts: a cache removed is rebuilt, but only
    agentgate removes one)."""
    state = gitio.state_dir(root)
    after = snapshot(root)
    found = []
    for rel in sorted(before.keys() | after.keys()):
        if before.get(rel) == after.get(rel):
            continue
        path = state / rel
        expected = _WRITTEN.get(os.path.realpath(path))
        if expected is not None and rel in after and _digest(path) == expected:
            continue
        found.append(rel)
    return found


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _files(state: Path) -> Iterator[Path]:
    if not state.is_dir():
        return
    for top, dirs, names in os.walk(state):
        here = Path(top)
        if here == state:
            dirs[:] = [d for d in dirs if d not in _OWN]
        yield from (here / name for name in names)
