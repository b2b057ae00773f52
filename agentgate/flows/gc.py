"""``agentgate gc`` and the pruning after each run: bounds on what agentgate keeps under the
git dir (issue 13: worktrees piled up under ``.git/agentgate/worktrees``).

Cached worktrees beyond ``keep_worktrees`` or unused for ``cache_days``, scratch folders and
locks whose run ended, graph caches and base inventories older than ``cache_days``, witness
sets beyond ``keep_witnesses`` or older than ``cache_days`` (the newest one always stays:
a witness is evidence, and one is enough to narrow a band). ``--all``: everything.
"""

from __future__ import annotations

import time
from pathlib import Path

from agentgate.core.config import Config
from agentgate.core.errors import AgentgateError
from agentgate.core.model import Result
from agentgate.git import housekeeping, worktrees
from agentgate.git.housekeeping import DAY, Bounds, Item
from agentgate.report.housekeeping import GcDetail, Removal
from agentgate.witness.store import Store


def gc(root: Path, config: Config, *, dry_run: bool = False, every: bool = False,
       days: int | None = None) -> Result:
    bounds = Bounds(config.keep_worktrees, config.cache_days if days is None else days, every)
    state = housekeeping.state_dir(root)
    items = [*housekeeping.worktree_items(root, bounds), *housekeeping.file_items(root, bounds)]
    stale = [] if every else _stale_witnesses(root, config, bounds)
    if dry_run:
        busy = housekeeping.in_use(root, items)
        gone = [i for i in items if i not in busy]
    else:
        gone, busy = housekeeping.remove(root, items)
        Store.for_repo(root).delete([sha for sha, _ in stale])
        if every:
            housekeeping.drop_empty(root)
    removals = [*(_removal(state, i) for i in gone), *(r for _, r in stale)]
    detail = GcDetail(_shown(root, state), dry_run, tuple(removals),
                      tuple(_removal(state, i) for i in busy))
    return Result(command="gc", detail=detail)


def after_run(root: Path, config: Config) -> str | None:
    """The pruning after each check and pre-push hook: cached worktrees by count and age,
    witness sets by count (``attribute`` and ``witness record`` prune their own). It never
    changes the run's verdict: a problem (a witness store this agentgate cannot read, which is
    left as it is) is returned as a note."""
    try:
        worktrees.prune(root, config.keep_worktrees, config.cache_days)
        store = Store.for_repo(root)
        if store.exists():
            store.prune(config.keep_witnesses)
    except (AgentgateError, OSError) as exc:
        return f"cache pruning skipped: {getattr(exc, 'message', None) or exc}"
    return None


def _stale_witnesses(root: Path, config: Config, bounds: Bounds) -> list[tuple[str, Removal]]:
    store = Store.for_repo(root)
    if not store.exists():
        return []
    limit, sizes, keep = time.time() - bounds.days * DAY, store.sizes(), config.keep_witnesses
    found = []
    for i, entry in enumerate(store.entries()):
        why = (f"beyond the {keep} newest" if i >= max(keep, 1)
               else f"older than {bounds.days} days" if i and entry.stored_at < limit else "")
        if why:
            found.append((entry.sha, Removal("witness", entry.sha[:12], sizes.get(entry.sha, 0),
                                             why)))
    return found


def _removal(state: Path, item: Item) -> Removal:
    return Removal(item.kind, item.path.relative_to(state).as_posix(), item.size, item.why)


def _shown(root: Path, state: Path) -> str:
    try:
        return state.relative_to(root).as_posix()
    except ValueError:
        return str(state)
