"""Issue 29's verdict categories, each reached on made-up samples built for it, the Holm family of
both kinds of refuting test, the intervals in the records and reasons, and the forest figure."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from support import runs_from_finals, with_effect

from vhct.reporting.audit.checks import Comparison, compare_samples, contrast_comparison
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.claims_model import Claim
from vhct.reporting.audit.evaluate import conclude, run_audit
from vhct.reporting.audit.records import AUDIT_FORMAT, AuditRecordError, audit_json, read_audit
from vhct.reporting.audit.runs import Run
from vhct.reporting.audit.verdicts import (
    INCONCLUSIVE,
    NO_EFFECT,
    NOT_EVALUATED,
    NOT_REPRODUCED,
    OPPOSITE,
    REPRODUCED,
    TOO_FEW,
    UNDERPOWERED,
)
from vhct.reporting.plots.forest import audit_forest, forest_rows
from vhct.reporting.view import build_view


def made_up(**keys) -> Claim:
    """A claim record with made-up text and the shipped defaults (round final, require all)."""
    return Claim.model_validate(
        with_effect(
            {
                "quote": "q",
                "location": "l",
                "statistic": "cumulative_regret",
                "round": "final",
                "require": "all",
                "alpha": 0.05,
                "min_seeds": 20,
                **keys,
            }
        )
    )


LOWEST = made_up(
    id="c",
    kind="lowest",
    thresholds={"min_relative_effect": 0.05},
    experiments=["e"],
    target="A",
    others=["B"],
)


def sample(mean: float, sd: float, n: int = 20, seed: int = 0) -> dict[int, float]:
    """n values with exactly this mean and standard deviation (a fixed standardized shape)."""
    z = np.random.default_rng(seed).standard_normal(n)
    z = (z - z.mean()) / z.std(ddof=1)
    return dict(enumerate((mean + sd * z).tolist()))


def judge(ratio: float, sd: float, n: int = 20, claim=LOWEST):
    comp = compare_samples(claim, "e", "A", "B", sample(100 * ratio, sd, n, 1), sample(100, sd, n, 2))
    result = conclude(claim, [("e", [comp])])
    return result, result["experiments"][0].comparisons[0]


@pytest.mark.parametrize(
    ("ratio", "sd", "verdict", "category"),
    [
        (0.80, 2.0, REPRODUCED, REPRODUCED),  # far below 0.95, tight
        (1.20, 2.0, NOT_REPRODUCED, OPPOSITE),  # B lower by more than 5 %
        (1.00, 1.0, NOT_REPRODUCED, NO_EFFECT),  # a tie inside the margins, tight
        (0.97, 1.0, NOT_REPRODUCED, NO_EFFECT),  # a lead, but smaller than the 5 % the reading requires
        (0.93, 20.0, INCONCLUSIVE, UNDERPOWERED),  # past the margin, but wide
    ],
)
def test_each_category_on_samples_built_for_it(ratio, sd, verdict, category):
    result, comp = judge(ratio, sd)
    assert (comp.verdict, comp.category) == (verdict, category), comp.reason
    assert (result["verdict"], result["category"]) == (verdict, category)
    # the interval inverts the tests: reproduced iff it lies inside the claimed region (ratio < 0.95)
    assert comp.ci_low < comp.effect < comp.ci_high and comp.ci_level == pytest.approx(0.9)
    assert (comp.ci_high < 0.95) == (verdict == REPRODUCED)
    assert f"90% CI [{comp.ci_low:.4g}, {comp.ci_high:.4g}]" in comp.reason
    if category == UNDERPOWERED:
        assert comp.seeds_needed and comp.seeds_needed > 20 and result["seeds_needed"] == comp.seeds_needed
        assert f"{comp.seeds_needed} seeds per arm give 80 % power at the effect of interest" in comp.reason
        # and that many seeds, at the claim's effect of interest and the same spread, do decide it
        _, more = judge(LOWEST.effect_of_interest.value, sd, n=comp.seeds_needed)
        assert more.verdict == REPRODUCED
    else:
        assert comp.seeds_needed is None


def test_too_few_seeds_is_its_own_category():
    result, comp = judge(0.8, 2.0, n=10)
    assert (comp.verdict, comp.category) == (INCONCLUSIVE, TOO_FEW)
    assert "this configuration runs n = 10 vs 10, the claim needs at least 20" in comp.reason
    assert result["category"] == TOO_FEW


def test_holm_runs_over_both_kinds_of_refuting_test():
    claim = LOWEST.model_copy(update={"experiments": ["e1", "e2"]})
    parts = [
        (e, [compare_samples(claim, e, "A", "B", sample(100.0, 1.0, 20, k), sample(100, 1.0, 20, k + 5))])
        for k, e in enumerate(claim.experiments)
    ]
    result = conclude(claim, parts)
    comps = [c for e in result["experiments"] for c in e.comparisons]
    # two comparisons x (the opposite, no effect): a family of 4
    assert all("Holm-adjusted over 4 refuting tests" in c.reason for c in comps)
    ps = [p for c in comps for p in (c.p_refuted, c.p_no_effect)]
    assert max(c.p_no_effect_holm for c in comps) <= min(1.0, 4 * max(ps))
    assert min(c.p_no_effect_holm for c in comps) >= min(ps) * 4 - 1e-12 or min(ps) * 4 > 1


def test_p_at_the_resampling_floor_prints_as_an_upper_bound():
    _, comp = judge(1.5, 1.0)
    assert comp.category == OPPOSITE and "p < " in comp.reason and "p = 0.001" not in comp.reason


def test_contrast_records_all_four_samples_and_its_interval():
    claim = made_up(
        id="k",
        kind="contrast",
        direction="less",
        thresholds={"min_factor": 1.0},
        experiments=["x", "y"],
        pairs=[["x", "y"]],
        target="A",
        others=["B"],
    )
    base = Comparison("x / y", "A", "B", effect_name="ratio of ratios A/B")
    parts = [sample(m, 2.0, 20, k) for k, m in enumerate((70, 100, 95, 100))]
    comp = contrast_comparison(claim, base, *parts)
    assert len(comp.values_a) == len(comp.values_b) == len(comp.values_a2) == len(comp.values_b2) == 20
    assert comp.ci_low < comp.effect < comp.ci_high < 1.0
    result = conclude(claim, [("x / y", [comp])])
    decided = result["experiments"][0].comparisons[0]
    assert result["verdict"] == REPRODUCED and "ratio on x < 1 x ratio on y" in decided.reason


def test_new_fields_round_trip():
    _, comp = judge(0.93, 20.0)
    record = json.loads(json.dumps(comp.to_json(), default=float))
    assert Comparison.from_json(record) == comp
    # the round trip carries issue 29's fields, which are set here
    assert comp.category == UNDERPOWERED and comp.seeds_needed and comp.ci_low is not None


HORIZON = 40


def made_up_runs(finals: dict[int, float], power: float = 1.0) -> list[Run]:
    """Runs (against f* = 0) whose cumulative regret grows like final * (t / HORIZON)**power."""
    return runs_from_finals(finals, HORIZON, power)


#: a claim of every kind on two made-up experiments x and y of settings A, B, C
EVERY_KIND = [
    made_up(
        id="lowest",
        kind="lowest",
        experiments=["x", "y"],
        target="A",
        others=["B"],
        thresholds={"min_relative_effect": 0.05},
    ),
    made_up(
        id="among-fastest",
        kind="among_fastest",
        experiments=["x"],
        target="A",
        others=["B", "C"],
        thresholds={"max_excess_over_best": 0.25},
    ),
    made_up(
        id="similar",
        kind="similar",
        experiments=["x", "y"],
        target="A",
        others=["C"],
        thresholds={"lower_ratio": 0.8, "upper_ratio": 1.05},
    ),
    made_up(
        id="best-parameter",
        kind="best_parameter",
        experiments=["x"],
        claimed=["A"],
        others=["B"],
        thresholds={"max_excess_over_best": 0.1},
    ),
    made_up(
        id="sublinear",
        kind="sublinear",
        experiments=["x"],
        target="A",
        checkpoints=[0.5, 0.75, 1.0],
        thresholds={"max_slope": 0.95, "refuted_above": 1.0},
    ),
    made_up(
        id="greater",
        kind="greater",
        experiments=["x", "y"],
        target="B",
        others=["A"],
        thresholds={"min_ratio": 1.5},
    ),
    made_up(
        id="contrast",
        kind="contrast",
        experiments=["x", "y"],
        pairs=[["x", "y"]],
        direction="less",
        target="A",
        others=["B"],
        thresholds={"min_factor": 1.0},
    ),
    made_up(
        id="easier",
        kind="easier",
        statistic="average_regret",
        experiments=["x", "y"],
        pairs=[["x", "y"]],
        others=["A"],
        thresholds={"min_relative_effect": 0.05},
    ),
]


def written_audit(tmp_path: Path, runs: dict | None = None) -> Path:
    """An audit JSON written by the audit's one writer: every kind of claim on made-up runs (20 seeds)."""
    claims = load_claims().model_copy(update={"claims": EVERY_KIND, "sensitivity": []})
    if runs is None:
        means = {"x": {"A": 60, "B": 100, "C": 62}, "y": {"A": 90, "B": 100, "C": 95}}
        runs = {
            e: {
                s: made_up_runs(sample(m, 3.0, seed=k), power=0.5 if s == "A" else 1.0)
                for k, (s, m) in enumerate(by_setting.items(), start=3 * (e == "y"))
            }
            for e, by_setting in means.items()
        }
    path = tmp_path / "audit.json"
    path.write_text(audit_json(run_audit(claims, runs)))
    return path


