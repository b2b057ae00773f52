"""``witness record --incremental``: record again only what a stored witness cannot vouch for.

Meant for CI on each merge to main (issue 12 item 6). The stored witness W closest before the
new revision N is asked what the skip gate would ask it about W...N (``select.classify``):
every test it would skip is *carried* (its stored entry kept), every other one -- impacted,
fixture drift, incomplete, failed when recorded, new (in a test file that changed) -- is
recorded again at N, with the whole suite collected as in a full recording (``plugin``
deselects the carried ones after collection, so collection records the same).

The witness of N is the fresh recording plus the carried tests. A node (a file, a fixture,
collection) the patch W...N reached is taken from the fresh recording only: no carried test
depends on it (the gate would not have skipped such a test), and its stored form describes
W. Any other node is the union of both recordings, the upper bound ``witness merge`` also
takes. Units are block *names* (``blocks``), not line numbers, and a file whose module block
is unchanged has the same blocks in the same order, so a carried test's units in a file
whose other functions changed (and whose lines moved) name the same code at N.

The recording falls back to a full one, with a note, when there is no stored witness at an
ancestor, when that witness is not of the whole suite, or when the interpreter, its
installed packages or the ambient environment differ from the stored witness's: the gate
would run every test then, so every test is recorded again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentgate.core.config import Config
from agentgate.core.model import Result
from agentgate.git import gitio
from agentgate.run import interp
from agentgate.run import progress as run_progress
from agentgate.witness import ambient, impact, select
from agentgate.witness import depgraph as graph
from agentgate.witness import record as recording
from agentgate.witness.depgraph import Node, Witness
from agentgate.witness.patch import Patch, compute
from agentgate.witness.store import Store, commits_between, newest_usable

INFO = "incremental"  # ``Witness.info`` key: {"from": W, "carried": n, "recorded": m}


@dataclass(frozen=True)
class Basis:
    """The stored witness an incremental recording starts from, and what it carries."""

    old: Witness
    ids: frozenset[str]  # node ids carried over, not run again
    tainted: frozenset[str]  # the old witness's nodes the patch W...N reached

    def combine(self, fresh: Witness, collected: frozenset[str]) -> Witness:
        """The witness of N: ``fresh`` plus the carried tests N still collects."""
        kept = {n: self.old.tests[n] for n in sorted(self.ids & collected)}
        nodes = combined_nodes(self.old.nodes, fresh.nodes, self.tainted)
        tests = graph.with_incompleteness(nodes, {**kept, **fresh.tests})
        quiet = set(fresh.info.get(graph.QUIET_IMPORTS, ())) & set(
            self.old.info.get(graph.QUIET_IMPORTS, ()))
        info = {**graph.unmerged(fresh.info),
                **graph.merged_evidence(fresh.info, _carried_leaks(self.old.info, kept)),
                graph.QUIET_IMPORTS: sorted(quiet),
                INFO: {"from": self.old.sha, "carried": len(kept), "recorded": len(fresh.tests)}}
        return replace(fresh, nodes=nodes, tests=tests, info=info)


def _carried_leaks(info: dict[str, Any], kept: Mapping[str, object]) -> dict[str, Any]:
    """The old witness's ``info`` with only the carried tests' state leaks: a test run again
    says afresh what it leaves changed, and so does the new run's collection."""
    found = info.get(graph.STATE_LEAKS)
    if not isinstance(found, list):
        return info
    return {**info, graph.STATE_LEAKS: [e for e in found if str(e).split("\t", 1)[0] in kept]}


def record(
    root: Path, config: Config, *, rev: str | None = None, pytest_args: Sequence[str] = (),
    display: run_progress.Display | None = None,
) -> Result:
    sha = gitio.resolve(root, rev or "HEAD")
    notes: list[str] = []
    basis = find(root, config, sha, notes)
    result = recording.record(root, config, rev=sha, pytest_args=pytest_args, display=display,
                              carry=basis)
    result.notes = [*notes, *result.notes]
    return result


def find(root: Path, config: Config, sha: str, notes: list[str]) -> Basis | None:
    """The basis for recording ``sha`` incrementally, or None (a full recording; why in
    ``notes``)."""
    store = Store.for_repo(root)
    entry, note = (newest_usable(root, store, sha) if store.exists()
                   else (None, "no witness store yet"))
    old = store.load(entry.sha) if entry is not None else None
    if entry is None or old is None:
        notes.append(f"witness record --incremental: {note}; recording the whole suite")
        return None
    why = refusal(root, config, old)
    if why:
        notes.append(f"witness record --incremental: the witness {old.sha[:12]} {why}; "
                     "recording the whole suite")
        return None
    patch = compute(root, old.sha, sha, config, graph.paths(old), imports=graph.import_runs(old),
                    reach=impact.reach(old), quiet_import=graph.quiet_imports(old),
                    unwatched=graph.unwatched(old))
    basis = basis_for(old, patch, config)
    back = commits_between(root, old.sha, sha)
    notes.append(f"witness record --incremental: from the witness of {old.sha[:12]}, {back} "
                 f"commit(s) back: {len(basis.ids)} of its {len(old.tests)} tests carried, "
                 "every other test recorded")
    return basis


def refusal(root: Path, config: Config, old: Witness) -> str | None:
    """Why ``old`` cannot be a basis, or None."""
    if old.info.get(graph.WHOLE_SUITE) is not True:
        return "is not a recording of the whole suite"
    now = ambient.expected(interp.test_env(config, root), config.ambient)
    drift = ambient.env_drift(old.ambient, now)
    if drift:
        return f"was recorded in another ambient environment ({drift[0]})"
    current = recording.env_fingerprint(interp.project_python(root, config))
    if not old.env or current != old.env:
        return "was recorded with another interpreter or other installed packages"
    return None


def basis_for(old: Witness, patch: Patch, config: Config) -> Basis:
    """Carry exactly the tests the gate would skip for W...N. A test file whose module
    level changed (a test added, a parametrization changed) reaches every test in it; one
    whose other tests' bodies changed leaves the rest with the same ids and the same code."""
    decisions = select.classify(old, patch, config=config, drift=patch.ambient)
    carried = frozenset(d.nodeid for d in decisions if d.label == select.SKIP)
    return Basis(old, carried, frozenset(reached(old, patch)))


def reached(old: Witness, patch: Patch) -> dict[str, str]:
    """The nodes of ``old`` that depend, directly or not, on what the patch changed."""
    return impact.reached(old.nodes, patch, impact.rebound_users(old.nodes, patch))


def combined_nodes(
    old: dict[str, Node], fresh: dict[str, Node], tainted: frozenset[str]
) -> dict[str, Node]:
    """Fresh nodes; stored ones the patch did not reach, joined to the fresh form if any."""
    nodes: dict[str, Node] = {}
    for key in sorted(old.keys() | fresh.keys()):
        new, stored = fresh.get(key), None if key in tainted else old.get(key)
        if new is not None and stored is not None:
            nodes[key] = Node(key, new.units | stored.units, new.deps | stored.deps,
                              tuple(sorted(set(new.flags) | set(stored.flags))))
            continue
        chosen = new if new is not None else stored
        if chosen is not None:
            nodes[key] = chosen
    return nodes
