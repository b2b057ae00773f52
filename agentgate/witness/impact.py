"""Which of a witness's nodes and tests a patch reaches, and why (the skip gate's core).

A unit (``path``, block) is hit when the patch changed that block, the module level of that
file, a file read as data, a folder listed or a module that was missing; failing that, when a
block reads a name a binding-only module-level change rebound (``rebind``) -- counted only
for the nodes and tests the module rule would reach from that module (its users), which the
name reads narrow. A node hit taints every node that depends on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agentgate.witness import depgraph as graph
from agentgate.witness.blocks import DIR, MISSING, MODULE, READ, WHOLE
from agentgate.witness.depgraph import TestEntry, Unit, Witness
from agentgate.witness.patch import Patch
from agentgate.witness.rebind import Rebound


def hit(
    units: frozenset[Unit], changed: dict[str, frozenset[str]], appeared: dict[str, str],
    rebound: Rebound | None = None,
) -> str | None:
    """The first changed unit among ``units``, as ``path`` or ``path::block``; a folder's
    listing or an absent module (``appeared``: where each added file can be imported from);
    else the first block that reads a name a module-level change rebound (``rebind``)."""
    ordered = sorted(units)
    found = _changed_unit(ordered, changed, appeared)
    if found is None and rebound:
        # The code's own reads first (they say which function); then what was seen read at
        # run time (``watch``: a library's reads, names computed).
        candidates = [u for u in ordered if graph.is_block(u[1])]
        candidates += [u for u in ordered if u[1].startswith(READ)]
        found = next((why for path, name in candidates
                      if (why := rebound.hit(path, name)) is not None), None)
    return found


def _changed_unit(
    ordered: list[Unit], changed: dict[str, frozenset[str]], appeared: dict[str, str]
) -> str | None:
    for path, name in ordered:
        names = changed.get(path)
        if not names:
            continue
        if name in (DIR, MISSING):
            if name in names:
                return f"{path}/ (listing)" if name == DIR else (
                    f"import-appeared {appeared.get(path, path)}")
        elif MODULE in names:
            return path if name in (MODULE, WHOLE) else f"{path} (module level)"
        elif name == WHOLE and names - {DIR, MISSING}:
            return path
        elif name in names:
            return f"{path}::{name}"
    return None


def rebound_users(nodes: dict[str, graph.Node], patch: Patch) -> set[str]:
    """The nodes the module rule would reach from the modules whose names changed (and
    those paths themselves): a name read counts only there, so a block reading ``.get`` of
    some other module is no reader of a changed ``get``."""
    return _users(nodes, patch.rebound.names.keys())


def _users(nodes: dict[str, graph.Node], paths: Iterable[str]) -> set[str]:
    found = set(paths)
    seeds = {graph.file_key(p): p for p in found if graph.file_key(p) in nodes}
    return set(graph.spread(nodes, seeds)) | found


def reach(witness: Witness) -> Callable[[set[str]], set[str]]:
    """For ``patch.compute``: the files whose code the nodes and tests that used the given
    modules ran (the only code whose reads can count)."""
    def files(paths: set[str]) -> set[str]:
        users = _users(witness.nodes, paths)
        found = {k[len("file:"):] for k in users if k.startswith("file:")}
        found |= {p for k in users if k in witness.nodes for p, _ in witness.nodes[k].units}
        for test in witness.tests.values():
            if uses(test, users):
                found.add(test.file)
                found |= {p for p, _ in test.units}
        return found
    return files


def uses(test: TestEntry, users: set[str]) -> bool:
    """Whether the module rule reaches the test from those modules."""
    return any(d in users for d in test.deps) or any(p in users for p, _ in test.units)


def reached(nodes: dict[str, graph.Node], patch: Patch, users: set[str]) -> dict[str, str]:
    """Every node that depends, directly or not, on what the patch changed, with why."""
    seeds = {}
    at_import = patch.rebound.at_import
    for key, node in nodes.items():
        # A changed pure function run at this module's import counts through the names
        # its callers there rebind (``rebind.import_callers``), not as the module's change.
        units = node.units - at_import.get(key[len("file:"):], frozenset()) if (
            key.startswith("file:")) else node.units
        why = hit(units, patch.changed, patch.appeared,
                  patch.rebound if key in users else None)
        if why:
            seeds[key] = why
    return graph.spread(nodes, seeds)


def import_checks(witness: Witness, patch: Patch, running: set[str]) -> dict[str, str]:
    """For each module whose own module level changed by binding names only, with a
    statement that may raise, and that no running test uses: its quickest user, to run
    anyway. ``X = TABLE["gone"]`` raises when the module is imported, which fails every
    test importing it, whether or not it reads a changed name."""
    chosen: dict[str, str] = {}
    for path in sorted(patch.rebound.sources):
        users = _users(witness.nodes, [path])
        tests = [t for t in witness.tests.values() if uses(t, users)]
        if not tests or any(t.nodeid in running or t.nodeid in chosen for t in tests):
            continue
        quickest = min(tests, key=lambda t: (t.duration, t.nodeid))
        chosen[quickest.nodeid] = (f"{path} (module level changed: one test that imports "
                                   "it runs, as an import that fails fails them all)")
    return chosen
