"""``plan --explain NODEID``: the witness's decision for one test, and its file's chain.

A path asks for the import chain from a test file to a change (report.plan's ``Explain``);
a node id (it contains ``::``) asks why that test runs or is skipped: the witness plan's
decision and reason (``run:impacted app/x.py::f``, ``skip:witnessed``, the shadow sample's
audit, ``escalate:incomplete-witness``), the decisions of all its parameters for a
parametrized test, and the file's chain, which decides when no witness does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentgate.core.paths import function_id
from agentgate.witness.select import SKIP

if TYPE_CHECKING:
    from agentgate.witness.select import Decision, WitnessPlan

_SKIP_REASON = "nothing it executed or read changed"


@dataclass(frozen=True)
class NodeExplain:
    nodeid: str
    test: str  # its file
    chain: tuple[str, ...] | None  # the file's import chain to a change; None: not impacted
    in_suite: bool  # the file is a test file at head
    witness: str | None  # the witness revision that decided; None: no usable witness
    decisions: tuple[Decision, ...] = ()  # the node's (each parameter's), else its file's
    audited: frozenset[str] = frozenset()  # which of them the shadow sample runs anyway
    full_suite: bool = False  # the plan is promoted: check runs everything

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test, "chain": list(self.chain) if self.chain else None,
            "in_suite": self.in_suite, "node": self.nodeid, "witness": self.witness,
            "decisions": [{"nodeid": d.nodeid, "label": d.label, "reason": _reason(d),
                           "audit": d.nodeid in self.audited} for d in self.decisions],
            "full_suite": self.full_suite,
        }

    def lines(self) -> list[str]:
        if not self.in_suite and not self.decisions:
            return [f"why {self.nodeid}: not a test at head; nothing to explain"]
        lines = [f"why {self.nodeid}: {self._verdict()}"]
        lines += [f"  {d.nodeid}: {self._decision(d)}" for d in self.decisions
                  if len(self.decisions) > 1 or d.nodeid != self.nodeid]
        chain = " -> ".join(self.chain) if self.chain and len(self.chain) > 1 else (
            "changed" if self.chain else "not impacted (no import chain to a changed file)")
        lines.append(f"  file {self.test}: {chain}")
        if self.full_suite:
            lines.append("  promoted: check runs the full suite")
        return lines

    def _verdict(self) -> str:
        if self.witness is None:
            return "no witness decides single tests; the band runs its whole file"
        if not self.decisions:
            return (f"unknown node id: the witness at {self.witness[:10]} has no such test "
                    "and the plan decides nothing for it")
        if len(self.decisions) == 1:
            return self._decision(self.decisions[0])
        running = sum(d.runs or d.nodeid in self.audited for d in self.decisions)
        return f"{running} of {len(self.decisions)} parameter(s) run"

    def _decision(self, decision: Decision) -> str:
        audit = "; runs anyway in the shadow sample (audit)" if (
            decision.nodeid in self.audited) else ""
        return f"{decision.label} {_reason(decision)}{audit}"


def _reason(decision: Decision) -> str:
    return decision.detail or (_SKIP_REASON if decision.label == SKIP else "")


def explain_node(nodeid: str, *, test: str, chain: tuple[str, ...] | None, in_suite: bool,
                 witness: WitnessPlan | None, full_suite: bool) -> NodeExplain:
    """The explanation of ``nodeid`` (``path::name``, with or without parameters)."""
    if witness is None:
        return NodeExplain(nodeid, test, chain, in_suite, None, full_suite=full_suite)
    own = tuple(d for d in witness.decisions if d.nodeid == nodeid or function_id(
        d.nodeid) == nodeid)
    found = own or tuple(d for d in witness.decisions if d.nodeid == test)
    return NodeExplain(nodeid, test, chain, in_suite, witness.witness, found,
                       frozenset(witness.shadow) & {d.nodeid for d in found}, full_suite)

