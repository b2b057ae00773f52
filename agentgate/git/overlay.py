"""Files of one revision laid over a checked-out tree of another: the base's contract on
head's code.

The base oracle (issue 11) runs the base's form of a test -- its test file, its conftests, its
pytest configuration -- against head's code. A detached worktree of head is made as usual
(``agentgate.git.worktrees``); ``lay_over`` then makes each named path in it what it is at
the base: written with the base's bytes, or removed when the base has no such file. Only the
named paths change; everything else stays head's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentgate.core.errors import AgentgateError
from agentgate.git import gitio

_EXECUTABLE = "100755"


@dataclass(frozen=True)
class Laid:
    written: tuple[str, ...]  # paths now holding the revision's content
    removed: tuple[str, ...]  # paths the revision does not have, removed from the tree


def lay_over(root: Path, rev: str, tree: Path, paths: Iterable[str]) -> Laid:
    """Make each of ``paths`` in the folder ``tree`` what it is at ``rev`` in ``root``."""
    wanted = sorted(set(paths))
    listed = _blobs(root, rev, wanted)
    contents = gitio.cat_blobs(root, [blob for blob, _ in listed.values()])
    written, removed = [], []
    for path in wanted:
        target = _inside(tree, path)
        if path in listed:
            blob, mode = listed[path]
            _write(target, contents[blob], mode == _EXECUTABLE)
            written.append(path)
        elif target.is_file() or target.is_symlink():
            target.unlink()
            removed.append(path)
    return Laid(tuple(written), tuple(removed))


def _blobs(root: Path, rev: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """path -> (blob, mode) for the regular files among ``paths`` at ``rev``."""
    if not paths:
        return {}
    out = gitio.run(root, "ls-tree", "-z", "--full-tree", rev, "--", *paths)
    found: dict[str, tuple[str, str]] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, blob = os.fsdecode(meta).split()
        if kind == "blob" and mode in ("100644", _EXECUTABLE):
            found[os.fsdecode(name)] = (blob, mode)
    return found


def _inside(tree: Path, path: str) -> Path:
    target = tree / path
    if ".." in Path(path).parts or Path(path).is_absolute():
        raise AgentgateError(f"refusing to lay {path!r} outside {tree}")
    return target


def _write(target: Path, data: bytes, executable: bool) -> None:
    if target.is_symlink() or target.is_dir():
        raise AgentgateError(f"cannot lay a file over {target}: it is a link or a folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    target.chmod(0o755 if executable else 0o644)