def test_forest_draws_from_an_audit_json_written_by_the_real_writer(tmp_path):
    path = written_audit(tmp_path)
    audit = read_audit(path)
    comparisons = [c for claim in audit.claims for e in claim.experiments for c in e.comparisons]
    drawn = [c for c in comparisons if math.isfinite(c.effect) and c.effect > 0]
    rows = forest_rows(audit)
    # one row per comparison with a finite positive estimate, with its estimate, interval and verdict
    assert [(r.effect, r.low, r.high, r.verdict, r.category) for r in rows] == [
        (c.effect, c.ci_low, c.ci_high, c.verdict, c.category) for c in drawn
    ]
    assert {r.claim for r in rows} == {c.id for c in EVERY_KIND}  # every kind has its regions
    # each panel is titled by its reading's name in words (the view's) and its axis's scale
    names = {r.id: r.name for r in build_view(audit).readings}
    assert {r.title for r in rows} == {
        f"{names[r.claim]} ({'linear' if r.additive else 'log'} scale)" for r in rows
    }
    assert any(r.low is not None for r in rows) and {r.verdict for r in rows} >= {REPRODUCED}
    paths = audit_forest(audit, tmp_path / "figures" / "audit_forest")
    assert [p.suffix for p in paths] == [".pdf", ".png"] and all(p.stat().st_size > 10_000 for p in paths)


