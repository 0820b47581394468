"""The audit's statistics (vhct.reporting.stats): Holm, the bootstrap tests and the intervals that
invert them, the adaptive resamples, the seeds for 80 % power and the printing of p-values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize as sps_optimize
from scipy import stats as sps

from vhct.reporting import stats


def test_holm_matches_a_hand_computed_case():
    # p sorted: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06, running max), 0.5 (x1 -> 0.5)
    assert stats.holm([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.06, 0.5, 0.04, 0.06])
    assert stats.holm([0.4, 0.9]) == pytest.approx([0.8, 0.9])  # capped and monotone


def samples(seed=3, n=20, ratio=0.9, cv=0.1):
    rng = np.random.default_rng(seed)
    return rng.normal(100 * ratio, 100 * ratio * cv, n), rng.normal(100, 100 * cv, n)


def test_interval_inverts_the_one_sided_tests():
    a, b = samples()
    boot = stats.Bootstrap.of(a, b, 999)
    low, high = boot.interval(0.05)
    assert low < a.mean() / b.mean() < high
    # just inside the interval neither test rejects; just outside, the test on that side does
    assert boot.p(high * 0.999, "less") > 0.05 and boot.p(high * 1.001, "less") <= 0.05
    assert boot.p(low * 1.001, "greater") > 0.05 and boot.p(low * 0.999, "greater") <= 0.05


def test_slope_interval_on_the_line_and_bounds_on_one_sample():
    x = np.random.default_rng(0).normal(0.7, 0.05, 20)
    low, high = stats.Bootstrap.of(x, 1.0, 999).interval(0.05, ratio=False)
    assert low < x.mean() < high and high - low < 0.1
    (below, above), _ = stats.bootstrap_tests(x, 1.0, [(0.95, "less"), (1.0, "greater")], 0.05)
    assert below < 0.001 and above > 0.99


def test_contrast_interval_inverts_the_contrast_test():
    rng = np.random.default_rng(1)
    a1, b1, a2, b2 = (rng.normal(m, 5, 20) for m in (80, 100, 95, 100))
    low, high = stats.contrast_interval(a1, b1, a2, b2, 0.05)
    assert stats.contrast_test(a1, b1, a2, b2, "less", high) == pytest.approx(0.05)
    assert stats.contrast_test(a1, b1, a2, b2, "greater", low) == pytest.approx(0.05)


def test_resamples_grow_only_near_a_decision_level():
    a, b = samples(ratio=0.5)  # far from any margin: p at the floor of 999 is far below alpha / 1
    _, boot = stats.bootstrap_tests(a, b, [(1.0, "less")], 0.05, family=1)
    assert boot.resamples == 999
    # a margin that puts p near alpha: refined until it is 3 s.e. away or at the largest count
    counts = []
    for margin in np.linspace(0.5, 0.56, 13):
        ps, boot = stats.bootstrap_tests(a, b, [(margin, "less")], 0.05, family=1)
        counts.append(boot.resamples)
        assert boot.resamples == stats.RESAMPLES[-1] or not stats.near_level(ps[0], boot.resamples, 0.05, 1)
    assert max(counts) > stats.RESAMPLES[0]  # some margin put p near alpha


def test_p_values_at_the_floor_print_as_an_upper_bound():
    assert stats.format_p(0.001, 1 / 1000) == "p < 0.001"
    assert stats.format_p(1 / 10000, 1 / 10000) == "p < 0.0001"
    assert stats.format_p(0.0234, 1 / 1000) == "p = 0.0234"
    assert stats.format_p(0.0, None) == "p = 0"


def test_seeds_for_power_is_the_normal_formula():
    z = sps.norm.ppf(0.95) + sps.norm.ppf(0.8)
    assert stats.seeds_for_power(-1.0, 4.0, 0.05) == math.ceil((z * 4.0) ** 2)
    assert stats.seeds_for_power(0.0, 1.0, 0.05) is None
    # the delta-method sample size reaches the power it promises (simulated one-sided z-tests)
    rng = np.random.default_rng(0)
    n = stats.seeds_for_power(-0.5, 1.0, 0.05)
    x = rng.normal(-0.5, 1.0, (4000, n))
    power = np.mean(x.mean(axis=1) / (1.0 / math.sqrt(n)) < -sps.norm.ppf(0.95))
    assert 0.77 < power < 0.83


# --- intervals on degenerate samples (ties, no spread) -------------------------------------------

ALPHA = 0.05
#: seeds per setting, as in the paper
SEEDS = 20
#: DoubleSine, vhct-deeper-tree-low-noise (shipped audit): VHCT's depth 14 on 19 seeds and 15 on
#: one, HCT's 12 on all 20; the shipped interval was [1.166, inf)
DOUBLESINE_A = np.r_[np.full(SEEDS - 1, 14.0), 15.0]
DOUBLESINE_B = np.full(SEEDS, 12.0)


def one_differs(value: float, other: float) -> np.ndarray:
    """SEEDS - 1 seeds at ``value``, the last at ``other``."""
    return np.r_[np.full(SEEDS - 1, value), other]


def fieller(x, y, alpha: float = ALPHA) -> tuple[float, float]:
    """Fieller's 1 - 2 alpha interval of mean(x) / mean(y), independently: the margins c where
    Welch's statistic (mean_x - c mean_y) / sqrt(se_x^2 + c^2 se_y^2) lies within Student's t
    quantiles at min(n) - 1 degrees of freedom, its ends found by root finding."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    mx, my = x.mean(), y.mean()
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    if vx == vy == 0.0:
        return mx / my, mx / my
    q = sps.t.ppf(1 - alpha, min(x.size, y.size) - 1)

    def t(c):
        return (mx - c * my) / np.sqrt(vx + c * c * vy)

    r, tiny, huge = mx / my, 1e-12, 1e12
    low = sps_optimize.brentq(lambda c: t(c) - q, tiny, r, xtol=1e-14) if t(tiny) > q else 0.0
    high = sps_optimize.brentq(lambda c: t(c) + q, r, huge, xtol=1e-14) if t(huge) < -q else math.inf
    return low, high


