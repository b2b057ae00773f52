"""Detached worktrees of one revision under the git dir, reused between runs, safe to interrupt.

Layout, in ``gitio.state_dir(root)/worktrees``::

    <sha>/<name>/   the cached worktree of <sha>, reused by the next run on the same revision
    <sha>.lock      flock held while one process uses <sha>/ (the kernel drops it on any exit)
    <sha>.ready     written once the checkout completed, so a half-made tree is never reused
    <sha>-tmp-*/<name>/  a private worktree, made when the cached one is busy; always removed
    <label>-tmp-*/  a scratch folder (``scratch.scratch_dir``): JUnit XML, argument files

``<name>`` is the name of the checkout's own folder: a test that reads the name of the folder
it runs in (a project name taken from it, a path it compares) sees what it sees in the
checkout, not a revision's sha -- else such a test fails on every tree agentgate makes, and
attribution would call a failure the patch caused one the base had too.

A cached worktree is reset and cleaned (``git clean -ffdx``) each time it is handed out, so
one run's debris never reaches the next. When the block using it raises (an error, Ctrl-C)
the worktree is removed instead: an interrupted run may have stopped mid-checkout or left
processes writing into it, and the next run should start at once on a fresh one. A run killed
with SIGKILL cannot clean up; its lock dies with it and the next run repairs or replaces the
tree, and ``sweep`` removes the private folders whose lock is free. SIGTERM unwinds like
Ctrl-C (``run.process.interrupts_noted``). POSIX only (``fcntl.flock``), like the hooks.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentgate.core.config import PYTEST_CONFIG_FILES
from agentgate.core.errors import GitError
from agentgate.core.paths import under, under_any
from agentgate.git import gitio
from agentgate.git.scratch import (
    TMP_MARK,
    delete_folder,
    held_interrupts,
    holder,
    lock_path,
    try_lock,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

KEEP = 4  # cached worktrees kept by default (config keep_worktrees): a base and a head or two
# __pycache__ survives the clean: bytecode is keyed by source mtime and size, and a reset
# rewrites any source a test modified, so stale bytecode cannot be loaded; keeping it saves
# recompiling the project on every run.
_CLEAN = ("clean", "-ffdxq", "-e", "__pycache__")


def worktrees_dir(root: Path) -> Path:
    return holder(root)


def path_for(root: Path, sha: str) -> Path:
    """The folder of ``sha``'s cached worktree: what its lock and ready marker are named
    after, and what is removed with it (the worktree itself is ``tree_in`` it)."""
    return worktrees_dir(root) / sha


def tree_in(root: Path, slot: Path) -> Path:
    """The worktree inside a folder of ``worktrees_dir``: named as the checkout is."""
    return slot / tree_name(root)


def tree_name(root: Path) -> str:
    name = Path(os.path.abspath(root)).name
    return name if name and name not in (".", "..") else "checkout"


def _ready_path(slot: Path) -> Path:
    return slot.with_name(slot.name + ".ready")


# --- the public API -----------------------------------------------------------------------

@contextmanager
def using_worktree(root: Path, sha: str) -> Iterator[Path]:
    """A clean detached worktree of ``sha`` that only this process uses inside the block.

    The cached tree is used when free, else a private one that is removed afterwards. If
    the block raises (including KeyboardInterrupt), the tree is removed.
    """
    sweep(root)
    lock = try_lock(lock_path(path_for(root, sha)))
    if lock is None:
        with temporary_worktree(root, sha) as path:
            yield path
        return
    slot = path_for(root, sha)
    try:
        yield _prepare(root, sha, slot)
    except BaseException:
        _discard(root, slot)
        lock.release(unlink=True)
        raise
    lock.release()


def ensure_worktree(root: Path, sha: str) -> Path:
    """Make or refresh the cached worktree of ``sha`` and return its path.

    The lock is held only while preparing; a caller that needs the tree to itself for a
    while should use ``using_worktree``. Raises GitError when another process holds it.
    """
    slot = path_for(root, sha)
    lock = try_lock(lock_path(slot))
    if lock is None:
        raise GitError(f"worktree {slot} is in use by another agentgate run; retry when it ends")
    try:
        tree = _prepare(root, sha, slot)
    except BaseException:
        _discard(root, slot)
        lock.release(unlink=True)
        raise
    lock.release()
    return tree


@contextmanager
def temporary_worktree(root: Path, sha: str) -> Iterator[Path]:
    """A private worktree of ``sha`` for the block (one a caller may dirty); always removed."""
    # Locked before it exists: an interrupt at any point leaves a lock ``sweep`` can find.
    slot = worktrees_dir(root) / f"{sha[:12]}{TMP_MARK}{os.urandom(6).hex()}"
    lock = try_lock(lock_path(slot))
    assert lock is not None, "a fresh private name cannot be locked by anyone else"
    try:
        tree = tree_in(root, slot)
        gitio.worktree_add(root, tree, sha)
        yield tree
    finally:
        _discard(root, slot)
        lock.release(unlink=True)


class Roots(Protocol):
    """The folders a run reads, its source and test roots (``core.config.Config`` has them)."""

    @property
    def sources(self) -> tuple[str, ...]: ...

    @property
    def tests(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Layout:  # a ``Roots`` of its own, for callers with no configuration
    sources: tuple[str, ...]
    tests: tuple[str, ...]


WHOLE_REPO = Layout(sources=(".",), tests=(".",))  # every file could change the run


@contextmanager
def clean_checkout(root: Path, sha: str, roots: Roots = WHOLE_REPO) -> Iterator[Path]:
    """The checkout itself when it is exactly ``sha`` with nothing that could change the run:
    nothing uncommitted (an untracked module would be imported) and no ignored file that
    Python or pytest would read from ``roots`` (``run_changing``); else ``using_worktree``.
    The default roots, the whole repository, fail closed."""
    if gitio.head_sha(root) == sha and gitio.is_clean(root) and not ignored_inputs(root, roots):
        yield root
        return
    with using_worktree(root, sha) as path:
        yield path


def ignored_inputs(root: Path, roots: Roots) -> list[str]:
    """The ignored untracked files that would change a run in the checkout (issue 11, item 7).
    git lists an ignored folder once; only folders that may hold such a file are walked."""
    files: list[str] = []
    for entry in gitio.ignored_untracked(root):
        folder = entry.rstrip("/")
        if not entry.endswith("/"):
            files.append(entry)
        elif not _in_tool_folder(folder, is_folder=True) and _may_hold(folder, roots):
            files.extend(_walk(root, folder))
    return run_changing(files, roots)


def _walk(root: Path, folder: str) -> Iterator[str]:
    for top, dirs, names in os.walk(root / folder):
        dirs[:] = [d for d in dirs if not _is_tool_folder(d)]  # a nested .venv is not read
        rel = Path(top).relative_to(root).as_posix()
        yield from (f"{rel}/{name}" for name in names)


def _may_hold(folder: str, roots: Roots) -> bool:
    """Inside a root, or holding one (a conftest or pytest.ini there counts)."""
    return any(under(folder, r) or under(r, folder) for r in _all(roots))


# --- the pure filter: which ignored files can change what a run imports, collects or reads --

# Folders of tools and build output, never read by the run as the project's code or tests.
TOOL_FOLDERS = frozenset((".venv", "venv", ".tox", ".nox", "__pycache__", ".pytest_cache",
                          ".mypy_cache", ".ruff_cache", ".hypothesis", "build", "dist",
                          "node_modules", ".git"))
# Importable by Python: a sourceless ``.pyc`` outside ``__pycache__`` is imported as a module.
IMPORTABLE = (".py", ".pth", ".so", ".pyd", ".pyc")
# What pytest reads upward from the tests (conftests, configuration), and what ``site`` runs.
HARNESS_NAMES = frozenset(("conftest.py", *PYTEST_CONFIG_FILES, "sitecustomize.py",
                           "usercustomize.py"))


def run_changing(files: Iterable[str], roots: Roots) -> list[str]:
    """The files (paths from the top of the repository) that could change a run: any file in
    a test root (the tests read data too); an importable or harness file in a source root, or
    directly in the repository (the run's working folder is on ``sys.path``); a conftest or
    pytest configuration file in a folder holding a root (pytest looks for them upward).
    Files in tool folders never count: the common ``.venv`` keeps the fast path."""
    return sorted(p for p in files if not _in_tool_folder(p) and _changes_run(p, roots))


def _changes_run(path: str, roots: Roots) -> bool:
    folder, name = posixpath.split(path)
    if under_any(path, roots.tests):
        return True
    code = name.endswith(IMPORTABLE) or name in HARNESS_NAMES
    if under_any(path, roots.sources) or not folder:
        return code
    return name in HARNESS_NAMES and any(under(r, folder) for r in _all(roots))


def _all(roots: Roots) -> tuple[str, ...]:
    return (*roots.sources, *roots.tests)


def _in_tool_folder(path: str, *, is_folder: bool = False) -> bool:
    parts = path.split("/")
    return any(_is_tool_folder(p) for p in (parts if is_folder else parts[:-1]))


def _is_tool_folder(name: str) -> bool:
    return name in TOOL_FOLDERS or name.endswith(".egg-info")


def remove_worktree(root: Path, sha: str) -> bool:
    """Remove the cached worktree of ``sha`` unless a run is using it; True when removed."""
    return remove_tree(root, path_for(root, sha))


def remove_tree(root: Path, slot: Path) -> bool:
    """Remove a folder of ``worktrees_dir`` (a worktree through git) unless its lock is held
    by a run; True when removed."""
    lock = try_lock(lock_path(slot))
    if lock is None:
        return False
    _discard(root, slot)
    lock.release(unlink=True)
    return True


def in_use(slot: Path) -> bool:
    """Whether a run holds the lock of ``slot`` (asked without taking it for longer)."""
    lock = try_lock(lock_path(slot))
    if lock is None:
        return True
    lock.release()
    return False


def cached(root: Path) -> list[str]:
    """Revisions with a completed cached worktree, most recently used first."""
    folder = worktrees_dir(root)
    if not folder.is_dir():
        return []
    ready = sorted(folder.glob("*.ready"), key=lambda p: (-p.stat().st_mtime_ns, p.name))
    return [p.name[: -len(".ready")] for p in ready]


def prune(root: Path, keep: int = KEEP, days: int | None = None) -> list[str]:
    """Remove cached worktrees beyond the ``keep`` most recently used, or unused for more than
    ``days``, oldest first (skipping busy ones)."""
    return [sha for sha in reversed(stale(root, keep, days)) if remove_worktree(root, sha)]


def stale(root: Path, keep: int, days: int | None, now: float | None = None) -> list[str]:
    """The cached worktrees ``prune`` removes, most recently used first."""
    limit = None if days is None else (now or time.time()) - days * 86400
    found = cached(root)
    return [sha for i, sha in enumerate(found)
            if i >= keep or (limit is not None and last_used(root, sha) < limit)]


def last_used(root: Path, sha: str) -> float:
    """When the cached worktree of ``sha`` was last handed out (its ready marker's mtime)."""
    try:
        return _ready_path(path_for(root, sha)).stat().st_mtime
    except FileNotFoundError:
        return 0.0


def sweep(root: Path) -> list[Path]:
    """Remove private worktrees and scratch folders whose owner died (its lock is free)."""
    folder = worktrees_dir(root)
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for lock_file in sorted(folder.glob(f"*{TMP_MARK}*.lock")):
        lock = try_lock(lock_file)
        if lock is None:
            continue
        slot = lock_file.with_suffix("")
        _discard(root, slot)
        lock.release(unlink=True)
        removed.append(slot)
    return removed


# --- internals ----------------------------------------------------------------------------

def _prepare(root: Path, sha: str, slot: Path) -> Path:
    """Reuse a completed, healthy tree (reset and cleaned), else build it from scratch (also
    when the checkout's folder was renamed since, or the tree has an older layout)."""
    ready = _ready_path(slot)
    tree = tree_in(root, slot)
    if ready.exists() and _refresh(tree, sha):
        ready.touch()  # most recently used: ``prune`` keeps it
        return tree
    _discard(root, slot)
    gitio.worktree_add(root, tree, sha)
    ready.write_text(sha + "\n", encoding="utf-8")
    return tree


def _refresh(tree: Path, sha: str) -> bool:
    env = gitio.no_git_env()
    try:
        if (tree / ".git").is_file() and _head(tree, env) == sha:
            gitio.run(tree, "reset", "-q", "--hard", sha, env=env)
            gitio.run(tree, *_CLEAN, env=env)
            return True
    except GitError:
        pass
    return False


def _head(tree: Path, env: dict[str, str]) -> str:
    return os.fsdecode(gitio.run(tree, "rev-parse", "HEAD", env=env)).strip()


def _discard(root: Path, slot: Path) -> None:
    """Forget and delete a folder of ``worktrees_dir`` and the worktree in it (or the folder
    itself being one, as an older layout made), whatever state an interrupted run left it
    in; a second Ctrl-C or SIGTERM waits until it is gone, so cleanup is never left half
    done."""
    with held_interrupts():
        _ready_path(slot).unlink(missing_ok=True)
        for tree in _registered(root, slot):
            gitio.worktree_remove(root, tree)
        if slot.exists():  # not registered (half-made), or remove refused: delete the folder
            delete_folder(slot)
            gitio.run(root, "worktree", "prune", check=False, env=gitio.no_git_env())


def _registered(root: Path, slot: Path) -> list[Path]:
    """The worktrees git knows of at ``slot`` or inside it."""
    where = os.path.realpath(slot)
    with contextlib.suppress(GitError):
        return [p for p in gitio.worktrees(root)
                if (real := os.path.realpath(p)) == where
                or real.startswith(where + os.sep)]
    return []
