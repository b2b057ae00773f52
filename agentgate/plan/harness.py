"""The test harness: every file that decides what pytest collects, runs and reports (pure).

A patch that changes the harness can change outcomes without touching a test or the code
(issue 11): a conftest hookwrapper that rewrites reports, a ``pytest_collection_modifyitems``
below the root, a ``pytest_plugins`` line in a new test file naming an app module, a
``pytest.toml`` at any depth, a ``sitecustomize.py`` or ``.pth`` file in a source root that is
on ``sys.path``, a new ``pytest11`` entry point. When the range changes any of these, the
selected tests also run under the base's harness (``base_harness``) on head's code.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentgate.core import pysource
from agentgate.core.config import (
    PYTEST_CONFIG_FILES,
    Config,
    option_words,
    pytest_option,
    pytest_tables_from_texts,
)
from agentgate.core.errors import ConfigError
from agentgate.core.model import Change
from agentgate.gate import trust
from agentgate.plan.markers import assigned_names

CONFTEST = "conftest.py"
STARTUP_FILES = ("sitecustomize.py", "usercustomize.py")
ENTRY_POINT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
_HARNESS_NAMES = frozenset((CONFTEST, *PYTEST_CONFIG_FILES))


@dataclass(frozen=True)
class HarnessChange:
    path: str
    why: str  # "conftest", "pytest configuration", "start-up file", "pytest_plugins", ...


def is_harness_file(path: str, config: Config) -> bool:
    """A conftest or pytest configuration file at any depth, or a start-up file directly in
    a source root (Python runs it at start-up when that root is on ``sys.path``)."""
    name = posixpath.basename(path)
    if name in _HARNESS_NAMES:
        return True
    return _startup(path, config) or _metadata(path, config)


_STARTUP_MODULES = frozenset(name.removesuffix(".py") for name in STARTUP_FILES)
# What makes a module importable from a folder, by Python's own finders.
_MODULE_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".pyd")


def _startup(path: str, config: Config) -> bool:
    """A ``.pth`` file directly in a folder on ``sys.path``, or anything that makes the
    module ``sitecustomize``/``usercustomize`` importable from one: a source file, a
    sourceless ``.pyc``, an extension module, a package folder, its ``__pycache__`` (red-team
    round 4: a ``sitecustomize/`` package and a ``sitecustomize.pyc`` passed for code)."""
    on_path = {*config.sources, *config.tests}
    parts = path.split("/")
    for i in range(len(parts)):
        if ("/".join(parts[:i]) or ".") not in on_path:
            continue
        rest = parts[i:]
        first = rest[0]
        if len(rest) == 1 and (first.endswith(".pth") or (
                first.endswith(_MODULE_SUFFIXES)
                and first.split(".", 1)[0] in _STARTUP_MODULES)):
            return True
        if len(rest) > 1 and first in _STARTUP_MODULES:
            return True  # a package of that name
        if len(rest) == 2 and first == "__pycache__" and rest[1].endswith(".pyc") and (
                rest[1].split(".", 1)[0] in _STARTUP_MODULES):
            return True
    return False


def _metadata(path: str, config: Config) -> bool:
    """A file of an installed distribution's metadata folder (``NAME.dist-info/``,
    ``NAME.egg-info/``) directly in a folder on the path: ``importlib.metadata`` finds it
    there, and pytest loads the ``pytest11`` entry points it declares (red-team: a committed
    ``src/x-1.0.dist-info/entry_points.txt`` loaded a plugin that xfailed every test)."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part.endswith((".dist-info", ".egg-info")):
            return ("/".join(parts[:i]) or ".") in {".", *config.sources, *config.tests}
    return False


def harness_paths(paths: Iterable[str], config: Config) -> list[str]:
    """The harness files among a revision's paths."""
    return sorted(p for p in paths if is_harness_file(p, config))


def harness_changes(
    changes: Iterable[Change], config: Config, texts: Mapping[str, tuple[str | None, str | None]]
) -> list[HarnessChange]:
    """The range's changes to the harness. ``texts`` holds (base, head) texts of the changed
    Python files and of the files that can declare entry points."""
    found: list[HarnessChange] = []
    for change in changes:
        for path in change.paths:
            why = _why(path, config, texts.get(path, (None, None)))
            if why:
                found.append(HarnessChange(path, why))
    return found


