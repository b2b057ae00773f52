"""What changed between a witness's revision W and the head, in the witness's terms.

Changes in W...HEAD count, not only base...HEAD: a function changed on main after the
witness was recorded is as unknown to the witness as one the patch changed. Python files
are compared block by block (``blocks.changed``); any other file counts as a whole.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from agentgate.core.config import PYTEST_CONFIG_FILES, Config, pytest_tables_from_texts
from agentgate.core.errors import ConfigError
from agentgate.core.model import ADDED, COPIED, DELETED, RENAMED, Change
from agentgate.git import gitio
from agentgate.witness import ambient, blocks
from agentgate.witness.blocks import DIR, MODULE

TEST_FILE_PATTERNS = ("test_*.py", "*_test.py")  # pytest's default python_files
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Patch:
    changed: dict[str, frozenset[str]]  # path -> changed block names; MODULE = all of it
    conftest_dirs: tuple[str, ...]  # folders whose conftest.py changed ("." = the root)
    test_files: dict[str, str]  # changed test files: "added", "deleted", "module", "blocks"
    new_tests: dict[str, tuple[str, ...]]  # test file -> test names at head (module changes)
    pytest_config: bool
    ambient: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())


def is_test_file(path: str, config: Config) -> bool:
    base = posixpath.basename(path)
    if not any(fnmatch(base, pattern) for pattern in TEST_FILE_PATTERNS):
        return False
    return any(t == "." or path == t or path.startswith(t + "/") for t in config.tests)


def compute(root: Path, old: str, new: str, config: Config, witnessed: set[str]) -> Patch:
    changes = gitio.diff_changes(root, old, new)
    wanted = {b for c in changes for b in (c.old_blob, c.new_blob) if b and _needs_text(c)}
    texts = gitio.cat_blobs(root, sorted(wanted))
    changed: dict[str, set[str]] = {}
    for change in changes:
        _record(change, texts, changed, witnessed)
    return Patch(
        changed={p: frozenset(n) for p, n in changed.items()},
        conftest_dirs=tuple(sorted({_dir(p) for c in changes for p in c.paths
                                    if posixpath.basename(p) == "conftest.py"})),
        test_files=_test_files(changes, config, changed),
        new_tests=_new_tests(changes, texts, config, changed),
        pytest_config=_pytest_config_changed(changes, texts),
        ambient=tuple(ambient.patch_drift(_text_pairs(changes, texts), config.ambient)),
    )


def _needs_text(change: Change) -> bool:
    return any(ambient.relevant(p) for p in change.paths)


def _text(texts: dict[str, bytes], blob: str | None) -> bytes | None:
    return texts.get(blob) if blob else None


def _record(
    change: Change, texts: dict[str, bytes], changed: dict[str, set[str]], witnessed: set[str]
) -> None:
    whole = change.status in (ADDED, DELETED, RENAMED, COPIED) or not change.path.endswith(".py")
    if whole:
        names = frozenset({MODULE})
    else:
        names = blocks.changed(_text(texts, change.old_blob), _text(texts, change.new_blob))
    for path in change.paths:
        changed.setdefault(path, set()).update(names or {MODULE})
    if change.status in (ADDED, DELETED, RENAMED, COPIED):
        for path in change.paths:
            changed.setdefault(_dir(path), set()).add(DIR)  # a listing of the folder changed
            if posixpath.basename(path) == "__init__.py":
                # A package appeared or went away: every module under it imports differently.
                folder = _dir(path)
                for other in witnessed:
                    if folder == "." or other.startswith(folder + "/"):
                        changed.setdefault(other, set()).add(MODULE)


def _dir(path: str) -> str:
    return posixpath.dirname(path) or "."


def _test_files(
    changes: list[Change], config: Config, changed: dict[str, set[str]]
) -> dict[str, str]:
    kinds: dict[str, str] = {}
    for change in changes:
        for path in change.paths:
            if not is_test_file(path, config):
                continue
            if change.status == DELETED or (change.status == RENAMED and path != change.path):
                kinds[path] = "deleted"
            elif change.status in (ADDED, RENAMED, COPIED):
                kinds[path] = "added"
            else:
                kinds[path] = "module" if MODULE in changed.get(path, ()) else "blocks"
    return kinds


def _new_tests(
    changes: list[Change], texts: dict[str, bytes], config: Config, changed: dict[str, set[str]]
) -> dict[str, tuple[str, ...]]:
    """Test names at head of each test file whose module level changed (new tests live there:
    adding a function changes the module block)."""
    found: dict[str, tuple[str, ...]] = {}
    for change in changes:
        if change.is_deletion or not is_test_file(change.path, config):
            continue
        if MODULE in changed.get(change.path, ()):
            found[change.path] = test_names(_text(texts, change.new_blob))
    return found


def test_names(source: bytes | None) -> tuple[str, ...]:
    """``name`` and ``Class::name`` of the tests pytest collects by default from a file."""
    try:
        tree = ast.parse(source or b"")
    except (SyntaxError, ValueError):
        return ()
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, _FUNCS) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names.extend(
                f"{node.name}::{m.name}" for m in node.body
                if isinstance(m, _FUNCS) and m.name.startswith("test")
            )
    return tuple(names)


def _pytest_config_changed(changes: list[Change], texts: dict[str, bytes]) -> bool:
    for change in changes:
        for path in change.paths:
            if path not in PYTEST_CONFIG_FILES:
                continue
            old = _decoded(_text(texts, change.old_blob))
            new = _decoded(_text(texts, change.new_blob))
            try:
                if pytest_tables_from_texts({path: old}) != pytest_tables_from_texts({path: new}):
                    return True
            except ConfigError:
                return True
    return False


def _decoded(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="surrogateescape")


def _text_pairs(
    changes: list[Change], texts: dict[str, bytes]
) -> dict[str, tuple[str | None, str | None]]:
    pairs = {}
    for change in changes:
        if _needs_text(change):
            old = _decoded(_text(texts, change.old_blob))
            pairs[change.path] = (old, _decoded(_text(texts, change.new_blob)))
    return pairs
