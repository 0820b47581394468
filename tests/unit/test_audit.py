"""The audit of the paper's claims: verdict rules on made-up runs, the claims file, outputs, pipeline."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from support import REPO

from vhct.reporting import audit, captions, stats
from vhct.reporting.audit import INCONCLUSIVE, NOT_EVALUATED, NOT_REPRODUCED, REPRODUCED, ClaimsError, Run

HORIZON = 20
#: well-separated, low-spread made-up samples (5 seeds: Mann-Whitney can reach p = 1/252)
LOW = [1.0, 1.05, 0.95, 1.02, 0.98]
HIGH = [2.0, 2.1, 1.9, 2.05, 1.95]


def make_run(
    seed: int,
    final: float,
    horizon: int = HORIZON,
    power: float = 1.0,
    depth: float = 3.0,
    seconds: float = 1e-3,
) -> Run:
    """A run whose cumulative regret grows like final * (t / horizon)**power."""
    t = np.arange(1, horizon + 1)
    table = pd.DataFrame(
        {
            "t": t,
            "cumulative_regret": final * (t / horizon) ** power,
            "depth": np.full(horizon, depth),
            "step_seconds": np.full(horizon, seconds),
        }
    )
    return Run(seed, table)


def runs_of(finals, **kwargs) -> list[Run]:
    return [make_run(seed, value, **kwargs) for seed, value in enumerate(finals)]


def claim(kind: str, **extra) -> dict:
    """A resolved claim with the defaults of the shipped claims file."""
    base = {
        "id": f"test-{kind}",
        "quote": "q",
        "location": "l",
        "experiments": ["exp"],
        "kind": kind,
        "statistic": "cumulative_regret",
        "alpha": 0.05,
        "min_seeds": 4,
        "test": "mannwhitneyu",
        "round": "final",
    }
    base.update(extra)
    return base


def verdict(c: dict, exp_runs: dict) -> dict:
    return audit.evaluate_claim(c, {"exp": exp_runs})


LOWEST = dict(target="A", others=["B"], thresholds={"min_relative_effect": 0.05})


# ---------------------------------------------------------------- lowest


def test_lowest_reproduced_when_target_clearly_lower():
    result = verdict(claim("lowest", **LOWEST), {"A": runs_of(LOW), "B": runs_of(HIGH)})
    assert result["verdict"] == REPRODUCED
    comp = result["experiments"][0]["comparisons"][0]
    assert comp["p_value"] == pytest.approx(1 / math.comb(10, 5))
    assert comp["mean_a"] == pytest.approx(np.mean(LOW))
    assert comp["probability_a_lower"] == 1.0
    assert comp["effect"] == pytest.approx((np.mean(HIGH) - np.mean(LOW)) / np.mean(HIGH))


def test_lowest_not_reproduced_when_target_clearly_higher():
    result = verdict(claim("lowest", **LOWEST), {"A": runs_of(HIGH), "B": runs_of(LOW)})
    assert result["verdict"] == NOT_REPRODUCED
    assert "opposite direction" in result["reason"]


def test_lowest_inconclusive_with_too_few_seeds():
    result = verdict(claim("lowest", **LOWEST), {"A": runs_of(LOW[:3]), "B": runs_of(HIGH[:3])})
    assert result["verdict"] == INCONCLUSIVE
    assert "too few seeds" in result["reason"]


def test_lowest_inconclusive_when_seeds_cannot_reach_alpha():
    # 4 seeds each pass min_seeds = 4, but the smallest one-sided p of the paired test is 1/16 > 0.05
    c = claim("lowest", test="wilcoxon", **LOWEST)
    result = verdict(c, {"A": runs_of(LOW[:4]), "B": runs_of(HIGH[:4])})
    assert result["verdict"] == INCONCLUSIVE
    assert "cannot reach" in result["reason"]


def test_lowest_inconclusive_when_effect_below_threshold():
    tight = [1.0, 1.001, 1.002, 1.003, 1.004]
    slightly_higher = [v + 0.02 for v in tight]  # fully separated, but only ~2% lower (threshold 5%)
    result = verdict(claim("lowest", **LOWEST), {"A": runs_of(tight), "B": runs_of(slightly_higher)})
    assert result["verdict"] == INCONCLUSIVE
    assert "effect too small" in result["reason"]


def test_lowest_inconclusive_when_samples_overlap():
    result = verdict(claim("lowest", **LOWEST), {"A": runs_of(LOW), "B": runs_of(LOW[::-1])})
    assert result["verdict"] == INCONCLUSIVE
    assert "not significant" in result["reason"]


def test_lowest_compares_a_capped_setting_at_its_last_round():
    # B ran 10 rounds only: both are read at t = 10, where A's regret is half its final value
    exp_runs = {"A": runs_of(LOW), "B": runs_of([v * 0.5 for v in LOW], horizon=10, power=0.0)}
    comp = verdict(claim("lowest", **LOWEST), exp_runs)["experiments"][0]["comparisons"][0]
    assert comp["round"] == 10
    assert comp["mean_a"] == pytest.approx(np.mean(LOW) / 2)


# ---------------------------------------------------------------- combining and missing data


def test_missing_experiment_and_setting_are_not_evaluated():
    c = claim(
        "lowest",
        target="A",
        others=["B", "C"],
        thresholds={"min_relative_effect": 0.05},
        experiments=["exp", "absent"],
    )
    result = audit.evaluate_claim(c, {"exp": {"A": runs_of(LOW), "B": runs_of(HIGH)}})
    by_exp = {e["experiment"]: e for e in result["experiments"]}
    assert by_exp["absent"]["verdict"] == NOT_EVALUATED
    comps = by_exp["exp"]["comparisons"]
    assert [c["verdict"] for c in comps] == [REPRODUCED, NOT_EVALUATED]
    # a comparison that could not be made keeps the claim from being "reproduced"
    assert by_exp["exp"]["verdict"] == INCONCLUSIVE
    assert result["verdict"] == INCONCLUSIVE


def test_claim_verdict_covers_the_evaluated_experiments():
    c = claim("lowest", **dict(LOWEST, experiments=["exp", "absent"]))
    result = audit.evaluate_claim(c, {"exp": {"A": runs_of(LOW), "B": runs_of(HIGH)}})
    assert result["verdict"] == REPRODUCED
    assert result["coverage"] == "exp; 1 of 2 experiments"


def test_missing_target_is_not_evaluated():
    result = verdict(claim("lowest", **LOWEST), {"B": runs_of(HIGH)})
    assert result["verdict"] == NOT_EVALUATED


@pytest.mark.parametrize(
    ("parts", "strict", "expected"),
    [
        ([REPRODUCED, REPRODUCED], True, REPRODUCED),
        ([REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE], True, NOT_REPRODUCED),
        ([REPRODUCED, INCONCLUSIVE], False, INCONCLUSIVE),
        ([REPRODUCED, NOT_EVALUATED], True, INCONCLUSIVE),
        ([REPRODUCED, NOT_EVALUATED], False, REPRODUCED),
        ([NOT_EVALUATED, NOT_EVALUATED], False, NOT_EVALUATED),
    ],
)
def test_combine(parts, strict, expected):
    assert audit.combine(parts, strict) == expected


# ---------------------------------------------------------------- among_fastest, similar


FASTEST = dict(target="A", others=["B", "C"], thresholds={"max_excess_over_best": 0.25})


def test_among_fastest_reproduced_when_target_is_best_or_within_margin():
    best = verdict(
        claim("among_fastest", **FASTEST), {"A": runs_of(LOW), "B": runs_of(HIGH), "C": runs_of(HIGH)}
    )
    assert best["verdict"] == REPRODUCED
    close = verdict(
        claim("among_fastest", **FASTEST),
        {"A": runs_of([v * 1.05 for v in LOW]), "B": runs_of(LOW), "C": runs_of(HIGH)},
    )
    assert close["verdict"] == REPRODUCED
    assert close["experiments"][0]["comparisons"][0]["b"] == "B"


def test_among_fastest_not_reproduced_far_behind_the_best():
    result = verdict(
        claim("among_fastest", **FASTEST), {"A": runs_of(HIGH), "B": runs_of(LOW), "C": runs_of(HIGH)}
    )
    assert result["verdict"] == NOT_REPRODUCED


def test_among_fastest_inconclusive_at_the_margin_with_spread():
    spread = [0.6, 1.9, 1.0, 1.5, 1.25]
    result = verdict(
        claim("among_fastest", **FASTEST), {"A": runs_of(spread), "B": runs_of(LOW), "C": runs_of(HIGH)}
    )
    assert result["verdict"] == INCONCLUSIVE


SIMILAR = dict(target="A", others=["B"], thresholds={"max_relative_difference": 0.2})


def test_similar_reproduced_for_equivalent_samples():
    result = verdict(claim("similar", **SIMILAR), {"A": runs_of(LOW), "B": runs_of([v * 1.01 for v in LOW])})
    assert result["verdict"] == REPRODUCED


def test_similar_not_reproduced_for_clearly_different_samples():
    result = verdict(claim("similar", **SIMILAR), {"A": runs_of(LOW), "B": runs_of(HIGH)})
    assert result["verdict"] == NOT_REPRODUCED


def test_similar_inconclusive_when_spread_exceeds_margin():
    wide = [0.5, 1.5, 0.8, 1.3, 1.0]
    result = verdict(claim("similar", **SIMILAR), {"A": runs_of(wide), "B": runs_of(wide[::-1])})
    assert result["verdict"] == INCONCLUSIVE


# ---------------------------------------------------------------- best_parameter, greater, decreasing


BEST = dict(
    claimed=["A1", "A2"], others=["O"], statistic="average_regret", thresholds={"min_relative_effect": 0.05}
)


def test_best_parameter_uses_the_best_claimed_setting():
    exp_runs = {"A1": runs_of(HIGH), "A2": runs_of(LOW), "O": runs_of([v * 1.5 for v in LOW])}
    result = verdict(claim("best_parameter", **BEST), exp_runs)
    assert result["verdict"] == REPRODUCED
    assert result["experiments"][0]["comparisons"][0]["a"] == "A2"


def test_a_round_beyond_the_runs_is_not_evaluated():
    exp_runs = {"A1": runs_of(LOW), "A2": runs_of(LOW), "O": runs_of(HIGH)}
    assert verdict(claim("best_parameter", **BEST, round=HORIZON + 1), exp_runs)["verdict"] == NOT_EVALUATED
    assert (
        verdict(claim("lowest", **LOWEST, round=HORIZON + 1), {"A": runs_of(LOW), "B": runs_of(HIGH)})[
            "verdict"
        ]
        == NOT_EVALUATED
    )


def test_best_parameter_not_reproduced_when_other_is_better():
    exp_runs = {"A1": runs_of(HIGH), "A2": runs_of(HIGH), "O": runs_of(LOW)}
    assert verdict(claim("best_parameter", **BEST), exp_runs)["verdict"] == NOT_REPRODUCED


GREATER = dict(target="A", others=["B"], statistic="max_depth", thresholds={"min_ratio": 1.0})


def test_greater_on_depth():
    deep = [make_run(s, 1.0, depth=d) for s, d in enumerate([9, 10, 11, 10, 9])]
    shallow = [make_run(s, 1.0, depth=d) for s, d in enumerate([5, 6, 5, 6, 5])]
    assert verdict(claim("greater", **GREATER), {"A": deep, "B": shallow})["verdict"] == REPRODUCED
    assert verdict(claim("greater", **GREATER), {"A": shallow, "B": deep})["verdict"] == NOT_REPRODUCED
    assert verdict(claim("greater", **GREATER), {"A": deep, "B": deep})["verdict"] == INCONCLUSIVE


def test_greater_ratio_threshold_and_undefined_statistic():
    c = claim(
        "greater", target="A", others=["B"], statistic="seconds_per_round", thresholds={"min_ratio": 10.0}
    )
    slow = [make_run(s, 1.0, seconds=v) for s, v in enumerate([0.05, 0.06, 0.055, 0.052, 0.058])]
    fast = [make_run(s, 1.0, seconds=v) for s, v in enumerate([0.01, 0.011, 0.012, 0.0105, 0.0115])]
    result = verdict(c, {"A": slow, "B": fast})
    assert result["verdict"] == INCONCLUSIVE  # significant, but only ~5x, below the claimed 10x
    assert "effect too small" in result["reason"]
    no_tree = [make_run(s, 1.0, depth=np.nan) for s in range(5)]
    assert verdict(claim("greater", **GREATER), {"A": runs_of(LOW), "B": no_tree})["verdict"] == NOT_EVALUATED


DECREASING = dict(
    target="A",
    statistic="average_regret",
    checkpoints=[0.25, 0.5, 0.75, 1.0],
    test="page",
    min_seeds=3,
    thresholds={"min_relative_decrease": 0.2},
)


def test_decreasing_reproduced_for_sublinear_regret():
    result = verdict(claim("decreasing", **DECREASING), {"A": runs_of(LOW, power=0.5)})
    assert result["verdict"] == REPRODUCED
    comp = result["experiments"][0]["comparisons"][0]
    assert comp["rounds"] == [5, 10, 15, 20]
    assert comp["effect"] == pytest.approx(1 - 0.25**0.5)


def test_decreasing_not_reproduced_for_superlinear_regret():
    assert (
        verdict(claim("decreasing", **DECREASING), {"A": runs_of(LOW, power=1.5)})["verdict"]
        == NOT_REPRODUCED
    )


def test_decreasing_inconclusive_for_linear_regret_or_few_seeds():
    linear = verdict(claim("decreasing", **DECREASING), {"A": runs_of(LOW, power=1.0)})
    assert linear["verdict"] == INCONCLUSIVE
    few = verdict(claim("decreasing", **DECREASING), {"A": runs_of(LOW[:2], power=0.5)})
    assert few["verdict"] == INCONCLUSIVE
    assert "too few seeds" in few["reason"]


# ---------------------------------------------------------------- stats helpers


def test_min_p_values():
    assert stats.min_p_value("mannwhitneyu", 4, 4) == pytest.approx(1 / 70)
    assert stats.min_p_value("wilcoxon", 4) == pytest.approx(1 / 16)
    assert stats.min_p_value("page", 2, 2, checkpoints=4) == pytest.approx(1 / 24**2)
    with pytest.raises(ValueError, match="test"):
        stats.min_p_value("ttest", 4, 4)


def test_shifted_compare_tests_a_margin():
    a = {i: v for i, v in enumerate(LOW)}
    b = {i: v for i, v in enumerate(HIGH)}
    assert stats.compare(a, b, "less") < 0.05
    assert stats.compare(a, b, "less", shift=-1.5) > 0.5  # a is not below b - 1.5


# ---------------------------------------------------------------- the claims file


def shipped() -> dict:
    return yaml.safe_load((REPO / "config" / "claims.yaml").read_text(encoding="utf-8"))


def write_claims(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_shipped_claims_file_is_valid_and_resolved():
    claims = audit.load_claims()
    ids = [c["id"] for c in claims["claims"]]
    assert len(ids) == len(set(ids)) >= 10
    assert all({"alpha", "min_seeds", "test", "round"} <= set(c) for c in claims["claims"])
    kinds = {c["kind"] for c in claims["claims"]}
    assert kinds == set(audit.CHECKS)
    assert len(claims["discrepancies"]) >= 8


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["claims"][0].pop("quote"), r"claims/0.*'quote' is a required property"),
        (lambda d: d["claims"][1].update(kind="fastest"), r"claims/1/kind"),
        (lambda d: d["claims"][0].pop("target"), r"claims/0.*'target' is a required property"),
        (lambda d: d["claims"][0].update(alpha=1.5), r"claims/0/alpha"),
        (lambda d: d["claims"][0]["thresholds"].update(min_ratio=-1), r"claims/0/thresholds/min_ratio"),
        (lambda d: d["claims"][0]["thresholds"].update(bogus=1), r"claims/0/thresholds.*bogus"),
        (lambda d: d["claims"][2].update(id=d["claims"][0]["id"]), r"claims/2/id: duplicate id"),
        (
            lambda d: d["claims"][0]["others"].append(d["claims"][0]["target"]),
            r"claims/0: settings listed twice",
        ),
        (lambda d: d["rules"].pop("similar"), r"no rule text for kind 'similar'"),
        (lambda d: d["discrepancies"][0].pop("resolution"), r"discrepancies/0.*'resolution'"),
    ],
)
def test_malformed_claims_are_rejected_with_the_key(tmp_path, mutate, message):
    doc = copy.deepcopy(shipped())
    mutate(doc)
    with pytest.raises(ClaimsError, match=message):
        audit.load_claims(write_claims(tmp_path, doc))


def test_unreadable_claims_file(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text("claims: [unclosed", encoding="utf-8")
    with pytest.raises(ClaimsError, match="cannot be read as YAML"):
        audit.load_claims(path)
    with pytest.raises(ClaimsError, match="cannot be read"):
        audit.load_claims(tmp_path / "missing.yaml")


# ---------------------------------------------------------------- outputs


def small_audit() -> dict:
    claims = {
        "rules": shipped()["rules"],
        "discrepancies": shipped()["discrepancies"][:1],
        "claims": [claim("lowest", **LOWEST), claim("decreasing", **DECREASING)],
    }
    runs = {"exp": {"A": runs_of(LOW, power=0.5), "B": runs_of(HIGH)}}
    return audit.run_audit(claims, runs, {"configfiles": ["config/x.yaml"], "experiments": {}})


def test_write_audit_markdown_json_html(tmp_path):
    result = small_audit()
    assert result["summary"][REPRODUCED] == 2
    md, js, page = tmp_path / "audit.md", tmp_path / "audit.json", tmp_path / "audit.html"
    audit.write_audit(result, md, js, page)
    text = md.read_text(encoding="utf-8")
    assert "### test-lowest: reproduced" in text
    assert "config/x.yaml" in text
    assert shipped()["discrepancies"][0]["id"] in text
    loaded = json.loads(js.read_text(encoding="utf-8"))
    assert loaded["claims"][0]["experiments"][0]["comparisons"][0]["values_a"]["0"] == pytest.approx(LOW[0])
    assert "<table>" in page.read_text(encoding="utf-8")


def test_check_aggregates_detects_a_mismatch(tmp_path):
    runs = {"exp": {"A": runs_of(LOW)}}
    path = tmp_path / "final.csv"
    pd.DataFrame({"setting": ["A"], "final_mean": [np.mean(LOW)]}).to_csv(path, index=False)
    audit.check_aggregates(runs, {"exp": path})
    pd.DataFrame({"setting": ["A"], "final_mean": [np.mean(LOW) + 0.1]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="final_mean"):
        audit.check_aggregates(runs, {"exp": path})


def test_figure_caption_names_the_paper_figure_and_settings(tmp_path):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    text = captions.figure_caption(config, "fig3a_garland", REPO / "workflow" / "report" / "figures")
    assert "Fig. 3(a)" in text
    panel = config["figures"]["fig3a_garland"]["panels"][0]
    exp = config["experiments"][panel["experiment"]]
    assert f"horizon {exp['horizon']}" in text
    for setting in panel.get("settings", exp["settings"]):
        assert f"{setting} ({config['settings'][setting]['algorithm']}" in text
        if "max_horizon" in config["settings"][setting]:
            assert f"max {config['settings'][setting]['max_horizon']} rounds" in text
    fallback = captions.figure_caption(config, "fig3a_garland", tmp_path)
    assert "no paper caption" in fallback


def test_every_default_figure_has_a_caption_file():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    captions = REPO / "workflow" / "report" / "figures"
    assert [f for f in config["figures"] if not (captions / f"{f}.rst").exists()] == []


# ---------------------------------------------------------------- the pipeline


# ---------------------------------------------------------------- sensitivity to implementation choices


def test_substitute_settings_renames_every_named_setting():
    lowest = claim("lowest", target="A", others=["B", "C"], thresholds={"min_relative_effect": 0.05})
    variant = audit.substitute_settings(lowest, {"B": "B2", "A": "A2"})
    assert variant["target"] == "A2" and variant["others"] == ["B2", "C"]
    assert lowest["others"] == ["B", "C"]  # the default claim is untouched
    best = claim("best_parameter", claimed=["A"], others=["B"], thresholds={"min_relative_effect": 0.05})
    assert audit.substitute_settings(best, {"A": "A2"})["claimed"] == ["A2"]
    assert audit.substitute_settings(lowest, {"Z": "Z2"}) is None


def sensitivity_audit(variant_runs: list[Run] | None) -> dict:
    """Claim 'A lowest vs B' (reproduced by default) and a choice that swaps B for B2."""
    claims = {
        "rules": shipped()["rules"],
        "discrepancies": [],
        "claims": [claim("lowest", **LOWEST), claim("decreasing", **DECREASING)],
        "sensitivity": [
            {"id": "b-choice", "choice": "c", "default": "d", "variant": "v", "substitute": {"B": "B2"}}
        ],
    }
    exp = {"A": runs_of(LOW, power=0.5), "B": runs_of(HIGH)}
    if variant_runs is not None:
        exp["B2"] = variant_runs
    return audit.run_audit(claims, {"exp": exp}, {"configfiles": [], "experiments": {}})


def test_a_verdict_that_flips_under_a_variant_is_reported():
    result = sensitivity_audit(runs_of([0.5 * v for v in LOW]))  # B2 beats A: the claim flips
    (choice,) = result["sensitivity"]
    (row,) = choice["claims"]  # the decreasing claim does not read B
    assert row["claim"] == "test-lowest"
    assert (row["default_verdict"], row["variant_verdict"]) == (REPRODUCED, NOT_REPRODUCED)
    assert row["flips"] is True
    assert row["variant_experiments"][0]["comparisons"][0]["b"] == "B2"
    assert result["flipped_claims"] == ["test-lowest"]
    lowest = result["claims"][0]
    assert lowest["verdict"] == REPRODUCED  # the default verdict is kept, the flip shown beside it
    assert lowest["sensitivity"] == [{"choice": "b-choice", "verdict": NOT_REPRODUCED, "flips": True}]
    assert result["claims"][1]["sensitivity"] == []
    md = audit.render_markdown(result)
    assert "## Sensitivity to implementation choices" in md
    assert "b-choice: not reproduced (flips)" in md
    assert "flip under an implementation choice the paper leaves open: test-lowest" in md


def test_a_variant_that_agrees_or_was_not_run_does_not_flip():
    agrees = sensitivity_audit(runs_of(HIGH))
    assert agrees["sensitivity"][0]["claims"][0]["variant_verdict"] == REPRODUCED
    assert agrees["flipped_claims"] == []
    missing = sensitivity_audit(None)
    row = missing["sensitivity"][0]["claims"][0]
    assert row["variant_verdict"] == NOT_EVALUATED and row["flips"] is False
    assert "setting B2 not run" in row["variant_reason"]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["sensitivity"][0]["substitute"].update({"PCT": "PCT"}), r"substituted by itself"),
        (lambda d: d["sensitivity"][1].update(id=d["sensitivity"][0]["id"]), r"sensitivity/1/id: duplicate"),
        (lambda d: d["sensitivity"][0].pop("variant"), r"sensitivity/0.*'variant' is a required property"),
    ],
)
def test_malformed_sensitivity_is_rejected_with_the_key(tmp_path, mutate, message):
    doc = shipped()
    mutate(doc)
    with pytest.raises(ClaimsError, match=message):
        audit.load_claims(write_claims(tmp_path, doc))


@pytest.mark.parametrize(
    "config_name, experiments",
    [("config.yaml", None), ("paper.yaml", None), ("tiny.yaml", ["garland"])],
)
def test_configs_run_both_readings_of_every_choice(config_name, experiments):
    """Wherever a config runs a substituted setting for a claim, it also runs the declared variant,
    so both verdicts are evaluated (the tiny config does so on garland only, to stay fast)."""
    from vhct.optimizers import registry

    config = yaml.safe_load((REPO / "config" / config_name).read_text(encoding="utf-8"))
    claims = audit.load_claims()
    checked = 0
    for choice in claims["sensitivity"]:
        for default, variant in choice["substitute"].items():
            for c in claims["claims"]:
                if audit.substitute_settings(c, {default: variant}) is None:
                    continue
                for e in experiments or c["experiments"]:
                    if e not in c["experiments"] or default not in config["experiments"][e]["settings"]:
                        continue
                    assert variant in config["experiments"][e]["settings"], (c["id"], e, variant)
                    spec = config["settings"][variant]
                    assert set(spec.get("params", {})) <= registry.algorithm_params(spec["algorithm"])
                    checked += 1
    assert checked > 0
