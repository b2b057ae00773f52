"""What agentgate keeps under the git dir, and its removal (``agentgate gc``, issue 13).

Only paths inside ``gitio.state_dir`` (``.git/agentgate``) are ever touched. A link found
there is removed as a link, never followed, and a state dir or worktrees folder that is itself
a link is refused: removing through it would delete someone else's files. A worktree is removed
through git (``worktrees.remove_tree``) and only when no run holds its lock; a folder being
made or used is locked by its owner before it exists, so "in flight" is "locked".
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from agentgate.core.errors import GitError
from agentgate.git import gitio, worktrees
from agentgate.git.scratch import TMP_MARK

DAY = 86400.0
WORKTREES = "worktrees"  # handled through git, never as plain files


@dataclass(frozen=True)
class Bounds:
    keep: int  # cached worktrees kept, most recently used first
    days: int  # anything unused for longer goes
    every: bool = False  # ``--all``: everything agentgate keeps there


@dataclass(frozen=True)
class Item:
    kind: str  # worktree, scratch, graph cache, base inventory, witness store, ...
    path: Path
    size: int
    why: str


def state_dir(root: Path) -> Path:
    """The state dir, refused when it or its worktrees folder is a link (see the module)."""
    state = gitio.state_dir(root)
    for path in (state, state / WORKTREES):
        if path.is_symlink():
            raise GitError(f"{path} is a link; agentgate gc removes nothing through a link "
                           "(remove the link yourself)")
    return state


def worktree_items(root: Path, bounds: Bounds, now: float | None = None) -> list[Item]:
    """The folders of the worktrees folder that ``bounds`` let go, whether or not in use."""
    folder = worktrees.worktrees_dir(root)
    if not folder.is_dir():
        return []
    cached = worktrees.cached(root)
    gone = set(cached if bounds.every else worktrees.stale(root, bounds.keep, bounds.days, now))
    items = [_tree_item(folder / sha, "worktree", _why_cached(root, sha, cached, bounds, now))
             for sha in cached if sha in gone]
    others = sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in cached)
    items += [_tree_item(p, *_other(p)) for p in others]
    # A lock whose folder is gone (its run was killed between the two): removed once free.
    locks = sorted(folder.glob("*.lock"))
    items += [Item("lock", p.with_suffix(""), 0, "its folder is gone") for p in locks
              if not p.with_suffix("").exists() and p.with_suffix("").name not in cached]
    return items


def _why_cached(root: Path, sha: str, cached: list[str], bounds: Bounds,
                now: float | None) -> str:
    if bounds.every:
        return "--all"
    unused = ((now or time.time()) - worktrees.last_used(root, sha)) / DAY
    if unused > bounds.days:
        return f"unused for {int(unused)} days"
    return f"beyond the {bounds.keep} most recently used"


def _other(path: Path) -> tuple[str, str]:
    """A folder that is not a completed cached worktree: a run's private tree or scratch
    folder, or a checkout that never completed. Free of its lock, its owner is gone."""
    if TMP_MARK in path.name:
        return "scratch", "left by a run that ended"
    return "worktree", "checkout never completed"


def _tree_item(path: Path, kind: str, why: str) -> Item:
    return Item(kind, path, size_of(path), why)


def file_items(root: Path, bounds: Bounds, now: float | None = None) -> list[Item]:
    """Every file (or link) of the state dir outside the worktrees folder that ``bounds`` let
    go: older than ``days`` by modification time, or all of them. The witness store is left
    to its own rules (``witness.store``), except under ``--all``."""
    state = state_dir(root)
    limit = (now or time.time()) - bounds.days * DAY
    found = []
    for path in _files(state):
        witness = path.relative_to(state).parts[0] == "witness"
        if bounds.every or (not witness and path.lstat().st_mtime < limit):
            found.append(Item(_kind(state, path), path, path.lstat().st_size,
                              "--all" if bounds.every else f"older than {bounds.days} days"))
    return found


def _files(state: Path) -> list[Path]:
    if not state.is_dir():
        return []
    found: list[Path] = []
    for top, dirs, names in os.walk(state):  # links to folders are listed, not entered
        here = Path(top)
        if here == state:
            dirs[:] = [d for d in dirs if d != WORKTREES]
        found += [here / d for d in dirs if (here / d).is_symlink()]
        found += [here / n for n in names]
    return sorted(found)


_KINDS = {"graph": "graph cache", "inventory": "base inventory", "witness": "witness store"}


def _kind(state: Path, path: Path) -> str:
    parts = path.relative_to(state).parts
    return _KINDS.get(parts[0], "other") if len(parts) > 1 else "other"


def remove(root: Path, items: list[Item]) -> tuple[list[Item], list[Item]]:
    """Remove ``items``: (removed, kept because a run is using them)."""
    state = state_dir(root)
    removed: list[Item] = []
    busy: list[Item] = []
    for item in items:
        if not item.path.is_relative_to(state):  # never, by construction: fail closed
            raise GitError(f"refusing to remove {item.path}: outside {state}")
        if item.path.is_symlink():  # a link is removed as a link, never followed (review:
            item.path.unlink(missing_ok=True)  # one in worktrees/ was reported, not removed)
            removed.append(item)
        elif item.path.parent == worktrees.worktrees_dir(root):
            (removed if worktrees.remove_tree(root, item.path) else busy).append(item)
        else:
            item.path.unlink(missing_ok=True)
            removed.append(item)
    return removed, busy


def in_use(root: Path, items: list[Item]) -> list[Item]:
    """The worktree items a run is using now (``--dry-run`` says so instead of removing)."""
    folder = worktrees.worktrees_dir(root)
    return [i for i in items if i.path.parent == folder and worktrees.in_use(i.path)]


def drop_empty(root: Path) -> None:
    """Remove the state dir's folders left empty, and the state dir when it is (``--all``:
    a run starting meanwhile makes them again)."""
    state = state_dir(root)
    for top, dirs, _names in os.walk(state, topdown=False):
        if Path(top).is_relative_to(state / WORKTREES):
            continue  # an empty folder there may be a checkout just starting (it is locked)
        for name in dirs:
            with contextlib.suppress(OSError):  # not empty, or a link: left as it is
                (Path(top) / name).rmdir()
    with contextlib.suppress(OSError):
        state.rmdir()


def size_of(path: Path) -> int:
    """Bytes under ``path``, links counted as themselves and never followed."""
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size if path.exists() or path.is_symlink() else 0
    total = 0
    for top, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                continue
    return total
