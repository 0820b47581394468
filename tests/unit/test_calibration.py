"""The calibration on samples of known truth, fast version (benchmarks/audit_calibration.py has the
full table): the least favourable truths, one rule per distinct claim shape of the claims file, spread
from the shipped audit (``benchmarks/calibration.py``)."""

from __future__ import annotations

import json
import math

import calibration as cal  # benchmarks/calibration.py (pyproject: pytest pythonpath)
import numpy as np
import pandas as pd
import pytest
from support import TINY

from vhct.pipeline.config import load, validate_config
from vhct.reporting.audit.claims import CLAIMS_PATH, load_claims
from vhct.reporting.audit.claims_model import Claim
from vhct.reporting.audit.evaluate import run_audit
from vhct.reporting.audit.records import AUDIT_FORMAT, AuditRecordError, audit_json, read_audit
from vhct.reporting.audit.runs import Run
from vhct.reporting.audit.verdicts import REPRODUCED
from vhct.reporting.audit_job import audit_context


def shape(claim: Claim) -> tuple:
    """What a rule is made of: the claim's kind, margins, direction, require, level and structure."""
    rule = cal.rule_of(claim)
    return (
        claim.kind,
        claim.thresholds,
        claim.direction,
        claim.require,
        claim.alpha,
        rule.experiments,
        rule.comparisons,
    )


def test_rules_are_the_claims_files_distinct_shapes_with_their_thresholds():
    claims = load_claims()
    by_id = {c.id: c for c in claims.claims}
    rules = cal.rules()
    read = {c.id: [c, *c.at_margins()] for c in claims.claims}  # each claim and its other margins
    for rule in rules:
        claim_id = rule.name.split("(")[1].rstrip(")").split(" at ")[0]
        assert rule.claim.thresholds in [c.thresholds for c in read[claim_id]]
        assert rule.claim.alpha == by_id[claim_id].alpha
        assert rule.claim.min_seeds == 2  # every sample size is evaluated
        assert shape(rule.claim) in [shape(c) for c in read[claim_id]]
    # one rule per distinct shape: every claim (at every margin) has the rule of its shape, and no two
    # rules share one
    shapes = [shape(r.claim) for r in rules]
    assert len(set(shapes)) == len(shapes)
    assert {shape(c) for found in read.values() for c in found} == set(shapes)
    assert "lowest (fig3-vhct-lowest at min_relative_effect 0.05)" in [r.name for r in rules]


def test_rules_of_a_claims_file_follow_its_claims_not_their_ids():
    claims = load_claims()
    first = claims.claims[0]
    twin = first.model_copy(update={"id": "made-up-twin"})  # the same shape under another id
    other = first.model_copy(update={"id": "made-up-other", "alpha": first.alpha / 2})  # another level
    made_up = claims.model_copy(update={"claims": [first, twin, other]})
    rules = cal.rules(made_up)
    at = " at min_relative_effect 0.05"  # the project's margin each is read at beside its verdict
    assert [r.name for r in rules] == [
        f"{first.kind} ({first.id})",
        f"{first.kind} ({first.id}{at})",
        f"{first.kind} (made-up-other)",
        f"{first.kind} (made-up-other{at})",
    ]
    assert [r.claim.alpha for r in rules] == [first.alpha] * 2 + [first.alpha / 2] * 2
    assert [r.claim.thresholds for r in rules] == [first.thresholds, first.at_margins()[0].thresholds] * 2


def test_spread_and_seeds_are_measured_from_the_shipped_audit():
    """The shipped audit (format 5), read by the audit's one reader."""
    audit = read_audit(cal.SHIPPED_AUDIT)
    c = audit.claims[0].experiments[0].comparisons[0]
    x = np.array(list(c.values_a.values()))
    assert np.isclose(cal.shipped_cvs(), x.std(ddof=1) / x.mean()).any()
    assert 20 in cal.shipped_seeds()
    assert cal.shipped_cv() == pytest.approx(np.quantile(cal.shipped_cvs(), 0.9))


def test_spread_and_seeds_of_a_current_audit_come_through_the_typed_reader(tmp_path):
    """An audit JSON written by the audit's one writer (a real config's context, made-up runs of
    known spread) read by the calibration: the per-seed samples' spread and each setting's seeds."""
    config = load([TINY])[0].as_dict()
    config["experiments"]["garland"]["caps"] = {"short": {"max_seeds": 1}}
    claims = load_claims()
    context = audit_context(validate_config(config), claims, CLAIMS_PATH, [TINY])
    lowest = Claim.model_validate(
        {
            "id": "c",
            "quote": "q",
            "location": "l",
            "kind": "lowest",
            "statistic": "cumulative_regret",
            "alpha": 0.05,
            "min_seeds": 20,
            "round": "final",
            "require": "all",
            "experiments": ["e"],
            "target": "A",
            "others": ["B"],
            "thresholds": {"min_relative_effect": 0.0},
            "effect_of_interest": {"value": 0.9, "reason": "made up"},
        }
    )
    runs = {"e": {"A": made_up_runs(50.0, 5.0), "B": made_up_runs(100.0, 5.0)}}
    audit = run_audit(claims.model_copy(update={"claims": [lowest], "sensitivity": []}), runs, context)
    path = tmp_path / "audit.json"
    path.write_text(audit_json(audit))
    cvs = cal.shipped_cvs(path)
    assert len(cvs) == 2 and np.allclose(sorted(cvs), [0.05, 0.1])  # sd / mean of B and of A
    garland = context.experiments["garland"]
    seeds = cal.shipped_seeds(path)
    assert {1, len(garland.seeds)} <= set(seeds) and list(seeds) == sorted(seeds, reverse=True)
    newer = json.loads(path.read_text())
    newer["format"] = AUDIT_FORMAT + 1  # not an older format: refused by the reader, not read by key
    path.write_text(json.dumps(newer))
    with pytest.raises(AuditRecordError, match=f"audit format {AUDIT_FORMAT + 1}"):
        cal.shipped_seeds(path)


