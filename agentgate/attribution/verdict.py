"""From per-run outcomes on the base and head trees to an attribution verdict (pure).

Only ``PRE_EXISTING`` -- the same seeds fail on both trees, every time they are run -- allows
a freeze: that failure is the patch's finding, not its doing. A difference between the trees
is blamed on the patch only when it is paired (the same seed re-run on both trees, failing
every time on one and never on the other) or significant (two-sided Fisher p < 0.05 over the
sweep). A difference too small a sample to settle, with no sign of flakiness, is
``INCONCLUSIVE`` and says how many runs would settle it (issue 13: head 3/3 failing against
base 0/3 was called ``HARNESS_ENV``); failures that come and go on one seed, or land on
different seeds on the two trees, are ``HARNESS_ENV``: fix the harness first.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from agentgate.attribution import stats
from agentgate.core.model import Verdict
from agentgate.run.junit import AT, CASES, IDENTITY, THEN, Outcome

if TYPE_CHECKING:
    from agentgate.attribution.runs import RunRecord

SIGNIFICANCE = 0.05
MIN_REPEATS = 2  # runs of one seed on one tree before "fails every time" means anything


class Attribution(StrEnum):
    PATCH_INDUCED = "PATCH_INDUCED"
    PRE_EXISTING = "PRE_EXISTING"
    HARNESS_ENV = "HARNESS_ENV"
    NO_REPRO = "NO_REPRO"
    PATCH_MASKS = "PATCH_MASKS"
    NOT_COLLECTED = "NOT_COLLECTED"
    BASE_UNAVAILABLE = "BASE_UNAVAILABLE"
    INCONCLUSIVE = "INCONCLUSIVE"  # too few runs to tell; never allows a freeze

    @property
    def gate(self) -> Verdict:
        """The exit-code verdict: a patch-induced failure fails the patch (1); a finding that
        needs a human or the full suite promotes (2); the rest pass (0)."""
        return _GATE[self]


_GATE = {
    Attribution.PATCH_INDUCED: Verdict.FAILED,
    Attribution.PRE_EXISTING: Verdict.SCOPED,
    Attribution.NO_REPRO: Verdict.SCOPED,
    Attribution.HARNESS_ENV: Verdict.PROMOTE,
    Attribution.PATCH_MASKS: Verdict.PROMOTE,
    Attribution.NOT_COLLECTED: Verdict.PROMOTE,
    Attribution.BASE_UNAVAILABLE: Verdict.PROMOTE,
    Attribution.INCONCLUSIVE: Verdict.PROMOTE,
}


@dataclass(frozen=True)
class TreeEvidence:
    """Every run of the test on one tree."""

    name: str
    sha: str
    records: tuple[RunRecord, ...]

    def by_seed(self) -> dict[int, list[Outcome]]:
        seeds: dict[int, list[Outcome]] = {}
        for record in self.records:
            seeds.setdefault(record.run.seed, []).append(record.outcome)
        return dict(sorted(seeds.items()))

    def by_seed_text(self) -> dict[str, list[str]]:
        return {str(s): [str(o) for o in outs] for s, outs in self.by_seed().items()}

    def failing_seeds(self) -> list[int]:
        return [s for s, outs in self.by_seed().items() if any(o.failing for o in outs)]

    def flaky_seeds(self) -> list[int]:
        """Seeds that both failed and passed here: the failure is not a function of the seed."""
        return [
            s
            for s, outs in self.by_seed().items()
            if any(o.failing for o in outs) and any(o.ran and not o.failing for o in outs)
        ]

    def always_failing(self, seed: int) -> bool:
        outs = self.by_seed().get(seed, [])
        return len(outs) >= MIN_REPEATS and all(o.failing for o in outs)

    def never_failing(self, seed: int) -> bool:
        outs = self.by_seed().get(seed, [])
        return len(outs) >= MIN_REPEATS and all(o.ran and not o.failing for o in outs)

    def signatures(self) -> frozenset[str]:
        """How the failing runs failed (``signature``)."""
        return frozenset(signature(r) for r in self.records if r.outcome.failing)

    def messages(self, *, numbers: bool = False) -> dict[int, set[str]]:
        """Per failing seed, the failing runs' messages with their values masked
        (``message``; ``numbers``: numbers kept)."""
        found: dict[int, set[str]] = {}
        for r in self.records:
            if r.outcome.failing:
                found.setdefault(r.run.seed, set()).add(message(r, numbers=numbers))
        return found

    def counts(self) -> dict[str, int]:
        counter = Counter(str(r.outcome) for r in self.records)
        return {str(o): counter.get(str(o), 0) for o in Outcome}

    def ran_any(self) -> bool:
        return any(r.outcome.ran for r in self.records)

    def all_absent(self) -> bool:
        return bool(self.records) and all(
            r.outcome is Outcome.NOT_COLLECTED for r in self.records
        )

    def unrun(self) -> list[RunRecord]:
        """Runs where the test did not execute: harness errors, collection errors, absent."""
        return [r for r in self.records if not r.outcome.ran]

    def first_problem(self) -> str:
        bad = self.unrun()
        return f"{bad[0].outcome}: {bad[0].detail}" if bad else "no runs"

    def sample(self, stage: str) -> tuple[int, int]:
        """(failures, executed runs) in one stage; skipped runs observe nothing."""
        chosen = [r for r in self.records if r.run.stage == stage and r.outcome.ran]
        executed = [r for r in chosen if r.outcome is not Outcome.SKIPPED]
        return sum(1 for r in executed if r.outcome.failing), len(executed)


@dataclass(frozen=True)
class Decision:
    verdict: Attribution
    freeze_allowed: bool
    detail: str


def fisher_p(base: TreeEvidence, head: TreeEvidence, stage: str) -> float:
    head_fail, head_n = head.sample(stage)
    base_fail, base_n = base.sample(stage)
    return stats.fisher_exact(head_fail, head_n - head_fail, base_fail, base_n - base_fail)


def decide(
    base: TreeEvidence | None, head: TreeEvidence, *, stage: str, base_problem: str = ""
) -> Decision:
    """The verdict. ``stage`` names the runs rates and Fisher's test are computed over."""
    if base is None or base_problem:
        return Decision(Attribution.BASE_UNAVAILABLE, False, f"base unavailable: {base_problem}")
    if base.all_absent():
        return Decision(Attribution.NOT_COLLECTED, False, "the test does not exist on base")
    early = _unrunnable(base, head)
    if early is not None:
        return early
    failing_base, failing_head = base.failing_seeds(), head.failing_seeds()
    if not failing_base and not failing_head:
        return Decision(Attribution.NO_REPRO, False, "no run failed on either tree")
    if not failing_base:
        return _one_sided(base, head, stage, Attribution.PATCH_INDUCED)
    if not failing_head:
        return _one_sided(head, base, stage, Attribution.PATCH_MASKS)
    return _both_fail(base, head, stage)


