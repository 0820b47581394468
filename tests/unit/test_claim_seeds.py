"""The audit's pre-check: a cap that runs a setting a claim reads below the claim's minimum seeds is
refused before any job (issue 29), naming the claim, the setting and the cap, unless the config
leaves the claim out of that experiment."""

from __future__ import annotations

import copy

import pytest
from support import REPO

from vhct.pipeline import config as vc
from vhct.reporting import audit as va
from vhct.reporting.audit.claims import ClaimsError, check_claim_seeds, load_claims

CLAIMS = load_claims()


def paper_local() -> dict:
    """paper-local's plain dict (bases merged, defaults filled in), to change and validate again; its
    analysis plan unread (its own seed counts: tests/unit/test_plan.py builds and checks plans)."""
    return vc.load([REPO / "config" / "paper-local.yaml"], plan=False)[0].as_dict()


def test_the_shipped_configs_pass_the_pre_check():
    for name in ("config", "tiny", "paper", "paper-local"):
        cfg, _ = vc.load([REPO / "config" / f"{name}.yaml"], plan=name != "paper-local")
        check_claim_seeds(CLAIMS, cfg)


def test_a_seed_cap_below_a_claims_minimum_is_refused_naming_claim_setting_and_cap():
    config = paper_local()
    config["experiments"]["landmine"]["caps"]["BO"] = {"max_seeds": 10}
    with pytest.raises(ClaimsError) as refused:
        check_claim_seeds(CLAIMS, vc.validate_config(config))
    text = str(refused.value)
    assert "claim bo-regret-not-better reads setting BO on experiment landmine" in text
    assert "cap experiments/landmine/caps/BO/max_seeds: 10" in text and "min_seeds 20" in text
    assert "skip_claims: [bo-regret-not-better]" in text  # the remedy, besides raising the cap


def test_a_setting_cap_of_a_variant_is_refused_for_the_sensitivity_it_feeds():
    config = paper_local()
    config["experiments"]["garland"]["caps"]["BO-restarts5"] = {"max_horizon": 50, "max_seeds": 10}
    refused = r"bo-cost \(its sensitivity to bo-fit-restarts\) reads setting BO-restarts5 on experiment "
    with pytest.raises(
        ClaimsError, match=refused + r"garland.*experiments/garland/caps/BO-restarts5/max_seeds: 10"
    ):
        check_claim_seeds(CLAIMS, vc.validate_config(config))


def test_leaving_the_claim_out_of_the_experiment_accepts_the_cap():
    config = paper_local()
    config["experiments"]["landmine"]["caps"]["BO"] = {"max_seeds": 10}
    config["experiments"]["landmine"]["skip_claims"] = [
        "bo-cost",
        "bo-regret-not-better",
        "fig3-vhct-lowest",
        "fig3-vhct-lowest-no-margin",
        "bo-takes-hours",
        "bo-takes-days",
    ]
    check_claim_seeds(CLAIMS, vc.validate_config(copy.deepcopy(config)))


def test_a_reduced_experiment_is_not_a_cap_and_a_setting_stopped_early_is_not_read_at_the_final_round():
    config = paper_local()
    config["experiments"]["landmine"]["seeds"] = 4  # every setting below 20: the audit says "not evaluated"
    check_claim_seeds(CLAIMS, vc.validate_config(copy.deepcopy(config)))
    config = paper_local()  # BO stops at t = 200 of 5000 on Garland: the final-round claims do not read it
    final = [c for c in CLAIMS.claims if c.round == "final" and "BO" in c.settings]
    config["experiments"]["garland"]["caps"]["BO"] = {"max_horizon": 200, "max_seeds": 5}
    claims = CLAIMS.model_copy(update={"claims": final, "sensitivity": []})
    check_claim_seeds(claims, vc.validate_config(config))


def test_paper_local_runs_every_setting_a_claim_reads_at_the_claims_minimum_without_exemptions(tmp_path):
    """Issue 32: paper-local's seeds per experiment and setting, read from the config on a plan (here
    from made-up pilot data: the plan's floor), meet every claim's minimum where the claim reads the
    setting (BO and BO-restarts5 included), with no claim left out of any experiment; how many more
    the underpowered comparisons get is the plan's (tests/unit/test_plan.py)."""
    from support import made_up_plan

    cfg = vc.load([made_up_plan(tmp_path)])[0]
    assert all(not exp.skip_claims for exp in cfg.experiments.values())
    read = 0
    for claim in CLAIMS.claims:
        for e in claim.experiments_read:
            for s in claim.settings:
                if s in cfg.experiments[e].settings:
                    assert len(cfg.setting_seeds(e, s)) >= claim.min_seeds, (claim.id, e, s)
                    read += 1
    assert read > 100
    for e in ("landmine", "mnist"):
        assert len(cfg.setting_seeds(e, "BO")) == len(cfg.setting_seeds(e, "BO-restarts5")) == 20, e


def test_too_few_seeds_is_one_rule_of_the_claim_that_the_pre_check_follows():
    """``Claim.short_of_seeds``: the settings below the claim's ``min_seeds``; a claim about the final
    round does not read a setting that stopped before the horizon, so its seeds do not count there
    (a claim about the common round reads it at its own last round, so they do). The pre-check names
    the claims this rule finds short."""
    claim = next(c for c in CLAIMS.claims if c.round == "final" and len(c.settings) >= 2)
    a, b = claim.settings[:2]
    n = claim.min_seeds
    assert claim.short_of_seeds({a: n, b: n + 1}) == {}
    assert claim.short_of_seeds({a: n - 1, b: n}) == {a: n - 1}
    assert claim.short_of_seeds({a: n, b: 2}, {a: 100, b: 100}, full=100) == {b: 2}
    assert claim.short_of_seeds({a: n, b: 2}, {a: 100, b: 50}, full=100) == {}  # b stopped: not read
    common = claim.model_copy(update={"round": "common"})
    assert common.short_of_seeds({a: n, b: 2}, {a: 100, b: 50}, full=100) == {b: 2}
    # the pre-check on a seed cap: exactly the claims whose rule finds the capped setting short
    config = paper_local()
    config["experiments"]["landmine"]["caps"]["BO"] = {"max_seeds": 10}
    cfg = vc.validate_config(config)
    exp = cfg.experiments["landmine"]
    short = set()
    for c in CLAIMS.claims:
        if "landmine" not in c.experiments_read:
            continue
        read = [s for s in c.settings if s in exp.settings]
        seeds = {s: len(cfg.setting_seeds("landmine", s)) for s in read}
        horizons = {s: cfg.run_horizon("landmine", s) for s in read}
        if "BO" in c.short_of_seeds(seeds, horizons, exp.horizon):
            short.add(c.id)
    named = {p.split()[1] for p in va.claims.capped_below_minimum(CLAIMS, cfg) if " reads setting BO " in p}
    assert short and named == short
