"""What changed between a witness's revision W and the head, in the witness's terms.

Changes in W...HEAD count, not only base...HEAD: a function changed on main after the
witness was recorded is as unknown to the witness as one the patch changed. Python files
are compared block by block (``blocks.changed``); any other file counts as a whole.
Which changed files are test files is ``core.paths``'s one rule, with pytest's
``python_files`` as the head's configuration has them (the planner reads the same).
"""

from __future__ import annotations

import ast
import posixpath
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentgate.core import pysource
from agentgate.core.config import (
    PYTEST_CONFIG_FILES,
    Config,
    pytest_python_files,
    pytest_tables_from_texts,
)
from agentgate.core.errors import ConfigError
from agentgate.core.model import ADDED, COPIED, DELETED, RENAMED, Change
from agentgate.core.paths import TestFiles, under
from agentgate.git import gitio
from agentgate.witness import ambient, analysed, blocks, rebind
from agentgate.witness.blocks import DIR, MISSING, MODULE, PACKAGING
from agentgate.witness.rebind import REBOUND, Rebound, Resolver
from agentgate.witness.syntax import Import

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# What an import can load from a file (``local.cpython-311-x86_64-linux-gnu.so`` included).
_MODULE_SUFFIXES = (".py", ".pyw", ".pyc", ".so", ".pyd")


@dataclass(frozen=True)
class Patch:
    changed: dict[str, frozenset[str]]  # path -> changed block names; MODULE = all of it
    conftest_dirs: tuple[str, ...]  # folders whose conftest.py changed ("." = the root)
    test_files: dict[str, str]  # changed test files: "added", "deleted", "module", "blocks"
    new_tests: dict[str, tuple[str, ...]]  # test file -> test names at head (module changes)
    pytest_config: bool
    ambient: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    appeared: dict[str, str] = field(default_factory=dict)  # MISSING path -> the file added
    # Modules whose module level changed only by binding names: who reads them (``rebind``).
    rebound: Rebound = field(default_factory=Rebound)
    # Changed conftests whose change can act on tests outside their folder (``_reaches_out``).
    conftest_everywhere: tuple[str, ...] = ()


def compute(
    root: Path, old: str, new: str, config: Config, witnessed: set[str],
    *, imports: Mapping[str, frozenset[tuple[str, str]]] | None = None,
    reach: Callable[[set[str]], set[str]] | None = None,
    quiet_import: Callable[[str], bool] = lambda _path: False,
    unwatched: frozenset[str] | None = None,
    top_names: frozenset[str] | None = None,
) -> Patch:
    """What changed in old...new, for a witness whose units name the paths ``witnessed``;
    ``imports[module]``: the functions the recording saw run while that module was imported;
    ``reach(paths)``: the files whose code the tests and nodes that used those modules ran
    (default: every witnessed one); ``quiet_import(path)``: the recording saw no repository
    function run while that module was imported; ``unwatched``: the modules whose attribute
    reads the recording did not see (None: it watched none, and ``rebind`` is not used);
    ``top_names``: the top-level names the recording saw repository modules imported under
    (None: not recorded)."""
    changes = gitio.diff_changes(root, old, new)
    wanted = {b for c in changes for b in (c.old_blob, c.new_blob) if b and _needs_text(c)}
    keys = _config_keys(new)  # in the same batch as the blobs: no extra git process
    folders = _folder_keys(changes, old, new)
    texts = gitio.cat_blobs(root, sorted(wanted | keys.keys() | folders))
    tests = _test_rule(config, texts, keys)
    changed: dict[str, set[str]] = {}
    for change in changes:
        _record(change, texts, changed, witnessed)
    if any(_metadata_folder(p) for c in changes for p in c.paths):
        # Installed metadata committed to the tree (``app.dist-info/entry_points.txt``): what
        # ``importlib.metadata`` finds, which the recording charges to the packaging files.
        for name in PACKAGING:
            changed.setdefault(name, set()).add(MODULE)
    rebound = Rebound() if unwatched is None else _rebind(
        root, old, _Changed(changes, texts, tests, changed), reach or (lambda _paths: witnessed),
        imports or {}, quiet_import, unwatched, witnessed, top_names)
    _imports_reached(_Changed(changes, texts, tests, changed), witnessed, rebound)
    _listings(changes, texts.keys() & folders, changed, old=old, new=new)
    appeared = _appeared(changes)
    for stem in appeared:
        changed.setdefault(stem, set()).add(MISSING)
    return Patch(
        changed={p: frozenset(n) for p, n in changed.items()},
        conftest_dirs=tuple(sorted({_dir(p) for c in changes for p in c.paths
                                    if posixpath.basename(p) == "conftest.py"})),
        conftest_everywhere=tuple(sorted(
            c.path for c in changes if posixpath.basename(c.path) == "conftest.py"
            and _reaches_out(_text(texts, c.old_blob), _text(texts, c.new_blob)))),
        test_files=_test_files(changes, tests, changed),
        new_tests=_new_tests(changes, texts, tests, changed),
        pytest_config=_pytest_config_changed(changes, texts),
        ambient=tuple(ambient.patch_drift(_text_pairs(changes, texts), config.ambient)),
        appeared=appeared,
        rebound=rebound,
    )


