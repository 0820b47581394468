"""Issue 37, item 2: the paper's words read as written, each new reading on made-up runs of known
truth (reproduced, the opposite, no effect), through the shipped claims file's own rows:

- the small-gap statement on the differences the paper names, beside the ratio reading (a flip when
  they disagree);
- the phi(h) = 2/h conjecture at equal resolution (VHCT against HCT, both with OE = 2/h);
- "similar" at its other margins (the margin sensitivity) and the direction said in one sentence;
- Himmelblau easier than both Rastrigins on the figure's quantity;
- the headline and the summary count the paper's statements, each with its readings under it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from findings_run import complete
from support import conditions_of, headline_counts, runs_from_finals

from vhct.reporting.audit.claims import ClaimsError, load_claims
from vhct.reporting.audit.claims_model import Claim, ClaimsFile
from vhct.reporting.audit.evaluate import run_audit
from vhct.reporting.audit.records import AUDIT_FORMAT, Audit, AuditContext, audit_json, parse_audit
from vhct.reporting.audit.runs import Run
from vhct.reporting.audit.verdicts import (
    INCONCLUSIVE,
    NO_EFFECT,
    NOT_REPRODUCED,
    OPPOSITE,
    READINGS_DISAGREE,
    REPRODUCED,
    UNDERPOWERED,
)
from vhct.reporting.render import direction_sentence, headline, render_markdown

#: the shipped claims' minimum seeds, rounds of a made-up run, the runs' coefficient of variation
SEEDS, HORIZON, SPREAD = 20, 50, 0.01
NO_CONTEXT = AuditContext(experiments={})


def runs_at(mean: float, seed: int = 0) -> list[Run]:
    """SEEDS runs whose final cumulative regret is ``mean`` (spread SPREAD), growing linearly."""
    finals = mean * (1.0 + SPREAD * np.random.default_rng(seed).standard_normal(SEEDS))
    return runs_from_finals(finals, HORIZON)


def shipped(*ids: str) -> list[Claim]:
    by_id = {c.id: c for c in load_claims().claims}
    return [by_id[i] for i in ids]


def audit_of(claims: list[Claim], means: dict[str, dict[str, float]]) -> Audit:
    """The audit of ``claims`` (the shipped rows) on runs of the given mean final regret per
    experiment and setting."""
    file = load_claims()
    only = ClaimsFile.model_validate(
        {
            "version": 1,
            "defaults": file.defaults,
            "rules": file.rules.texts(),
            "claims": claims,
            "discrepancies": [],
            "conditions": conditions_of(claims),
        }
    )
    runs = {e: {s: runs_at(m, seed=i) for i, (s, m) in enumerate(by.items())} for e, by in means.items()}
    return run_audit(only, runs, NO_CONTEXT)


def verdicts(audit: Audit) -> dict[str, tuple[str, str]]:
    return {c.claim.id: (c.verdict, c.category) for c in audit.claims}


# ---------------------------------------------------------------- small gap: ratios and differences

SMALL, LARGE = ("himmelblau", "doublesine"), ("garland", "counterexample", "rastrigin10d")
GAP = ("synthetic-vhct-hct-small-gap", "synthetic-vhct-hct-small-gap-differences")


def gaps(small: tuple[float, float], large: tuple[float, float]) -> dict[str, dict[str, float]]:
    """Mean final regret of VHCT and HCT: ``small`` on Himmelblau and DoubleSine, ``large`` on the rest."""
    out = {e: dict(zip(("VHCT-rho0.75", "HCT-rho0.75"), small, strict=True)) for e in SMALL}
    out |= {e: dict(zip(("VHCT-rho0.75", "HCT-rho0.75"), large, strict=True)) for e in LARGE}
    return out


@pytest.mark.parametrize(
    "small, large, expected",
    [
        # VHCT leads by 5 (5 %) on the two, by 30 (30 %) on the others: both readings hold
        ((95.0, 100.0), (70.0, 100.0), {GAP[0]: (REPRODUCED, REPRODUCED), GAP[1]: (REPRODUCED, REPRODUCED)}),
        # the opposite: the larger gap on the two, in ratio and in difference
        (
            (70.0, 100.0),
            (95.0, 100.0),
            {GAP[0]: (NOT_REPRODUCED, OPPOSITE), GAP[1]: (NOT_REPRODUCED, OPPOSITE)},
        ),
        # no effect: the same gap everywhere (no margin: neither side is significant)
        (
            (80.0, 100.0),
            (80.0, 100.0),
            {GAP[0]: (INCONCLUSIVE, UNDERPOWERED), GAP[1]: (INCONCLUSIVE, UNDERPOWERED)},
        ),
    ],
)
def test_the_small_gap_on_differences_on_runs_of_known_truth(small, large, expected):
    audit = audit_of(shipped(*GAP), gaps(small, large))
    assert verdicts(audit) == expected
    diff = next(c for c in audit.claims if c.claim.id == GAP[1])
    c = diff.experiments[0].comparisons[0]
    assert c.effect_name == "difference of differences VHCT-rho0.75 - HCT-rho0.75"
    assert c.effect == pytest.approx((small[0] - small[1]) - (large[0] - large[1]), abs=1.0)
    assert c.ci_low < c.effect < c.ci_high
    # one statement, two readings
    (statement,) = {c.claim.reading_of for c in audit.claims}
    assert audit.reading_flips[0].statement == statement == "synthetic-vhct-hct-gap-small"


def test_ratio_and_difference_readings_that_disagree_are_a_flip_and_the_statement_says_so():
    """The shipped numbers' shape: a smaller gap in regret units on the two functions, a larger one as
    a ratio (their regrets are smaller): the ratio reading is refuted, the difference reading holds."""
    audit = audit_of(shipped(*GAP), gaps((50.0, 100.0), (900.0, 1000.0)))
    assert verdicts(audit) == {GAP[0]: (NOT_REPRODUCED, OPPOSITE), GAP[1]: (REPRODUCED, REPRODUCED)}
    assert audit.reading_flips[0].flips
    assert audit.summary[READINGS_DISAGREE] == 1 and audit.summary[REPRODUCED] == 0
    text = render_markdown(audit)
    row = "| synthetic-vhct-hct-gap-small | readings disagree | 2 readings, which disagree (a flip) |"
    assert row in text
    counts = headline_counts(headline(audit))
    del counts["seeds"]  # the made-up audit's context lists none
    assert counts == {
        "audited": 1,
        "readings": 2,
        "reproduced": 0,
        "not reproduced": 0,
        "inconclusive": 0,
        "readings disagree": 1,
    }


# ---------------------------------------------------------------- phi(h) = 2/h at equal resolution

PHI = ("phi-conjecture-with-phi-oe", "phi-conjecture-with-default-oe", "phi-conjecture-equal-resolution")


@pytest.mark.parametrize(
    "ratio, expected, beside",
    [
        (0.8, (REPRODUCED, REPRODUCED), (REPRODUCED, REPRODUCED)),
        (1.25, (NOT_REPRODUCED, OPPOSITE), (NOT_REPRODUCED, OPPOSITE)),
        (0.98, (REPRODUCED, REPRODUCED), (NOT_REPRODUCED, NO_EFFECT)),
    ],
)
def test_the_phi_conjecture_at_equal_resolution_on_runs_of_known_truth(ratio, expected, beside):
    """VHCT-phi2overh against HCT-phi2overh alone (the quantifier's effect at OE = 2/h), with no
    margin (the sentence states no size) and the project's 5 % read beside it: lower by 20 %, higher
    by 25 %, lower by 2 % (a lead, but not of the project's size)."""
    (claim,) = shipped(PHI[2])
    assert (claim.target, claim.others, claim.reading_of) == (
        "VHCT-phi2overh",
        ["HCT-phi2overh"],
        "phi-2-over-h-conjecture",
    )
    assert claim.thresholds == shipped(PHI[0])[0].thresholds and claim.size is None
    means = {"VHCT-phi2overh": 100.0 * ratio, "HCT-phi2overh": 100.0, "HCT-rho0.75": 50.0}
    audit = audit_of([claim], {"counterexample": means})
    assert verdicts(audit)[PHI[2]] == expected
    (margin,) = audit.claims[0].margins
    assert margin.thresholds["min_relative_effect"] == 0.05 and (margin.verdict, margin.category) == beside
    (c,) = audit.claims[0].experiments[0].comparisons
    assert (c.a, c.b) == ("VHCT-phi2overh", "HCT-phi2overh") and c.effect == pytest.approx(ratio, rel=0.02)


def test_the_three_readings_of_the_phi_conjecture_are_one_statement():
    """The shipped shape: VHCT at 2/h worse than HCT at rho^h (reading 1 refuted), VHCT at rho^h
    better (reading 2 holds), VHCT at 2/h better than HCT at 2/h (reading 3 holds): one statement,
    its readings disagree."""
    audit = audit_of(
        shipped(*PHI),
        {
            "counterexample": {
                "VHCT-phi2overh": 110.0,
                "VHCT-rho0.75": 65.0,
                "HCT-rho0.75": 100.0,
                "HCT-phi2overh": 130.0,
                "T-HOO-rho0.25": 170.0,
            }
        },
    )
    assert [v for v, _ in verdicts(audit).values()] == [NOT_REPRODUCED, REPRODUCED, REPRODUCED]
    (flip,) = audit.reading_flips
    assert flip.statement == "phi-2-over-h-conjecture" and list(flip.readings) == list(PHI) and flip.flips
    assert "Statement phi-2-over-h-conjecture under 3 readings" in render_markdown(audit)


# ---------------------------------------------------------------- "similar": margins and direction

HIGH_NOISE = (
    "garland-high-noise",
    "doublesine-high-noise",
    "himmelblau-high-noise",
    "rastrigin1d-high-noise",
)


def similar_audit(ratios: tuple[float, ...]) -> Audit:
    (claim,) = shipped("high-noise-vhct-hct-similar")
    means = {
        e: {"VHCT-rho0.75": 100.0 * r, "HCT-rho0.75": 100.0} for e, r in zip(HIGH_NOISE, ratios, strict=True)
    }
    return audit_of([claim], means)


def test_similar_is_read_at_its_other_margins_and_the_table_renders_each():
    """VHCT 8 % above HCT everywhere: refuted at the claim's 1.05, reproduced at 1.10 and 1.20."""
    audit = similar_audit((1.08, 1.08, 1.08, 1.08))
    (c,) = audit.claims
    assert (c.verdict, c.category) == (NOT_REPRODUCED, OPPOSITE)
    assert [(m.thresholds, m.verdict) for m in c.margins] == [
        ({"lower_ratio": 0.8, "upper_ratio": 1.1}, REPRODUCED),
        ({"lower_ratio": 0.8, "upper_ratio": 1.2}, REPRODUCED),
    ]
    assert all(e.verdict == REPRODUCED for m in c.margins for e in m.experiments)
    # the one writer and the one reader keep them
    assert parse_audit(json.loads(audit_json(audit))).claims[0].margins == c.margins
    text = render_markdown(audit)
    head = "| margins | verdict | " + " | ".join(HIGH_NOISE) + " |"
    assert head in text
    # a row per margin, the claim's first: its thresholds, its verdict, each experiment's, from the record
    table = text.split(head, 1)[1].split("\n")[2:]  # past the header's rule
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table[: 1 + len(c.margins)]]
    assert rows[0][1:] == [f"{c.verdict}: {c.category}", *(e.verdict for e in c.experiments)]
    claimed = c.claim.thresholds.model_dump(exclude_none=True)
    assert rows[0][0] == ", ".join(f"{k} = {v}" for k, v in claimed.items()) + " (the claim's)"
    for row, m in zip(rows[1:], c.margins, strict=True):
        assert row[0] == ", ".join(f"{k} = {v}" for k, v in m.thresholds.items())
        assert row[1:] == [m.verdict, *(e.verdict for e in m.experiments)]
    # VHCT 30 % above: refuted at every margin
    worse = similar_audit((1.3, 1.3, 1.3, 1.3)).claims[0]
    assert [m.verdict for m in worse.margins] == [NOT_REPRODUCED, NOT_REPRODUCED]


def test_the_direction_sentence_is_rendered_from_the_comparisons_and_follows_them():
    higher = similar_audit((1.02, 1.09, 1.08, 1.07))
    said = direction_sentence(higher.claims[0], higher)
    # the comparisons' side, count, experiments and the range of their effects (1.02 to 1.09)
    assert "higher" in said and "lower" not in said and "4 of 4" in said and "2% to 9%" in said
    assert all(e in said for e in HIGH_NOISE)
    assert "Direction: VHCT-rho0.75's mean final regret is higher" in render_markdown(higher)
    mixed = similar_audit((0.9, 1.03, 1.03, 1.03))
    higher_part, lower_part = direction_sentence(mixed.claims[0], mixed).split("lower")
    assert "higher" in higher_part and "3 of 4" in higher_part and "by 3%" in higher_part
    assert all(e in higher_part for e in HIGH_NOISE[1:]) and HIGH_NOISE[0] not in higher_part
    assert "1 of 4" in lower_part and HIGH_NOISE[0] in lower_part and "by 10%" in lower_part


@pytest.mark.parametrize(
    "margins, message",
    [
        ([{"min_factor": 1.2}], r"margins/0: not a threshold of this similar claim: \['min_factor'\]"),
        ([{"upper_ratio": 0.7}], r"margins/0: lower_ratio must be below upper_ratio"),
        ([], r"margins"),
    ],
)
def test_malformed_margins_are_refused_naming_the_key(tmp_path, margins, message):
    import yaml

    from vhct.resources import CLAIMS, resource_path

    doc = yaml.safe_load(resource_path(CLAIMS).read_text(encoding="utf-8"))
    (row,) = [c for c in doc["claims"] if c["id"] == "high-noise-vhct-hct-similar"]
    row["margins"] = margins
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ClaimsError, match=message):
        load_claims(path)


