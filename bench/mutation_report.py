"""The mutation benchmark's records and its markdown: figures per project and overall, the
recording cost, and what made agentgate's bands wide (the plan JSON's reasons and chains)."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

SELECTORS = ("agentgate", "agentgate+witness", "closure", "testmon")


@dataclass
class Band:
    tests: int
    test_time: float
    wall: float
    failed: int
    missed: int  # failing tests of the full suite the band did not run
    promoted: bool = False
    crashed: bool = False  # pytest exit 3 (INTERNALERROR) or a timeout
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def safe(self) -> bool:
        return self.promoted or self.failed > 0


@dataclass
class Row:
    mutant: str
    operator: str
    full_tests: int
    full_time: float  # JUnit test time
    full_wall: float
    full_failed: int
    bands: dict[str, Band]


@dataclass
class Project:
    name: str
    version: str
    shape: str
    costs: dict[str, float]
    suite: int
    rows: list[Row] = field(default_factory=list)
    tried: dict[str, int] = field(default_factory=dict)  # killed / survived / timeout


def progress(row: Row) -> str:
    cells = " ".join(f"{k}={b.tests}{'P' if b.promoted else ''}{'' if b.safe else '!'}"
                     for k, b in row.bands.items())
    return f"{row.mutant[:70]}: full={row.full_tests} ({row.full_failed} fail) {cells}"


# --- figures -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Figures:
    mutants: int
    safe: int
    promoted: int
    test_share: float
    time_share: float
    wall_share: float
    missed: int


def figures(rows: list[Row], selector: str) -> Figures:
    bands = [(r, r.bands[selector]) for r in rows]
    n = max(1, len(bands))
    return Figures(
        len(bands), sum(b.safe for _, b in bands), sum(b.promoted for _, b in bands),
        sum(b.tests / max(1, r.full_tests) for r, b in bands) / n,
        sum(b.test_time / max(1e-9, r.full_time) for r, b in bands) / n,
        sum(b.wall / max(1e-9, r.full_wall) for r, b in bands) / n,
        sum(b.missed for _, b in bands))


def _figure_row(name: str, selector: str, f: Figures) -> str:
    n = max(1, f.mutants)
    return (f"| {name} | {selector} | {f.safe}/{f.mutants} ({f.safe / n:.0%}) | "
            f"{f.promoted / n:.0%} | {f.test_share:.1%} | {f.time_share:.1%} | "
            f"{f.wall_share:.1%} | {f.missed} |")


def figures_table(results: list[Project]) -> list[str]:
    out = ["| project | selector | safe | promoted | test share | time share | wall share | "
           "missed failing tests |", "|---|---|---|---|---|---|---|---|"]
    for res in results:
        out += [_figure_row(res.name, s, figures(res.rows, s)) for s in SELECTORS]
    pooled = [r for res in results for r in res.rows]
    out += [_figure_row("**all**", s, figures(pooled, s)) for s in SELECTORS]
    return out


def cost_table(results: list[Project]) -> list[str]:
    out = ["| project | shape | tests | plain suite s | witness record s | cost | "
           "testmon record s | cost | mutants tried: killed / survived / timed out |",
           "|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        c, t = res.costs, res.tried
        out.append(f"| {res.name} {res.version} | {res.shape} | {res.suite} | {c['plain']:.2f} | "
                   f"{c['witness record']:.2f} | {c['witness record'] / c['plain']:.1f}x | "
                   f"{c['testmon record']:.2f} | {c['testmon record'] / c['plain']:.1f}x | "
                   f"{t.get('killed', 0)} / {t.get('survived', 0)} / {t.get('timeout', 0)} |")
    return out


# --- causes ------------------------------------------------------------------------------------

def causes(results: list[Project], selector: str) -> dict[str, Counter[str]]:
    """Per kind, how many mutants' plans had each reason (deduplicated within a plan)."""
    found: dict[str, Counter[str]] = {k: Counter() for k in
                                      ("promote", "escalation reached", "seed", "via")}
    for res in results:
        for row in res.rows:
            plan = row.bands[selector].extra.get("plan", {})
            for kind, keys in _plan_causes(res.name, plan).items():
                found[kind].update(set(keys))
    return found


def _plan_causes(project: str, plan: dict[str, Any]) -> dict[str, list[str]]:
    reasons = plan.get("reasons", [])
    changed = set(plan.get("changed", []))
    chains = list(plan.get("why", {}).values())
    return {
        "promote": [f"{project}: {r['code']} {r.get('path') or ''}: {r['detail']}"
                    for r in reasons if r.get("verdict") == "promote"],
        "escalation reached": [f"{project}: {r['code']} {r.get('path') or ''}"
                               for r in reasons if r.get("verdict") != "promote"
                               and "no test reaches it" not in r.get("detail", "")],
        # a chain ending at a file the patch did not change ends at a local escalation
        "seed": [f"{project}: {c[-1]}" for c in chains if c and c[-1] not in changed],
        "via": [f"{project}: {c[1]}" for c in chains if len(c) > 2],
    }