@dataclass(frozen=True)
class _Changed:
    changes: list[Change]
    texts: dict[str, bytes]
    tests: TestFiles
    changed: dict[str, set[str]]

    def modules(self) -> Iterator[tuple[str, bytes, bytes]]:
        """(path, W's text, head's text) of each modified module that is neither a test
        file nor a conftest (a test added or a fixture changed is their own business)."""
        for change in self.changes:
            path = change.path
            if (change.status in (ADDED, DELETED, RENAMED, COPIED) or not path.endswith(".py")
                    or self.tests.match(path) or posixpath.basename(path) == "conftest.py"):
                continue
            old_text = _text(self.texts, change.old_blob)
            new_text = _text(self.texts, change.new_blob)
            if old_text is not None and new_text is not None:
                yield path, old_text, new_text


def _rebind(
    root: Path, old: str, diff: _Changed, reach: Callable[[set[str]], set[str]],
    imports: Mapping[str, frozenset[tuple[str, str]]], quiet_import: Callable[[str], bool],
    unwatched: frozenset[str], witnessed: set[str], top_names: frozenset[str] | None,
) -> Rebound:
    """A module whose module level changed only by binding names, or a changed function
    that only computes and ran at import, impacts the tests that run code reading the names
    they rebind, not every test that used the module (``rebind``)."""
    changed = diff.changed
    pairs: dict[str, tuple[bytes, bytes]] = {}
    funcs: dict[str, tuple[bytes, frozenset[str]]] = {}
    for path, old_text, new_text in diff.modules():
        if path in unwatched:
            continue  # what read its names is not known: the module rule
        if changed.get(path) == {MODULE}:
            pairs[path] = (old_text, new_text)
        elif MODULE not in changed.get(path, ()):
            funcs[path] = (new_text, frozenset(changed.get(path, ())))
    ran = {m: units for m, units in imports.items()
           if any(f in funcs.get(p, (b"", frozenset()))[1] for p, f in units)}
    if not pairs and not ran:
        return Rebound()
    # Only code the module rule's tests ran can be a reader that counts (``impact``).
    involved = pairs.keys() | ran.keys() | funcs.keys() | rebind.store_targets(pairs, witnessed)
    modules = sorted(p for p in reach(set(involved)) | involved if p.endswith(".py"))
    found = gitio.cat_blobs(root, [f"{old}:{p}" for p in modules if "\n" not in p])
    universe = {p: found[f"{old}:{p}"] for p in modules if f"{old}:{p}" in found}
    kept = analysed.Analysed(root)
    outcome = rebind.judge(pairs, universe, quiet_import=quiet_import,
                           at_import=rebind.AtImport(ran, funcs), unwatched=unwatched,
                           known=witnessed, top_names=top_names, keeper=kept.get)
    kept.save()
    for path in pairs:
        if path not in outcome.fallback:
            changed[path] = set(outcome.blocks.get(path, frozenset())) | {REBOUND}
    for path in outcome.fallback - pairs.keys():
        changed.setdefault(path, set()).add(MODULE)  # a module its names reached, not binding
    return outcome.rebound


def _config_keys(rev: str) -> dict[str, str]:
    """``rev:name`` -> name of each root pytest configuration file, for ``git cat-file``."""
    return {f"{rev}:{name}": name for name in PYTEST_CONFIG_FILES}


def _test_rule(config: Config, texts: dict[str, bytes], keys: dict[str, str]) -> TestFiles:
    """The test-file rule with the head's ``python_files``, as the planner applies it."""
    heads = {name: _decoded(texts.get(key)) for key, name in keys.items()}
    return TestFiles(config, pytest_python_files(heads))


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
        if (source := compiled_source(path)) is not None:
            # Bytecode of the tree may run in place of its source (an ``unchecked-hash``
            # .pyc is never compared with it; red-team): as a change to all of that module.
            changed.setdefault(source, set()).add(MODULE)
    if change.status in (ADDED, DELETED, RENAMED, COPIED):
        for path in change.paths:
            if posixpath.basename(path) == "__init__.py":
                # A package appeared or went away: every module under it imports differently.
                folder = _dir(path)
                for other in witnessed:
                    if under(other, folder):
                        changed.setdefault(other, set()).add(MODULE)