# ---------------------------------------------------------------- Himmelblau against both Rastrigins


@pytest.mark.parametrize(
    "on_2d, expected", [(200.0, (REPRODUCED, REPRODUCED)), (40.0, (NOT_REPRODUCED, OPPOSITE))]
)
def test_himmelblau_easier_reads_the_figures_quantity_against_both_rastrigins(on_2d, expected):
    """Himmelblau's average regret 50 / 50 rounds; 10-D Rastrigin's 200: Himmelblau easier there, and
    on 2-D Rastrigin by the regret given (200: easier; 40: harder, the opposite)."""
    (claim,) = shipped("himmelblau-easier-fig6")
    assert claim.statistic == "average_regret" and claim.reading_of is None
    assert claim.pairs == [["himmelblau", "rastrigin2d"], ["himmelblau", "rastrigin10d"]]
    settings = claim.others
    means = {
        "himmelblau": dict.fromkeys(settings, 50.0),
        "rastrigin2d": dict.fromkeys(settings, on_2d),
        "rastrigin10d": dict.fromkeys(settings, 200.0),
    }
    audit = audit_of([claim], means)
    assert verdicts(audit)["himmelblau-easier-fig6"] == expected
    assert [e.verdict for e in audit.claims[0].experiments] == [expected[0], REPRODUCED]
    assert "himmelblau-easier" not in {c.id for c in load_claims().claims}  # reading 1 dropped


