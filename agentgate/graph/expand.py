"""Edges that depend on which modules exist, and the symlinks the graph cannot follow.

A star import reaches the package's submodules, and a test's bare ``import helpers`` means
whatever pytest's sys.path holds -- and whatever folders the file, or any test or conftest,
put on it (graph.scan_syspath): these change when a module appears or disappears, or such a
folder does, so the builder recomputes them for every path that has them when either moves.
"""

from __future__ import annotations

import posixpath
from functools import cached_property
from typing import TYPE_CHECKING

from agentgate.core.paths import under
from agentgate.graph.resolve import DESCENDANTS, pytest_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from agentgate.graph.resolve import Roots
    from agentgate.graph.types import Listing


class Expansions:
    """Edges that depend on which modules exist: star imports and pytest's sys.path."""

    def __init__(self, rooted: Roots, names: Mapping[str, str], modules: Mapping[str, str],
                 shared: frozenset[str] = frozenset()) -> None:
        self.rooted, self.names, self.modules = rooted, names, modules
        self.shared = shared  # folders tests and conftests put on sys.path

    @cached_property
    def children(self) -> dict[str, list[str]]:
        children: dict[str, list[str]] = {}
        for name in self.modules:
            children.setdefault(name.rpartition(".")[0], []).append(name)
        return children

    @cached_property
    def aliases(self) -> dict[str, list[str]]:
        """What a bare ``import helpers`` in a test can mean: pytest puts each test's first
        folder without ``__init__.py`` on sys.path, so any test may see any of them."""
        packages = frozenset(
            p.rpartition("/")[0] for p in self.modules.values() if p.endswith("__init__.py")
        )
        aliases: dict[str, list[str]] = {}
        for path, name in self.names.items():
            if self.rooted.is_test(path):
                alias = pytest_name(path, packages)
                if alias and alias != name:
                    aliases.setdefault(alias, []).append(name)
        return aliases

    def of(self, path: str, module: str, probes: Iterable[str], stars: Iterable[str],
           folders: Iterable[str] = ()) -> set[str]:
        found: set[str] = set()
        for base in stars:
            if base.endswith(f".{DESCENDANTS}"):
                prefix = base[: -len(DESCENDANTS) - 1]
                found.update(n for n in self.modules if n.startswith(prefix))
            else:
                found.update(self.children.get(base, ()))
        test = self.rooted.is_test(path)
        aliases = self.aliases if probes and test else {}
        for probe in probes if aliases else ():
            for real in aliases.get(probe, ()):
                parts = real.split(".")
                found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        searched = set(folders) | (self.shared if test else set())
        found.update(self._on_sys_path(probes, searched))
        found.discard(module)
        return found

    def _on_sys_path(self, probes: Iterable[str], folders: set[str]) -> set[str]:
        """The modules of the tree an absolute import finds in a folder put on sys.path
        (graph.scan_syspath): ``import helper_mod`` with tests/helpers on it is
        tests/helpers/helper_mod.py, whatever the graph names that file."""
        found: set[str] = set()
        for probe in probes if folders else ():
            parts = probe.split(".")
            for i in range(1, len(parts) + 1):
                stem = "/".join(parts[:i])
                for folder in folders:
                    base = stem if folder == "." else f"{folder}/{stem}"
                    found.update(self.names[p] for p in (f"{base}.py", f"{base}/__init__.py")
                                 if p in self.names)
        return found


def link_escalations(tree: Listing, links: Mapping[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """(path, detail) of symlinks that lead to Python code or out of the tree: the graph
    does not follow them, so what is imported through them is invisible."""
    found: list[tuple[str, str]] = []
    if not links:
        return found
    folders = {posixpath.dirname(p) for p in tree.python}
    for path, (_, target) in sorted(links.items()):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        outside = target.startswith("/") or joined == ".." or joined.startswith("../")
        # A link to "." (or up to it) leads into the top-level code too: "." is everything.
        into_code = joined in tree.python or any(under(f, joined) for f in folders)
        if outside or into_code or path.endswith(".py"):
            found.append((path, f"symlink to {target!r}: the graph does not follow links"))
    return found
