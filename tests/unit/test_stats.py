"""The audit's statistics (vhct.reporting.stats): Holm, the bootstrap tests and the intervals that
invert them, the adaptive resamples, the seeds for 80 % power and the printing of p-values."""

from __future__ import annotations

import math

import numpy as np
import pytest
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
    assert stats.mean_test(x, 0.95, "less") < 0.001 and stats.mean_test(x, 1.0, "greater") > 0.99


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
