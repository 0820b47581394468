"""The calibration on samples of known truth, fast version (benchmarks/audit_calibration.py has the
full table): the least favourable truths, thresholds from the claims file, spread from the shipped
audit."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from support import TINY

from vhct.pipeline.config import load, validate_config
from vhct.reporting.audit import calibration as cal
from vhct.reporting.audit import spread
from vhct.reporting.audit.claims import CLAIMS_PATH, load_claims
from vhct.reporting.audit.claims_model import Claim
from vhct.reporting.audit.evaluate import run_audit
from vhct.reporting.audit.job import audit_context
from vhct.reporting.audit.records import AUDIT_FORMAT, AuditRecordError, audit_json
from vhct.reporting.audit.runs import Run
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
    """The shipped audit (format 2 until issue 32 re-ships it): read by the stale-format fallback."""
    audit = json.loads(spread.SHIPPED_AUDIT.read_text())
    c = audit["claims"][0]["experiments"][0]["comparisons"][0]
    x = np.array(list(c["values_a"].values()))
    assert np.isclose(spread.shipped_cvs(), x.std(ddof=1) / x.mean()).any()
    assert 20 in spread.shipped_seeds()


def test_spread_and_seeds_of_a_current_audit_come_through_the_typed_reader(tmp_path):
    """An audit JSON written by the audit's one writer (a real config's context, made-up runs of
    known spread) read by the calibration: the per-seed samples' spread and each setting's seeds."""
    config = load([TINY])[0].as_dict()
    config["experiments"]["garland"]["caps"] = {"short": {"max_seeds": 1}}
    claims = load_claims()
    context = audit_context(validate_config(config), claims, CLAIMS_PATH, [TINY])
    lowest = Claim.model_validate({
        "id": "c", "quote": "q", "location": "l", "kind": "lowest", "statistic": "cumulative_regret",
        "alpha": 0.05, "min_seeds": 20, "round": "final", "require": "all", "experiments": ["e"],
        "target": "A", "others": ["B"], "thresholds": {"min_relative_effect": 0.05},
    })  # fmt: skip
    runs = {"e": {"A": made_up_runs(50.0, 5.0), "B": made_up_runs(100.0, 5.0)}}
    audit = run_audit(claims.model_copy(update={"claims": [lowest], "sensitivity": []}), runs, context)
    path = tmp_path / "audit.json"
    path.write_text(audit_json(audit))
    cvs = spread.shipped_cvs(path)
    assert len(cvs) == 2 and np.allclose(sorted(cvs), [0.05, 0.1])  # sd / mean of B and of A
    garland = context.experiments["garland"]
    seeds = spread.shipped_seeds(path)
    assert {1, len(garland.seeds)} <= set(seeds) and list(seeds) == sorted(seeds, reverse=True)
    newer = json.loads(path.read_text())
    newer["format"] = AUDIT_FORMAT + 1  # not an older format: refused by the reader, not read by key
    path.write_text(json.dumps(newer))
    with pytest.raises(AuditRecordError, match=f"audit format {AUDIT_FORMAT + 1}"):
        spread.shipped_seeds(path)


def made_up_runs(mean: float, sd: float, n: int = 20, horizon: int = 10) -> list[Run]:
    """n runs (against f* = 0) whose final cumulative regrets have exactly this mean and sd."""
    z = np.random.default_rng(0).standard_normal(n)
    finals = mean + sd * (z - z.mean()) / z.std(ddof=1)
    t = np.arange(1, horizon + 1)
    runs = []
    for seed, final in enumerate(finals):
        cumulative = final * t / horizon
        table = pd.DataFrame({
            "t": t, "value": -np.diff(cumulative, prepend=0.0), "cumulative_regret": cumulative,
            "depth": 1.0, "step_seconds": 1e-3, "optimizer_seconds": 1e-4,
        })  # fmt: skip
        runs.append(Run(seed, table, 0.0))
    return runs


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
