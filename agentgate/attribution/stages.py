"""The stages of an attribution, and the order of their runs.

- swept: ``--runs`` seeds of ``PYTHONHASHSEED`` on each tree;
- reverted (``--revert-code``, when the base lacks the test): head with the test's code
  reverted, the same seeds;
- matched: every seed that failed anywhere, re-run ``--repeats`` times on both trees.

Runs go in batches of one tree (``runs.batches``); the trees' batches alternate ``jobs``
seeds at a time, so a slow spell of the machine hits both trees alike, and no code of the
patch runs beside a base run (flake trial f11). ``--serial`` runs one tree after the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from agentgate.attribution import evidence
from agentgate.attribution.runs import Run, Runner, RunRecord, Tree
from agentgate.run.junit import Outcome

if TYPE_CHECKING:
    from agentgate.attribution.request import Request
    from agentgate.core.config import Config

T = TypeVar("T")


class Stages:
    """The swept, reverted and matched stages, each scheduled from the ones before."""

    def __init__(
        self, runner: Runner, request: Request, config: Config, jobs: int,
        on_done: Callable[[int, RunRecord | None], None], make_reverted: Callable[[], Tree],
    ) -> None:
        self.runner, self.request, self.config, self.jobs = runner, request, config, jobs
        self.on_done = on_done
        self.make_reverted = make_reverted

    def run(self, base_has_file: bool) -> list[RunRecord]:
        request = self.request
        names: list[str] = [n for n in ("base", "head") if n in self.runner.trees]
        if request.mode == "matched":
            seeds = evidence.share(request.seeds or (self.config.pythonhashseed,),
                                   request.shard)
            return self._go(matched(seeds, names, request.repeats, 0, self.jobs,
                                     request.serial))
        seeds = evidence.share(range(request.runs), request.shard)
        records = self._go(swept(seeds, names, self.jobs, request.serial))
        if not base_has_file:
            records += absent(seeds)
        if request.revert_code and _allabsent(records, "base"):
            self.runner.trees["reverted"] = self.make_reverted()
            records += self._go(swept(seeds, ["reverted"], self.jobs, request.serial,
                                       "reverted"))
        if request.mode == "both":
            again = sorted({r.run.seed for r in records
                            if r.outcome.failing and r.run.tree in names})
            alive = [n for n in names if ran(records, n)]
            records += self._go(matched(again, alive, request.repeats, 1, self.jobs,
                                         request.serial))
        return records

    def _go(self, runs: list[Run]) -> list[RunRecord]:
        if not runs:
            return []
        self.on_done(len(runs), None)
        return self.runner.run_all(runs, jobs=self.jobs, on_done=lambda r: self.on_done(0, r))


def swept(seeds: list[int], trees: list[str], jobs: int, serial: bool,
           stage: str = "swept") -> list[Run]:
    # Trees alternate ``jobs`` seeds at a time (``runs.batches``: one tree per batch) so a
    # slow spell of the machine hits both trees alike; --serial runs one tree after the
    # other instead.
    if serial:
        return [Run(t, s, stage) for t in trees for s in seeds]
    return [Run(t, s, stage) for some in _chunks(seeds, jobs) for t in trees for s in some]


def matched(
    seeds: list[int], trees: list[str], repeats: int, first: int, jobs: int, serial: bool
) -> list[Run]:
    attempts = range(first, first + repeats)
    if serial:
        return [Run(t, s, "matched", a) for t in trees for s in seeds for a in attempts]
    pairs = [(s, a) for s in seeds for a in attempts]
    return [Run(t, s, "matched", a) for some in _chunks(pairs, jobs) for t in trees
            for s, a in some]


def _chunks(items: list[T], size: int) -> list[list[T]]:
    return [items[i:i + max(1, size)] for i in range(0, len(items), max(1, size))]


def absent(seeds: list[int]) -> list[RunRecord]:
    why = "the test's file does not exist on base"
    return [RunRecord(Run("base", s, "swept"), Outcome.NOT_COLLECTED, why, 0.0) for s in seeds]


def _allabsent(records: list[RunRecord], tree: str) -> bool:
    mine = [r for r in records if r.run.tree == tree]
    return bool(mine) and all(r.outcome is Outcome.NOT_COLLECTED for r in mine)


def ran(records: list[RunRecord], tree: str) -> bool:
    return any(r.outcome.ran for r in records if r.run.tree == tree)