def _unrunnable(base: TreeEvidence, head: TreeEvidence) -> Decision | None:
    """A tree that could not run the test, always or sometimes."""
    if not base.ran_any():
        if not head.ran_any():
            return Decision(
                Attribution.HARNESS_ENV, False,
                f"neither tree could run the test ({head.first_problem()}); fix the harness",
            )
        return Decision(
            Attribution.BASE_UNAVAILABLE, False,
            f"base could not run the test ({base.first_problem()}); no guess is made",
        )
    if not head.ran_any():
        return Decision(
            Attribution.PATCH_INDUCED, False,
            f"the patch stops the test from running ({head.first_problem()}); base runs it",
        )
    broken = head.unrun()
    if broken and not base.unrun() and all(
            r.outcome is Outcome.COLLECTION_ERROR for r in broken):
        # Only head's collection fails, on some seeds: the patch's code fails at import
        # there (flake trial: a set-order error at import was "fix the harness first").
        seeds = sorted({r.run.seed for r in broken})
        return Decision(
            Attribution.PATCH_INDUCED, False,
            f"the patch makes the test's module fail to import on seeds {_seeds(seeds)} "
            f"({broken[0].detail}); base always runs it",
        )
    for tree in (base, head):
        bad = tree.unrun()
        if bad:
            return Decision(
                Attribution.HARNESS_ENV, False,
                f"{len(bad)} of {len(tree.records)} runs on {tree.name} did not run the test "
                f"({tree.first_problem()}): the harness is unreliable; fix it first",
            )
    return None