# ---------------------------------------------------------------- the headline counts statements


def made_up_audit(readings: dict[str, tuple[str | None, str]]) -> Audit:
    """An audit of made-up claims ``id -> (reading_of, verdict)`` at the paper's 20 seeds."""
    return parse_audit(
        complete(
            {
                "format": AUDIT_FORMAT,
                "sensitivity": [],
                "discrepancies": [],
                "reading_flips": [],
                "claims": [
                    {
                        "id": i,
                        "reading_of": of,
                        "quote": "q",
                        "location": "l",
                        "verdict": v,
                        "reason": "r",
                        "coverage": "a",
                        "min_seeds": 20,
                    }
                    for i, (of, v) in readings.items()
                ],
                "context": {"experiments": {"a": {"seeds": list(range(20))}}},
                "flipped_claims": ["r2"],
            }
        )
    )


def test_the_headline_counts_statements_with_their_readings():
    """3 statements read by 5 claims: one of two readings that disagree, one of two that agree, one
    of one; a statement's verdict is its readings' or "readings disagree", never one picked."""
    audit = made_up_audit(
        {
            "r1": ("S1", REPRODUCED),
            "r2": ("S1", NOT_REPRODUCED),
            "r3": ("S2", REPRODUCED),
            "r4": ("S2", REPRODUCED),
            "r5": (None, INCONCLUSIVE),
        }
    )
    assert headline_counts(headline(audit)) == {
        "seeds": 20,
        "audited": 3,
        "readings": 5,
        "reproduced": 1,
        "not reproduced": 0,
        "inconclusive": 1,
        "readings disagree": 1,
        "statement flips": 1,
    }
    text = render_markdown(audit)
    # a statement's row: its verdict, its count of readings and whether they agree; its readings under it
    assert "| S1 | readings disagree | 2 readings, which disagree" in text
    assert "| - reading 1: r1 | reproduced |" in text.split("| S1 |", 1)[1].split("\n")[1]
    assert "| S2 | reproduced | 2 readings, which agree |" in text
    assert "| r5 | inconclusive |" in text
    # readings that agree once one is not evaluated: the statement takes their verdict
    agree = made_up_audit({"r1": ("S1", REPRODUCED), "r2": ("S1", "not evaluated")})
    assert headline_counts(headline(agree)) == {
        "seeds": 20,
        "audited": 1,
        "readings": 2,
        "reproduced": 1,
        "not reproduced": 0,
        "inconclusive": 0,
        "statement flips": 1,
    }