def audit_interval(a, b, alpha: float = ALPHA) -> tuple[float, float]:
    """The interval as the audit computes it: from the adaptive bootstrap of its tests."""
    _, boot = stats.bootstrap_tests(a, b, [(1.0, "less"), (1.0, "greater")], alpha)
    return boot.interval(alpha)


def test_doublesine_interval_is_finite_and_fieller():
    boot = stats.Bootstrap.of(DOUBLESINE_A, DOUBLESINE_B, 9999)
    # resamples without the one 15 have no spread: (19/20)^20 of them, within 4 binomial s.e.
    share = (1 - 1 / SEEDS) ** SEEDS
    assert abs(boot.flat / boot.resamples - share) < 4 * math.sqrt(share * (1 - share) / boot.resamples)
    assert boot.degenerate(ALPHA)
    low, high = audit_interval(DOUBLESINE_A, DOUBLESINE_B)
    assert math.isfinite(high) and low < 14.05 / 12 < high
    assert (low, high) == pytest.approx(fieller(DOUBLESINE_A, DOUBLESINE_B), rel=1e-9)
    assert (low, high) == pytest.approx((1.164, 1.178), abs=5e-4)


@pytest.mark.parametrize(
    "a, b",
    [
        (one_differs(14.0, 15.0), np.full(SEEDS, 12.0)),  # one differing seed, the other side flat
        (np.full(SEEDS, 14.0), one_differs(12.0, 13.0)),  # the same on the other side
        (one_differs(14.0, 15.0), one_differs(12.0, 13.0)),  # one differing seed on each side
        (np.r_[np.full(SEEDS - 2, 14.0), 15.0, 16.0], np.full(SEEDS, 12.0)),  # two differing seeds
        (np.array([14.0, 14.0, 14.0, 14.0, 15.0]), np.full(5, 12.0)),  # five seeds
    ],
    ids=["one-seed-a", "one-seed-b", "one-seed-each", "two-seeds", "five-seeds"],
)
def test_tied_samples_give_fieller_interval(a, b):
    low, high = audit_interval(a, b)
    assert 0.0 < low < a.mean() / b.mean() < high < math.inf
    assert (low, high) == pytest.approx(fieller(a, b), rel=1e-9)


@pytest.mark.parametrize("a, b", [(14.0, 12.0), (12.0, 12.0), (0.5, 3.0)], ids=["ratio", "all-tied", "small"])
def test_no_spread_on_either_side_gives_the_point_ratio(a, b):
    x, y = np.full(SEEDS, a), np.full(SEEDS, b)
    low, high = audit_interval(x, y)
    assert low == high == a / b == fieller(x, y)[0]
    # the tests reject every other margin (p = 0), so the point is their inversion too
    boot = stats.Bootstrap.of(x, y, 999)
    assert boot.p(a / b * (1 + 1e-9), "less") == 0.0 and boot.p(a / b * (1 - 1e-9), "greater") == 0.0


def test_no_spread_on_one_side_keeps_the_bootstrap_interval_close_to_fieller():
    # a continuous sample against a flat one: no flat resamples, the bootstrap-t inversion stays
    x, y = np.random.default_rng(0).normal(14.0, 0.3, SEEDS), np.full(SEEDS, 12.0)
    boot = stats.Bootstrap.of(x, y, 9999)
    assert boot.flat == 0 and not boot.degenerate(ALPHA)
    low, high = boot.interval(ALPHA)
    assert boot.p(high * 1.001, "less") <= ALPHA < boot.p(high * 0.999, "less")
    f_low, f_high = fieller(x, y)
    assert abs(low - f_low) < 0.1 * (f_high - f_low) and abs(high - f_high) < 0.1 * (f_high - f_low)