def _one_sided(
    clean: TreeEvidence, failing: TreeEvidence, stage: str, verdict: Attribution
) -> Decision:
    """One tree fails, the other never does: blame the patch only on paired or significant
    evidence."""
    seeds = failing.failing_seeds()
    paired = all(failing.always_failing(s) and clean.never_failing(s) for s in seeds)
    head, base = (failing, clean) if verdict is Attribution.PATCH_INDUCED else (clean, failing)
    p = fisher_p(base, head, stage)
    k, n = failing.sample(stage)
    ran = [r.outcome for r in clean.records if r.outcome.ran]
    # A tree that skips or xfails the test in every run never executed it (flake trial: a
    # skip added at head read "head never fails ... head failed 0/3").
    never = ("skips or xfails it in every run" if ran and all(
        o is Outcome.SKIPPED for o in ran) else "never fails")
    what = (
        f"{failing.name} fails on seeds {_seeds(seeds)} ({k}/{n} in the {stage} runs), "
        f"{clean.name} {never}; Fisher p = {p:.3g}"
    )
    if paired:
        return Decision(verdict, False, f"{what}; every re-run of those seeds agrees")
    if p < SIGNIFICANCE:
        flaky = failing.flaky_seeds()
        note = f"; seeds {_seeds(flaky)} fail only sometimes" if flaky else ""
        return Decision(verdict, False, f"{what}{note}")
    flaky = failing.flaky_seeds()
    if flaky and verdict is not Attribution.PATCH_INDUCED:
        return Decision(
            Attribution.HARNESS_ENV, False,
            f"{what}: seeds {_seeds(flaky)} fail only sometimes on {failing.name}, and the "
            "difference is not significant; fix the harness first",
        )
    # Head fails now and then where base never failed: the patch may have brought the flake
    # in, so more runs are what settles it, not the harness (flake trial: a patch taking a
    # test from 0% to ~30% failures was told to "fix the harness first").
    return _thin(clean, failing, stage, what)


def _thin(clean: TreeEvidence, failing: TreeEvidence, stage: str, what: str) -> Decision:
    """Consistent, but too few runs for the difference to be significant: say how many would
    settle it at the observed rates."""
    needed = stats.runs_to_significance(failing.sample(stage), clean.sample(stage),
                                        SIGNIFICANCE)
    settle = (f"--runs {needed} (runs a tree at which the difference would be significant if "
              "these rates hold)" if needed else "many more runs")
    return Decision(
        Attribution.INCONCLUSIVE, False,
        f"{what}: the evidence is thin (not significant at {SIGNIFICANCE}); {settle} or "
        "--mode both (re-runs the failing seeds on both trees) would settle it",
    )


def _both_fail(base: TreeEvidence, head: TreeEvidence, stage: str) -> Decision:
    worse = _fails_more(base, head, stage) or _case_fails_more(base, head)
    if worse is not None:
        return worse
    head_fail, head_n = head.sample(stage)
    if head_n and head_fail == head_n and base.flaky_seeds() and not head.flaky_seeds():
        # Head fails every run, base only now and then, not significantly less yet: more
        # runs settle it, not the harness (flake trial round 4: a 30% flake the patch made
        # certain was told to "fix the harness" at --runs 4, PATCH_INDUCED at --runs 10).
        base_fail, base_n = base.sample(stage)
        return _thin(base, head, stage, f"head fails {head_fail}/{head_n} in the {stage} "
                     f"runs, base {base_fail}/{base_n} (seeds {_seeds(base.flaky_seeds())} "
                     "only sometimes)")
    for tree in (base, head):
        flaky = tree.flaky_seeds()
        if flaky:
            return Decision(
                Attribution.HARNESS_ENV, False,
                f"seeds {_seeds(flaky)} fail only sometimes on {tree.name}: the failure is "
                "not a function of the seed; fix the harness or shared fixture first",
            )
    failing_base, failing_head = base.failing_seeds(), head.failing_seeds()
    if failing_base != failing_head:
        return Decision(
            Attribution.HARNESS_ENV, False,
            f"failures on different seeds: base {_seeds(failing_base)}, head "
            f"{_seeds(failing_head)}; fix the harness or shared fixture first",
        )
    new = sorted(head.signatures() - base.signatures())
    if new:
        # The same seeds fail, but head fails in a way base never does: a new exception, a
        # hang where base failed, another phase, other cases (flake trial: base's
        # AssertionError and head's new TypeError were PRE_EXISTING, a freeze allowed).
        return Decision(
            Attribution.PATCH_INDUCED, False,
            f"seeds {_seeds(failing_base)} fail on both trees, but head fails as base never "
            f"does ({'; '.join(new)}; base: {'; '.join(sorted(base.signatures()))}): the "
            "patch changed how it fails",
        )
    moved = _messages_moved(base, head)
    if moved is not None:
        # The same seeds, exception and line, but each tree's message steady and another on
        # head (flake trial round 4: a loop's assert failing on item "b" at the base and on
        # "a" at head was PRE_EXISTING, a freeze allowed).
        return Decision(
            Attribution.PATCH_INDUCED, False,
            f"seeds {_seeds(failing_base)} fail on both trees the same way, but head says "
            f"{moved[1]!r} where base always says {moved[0]!r}: the patch changed how it fails",
        )
    details = [r.detail for t in (base, head) for r in t.records if r.outcome.failing]
    if details and all(_PORT_IN_USE.search(d) for d in details):
        # Every run of both trees died binding a port (a run before them left it in
        # TIME_WAIT): the machine's doing, not the base's (flake trial round 4, r17).
        return Decision(
            Attribution.HARNESS_ENV, False,
            f"seeds {_seeds(failing_base)} fail on both trees only because a port is in use "
            f"({details[0][:120]}): the runs share the machine's ports; free it and run again",
        )
    shown = all(base.always_failing(s) and head.always_failing(s) for s in failing_base)
    what = f"seeds {_seeds(failing_base)} fail on both trees"
    if all(signature(r) == TIMEOUT for t in (base, head) for r in t.records
           if r.outcome.failing):
        # A time limit ended every failing run (agentgate's or pytest-timeout's): a hang, or
        # a limit shorter than the test takes (flake trial: a 3 s test under --timeout 2 was
        # frozen as failing; a project's own ``timeout = 2`` looked like a plain failure).
        return Decision(Attribution.PRE_EXISTING, False,
                        f"seeds {_seeds(failing_base)} time out on both trees: a time limit "
                        "ended them; run again with a longer --timeout to tell a slow test "
                        "from a hang before a freeze")
    if shown:
        return Decision(Attribution.PRE_EXISTING, True, f"{what}, every time they are run")
    return Decision(
        Attribution.PRE_EXISTING, False,
        f"{what}, but were not re-run to show they always do (use --mode both to allow a freeze)",
    )