def made_up_runs(mean: float, sd: float, n: int = 20, horizon: int = 10) -> list[Run]:
    """n runs (against f* = 0) whose final cumulative regrets have exactly this mean and sd."""
    z = np.random.default_rng(0).standard_normal(n)
    finals = mean + sd * (z - z.mean()) / z.std(ddof=1)
    t = np.arange(1, horizon + 1)
    runs = []
    for seed, final in enumerate(finals):
        cumulative = final * t / horizon
        table = pd.DataFrame(
            {
                "t": t,
                "value": -np.diff(cumulative, prepend=0.0),
                "cumulative_regret": cumulative,
                "depth": 1.0,
                "step_seconds": 1e-3,
                "optimizer_seconds": 1e-4,
            }
        )
        runs.append(Run(seed, table, 0.0))
    return runs


def test_least_favourable_reproduction_one_comparison_at_the_margin():
    """The all-must-hold rule of the most comparisons: one at the claimed margin, the others far
    inside. The claim then rests on one test at alpha, so its false "reproduced" rate is about alpha,
    not alpha^k."""
    rule = max(
        (r for r in cal.rules() if r.claim.require == "all" and not r.claim.spec.additive),
        key=lambda r: r.experiments * r.comparisons,
    )
    claimed, _, side = cal.margins(rule)
    truths = cal.scenarios(rule)["one at the claimed margin"]
    assert len(truths) == rule.experiments * rule.comparisons > 2
    far = cal.far_inside(rule)
    assert truths[0] == claimed and truths[1:] == [far] * (len(truths) - 1)
    assert side * math.log(far / claimed) >= cal.FAR_INSIDE - 1e-12  # far inside the claimed region
    reps = 60
    rng = np.random.default_rng(5)
    got = cal.outcomes(rule, truths, 20, "normal", 0.05, reps, rng)
    assert got[REPRODUCED] <= cal.binomial_bound(rule.claim.alpha, reps)
    # the far comparisons alone reproduce: with the marginal one far too, the claim reproduces
    far = cal.outcomes(rule, [truths[1]] * len(truths), 20, "normal", 0.05, 10, rng)
    assert far[REPRODUCED] == 1.0


def test_a_tie_is_never_reproduced_or_the_opposite():
    rule = next(r for r in cal.rules() if "tie" in cal.scenarios(r) and not r.claim.spec.additive)
    claimed, refuting, _ = cal.margins(rule)
    tie = cal.scenarios(rule)["tie"]
    assert min(claimed, refuting) < tie[0] < max(claimed, refuting)
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
    assert got[REPRODUCED] <= cal.binomial_bound(rule.claim.alpha, 40)


def test_the_two_stage_design_keeps_its_false_verdict_rates_within_alpha():
    """Issue 37: a pilot of 20 seeds from a known truth, the analysis plan's seeds (the audit's power
    computation, floored and capped), a fresh confirmatory sample of that many, the verdict on it
    alone: false reproduction and refutation within alpha + 3 Monte Carlo errors (a few repetitions;
    benchmarks/audit_calibration.py --only-two-stage has the table)."""
    rule = min(cal.rules(), key=lambda r: r.experiments * r.comparisons)
    reps = 30
    row = cal.two_stage_rates(rule, "normal", reps, 0, 0.1)
    bound = cal.binomial_bound(rule.claim.alpha, reps)
    assert max(row.false_reproduction, row.false_refutation, row.false_opposite) <= bound
    assert row.mean_seeds > 20  # the plan sized the comparisons at the margins past the pilot's 20
    lines = []
    assert cal.two_stage_table([row], rule.claim.alpha, lines.append)
    assert lines[-1].startswith(f"| {rule.name} | normal | {row.false_reproduction:.3f} ± ")


def test_the_calibrations_pilot_need_is_the_plans_computation_on_its_samples():
    """The two-stage simulation reads each pilot comparison's own need; the plan computes it again
    from the samples alone (``vhct.reporting.audit.plan.seeds_needed``): the same number."""
    from functools import partial

    from vhct.reporting.audit.plan import seeds_needed, sides

    rng = np.random.default_rng(2)
    for rule in cal.rules():
        draw = partial(cal.draw, rng, "normal", 0.2)
        comp = rule.claim.spec.made_up(rule.claim, "e0", cal.margins(rule)[0], draw, 20)
        again = seeds_needed(rule.claim, comp.experiment, comp.a, comp.b, sides(comp))
        assert again == comp.seeds_needed, rule.name
