"""Uncertainty quantifiers, thresholds, resolution descriptors and the confidence schedule."""

import math

import numpy as np
import pytest

from vhct.optimizers.resolution import Exponential, Logarithmic, Polynomial, make_resolution
from vhct.optimizers.uncertainty import Bernstein, ConfidenceSchedule, Hoeffding


def brute_force_tau(se, bound, limit=10**7):
    n = 1
    while se(n) > bound:
        n += 1
        assert n < limit
    return n


@pytest.mark.parametrize(
    "quantifier",
    [Hoeffding(c=0.1, b=1.0), Hoeffding(c=0.3, b=2.0), Bernstein(c=0.1, b=1.0), Bernstein(c=0.5, b=0.5)],
)
def test_closed_form_tau_equals_brute_force_least_count(quantifier):
    rng = np.random.default_rng(0)
    for _ in range(150):
        oe = float(10 ** rng.uniform(-2.3, 0.3))
        variance = float(10 ** rng.uniform(-5, -0.5))
        log_term = float(rng.uniform(0.5, 25))
        tau = quantifier.threshold(oe, variance, log_term)
        expected = brute_force_tau(lambda n, v=variance, lt=log_term: quantifier(n, v, lt), oe)
        assert tau == expected


def test_bernstein_tau_matches_the_papers_lemma():
    q = Bernstein(c=0.1, b=1.0, variance_floor=1e-6)
    oe, v, log_term = 0.2, 0.01, 12.0
    lemma = (1 + math.sqrt(1 + 3 * 1.0 * oe / (v / 2))) ** 2 * 0.1**2 / (2 * oe**2) * v * log_term
    assert q.threshold(oe, v, log_term) == math.ceil(lemma)
    # at the real solution SE equals OE exactly
    se_at = 0.1 * math.sqrt(2 * v * log_term / lemma) + 3 * 0.01 * log_term / lemma
    assert se_at == pytest.approx(oe, rel=1e-12)


def test_se_formulas_and_infinite_before_any_pull():
    h, b = Hoeffding(c=0.1, b=2.0), Bernstein(c=0.1, b=2.0, variance_floor=1e-3)
    assert math.isinf(h(0, 0.0, 5.0)) and math.isinf(b(0, 0.0, 5.0))
    assert h(4, 0.0, 9.0) == pytest.approx(2.0 * 0.1 * math.sqrt(9 / 4))
    expected = 0.1 * math.sqrt(2 * 0.04 * 9.0 / 4) + 3 * 2.0 * 0.01 * 9.0 / 4
    assert b(4, 0.04, 9.0) == pytest.approx(expected)
    # the variance is floored
    assert b(4, 0.0, 9.0) == pytest.approx(b(4, 1e-3, 9.0))


def test_low_variance_gives_smaller_bernstein_threshold_than_hoeffding():
    """The paper's claim behind VHCT: with small noise, tau(VHCT) << tau(HCT) at deep levels."""
    hoeff, bern = Hoeffding(c=0.1, b=1.0), Bernstein(c=0.1, b=1.0)
    log_term = ConfidenceSchedule.for_smoothness(0.01, 1.0, 0.75).log_term(10_000)
    for depth in range(6, 20):
        oe = 0.75**depth
        assert bern.threshold(oe, 0.1**2 / 12, log_term) < hoeff.threshold(oe, 0.0, log_term)


def test_confidence_schedule():
    s = ConfidenceSchedule.for_smoothness(delta=0.01, nu=1.0, rho=0.75)
    assert s.c1 == pytest.approx((0.75 / 3) ** 0.125)
    assert [s.t_plus(t) for t in (1, 2, 3, 4, 5, 8, 9, 1000)] == [1, 2, 4, 4, 8, 8, 16, 1024]
    assert s.log_term(5) == pytest.approx(math.log(8 / (s.c1 * 0.01)))
    assert s.log_term(5) == s.log_term(8) < s.log_term(9)
    with pytest.raises(ValueError, match="delta"):
        ConfidenceSchedule(delta=1.5)
    with pytest.raises(ValueError, match="round"):
        s.t_plus(0)


def test_resolution_descriptors():
    assert Exponential(nu=2.0, rho=0.5)(3) == pytest.approx(0.25)
    phi = Polynomial(a=2.0, p=1.0)
    assert [phi(h) for h in (0, 1, 2, 4, 8)] == [1.0, 1.0, 1.0, 0.5, 0.25]
    assert all(0 < phi(h) <= 1 for h in range(100))
    log_phi = Logarithmic()
    assert log_phi(0) == 1.0 and log_phi(1) == 1.0
    assert log_phi(10) == pytest.approx(1 / (math.log(10) + 1))
    assert make_resolution(None, nu=1.0, rho=0.5)(2) == 0.25
    assert make_resolution({"kind": "polynomial", "a": 2, "p": 1}, nu=1, rho=0.5)(4) == 0.5
    custom = make_resolution(lambda h: 1 / (h + 1), nu=1, rho=0.5)
    assert custom(3) == 0.25
    with pytest.raises(ValueError, match="kind"):
        make_resolution({"kind": "cubic"}, nu=1, rho=0.5)
    with pytest.raises(ValueError, match="rho"):
        Exponential(nu=1.0, rho=1.0)