def witness_labels(results: list[Project]) -> list[str]:
    out = []
    for res in results:
        counts: Counter[str] = Counter()
        details: Counter[str] = Counter()
        for row in res.rows:
            w = row.bands["agentgate+witness"].extra.get("plan", {}).get("witness")
            if w:
                counts.update(w["counts"])
                details.update({v.split(":", 1)[0] for v in w["reasons"].values()})
        n = max(1, len(res.rows))
        mean = ", ".join(f"{k} {v / n:.1f}" for k, v in sorted(counts.items()) if v)
        out.append(f"- {res.name}: per mutant, mean tests by label: {mean or 'no witness used'}")
    return out


def reason_kind(reason: str | None) -> str:
    """A witnessed test's reason, coarsely: audit (the shadow sample), impacted through a
    function it ran, through a name a module-level change rebound, through module-level code
    (its own or a module it used), as the one importer of a changed module, incomplete,
    new, or the label itself."""
    if reason is None:
        return "audit"
    label, _, unit = reason.partition(": ")
    if label == "run:impacted":
        if "one test that imports it" in unit:
            return "impacted:import-check"
        if " reads " in unit or " imports " in unit or "definition changed" in unit:
            return "impacted:name"  # a name a module-level change rebound (witness.rebind)
        return "impacted:function" if "::" in unit else "impacted:module-level"
    return {"escalate:incomplete-witness": "incomplete", "run:new": "new"}.get(label, label)


def breakdown(results: list[Project]) -> list[str]:
    """Per project, the witnessed band's mean test count and time share by reason, next to
    testmon's (issue 12: what makes the band wider than testmon's)."""
    out = []
    for res in results:
        rows = [r for r in res.rows if "by_reason" in r.bands["agentgate+witness"].extra]
        if not rows:
            continue
        tests: Counter[str] = Counter()
        share: dict[str, float] = {}
        for row in rows:
            for kind, (count, part) in row.bands["agentgate+witness"].extra["by_reason"].items():
                tests[kind] += count
                share[kind] = share.get(kind, 0.0) + part
        n = len(rows)
        cells = ", ".join(f"{k} {tests[k] / n:.1f} tests / {100 * share[k] / n:.1f}%"
                          for k in sorted(tests))
        tm = sum(r.bands["testmon"].tests for r in rows) / n
        out.append(f"- {res.name} ({n} witnessed plans): {cells}; testmon {tm:.1f} tests")
    return out


def _top(counter: Counter[str], limit: int) -> Iterable[str]:
    for key, count in counter.most_common(limit):
        yield f"  - {count}x {key}"


def causes_section(results: list[Project]) -> list[str]:
    out: list[str] = []
    for selector in ("agentgate", "agentgate+witness"):
        found = causes(results, selector)
        out += ["", f"**{selector}** (number of kept mutants whose plan had it):", ""]
        labels = {"promote": "promotions (reason, path, detail)",
                  "escalation reached": "local escalations that tests reach (widen the band)",
                  "seed": "chains ending at an escalated file, not at the change",
                  "via": "first hop of the chains (test file -> this -> ... -> change)"}
        for kind, label in labels.items():
            out += [f"- {label}:", *(_top(found[kind], 8) if found[kind] else ["  - none"])]
    return out


# --- the page ----------------------------------------------------------------------------------

def machine(args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=os.path.dirname(__file__)).stdout.strip()
    return {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "platform": platform.platform(), "python": platform.python_version(),
            "cpus": os.cpu_count(), "agentgate": head, "seconds": round(seconds),
            "argv": " ".join(sys.argv[1:]), "mutants": args.mutants, "seed": args.seed,
            "tools": _versions()}


def _versions() -> str:
    import witness_bench as wb

    return ", ".join(wb.VENV_PACKAGES) + ", freezegun 1.5.5"


def markdown(results: list[Project], meta: dict[str, Any]) -> str:
    out = [
        "# Mutation benchmark (issue 12)", "",
        f"{meta['date']}; {meta['platform']}, Python {meta['python']}, {meta['cpus']} CPUs "
        f"shared with other work; agentgate {meta['agentgate']}; {meta['tools']}. Whole run "
        f"{meta['seconds'] / 60:.0f} min. Reproduce: `python bench/mutation_bench.py "
        f"{meta['argv']}`.", "",
        "## Safety and band size per selector", "", *figures_table(results), "",
        "## Projects and recording cost (best of the reps, wall seconds)", "",
        *cost_table(results), "",
        "## What made agentgate's bands wide", *causes_section(results), "",
        "Witnessed plans:", "", *witness_labels(results), "",
        "Witnessed bands by reason (per mutant, mean tests and time share of the suite):", "",
        *breakdown(results), "",
        "## Per mutant (tests run: agentgate / +witness / closure / testmon / full; P promoted, "
        "! unsafe)", "",
    ]
    for res in results:
        out += [f"- {res.name} `{row.mutant}`: " + _cells(row) for row in res.rows]
    return "\n".join(out) + "\n"


def _cells(row: Row) -> str:
    return " / ".join(f"{b.tests}{'P' if b.promoted else ''}{'' if b.safe else '!'}"
                      for b in (row.bands[s] for s in SELECTORS)) + f" / {row.full_tests}"
