"""The mutation benchmark's own parts on a tiny local project: the seeded mutant generator
(every operator, deterministic, one compiling one-file commit per mutant) and the figures
its table reports. The benchmark itself needs PyPI and minutes; this needs neither."""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.git_repo import GitRepo

BENCH = Path(__file__).resolve().parents[2] / "bench"

CORE = '''\
"""A module with one site per operator."""

LIMIT = 3
NAME = "core"


def clamp(x, y):
    if x < y:
        return x + 1
    while x > LIMIT:
        x = x - 1
    return None


def label(flag=True):
    """Docstrings and f-strings are not mutated."""
    return f"{NAME}:{flag!r:>10}"
'''


def bench(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "proj")
    repo.files({"pkg/__init__.py": "", "pkg/core.py": CORE, "tests/test_core.py": "x = 1\n"})
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "W")
    return repo


def test_every_operator_has_sites_and_none_in_tests_docstrings_or_fstrings(
    project: GitRepo,
) -> None:
    mutants = bench("mutants")
    found = mutants.sites(project.path, ["pkg", "tests"], exclude=("tests/",))
    assert {m.operator for m in found} == set(mutants.OPERATORS)
    assert {m.path for m in found} == {"pkg/core.py"}
    # the f-string's 10 is formatting: only its return statement is a site on that line
    assert [m.operator for m in found if m.line == 17] == ["return-none"]
    module_level = [m for m in found if m.operator == "module-const"]
    assert sorted(m.old for m in module_level) == ['"core"', "3"]


def _deal(mutants: ModuleType, found: list[Any], seed: int, *, tries: int = 100,
          keep: Callable[[Any], bool] = lambda m: False) -> list[Any]:
    dealer = mutants.Dealer(found, seed, tries=tries)
    dealt = []
    for mutant in dealer:
        dealt.append(mutant)
        if keep(mutant):
            dealer.keep(mutant)
    return dealt


def test_the_seed_fixes_the_order_and_operators_are_dealt_by_what_was_kept(
    project: GitRepo,
) -> None:
    mutants = bench("mutants")
    found = mutants.sites(project.path, ["pkg"])
    first = _deal(mutants, found, 1)
    assert first == _deal(mutants, found, 1)
    assert sorted(first, key=repr) == sorted(found, key=repr)
    operators = len(mutants.OPERATORS)
    assert len({m.operator for m in first[:operators]}) == operators
    assert len({tuple(_deal(mutants, found, seed)) for seed in range(5)}) > 1
    # Kept, not tried (the benchmark kept no module-level mutant when dealing by tries): an
    # operator whose mutants survive is dealt again before those that already have one kept.
    dealt = _deal(mutants, found, 1, keep=lambda m: m.operator != "module-const")
    assert dealt[operators].operator == "module-const"
    # ... within a bound on each operator's tries
    assert len(_deal(mutants, found, 1, tries=1)) == operators


def test_each_mutant_is_one_commit_changing_one_span_that_compiles(project: GitRepo) -> None:
    mutants, runner = bench("mutants"), bench("mutation_bench")
    base = project.git("rev-parse", "HEAD").strip()
    original = (project.path / "pkg/core.py").read_bytes()
    for index, mutant in enumerate(mutants.sites(project.path, ["pkg"])):
        runner.commit_mutant(project.path, base, index, mutant)
        changed = project.git("diff", "--name-only", f"{base}..HEAD").split()
        assert changed == ["pkg/core.py"]
        text = (project.path / "pkg/core.py").read_bytes()
        assert text != original
        ast.parse(text)
        lines = text.decode().splitlines()
        assert mutant.new.splitlines()[0] in lines[mutant.line - 1]


def test_figures_count_a_promoted_or_failing_band_as_safe_and_nothing_else() -> None:
    report = bench("mutation_report")

    def row(band: object) -> object:
        return report.Row("m", "compare", 10, 2.0, 3.0, 1,
                          dict.fromkeys(report.SELECTORS, band))

    rows = [row(report.Band(2, 0.5, 1.0, 1, 0)),                  # caught
            row(report.Band(10, 2.0, 3.0, 1, 0, promoted=True)),   # promoted
            row(report.Band(3, 1.0, 1.5, 0, 1))]                   # missed it
    figures = report.figures(rows, "agentgate")
    assert (figures.safe, figures.promoted, figures.missed) == (2, 1, 1)
    assert figures.test_share == pytest.approx((0.2 + 1.0 + 0.3) / 3)
    assert figures.time_share == pytest.approx((0.25 + 1.0 + 0.5) / 3)
    project = report.Project("tiny", "1.0", "flat", {"plain": 1.0, "witness record": 2.0,
                                                    "testmon record": 1.5}, 10, rows)
    table = report.figures_table([project])
    assert "| tiny | agentgate | 2/3 (67%) | 33% | 50.0% | 58.3% |" in "\n".join(table)
