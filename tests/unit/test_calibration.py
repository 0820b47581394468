"""The calibration on samples of known truth, fast version (benchmarks/audit_calibration.py has the
full table): the least favourable truths, thresholds from the claims file, spread from the shipped
audit."""

from __future__ import annotations

import json

import numpy as np

from vhct.reporting.audit import calibration as cal
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.verdicts import REPRODUCED


def test_rules_read_their_thresholds_from_the_claims_file():
    claims = load_claims()
    by_id = {c.id: c for c in claims.claims}
    for rule in cal.rules():
        claim_id = rule.name.split("(")[1].rstrip(")")
        assert rule.claim.thresholds == by_id[claim_id].thresholds
        assert rule.claim.alpha == by_id[claim_id].alpha
    assert (claims.defaults.alpha, claims.defaults.min_seeds) == (cal.ALPHA, cal.MIN_SEEDS)


def test_spread_and_seeds_are_measured_from_the_shipped_audit():
    audit = json.loads(cal.SHIPPED_AUDIT.read_text())
    c = audit["claims"][0]["experiments"][0]["comparisons"][0]
    x = np.array(list(c["values_a"].values()))
    assert np.isclose(cal.shipped_cvs(), x.std(ddof=1) / x.mean()).any()
    assert 20 in cal.shipped_seeds()


def test_least_favourable_reproduction_one_comparison_at_the_margin():
    """fig3's rule (12 comparisons): one at the claimed margin, 11 far inside. The claim then rests
    on one test at alpha, so its false "reproduced" rate is about alpha, not alpha^12."""
    rule = next(r for r in cal.rules() if "fig3" in r.name)
    truths = cal.scenarios(rule)["one at the claimed margin"]
    assert truths[0] == 0.95 and all(t < 0.95 * 0.7 for t in truths[1:])
    reps = 60
    rng = np.random.default_rng(5)
    got = cal.outcomes(rule, truths, 20, "normal", 0.05, reps, rng)
    assert got[REPRODUCED] <= cal.binomial_bound(cal.ALPHA, reps)
    # the far comparisons alone reproduce: with the marginal one far too, the claim reproduces
    far = cal.outcomes(rule, [truths[1]] * len(truths), 20, "normal", 0.05, 10, rng)
    assert far[REPRODUCED] == 1.0


def test_a_tie_is_never_reproduced_or_the_opposite():
    rule = next(r for r in cal.rules() if "fig3" in r.name)
    tie = cal.scenarios(rule)["tie"]
    assert 0.95 < tie[0] < 1 / 0.95
    got = cal.outcomes(rule, tie, 20, "bimodal", 0.05, 20, np.random.default_rng(2))
    assert got[REPRODUCED] == 0.0 and got["the opposite"] == 0.0


def test_a_majority_claims_least_favourable_truth_leaves_only_need_minus_one_experiments_true():
    rule = next(r for r in cal.rules() if r.claim.require == "majority")
    claimed, _, _ = cal.margins(rule)
    truths = cal.scenarios(rule)["one at the claimed margin"]
    per = rule.comparisons
    false = [e for e in range(rule.experiments) if claimed in truths[e * per : (e + 1) * per]]
    need = rule.experiments // 2 + 1
    assert len(false) == rule.experiments - need + 1  # so a majority cannot truly hold
    got = cal.outcomes(rule, truths, 20, "normal", 0.05, 40, np.random.default_rng(3))
    assert got[REPRODUCED] <= cal.binomial_bound(cal.ALPHA, 40)
