"""The base inventory (issue 11 item 2): the node ids the merge-base has in the test files a
range touches, collected with the base's own harness.

Which files: the test files the range changes, deletes or renames away (as the base names
them), and the base's test files under the folder of a conftest the range changes. They are
collected (``pytest --collect-only`` with agentgate's outcome plugin) in a temporary worktree
of the base, under the project's interpreter and pinned environment, as the band runs. The
result is cached under ``.git/agentgate/inventory/`` keyed by the base's tree id and the file
list: a base collected once serves every push on top of it.

When a witness was recorded at the merge-base itself, the tests it ran are the
inventory (``from_recording``) and nothing is collected: the recording ran the base's suite
with the base's harness. Only when it collected every asked file without an error; else
the collection runs as above.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentgate.core.config import Config
from agentgate.core.errors import AgentgateError
from agentgate.core.model import Change
from agentgate.core.paths import TestFiles, under
from agentgate.git import gitio, worktrees
from agentgate.run import session, tamper

CONFTEST = "conftest.py"
_FORMAT = 1


@dataclass(frozen=True)
class Inventory:
    files: tuple[str, ...]  # the base's test files asked for
    nodeids: tuple[str, ...]  # what the base's harness collected from them


def touched_tests(changes: Iterable[Change], tests: TestFiles, base_paths: Iterable[str]
                  ) -> tuple[str, ...]:
    """The base's test files a range touches (pure): changed, deleted or renamed away, and
    those under a changed conftest's folder (a conftest decides what its folder runs)."""
    at_base = [p for p in base_paths if tests.match(p)]
    present, found = set(at_base), set[str]()
    for change in changes:
        old = change.old_path or change.path
        if old in present:
            found.add(old)
        for path in change.paths:
            if posixpath.basename(path) == CONFTEST:
                folder = posixpath.dirname(path) or "."
                found.update(p for p in at_base if folder == "." or under(p, folder))
    return tuple(sorted(found))


def support_served(support: Iterable[str], tests: TestFiles, base_paths: Iterable[str],
                   roots: Iterable[str]) -> tuple[str, ...]:
    """The base's test files under the test roots that hold a changed support file (pure):
    any of them may import the helper or read the data."""
    touched = [r for r in roots if any(under(p, r) for p in support)]
    return tuple(sorted(p for p in base_paths
                        if tests.match(p) and any(under(p, r) for r in touched)))


def inventory(root: Path, config: Config, base: str, files: tuple[str, ...]) -> Inventory:
    """The base's node ids in ``files``, from the cache or collected now."""
    if not files:
        return Inventory((), ())
    path = _cache_path(root, base, files)
    cached = _read(path, files)
    if cached is not None:
        return cached
    found = Inventory(files, collect(root, config, base, files))
    _write(path, found)
    return found


def from_recording(files: tuple[str, ...], outcomes: Mapping[str, str],
                   collected: Iterable[str], errors: Iterable[str]) -> Inventory | None:
    """The inventory of ``files`` from a recording of the base's suite (the tests it ran,
    the test files it collected and those that failed to); None when it did not collect
    every one of ``files`` cleanly, so the caller collects instead."""
    wanted = frozenset(files)
    if not wanted <= frozenset(collected) or wanted & frozenset(errors):
        return None
    ids = tuple(sorted(n for n in outcomes if n.split("::", 1)[0] in wanted))
    return Inventory(files, ids)


def collect(root: Path, config: Config, base: str, files: tuple[str, ...]) -> tuple[str, ...]:
    """``pytest --collect-only`` of ``files`` in a worktree of ``base``; a session that does
    not finish is an error, never an empty inventory (that would excuse every suppression)."""
    with worktrees.temporary_worktree(root, base) as tree, \
            session.runner(root, config, tree, "inventory") as runner:
        args = ("--collect-only", "-q", *(f"./{f}" for f in files))
        result, data = session.run_nodes(runner, "inventory", args)
    if data is None or not data.get("finished"):
        raise AgentgateError(
            f"cannot collect the merge-base's tests (pytest exited {result.exit_code}): "
            + " | ".join(result.output_tail[-3:]), exit_code=70)
    collected = data.get("collected") or []
    return tuple(sorted({str(n) for n in collected}))


def _cache_path(root: Path, base: str, files: tuple[str, ...]) -> Path:
    tree = gitio.resolve(root, base, what="merge-base", peel="tree")
    key = hashlib.sha256("\0".join((tree, *files)).encode("utf-8", "surrogateescape"))
    return gitio.state_dir(root) / "inventory" / f"{key.hexdigest()[:32]}.json"


def _read(path: Path, files: tuple[str, ...]) -> Inventory | None:
    """A cache entry, or None when there is none or it is not ours (a cache is rebuilt)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT or (
            data.get("files") != list(files)):
        return None
    return Inventory(files, tuple(str(n) for n in data.get("nodeids", ())))


def _write(path: Path, found: Inventory) -> None:
    data = {"format": _FORMAT, "files": list(found.files), "nodeids": list(found.nodeids)}
    tamper.write(path, json.dumps(data).encode("utf-8"))