def _why(path: str, config: Config, texts: tuple[str | None, str | None]) -> str | None:
    name = posixpath.basename(path)
    if name == CONFTEST:
        return "conftest"
    if name in PYTEST_CONFIG_FILES and _pytest_tables(path, texts[0]) != _pytest_tables(
        path, texts[1]
    ):
        return "pytest configuration"
    if _startup(path, config):
        return "start-up file"
    if _metadata(path, config):
        return "installed distribution metadata"
    if name in ENTRY_POINT_FILES and entry_points(name, texts[0]) != entry_points(name, texts[1]):
        return "pytest11 entry point"
    if path.endswith(".py") and plugins_declared(texts[0]) != plugins_declared(texts[1]):
        return "pytest_plugins"
    return None


def _pytest_tables(path: str, text: str | None) -> object:
    """A file's pytest table, parsed (a shared file's other tables are not the harness)."""
    try:
        return pytest_tables_from_texts({path: text}).get(path)
    except ConfigError:
        return ("unparsable", text)


def plugins_declared(text: str | None) -> tuple[str, ...] | None:
    """What a module's ``pytest_plugins`` names; None for none. A module-level assignment
    pytest would read; a value it cannot read statically counts as a change (``("?",)``)."""
    if not text or "pytest_plugins" not in text:
        return None
    tree = pysource.parse(text)
    if tree is None:
        return ("?",)
    for node in tree.body:
        targets = assigned_names(node)
        if "pytest_plugins" in targets:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            return _names(value)
    return None


def plugin_files(names: Iterable[str], paths: Iterable[str], roots: Iterable[str]) -> set[str]:
    """The tree's modules the harness loads as plugins, by the module names pytest is given
    (``pytest_plugins``, ``-p``), found among ``paths`` under each import root (the tree's
    top and the source roots); a package is every module in it. Such a module is harness
    wherever it lives (red-team: a ``pytest_pyfunc_call`` added to the ``app/testing.py`` a
    conftest loads swallowed the failure it was meant to report; round 4: the fixture in
    ``app/testing/fixtures.py`` that ``app/testing/__init__.py`` imports was loosened)."""
    present = sorted(set(paths))
    tops = ["", *(r.strip("/") + "/" for r in roots if r.strip("/") not in ("", "."))]
    found: set[str] = set()
    for name in names:
        if name == "?" or not name.replace(".", "").replace("_", "").isalnum():
            continue
        stem = name.replace(".", "/")
        for top in tops:
            if f"{top}{stem}.py" in present:
                found.add(f"{top}{stem}.py")
            package = f"{top}{stem}/"
            if f"{package}__init__.py" in present:
                found.update(p for p in present if p.startswith(package) and p.endswith(".py"))
    return found


def addopts_plugins(texts: Mapping[str, str | None]) -> list[str]:
    """The modules the pytest configuration's ``addopts`` load with ``-p NAME`` (``no:``
    names unload)."""
    try:
        words = option_words(pytest_option(dict(texts), "addopts"))
    except ConfigError:
        return []
    found = []
    for i, word in enumerate(words):
        if word == "-p" and i + 1 < len(words):
            found.append(words[i + 1])
        elif word.startswith("-p") and len(word) > 2:
            found.append(word[2:].lstrip("="))
    return [n for n in found if not n.startswith("no:")]


def _names(value: ast.expr | None) -> tuple[str, ...]:
    try:
        literal: Any = ast.literal_eval(value) if value is not None else None
    except ValueError:
        return ("?",)
    if isinstance(literal, str):
        return (literal,)
    if isinstance(literal, list | tuple) and all(isinstance(v, str) for v in literal):
        return tuple(literal)
    return ("?",)


def entry_points(name: str, text: str | None) -> object:
    """The ``pytest11`` entry points a packaging file declares (the trust gate's reading);
    ``setup.py`` cannot be read statically, so any mention counts; a file that does not
    parse is its own value, so any edit to it counts."""
    if name == "setup.py":
        return text if text and "pytest11" in text else None
    try:
        return trust.entry_points(name, text)
    except ConfigError:
        return ("unparsable", text)