def _imports_reached(diff: _Changed, witnessed: set[str], rebound: Rebound) -> None:
    """A module whose module level changed with an effect (not binding names only: a call,
    a store into another module) -- or that the patch added -- reaches, when it is
    imported, the modules it imports: that is where its effect can land (``calc.mul =
    ...``, ``calc.configure(fast=True)``). In one pytest process every test file is
    imported at collection, so the tests that use those modules run too, not only the
    module's own users (red-team round 4: an added ``app/hotfix.py`` imported by
    ``app/other.py`` replaced ``app.calc.mul``, and only ``app.other``'s test ran). Followed
    through the added modules it imports. A change the name analysis judged (``rebind``:
    the names it binds or stores, here or in another module) is judged so already."""
    judged = set(rebound.names) | set(rebound.origin.values())
    added = {c.path for c in diff.changes if c.status in (ADDED, COPIED, RENAMED)}
    resolve = Resolver(witnessed | added)
    todo = [c for c in diff.changes if c.status != DELETED and c.path.endswith(".py")
            and MODULE in diff.changed.get(c.path, set()) and not diff.tests.match(c.path)
            and posixpath.basename(c.path) != "conftest.py" and c.path not in judged]
    texts = {c.path: _text(diff.texts, c.new_blob) for c in todo}
    seen: set[str] = set()
    while todo:
        change = todo.pop()
        if change.path in seen:
            continue
        seen.add(change.path)
        for target in _imported(change.path, texts.get(change.path), resolve):
            if target == change.path or diff.tests.match(target):
                continue
            diff.changed.setdefault(target, set()).add(MODULE)
            todo += [c for c in diff.changes if c.path == target and c.path in added]


def _imported(path: str, text: bytes | None, resolve: Resolver) -> set[str]:
    """The known modules a source imports anywhere (a module named ``from pkg import mod``
    counts as ``pkg.mod``)."""
    tree = pysource.parse(text)
    if tree is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.update(resolve(path, Import(alias.name, alias.name, None, 0)))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            for alias in node.names:
                inner = f"{module}.{alias.name}" if module else alias.name
                # ``from app import calc``: the module ``app.calc`` if there is one, else
                # the name is ``app``'s (its parent package is no target of its own).
                got = resolve(path, Import(inner, inner, None, node.level)) if (
                    alias.name != "*") else []
                found.update(got or resolve(path, Import(module, module, None, node.level)))
    return found


def _metadata_folder(path: str) -> bool:
    return any(part.lower().endswith((".dist-info", ".egg-info"))
               for part in path.split("/"))


def compiled_source(path: str) -> str | None:
    """The source file a ``.pyc`` may stand for: ``pkg/__pycache__/mod.cpython-311.pyc`` and
    a sourceless ``pkg/mod.pyc`` -> ``pkg/mod.py``; None for anything else."""
    if not path.endswith(".pyc"):
        return None
    folder, name = posixpath.split(path)
    if posixpath.basename(folder) == "__pycache__":
        folder = posixpath.dirname(folder)
        name = name.split(".", 1)[0] + ".pyc"
    return posixpath.join(folder, name[:-len(".pyc")] + ".py")


# Hooks pytest calls through a node's own hook proxy: only the conftests at or above the
# node's folder take part. Every other hook a conftest defines is called for the whole
# session once the conftest is loaded (``pytest_collection_modifyitems`` sees every item).
_FOLDER_HOOKS = frozenset({
    "pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call",
    "pytest_runtest_teardown", "pytest_runtest_makereport", "pytest_runtest_logstart",
    "pytest_runtest_logfinish", "pytest_pyfunc_call", "pytest_generate_tests",
    "pytest_collect_file", "pytest_collect_directory", "pytest_pycollect_makeitem",
    "pytest_pycollect_makemodule", "pytest_ignore_collect", "pytest_fixture_setup",
    "pytest_fixture_post_finalizer",
})


def _reaches_out(old: bytes | None, new: bytes | None) -> bool:
    """Whether a conftest's change can act on tests outside its folder. Its fixtures (autouse
    ones too) serve the tests under it only; anything else it runs when pytest loads it (its
    module-level code, decorators, a session-wide hook, ``pytest_plugins``) can reach every
    test (red-team, helper-9: a ``pytest_collection_modifyitems`` in ``tests/a/conftest.py``
    replaced a test of ``tests/b``). Local only when both versions are nothing but imports
    (the same ones), a docstring and plain or fixture functions that are not session hooks."""
    shapes = [_conftest_shape(text) for text in (old, new)]
    return any(shape is None for shape in shapes) or shapes[0] != shapes[1]


