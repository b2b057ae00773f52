"""agentgate.stats against published reference values (R's binom.test / fisher.test, which
scipy matches) and against the definitions themselves."""

from __future__ import annotations

import math

import pytest

from agentgate.attribution import stats


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (3, 30, 0.0211171, 0.2652885),  # binom.test(3, 30)$conf.int
        (5, 10, 0.1870860, 0.8129140),
        (0, 10, 0.0, 0.3084971),
        (10, 10, 0.6915029, 1.0),
        (1, 100, 0.0002531, 0.0544594),
    ],
)
def test_clopper_pearson_matches_reference(k: int, n: int, low: float, high: float) -> None:
    got_low, got_high = stats.clopper_pearson(k, n)
    assert got_low == pytest.approx(low, abs=2e-7)
    assert got_high == pytest.approx(high, abs=2e-7)


@pytest.mark.parametrize(("k", "n"), [(1, 7), (4, 9), (13, 50), (299, 1000)])
def test_clopper_pearson_bounds_put_alpha_over_two_in_each_tail(k: int, n: int) -> None:
    low, high = stats.clopper_pearson(k, n)
    # The definition: P(X >= k | low) = 0.025 and P(X <= k | high) = 0.025.
    assert 1 - stats.binom_cdf(k - 1, n, low) == pytest.approx(0.025, abs=1e-9)
    assert stats.binom_cdf(k, n, high) == pytest.approx(0.025, abs=1e-9)
    assert low < k / n < high


def test_clopper_pearson_without_runs_knows_nothing() -> None:
    assert stats.clopper_pearson(0, 0) == (0.0, 1.0)


def test_binom_cdf_matches_direct_sum() -> None:
    n, p = 12, 0.3
    direct = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(5))
    assert stats.binom_cdf(4, n, p) == pytest.approx(direct, rel=1e-12)
    assert stats.binom_cdf(2000, 5000, 0.5) < 1e-40  # large n neither overflows nor errs


def test_invalid_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="0 <= k <= n"):
        stats.clopper_pearson(5, 3)
    with pytest.raises(ValueError, match="non-negative"):
        stats.fisher_exact(-1, 0, 0, 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        stats.runs_to_bound(1.0)


def test_zero_failure_bound_and_rule_of_three() -> None:
    assert stats.upper_bound_no_failures(30) == pytest.approx(1 - 0.05 ** (1 / 30))
    assert stats.upper_bound_no_failures(30) < stats.rule_of_three(30) == pytest.approx(0.1)
    assert stats.upper_bound_no_failures(0) == 1.0
    assert stats.rule_of_three(2) == 1.0  # 3/2 capped


def test_runs_to_bound_is_the_smallest_sufficient_count() -> None:
    n = stats.runs_to_bound(0.01)
    assert n == 299  # the rule of three would say 300
    assert stats.upper_bound_no_failures(n) <= 0.01 < stats.upper_bound_no_failures(n - 1)
    assert stats.runs_to_bound(0.05) == 59


@pytest.mark.parametrize(
    ("table", "p"),
    [
        ((3, 27, 0, 30), 0.2372881),  # fisher.test(matrix(c(3,0,27,30), 2))
        ((1, 9, 11, 3), 0.002759456),
        ((8, 0, 0, 8), 0.0001554002),
        ((0, 5, 0, 5), 1.0),
        ((2, 3, 3, 2), 1.0),
    ],
)
def test_fisher_exact_matches_reference(table: tuple[int, int, int, int], p: float) -> None:
    assert stats.fisher_exact(*table) == pytest.approx(p, rel=1e-6)


def test_fisher_exact_is_symmetric_in_rows_and_columns() -> None:
    assert stats.fisher_exact(6, 2, 1, 7) == pytest.approx(stats.fisher_exact(1, 7, 6, 2))
    assert stats.fisher_exact(6, 2, 1, 7) == pytest.approx(stats.fisher_exact(6, 1, 2, 7))
    assert stats.fisher_exact(0, 0, 0, 0) == 1.0


def test_runs_to_significance_is_the_smallest_sufficient_count() -> None:
    """3/3 against 0/3 is p = 0.1; at 4 runs a tree the same rates give p = 2/70 < 0.05."""
    assert stats.fisher_exact(3, 0, 0, 3) == pytest.approx(0.1)
    assert stats.runs_to_significance((3, 3), (0, 3), 0.05) == 4
    assert stats.fisher_exact(4, 0, 0, 4) < 0.05
    # One failure in four: 5 failures in 20 runs against none is the first significant table
    # (counts rounded against significance: 19 runs are 4 failures, p = 0.105).
    assert stats.runs_to_significance((1, 4), (0, 4), 0.05) == 20
    assert stats.fisher_exact(5, 15, 0, 20) < 0.05 <= stats.fisher_exact(4, 15, 0, 19)
    assert stats.runs_to_significance((2, 4), (2, 4), 0.05) is None  # equal rates never
    assert stats.runs_to_significance((1, 0), (0, 3), 0.05) is None  # no runs: no rate
