"""One-sided rank tests across seeds, their smallest attainable p-values, and effect sizes.

The audit compares per-seed samples of a statistic (one number per run). Runs of two algorithms
under the same seed index see different noise draws and split choices, so the unpaired
Mann-Whitney U test is the default; the paired Wilcoxon signed-rank test is available for
samples that are genuinely paired, and Page's L test checks a monotone trend along checkpoints
of the same runs (seeds as blocks). With few seeds a rank test may be unable to reach a given
level at all: :func:`min_p_value` says so, and the audit calls such a comparison inconclusive.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from scipy import stats

#: the tests the claims file may name
TESTS = ("mannwhitneyu", "wilcoxon", "page")
#: the alternatives of the pairwise tests (scipy's names)
ALTERNATIVES = ("less", "greater", "two-sided")

Samples = Mapping[int, float]


def _check_test(test: str) -> None:
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")


def paired(a: Samples, b: Samples) -> tuple[np.ndarray, np.ndarray]:
    """Values of ``a`` and ``b`` at the seeds both have, in seed order."""
    seeds = sorted(set(a) & set(b))
    return np.array([a[s] for s in seeds], dtype=float), np.array([b[s] for s in seeds], dtype=float)


def sample_sizes(a: Samples, b: Samples, test: str) -> tuple[int, int]:
    """Sizes the test works with: the common seeds for a paired test, else each sample's size."""
    _check_test(test)
    if test == "wilcoxon":
        n = len(set(a) & set(b))
        return n, n
    return len(a), len(b)


def compare(
    a: Samples, b: Samples, alternative: str, test: str = "mannwhitneyu", shift: float = 0.0
) -> float:
    """p-value of the test of ``a`` against ``b + shift`` (alternative ``less``: a tends to be smaller).

    ``shift`` moves the second sample, which turns the rank tests into tests of a location margin
    (non-inferiority and equivalence). A test without any information (all values equal) gives 1.
    """
    _check_test(test)
    if test == "page":
        raise ValueError("test 'page' compares checkpoints of one sample; use trend()")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    if test == "wilcoxon":
        x, y = paired(a, b)
        diff = x - (y + shift)
        if x.size == 0 or np.all(diff == 0.0):
            return 1.0
        p = stats.wilcoxon(diff, alternative=alternative).pvalue
    else:
        x = np.array(list(a.values()), dtype=float)
        y = np.array(list(b.values()), dtype=float) + shift
        if x.size == 0 or y.size == 0:
            return 1.0
        p = stats.mannwhitneyu(x, y, alternative=alternative).pvalue
    return 1.0 if math.isnan(p) else float(p)


def trend(matrix: np.ndarray, decreasing: bool) -> float:
    """One-sided p-value of Page's L test for a trend along the columns (rows are seeds)."""
    data = np.asarray(matrix, dtype=float)
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] < 3:
        raise ValueError(f"Page's test needs at least 2 seeds and 3 checkpoints, got shape {data.shape}")
    k = data.shape[1]
    predicted = np.arange(k, 0, -1) if decreasing else np.arange(1, k + 1)
    p = stats.page_trend_test(data, predicted_ranks=predicted).pvalue
    return 1.0 if math.isnan(p) else float(p)


def min_p_value(test: str, n_a: int, n_b: int = 0, checkpoints: int = 0) -> float:
    """Smallest one-sided p-value the test can give with these sample sizes (exact null distribution).

    Mann-Whitney: ``1 / C(n_a + n_b, n_a)``; Wilcoxon: ``2**-n``; Page: ``(1 / k!)**n`` (every
    seed perfectly ordered). A comparison whose smallest p exceeds the level cannot be decided.
    """
    _check_test(test)
    if n_a < 1 or (test == "mannwhitneyu" and n_b < 1):
        return 1.0
    if test == "mannwhitneyu":
        return 1.0 / math.comb(n_a + n_b, n_a)
    if test == "wilcoxon":
        return 0.5**n_a
    if checkpoints < 2:
        return 1.0
    return math.factorial(checkpoints) ** (-n_a)


def probability_of_superiority(a: Samples, b: Samples) -> float:
    """P(a < b) + P(a = b) / 2 over all pairs (the Mann-Whitney U of ``a < b`` over n_a n_b)."""
    x = np.array(list(a.values()), dtype=float)
    y = np.array(list(b.values()), dtype=float)
    if x.size == 0 or y.size == 0:
        return float("nan")
    less = (x[:, None] < y[None, :]).sum()
    ties = (x[:, None] == y[None, :]).sum()
    return float((less + 0.5 * ties) / (x.size * y.size))


def relative_difference(mean_a: float, mean_b: float) -> float:
    """``(mean_b - mean_a) / |mean_b|``: how much smaller ``a`` is, relative to ``b`` (inf/0 when b = 0)."""
    if mean_b == 0.0:
        return 0.0 if mean_a == 0.0 else math.copysign(math.inf, -mean_a)
    return (mean_b - mean_a) / abs(mean_b)


def ratio(mean_a: float, mean_b: float) -> float:
    """``mean_a / mean_b`` (inf when b = 0 < a, nan when both are 0)."""
    if mean_b == 0.0:
        return math.nan if mean_a == 0.0 else math.copysign(math.inf, mean_a)
    return mean_a / mean_b


def describe(sample: Samples) -> dict[str, float | int]:
    """n, mean and sample standard deviation (0 for one value)."""
    x = np.array(list(sample.values()), dtype=float)
    if x.size == 0:
        return {"n": 0, "mean": math.nan, "std": math.nan}
    return {"n": int(x.size), "mean": float(x.mean()), "std": float(x.std(ddof=1)) if x.size > 1 else 0.0}