def _fails_more(base: TreeEvidence, head: TreeEvidence, stage: str) -> Decision | None:
    """Both trees fail, head more: seeds head fails every time that base never failed on
    (paired), or a significantly higher rate, is the patch's doing (flake trial: base failing
    on six seeds and head on all ten was "failures on different seeds ... fix the harness";
    a test failing at random on base and always on head, Fisher p = 0.03, too)."""
    head_fail, head_n = head.sample(stage)
    base_fail, base_n = base.sample(stage)
    p = fisher_p(base, head, stage)
    newly = [s for s in head.failing_seeds() if head.always_failing(s) and base.never_failing(s)]
    what = (f"head fails {head_fail}/{head_n} in the {stage} runs, base {base_fail}/{base_n}; "
            f"Fisher p = {p:.3g}")
    # Seeds head fails every time that base never failed on, neither tree flaky: the patch
    # made them fail, whichever tree fails more in all (flake trial: base failing seeds
    # 1, 3, 4 and head 6, 7 was "failures on different seeds ... fix the harness").
    if newly and not base.flaky_seeds() and not head.flaky_seeds():
        return Decision(Attribution.PATCH_INDUCED, False,
                        f"{what}; seeds {_seeds(newly)} fail on head every time and never on "
                        "base: the patch made them fail")
    if head_fail * base_n <= base_fail * head_n:
        return None  # head does not fail more often
    if p < SIGNIFICANCE:
        return Decision(Attribution.PATCH_INDUCED, False, f"{what}: the patch makes it fail "
                        "more often")
    return None


def _case_fails_more(base: TreeEvidence, head: TreeEvidence) -> Decision | None:
    """A parametrized function's id, case by case: a case head fails in every run and base
    in none, significantly, is the patch's, whatever the other cases do (flake trial round
    4: a random flake of case [2] on both trees hid that head broke case [1] for good, and
    the id was "fix the harness")."""
    head_sets = [_failed_cases(r) for r in head.records if r.outcome.ran]
    base_sets = [_failed_cases(r) for r in base.records if r.outcome.ran]
    if not head_sets or not base_sets or any(c is None for c in (*head_sets, *base_sets)):
        return None  # not a parametrized id, or a run that does not say which cases
    always = set.intersection(*(c for c in head_sets if c is not None))
    ever = set().union(*(c for c in base_sets if c is not None))
    broken = sorted(always - ever)
    n, m = len(head_sets), len(base_sets)
    if not broken or stats.fisher_exact(n, 0, 0, m) >= SIGNIFICANCE:
        return None
    return Decision(Attribution.PATCH_INDUCED, False,
                    f"case {broken[0]} fails in all {n} runs on head and in none of {m} on "
                    "base: the patch broke it, whatever its other cases do")


def _failed_cases(record: RunRecord) -> set[str] | None:
    """The cases a run of a parametrized function's id failed (none when it passed); None
    when it failed and its detail does not say which."""
    if not record.outcome.failing:
        return set()
    cases = _opening(record.detail)[1]
    return set(cases.split(", ")) if cases else None