def test_few_flat_resamples_keep_the_bootstrap_interval():
    # three differing seeds of 20: (17/20)^20 = 3.9 % flat resamples, below alpha: still the inversion
    a, b = np.r_[np.full(SEEDS - 3, 14.0), 15.0, 15.0, 16.0], np.full(SEEDS, 12.0)
    boot = stats.Bootstrap.of(a, b, 9999)
    assert boot.flat > 0 and not boot.degenerate(ALPHA)
    low, high = boot.interval(ALPHA)
    assert boot.p(high * 1.001, "less") <= ALPHA < boot.p(high * 0.999, "less")
    assert boot.p(low * 0.999, "greater") <= ALPHA < boot.p(low * 1.001, "greater")


def test_denominator_not_significant_leaves_the_upper_end_open():
    # b: 19 seeds at 1, one at 1000 (mean 51, s.e. 50): no finite upper end, as Fieller's
    a, b = one_differs(14.0, 15.0), one_differs(1.0, 1000.0)
    low, high = audit_interval(a, b)
    assert high == math.inf and low == pytest.approx(fieller(a, b)[0], rel=1e-9) and low > 0.0


@pytest.mark.parametrize("slopes", [np.full(SEEDS, 0.7), one_differs(0.7, 0.8)], ids=["all-tied", "one-seed"])
def test_slope_interval_on_tied_slopes_is_the_t_interval(slopes):
    low, high = stats.Bootstrap.of(slopes, 1.0, 9999).interval(ALPHA, ratio=False)
    sem = sps.sem(slopes)
    expected = (
        (slopes.mean(),) * 2 if sem == 0 else sps.t.interval(1 - 2 * ALPHA, SEEDS - 1, slopes.mean(), sem)
    )
    assert (low, high) == pytest.approx(expected, rel=1e-12)


def test_contrast_interval_without_spread_is_the_point_ratio_of_ratios():
    a1, b1, a2, b2 = (np.full(SEEDS, v) for v in (14.0, 12.0, 10.0, 9.0))
    low, high = stats.contrast_interval(a1, b1, a2, b2, ALPHA)
    assert low == pytest.approx(high) == pytest.approx((14.0 / 12.0) / (10.0 / 9.0), rel=1e-12)
    # one differing seed: the delta method's t interval on the log scale, finite
    a1 = one_differs(14.0, 15.0)
    d = math.log(a1.mean() / 12.0) - math.log(10.0 / 9.0)
    half = sps.t.ppf(1 - ALPHA, SEEDS - 1) * sps.sem(a1) / a1.mean()
    assert stats.contrast_interval(a1, b1, a2, b2, ALPHA) == pytest.approx(
        (math.exp(d - half), math.exp(d + half))
    )


def _p_by_indices(x, y, factor: float, alternative: str, resamples: int) -> float:
    """The studentized bootstrap p computed the direct way, each resample gathered from the seeded
    generator's indices (what the shared resample counts must reproduce exactly)."""
    rng = np.random.default_rng(stats.BOOTSTRAP_SEED)
    ix = rng.integers(0, x.size, (resamples, x.size))
    iy = rng.integers(0, y.size, (resamples, y.size))
    bx, by = x[ix], y[iy]
    mx, my = bx.mean(axis=1), by.mean(axis=1)
    vx, vy = bx.var(axis=1, ddof=1) / x.size, by.var(axis=1, ddof=1) / y.size
    diff = x.mean() - factor * y.mean()
    t = diff / math.sqrt(x.var(ddof=1) / x.size + factor**2 * y.var(ddof=1) / y.size)
    bse = np.sqrt(vx + factor**2 * vy)
    t_star = np.divide(mx - factor * my - diff, bse, out=np.zeros_like(bse), where=bse > 0.0)
    extreme = (t_star <= t) if alternative == "less" else (t_star >= t)
    return float((1 + extreme.sum()) / (resamples + 1))


@pytest.mark.parametrize("n", [3, 8, 20])
def test_the_shared_resample_counts_give_the_p_of_the_gathered_resamples(n):
    """The bootstrap reads its resamples as counts shared by every comparison of the same sizes (one
    matrix product per sample, drawn once per process): on identical draws its p-values are those of
    gathering every resample, also with tied values (flat resamples)."""
    rng = np.random.default_rng(n)
    samples = [
        (rng.normal(90.0, 10.0, n), rng.normal(100.0, 10.0, n + 1)),
        (np.round(rng.normal(5.0, 1.0, n)), np.round(rng.normal(5.0, 1.0, n))),  # ties
    ]
    for x, y in samples:
        boot = stats.Bootstrap.of(x, y, 999)
        for factor, alternative in ((0.95, "less"), (1.05, "greater"), (0.9, "greater")):
            assert boot.p(factor, alternative) == _p_by_indices(x, y, factor, alternative, 999)
        again = stats.Bootstrap.of(x + 0.0, y + 0.0, 999)  # the counts from the cache: the same p
        assert again.p(0.95, "less") == boot.p(0.95, "less")