def test_forest_regions_are_the_claims_thresholds(tmp_path):
    claims = {c.claim.id: c.claim for c in read_audit(written_audit(tmp_path)).claims}

    def regions(claim_id: str):
        claim = claims[claim_id]
        return claim.spec.intervals(claim)

    assert regions("lowest") == ([(0.0, 0.95)], [(1 / 0.95, math.inf)])
    assert regions("similar") == ([(0.8, 1.05)], [(0.0, 0.8), (1.05, math.inf)])
    assert regions("greater") == ([(1.5, math.inf)], [(0.0, 1.5)])  # refuted below: min_ratio
    assert regions("sublinear") == ([(0.0, 0.95)], [(1.0, math.inf)])
    assert regions("contrast") == ([(0.0, 1.0)], [(1.0, math.inf)])
    assert regions("best-parameter") == ([(0.0, 1.1)], [(1.1, math.inf)])
    # the forest's rows carry their claim's regions
    rows = forest_rows(read_audit(written_audit(tmp_path)))
    assert all((r.claimed, r.refuting) == regions(r.claim) for r in rows) and rows


def test_forest_of_an_audit_without_comparisons_says_so(tmp_path):
    """A reduced config's audit (no run of any claim's settings: every claim "not evaluated") still
    gets its figure."""
    audit = read_audit(written_audit(tmp_path, runs={}))
    assert {c.verdict for c in audit.claims} == {NOT_EVALUATED} and forest_rows(audit) == []
    paths = audit_forest(audit, tmp_path / "audit_forest")
    assert all(p.stat().st_size > 1_000 for p in paths)


def test_forest_of_an_audit_of_an_older_format_is_refused_by_the_reader(tmp_path):
    """The forest draws a typed audit; the one reader refuses an audit JSON of another format, so
    no figure is drawn from it."""
    path = written_audit(tmp_path)
    data = json.loads(path.read_text())
    data["format"] = AUDIT_FORMAT - 1
    path.write_text(json.dumps(data))
    refused = rf"{re.escape(str(path))}: audit format {AUDIT_FORMAT - 1}, but .* needs format"
    with pytest.raises(AuditRecordError, match=refused):
        audit_forest(read_audit(path), tmp_path / "audit_forest")
    assert not list(tmp_path.glob("audit_forest.*"))