def _messages_moved(base: TreeEvidence, head: TreeEvidence) -> tuple[str, str] | None:
    """A seed failing on both trees with one message each, every run, and not the same one:
    (base's, head's). Messages that differ from run to run say nothing. Numbers count where
    each tree's are steady (flake trial round 5: ``assert 29 == 30`` at the base every run,
    ``assert 0 == 30`` at head, alike with numbers masked); masked where they vary."""
    for numbers in (True, False):
        theirs, ours = base.messages(numbers=numbers), head.messages(numbers=numbers)
        steady = False
        for seed in sorted(set(theirs) & set(ours)):
            b, h = theirs[seed], ours[seed]
            if len(b) == 1 and len(h) == 1:
                steady = True
                if b != h:
                    return next(iter(b)), next(iter(h))
        if steady:
            return None
    return None


_PORT_IN_USE = re.compile(r"EADDRINUSE|Address already in use|\[Errno (?:98|48|10048)\]")
# A message's values that differ from run to run: addresses, paths, numbers.
_MASKS = ((re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
          (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][^\s'\":,)\]]+){2,}"), "<path>"),
          (re.compile(r"\d+(?:\.\d+)?"), "#"))


def message(record: RunRecord, *, numbers: bool = False) -> str:
    """A failing run's message less what ``signature`` already says (the test's identity,
    the cases, the phase, where it failed), its values masked (``numbers``: but numbers)."""
    detail, then, after = record.detail.partition(THEN)
    if then:
        return f"{_message_of(detail, numbers)}{THEN}{_message_of(after, numbers)}"
    return _message_of(detail, numbers)


def _message_of(detail: str, numbers: bool = False) -> str:
    detail = _opening(detail)[2]
    if detail.endswith(")") and AT in detail:
        detail = detail.rpartition(AT)[0]
    for pattern, mask in _MASKS[:2] if numbers else _MASKS:
        detail = pattern.sub(mask, detail)
    return detail


TIMEOUT = "timeout"
# The exception a failure message starts with (``TypeError: ...``); pytest's own message for a
# failed assert is the assert itself.
_RAISED = re.compile(r"([A-Za-z_][\w.]*):")
_PHASE = re.compile(r'failed on (setup|teardown) with "?(.*)', re.S)


def signature(record: RunRecord) -> str:
    """How one failing run failed: a time limit (``timeout``), or the outcome, the phase, the
    exception's type and, for a parametrized function's id, which cases -- never the
    message's values, which differ from run to run."""
    return failure_signature(record.outcome, record.detail)


def without_identity(sig: str) -> str:
    """A signature less the test's identity (``(test#...)``), which only the attribution's
    own runs record: to compare one with a run of the project's plain command."""
    return _IDENTITY_PART.sub("", sig)


_IDENTITY_PART = re.compile(r" \(test#[^)]*\)")


def failure_signature(outcome: Outcome, detail: str) -> str:
    """``signature`` of an outcome and its detail."""
    if outcome is Outcome.TIMEOUT:
        return TIMEOUT
    detail, then, after = detail.partition(THEN)
    if then:  # a teardown error after the failure is part of how it failed
        return (f"{failure_signature(outcome, detail)} then "
                f"{failure_signature(Outcome.ERROR, after)}")
    which, cases, detail = _opening(detail)
    phase = "call"
    if (found := _PHASE.match(detail)) is not None:
        phase, detail = found.group(1), found.group(2)
    if detail.startswith("Failed: Timeout"):  # pytest-timeout's own limit
        return TIMEOUT
    where = ""
    if detail.endswith(")") and AT in detail:
        detail, _, where = detail.rpartition(AT)
        where = where[:-1]
    raised = _RAISED.match(detail)
    kind = "AssertionError" if detail.startswith("assert") else (
        raised.group(1) if raised else "failure")
    return " ".join(p for p in (f"{outcome} in {phase}: {kind}",
                                f"[{cases}]" if cases else "", f"at {where}" if where else "",
                                f"(test#{which})" if which else "")
                    if p)


def _opening(detail: str) -> tuple[str, str, str]:
    """A detail's opening, as ``run.junit`` writes it: (the test's identity, the failing
    cases, the rest), the first two "" where it has none."""
    which = cases = ""
    if detail.startswith(IDENTITY):
        which, _, detail = detail[len(IDENTITY):].partition(": ")
    if detail.startswith(CASES):
        cases, _, detail = detail[len(CASES):].partition(": ")
    return which, cases, detail


def _seeds(seeds: list[int]) -> str:
    return ", ".join(str(s) for s in seeds) if seeds else "none"