def _conftest_shape(text: bytes | None) -> tuple[str, ...] | None:
    """What of a conftest runs when pytest loads it, beyond defining fixtures, helpers and
    folder hooks (its imports), or None when it runs more than that, or cannot be read."""
    if text is None:
        return ()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    shape = []
    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Import | ast.ImportFrom):
            if not _harmless_import(node):
                shape.append(ast.dump(node))
        elif not (isinstance(node, _FUNCS) and _local_function(node)):
            return None
    return tuple(shape)


def _local_function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A fixture, a helper or a folder hook whose definition calls nothing: its decorators
    are pytest's (with arguments that call nothing) and its defaults call nothing."""
    if node.name.startswith("pytest_") and node.name not in _FOLDER_HOOKS:
        return False
    for decorator in node.decorator_list:
        target = decorator
        if isinstance(decorator, ast.Call):
            target = decorator.func
            if any(_calls(a) for a in [*decorator.args, *decorator.keywords]):
                return False
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name not in ("fixture", "hookimpl"):
            return False
    return not _calls(node.args)


def _harmless_import(node: ast.Import | ast.ImportFrom) -> bool:
    """pytest's or the standard library's: importing it runs nothing of the project."""
    if isinstance(node, ast.ImportFrom):
        names = [node.module or ""] if node.level == 0 else [""]
    else:
        names = [a.name for a in node.names]
    return all(n.split(".")[0] in _HARMLESS for n in names)


_HARMLESS = frozenset({"pytest", "_pytest", *sys.stdlib_module_names}) - {"__main__"}


def _calls(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call | ast.Lambda) for n in ast.walk(node))


def _dir(path: str) -> str:
    return posixpath.dirname(path) or "."


def _moved(changes: list[Change]) -> list[tuple[str, bool]]:
    """Every path that appeared (True) or went away (False)."""
    found = []
    for change in changes:
        if change.status in (ADDED, RENAMED, COPIED):
            found.append((change.path, True))
        if change.status == DELETED:
            found.append((change.path, False))
        elif change.status == RENAMED and change.old_path:
            found.append((change.old_path, False))
    return found


def _folders(path: str) -> list[str]:
    """The folders above ``path``, innermost first, the root (".") last."""
    found = []
    while path not in (".", ""):
        path = _dir(path)
        found.append(path)
    return found


def _folder_keys(changes: list[Change], old: str, new: str) -> set[str]:
    """``rev:folder`` for every folder above a path that appeared (at ``old``) or went away
    (at ``new``): one ``cat-file`` batch tells which folders are new or gone."""
    return {
        f"{old if came else new}:{folder}"
        for path, came in _moved(changes) for folder in _folders(path)[:-1]
        if "\n" not in folder
    }


def _listings(
    changes: list[Change], present: set[str], changed: dict[str, set[str]], *, old: str, new: str
) -> None:
    """A file that appears or goes away changes its folder's listing, and the listing of each
    folder above it up to the first one that existed on the other side (issue 12: a plugin
    in a new subfolder of a globbed folder)."""
    for path, came in _moved(changes):
        rev = old if came else new
        for folder in _folders(path):
            changed.setdefault(folder, set()).add(DIR)
            if folder == "." or f"{rev}:{folder}" in present:
                break


def _appeared(changes: list[Change]) -> dict[str, str]:
    """Where an import that found nothing would now find something, and the file it would
    find: a module (``app/local`` for ``app/local.py``), a package (``app/local`` for
    ``app/local/__init__.py``) or a namespace package (every folder above any new file)."""
    found: dict[str, str] = {}
    for path, came in sorted(_moved(changes)):
        if not came:
            continue
        stems = _folders(path)[:-1]
        name = posixpath.basename(path)
        if name.endswith(_MODULE_SUFFIXES):
            stems.insert(0, posixpath.join(posixpath.dirname(path), name.split(".", 1)[0]))
        for stem in stems:
            found.setdefault(stem, path)
    return found


def _test_files(
    changes: list[Change], tests: TestFiles, changed: dict[str, set[str]]
) -> dict[str, str]:
    kinds: dict[str, str] = {}
    for change in changes:
        for path in change.paths:
            if not tests.match(path):
                continue
            if change.status == DELETED or (change.status == RENAMED and path != change.path):
                kinds[path] = "deleted"
            elif change.status in (ADDED, RENAMED, COPIED):
                kinds[path] = "added"
            else:
                kinds[path] = "module" if MODULE in changed.get(path, ()) else "blocks"
    return kinds


def _new_tests(
    changes: list[Change], texts: dict[str, bytes], tests: TestFiles, changed: dict[str, set[str]]
) -> dict[str, tuple[str, ...]]:
    """Test names at head of each test file whose module level changed (new tests live there:
    adding a function changes the module block)."""
    found: dict[str, tuple[str, ...]] = {}
    for change in changes:
        if change.is_deletion or not tests.match(change.path):
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
