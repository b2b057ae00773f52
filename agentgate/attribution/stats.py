"""Small exact statistics for flake attribution, in pure Python (no scipy).

"3 failures in 30 runs versus 0 in 30" reads like a clear difference and is not one (two-sided
Fisher p = 0.24), and "0 failures in 10 runs" bounds the flake rate only at 26 %. These
functions put those numbers in the report so nobody over-reads a small sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

_BISECT_STEPS = 200  # halves [0, 1] far below float resolution; each step is one CDF sum


def _check(k: int, n: int) -> None:
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space so large n cannot overflow."""
    _check(k, n)
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n = math.lgamma(n + 1)
    total = 0.0
    for i in range(k + 1):
        log_comb = log_n - math.lgamma(i + 1) - math.lgamma(n - i + 1)
        total += math.exp(log_comb + i * log_p + (n - i) * log_q)
    return min(total, 1.0)


def _bisect_decreasing(func: Callable[[float], float], target: float) -> float:
    """The p in [0, 1] where a decreasing function of p crosses ``target``."""
    lo, hi = 0.0, 1.0
    for _ in range(_BISECT_STEPS):
        mid = (lo + hi) / 2
        if func(mid) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact two-sided Clopper-Pearson interval for a binomial rate k/n.

    With no runs nothing is known: (0, 1). The ends at k = 0 and k = n have closed forms.
    """
    _check(k, n)
    if n == 0:
        return (0.0, 1.0)
    tail = (1.0 - confidence) / 2
    if k == 0:
        lower = 0.0
    elif k == n:
        lower = float(tail ** (1.0 / n))
    else:
        # P(X >= k; p) = tail  <=>  P(X <= k-1; p) = 1 - tail
        lower = _bisect_decreasing(lambda p: binom_cdf(k - 1, n, p), 1.0 - tail)
    if k == n:
        upper = 1.0
    elif k == 0:
        upper = 1.0 - float(tail ** (1.0 / n))
    else:
        upper = _bisect_decreasing(lambda p: binom_cdf(k, n, p), tail)
    return (lower, upper)


def upper_bound_no_failures(n: int, confidence: float = 0.95) -> float:
    """The exact one-sided upper bound on a rate after ``n`` runs and no failure.

    It is what the rule of three (3/n) approximates: 1 - 0.05 ** (1/n) at 95 %.
    """
    if n <= 0:
        return 1.0
    return 1.0 - float((1.0 - confidence) ** (1.0 / n))


def rule_of_three(n: int) -> float:
    """The textbook 95 % upper bound 3/n after n runs without a failure (capped at 1)."""
    return 1.0 if n <= 0 else min(1.0, 3.0 / n)


def runs_to_bound(rate: float = 0.01, confidence: float = 0.95) -> int:
    """Failure-free runs needed before the exact one-sided bound drops to ``rate``.

    At 1 % and 95 % that is 299 (the rule of three says 300).
    """
    if not 0.0 < rate < 1.0:
        raise ValueError(f"rate must be strictly between 0 and 1, got {rate}")
    n = max(1, math.ceil(math.log(1.0 - confidence) / math.log1p(-rate)))
    while upper_bound_no_failures(n, confidence) > rate:  # guard the float rounding above
        n += 1
    while n > 1 and upper_bound_no_failures(n - 1, confidence) <= rate:
        n -= 1
    return n


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test for the 2x2 table [[a, b], [c, d]].

    Rows are the two trees (failed, passed); the p-value sums every table with the same
    margins that is no more likely than the observed one. Integer arithmetic makes the
    "no more likely" comparison exact, so no tolerance fudge is needed.
    """
    for value in (a, b, c, d):
        if value < 0:
            raise ValueError("table counts must be non-negative")
    row1, row2, col1 = a + b, c + d, a + c
    total = row1 + row2
    if total == 0:
        return 1.0
    observed = math.comb(row1, a) * math.comb(row2, c)
    low, high = max(0, col1 - row2), min(row1, col1)
    tail = 0
    for x in range(low, high + 1):
        weight = math.comb(row1, x) * math.comb(row2, col1 - x)
        if weight <= observed:
            tail += weight
    return float(Fraction(tail, math.comb(total, col1)))


def runs_to_significance(failing: tuple[int, int], clean: tuple[int, int], alpha: float,
                         limit: int = 1000) -> int | None:
    """Runs per tree at which Fisher's test (above) would reach ``p < alpha`` if the observed
    failure rates held: the smallest ``m`` whose table of ``m`` runs a tree at those rates is
    significant. None when none up to ``limit`` is (equal rates never are). Counts are
    rounded against significance (the failing tree's down, the other's up): never fewer runs
    than the rates need.

    Head failing 3 of 3 against base 0 of 3 is p = 0.1; at 4 runs a tree it is 0.029 (issue
    13: a deterministic bug after 3 runs was called a harness problem instead of "run 4").
    """
    (k1, n1), (k2, n2) = failing, clean
    if n1 <= 0 or n2 <= 0 or k1 * n2 <= k2 * n1:  # no rate, or no difference to grow
        return None
    for m in range(1, limit + 1):
        a, c = math.floor(m * k1 / n1), min(m, math.ceil(m * k2 / n2))
        if fisher_exact(a, m - a, c, m - c) < alpha:
            return m
    return None
