"""The contract every kind of claim keeps, run over every kind the registry holds (as Optuna's tests
run over every sampler): a claim built from the kind's own ``example`` is

(a) decided right on made-up samples of known truth (``kind.made_up`` + ``evaluate.conclude``):
    "reproduced" far inside its claimed region, "not reproduced: the opposite" far inside its
    refuting region, and "not reproduced: no effect of the claimed size" between its margins (the
    opposite where its no-effect regions are its refuting ones);
(b) evaluated on made-up runs by the audit (``run_audit``), written by the one writer and read back
    by the one reader unchanged, rendered and drawn in the forest;
(c) calibrated (``benchmarks/calibration.py``).

Truths come from the kind's margins, regions and scale (``margins``, ``intervals``, ``additive``),
never from its name. A kind registered here, in the test alone, passes the same contract: adding a
kind is one class and one row of ``CLAIM_KINDS``.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import calibration  # benchmarks/calibration.py (pyproject: pytest pythonpath)
import numpy as np
import pandas as pd
import pytest
from support import conditions_of, with_effect

from vhct.pipeline.run import guarantee_codes
from vhct.reporting.audit.checks import Region, no_effect_regions
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.claims_model import CLAIM_KINDS, Claim, ClaimsFile, Rules, Thresholds
from vhct.reporting.audit.evaluate import conclude, run_audit
from vhct.reporting.audit.kinds import MADE_UP_SCALE, ClaimKind
from vhct.reporting.audit.records import AuditContext, audit_json, parse_audit, read_audit
from vhct.reporting.audit.runs import AUDITED_COLUMNS, Run
from vhct.reporting.audit.verdicts import NO_EFFECT, NOT_REPRODUCED, OPPOSITE, REPRODUCED
from vhct.reporting.plots.forest import audit_forest, forest_rows
from vhct.reporting.render import render_markdown

#: every registered kind, read from the registry (a kind added there is tested here)
KINDS = list(CLAIM_KINDS)
#: the made-up claims' level and minimum seeds; seeds per made-up sample and per setting of the runs
ALPHA, MIN_SEEDS, SEEDS, RUN_SEEDS = 0.05, 5, 40, 20
#: the coefficient of variation of the made-up samples and runs (small: every verdict decided)
SPREAD = 0.03
#: how far from a margin a truth sits: far (a log ratio, or a difference) and near
FAR, FAR_ADDITIVE, NEAR, NEAR_ADDITIVE = 0.5, 0.2, 0.1, 0.05
#: rounds of the made-up runs
HORIZON = 40
#: valid margins to stand in for a kind's missing one (a claim's thresholds are never empty)
OTHER_MARGINS = {"refuted_above": 2.0, "min_factor": 1.5}


def made_up_claim(name: str) -> Claim:
    """A valid claim of kind ``name``: the common keys, then the kind's own ``example`` keys."""
    kind = CLAIM_KINDS[name]
    common = {
        "id": f"made-up-{name.replace('_', '-')}",
        "quote": "q",
        "location": "l",
        "kind": name,
        "statistic": kind.statistics[0] if kind.statistics else "cumulative_regret",
        "experiments": ["e1", "e2"],
        "alpha": ALPHA,
        "min_seeds": MIN_SEEDS,
        "round": "final",
        "require": "all",
    }
    if kind.over_pairs:
        common["pairs"] = [["e1", "e2"]]
    return Claim.model_validate(with_effect({**common, **copy.deepcopy(kind.example)}))


def _step(claim: Claim, value: float, step: float) -> float:
    """``value`` moved by ``step``: a difference on the kind's linear scale, else a log ratio."""
    return value + step if claim.spec.additive else value * math.exp(step)


def truths(claim: Claim) -> dict[str, tuple[float, str, str]]:
    """Truths of known outcome from the kind's margins and regions: far inside the claimed region
    (a band's middle), far inside the refuting one, and between the margins (where the margins
    coincide, just past them: the no-effect region is then the refuting one). Each with its
    expected verdict and category."""
    kind = claim.spec
    far, near = (FAR_ADDITIVE, NEAR_ADDITIVE) if kind.additive else (FAR, NEAR)
    claimed, refuting, side = kind.margins(claim)
    ((low, high),), _ = kind.intervals(claim)
    if low > 0.0 and math.isfinite(high):  # a band: its middle
        inside = (low + high) / 2 if kind.additive else math.sqrt(low * high)
    else:
        inside = _step(claim, claimed, side * far)
    if no_effect_regions(*kind.regions(claim)):
        between = (claimed + refuting) / 2 if kind.additive else math.sqrt(claimed * refuting)
        expected = NO_EFFECT
    else:
        between, expected = _step(claim, refuting, -side * near), OPPOSITE
    return {
        "far inside the claimed region": (inside, REPRODUCED, REPRODUCED),
        "far inside the refuting region": (_step(claim, refuting, -side * far), NOT_REPRODUCED, OPPOSITE),
        "between the margins": (between, NOT_REPRODUCED, expected),
    }


def inside(region: Region, effect: float) -> bool:
    return effect < region.factor if region.alternative == "less" else effect > region.factor


def draw(
    rng: np.random.Generator, mean: float, n: int, shaped: bool, spread: float | None = None
) -> np.ndarray:
    """The calibration's draw, normal: n per-seed values of this mean (coefficient of variation
    ``spread``, else SPREAD)."""
    return rng.normal(mean, (SPREAD if spread is None else spread) * abs(mean), n)


def made_up_result(claim: Claim, truth: float, seed: int = 0) -> dict:
    """The claim's verdict on made-up samples: every comparison of every experiment (or pair) at ``truth``."""
    kind, sample = claim.spec, partial(draw, np.random.default_rng(seed))
    units = [" / ".join(p) for p in claim.pairs] if kind.over_pairs else claim.experiments
    parts = [
        (u, [kind.made_up(claim, u, truth, sample, SEEDS) for _ in range(kind.per_unit(claim))])
        for u in units
    ]
    return conclude(claim, parts)


def check_contract_on_samples(claim: Claim) -> None:
    for scenario, (truth, verdict, category) in truths(claim).items():
        result = made_up_result(claim, truth)
        assert (result["verdict"], result["category"]) == (verdict, category), (
            claim.kind,
            scenario,
            truth,
            result["reason"],
        )
        comps = [c for e in result["experiments"] for c in e.comparisons]
        assert len(comps) == len(claim.pairs or claim.experiments) * claim.spec.per_unit(claim)
        for c in comps:  # the made-up samples have the truth they were asked for
            if claim.spec.additive:
                assert c.effect == pytest.approx(truth, abs=0.03), (scenario, c.effect)
            else:
                assert c.effect == pytest.approx(truth, rel=0.05), (scenario, c.effect)


# ---------------------------------------------------------------- made-up runs


def made_up_runs(values: np.ndarray, slope: bool) -> list[Run]:
    """Runs (against f* = 0), one per per-seed value: cumulative regret growing linearly to the value
    at the last round, and a run's wall time in seconds the value over the made-up scale (100: the
    truth itself), a quarter of it the optimizer's own; for a slope of log R_t on log t, R_t = t **
    value. A share of rounds (the selection guarantee's) is the value too: the first value x n rounds
    have a bound max(SE, OE) that covers their regret, the others a bound of 0 (every round's regret is
    > 0)."""
    t = np.arange(1, HORIZON + 1, dtype=float)
    runs = []
    for seed, value in enumerate(values):
        cumulative = t**value if slope else value * t / HORIZON
        holds = np.arange(HORIZON) < round(value * HORIZON)
        value_column = -np.diff(cumulative, prepend=0.0)
        table = pd.DataFrame(
            {
                "t": t.astype(int),
                "value": value_column,
                "cumulative_regret": cumulative,
                "depth": np.full(HORIZON, 3.0),
                "guarantee": guarantee_codes(0.0, value_column, np.where(holds, 1e9, 0.0)),
                "step_seconds": np.full(HORIZON, value / MADE_UP_SCALE / HORIZON),
                "optimizer_seconds": np.full(HORIZON, value / MADE_UP_SCALE / HORIZON / 4),
            }
        )
        assert sorted(table.columns) == sorted(AUDITED_COLUMNS)  # every column the statistics read
        runs.append(Run(seed, table, 0.0))
    return runs


def experiment_runs(claim: Claim, truth: float, rng: np.random.Generator) -> dict[str, dict[str, list[Run]]]:
    """Runs of every setting the claim reads on every experiment it reads, whose effect is ``truth``:
    the leading settings (the target, or the claimed settings, or, where the claim names only
    others, those) at ``truth`` times the rest (on the first experiment of a pair only, where the
    claim compares pairs), every value with a small spread. For a quantity of one setting's own (a
    slope, a share, or a slope on a pair's first experiment against a flat R_t, slope 0, on its second)
    the truth is the quantity itself; for a difference between settings the leading ones lie ``truth``
    above the rest, whose level is 1."""
    kind = claim.spec
    leading = [claim.target] if claim.target else list(claim.claimed or claim.others)
    first = {p[0] for p in claim.pairs or []}
    # a quantity of one setting's own (no target compared with others): its slope or share
    slope = kind.additive and not (claim.target and claim.others)
    out = {}
    for e in claim.experiments_read:
        at_truth = (e in first) if kind.over_pairs else True
        out[e] = {}
        for s in claim.settings:
            noise = rng.standard_normal(RUN_SEEDS)
            if slope:  # against 0 on a pair's second experiment
                values = (truth if at_truth else 0.0) + SPREAD * noise
            elif kind.additive:  # a difference between settings: the leading ones ``truth`` above 1
                values = (1.0 + (truth if s in leading and at_truth else 0.0)) * (1.0 + SPREAD * noise)
            else:  # a ratio against 1
                values = 100.0 * (truth if s in leading and at_truth else 1.0) * (1.0 + SPREAD * noise)
            out[e][s] = made_up_runs(values, slope)
    return out


def renamed(runs: dict, claim: Claim, suffix: str) -> tuple[Claim, dict]:
    """The claim and its runs on experiments renamed ``<e><suffix>`` (two claims, one audit)."""
    names = {e: f"{e}{suffix}" for e in claim.experiments_read}
    update = {"id": f"{claim.id}{suffix}", "experiments": [names[e] for e in claim.experiments]}
    if claim.pairs:
        update["pairs"] = [[names[e] for e in p] for p in claim.pairs]
    return claim.model_copy(update=update), {names[e]: r for e, r in runs.items()}


def check_contract_on_runs(claim: Claim, tmp_path: Path) -> None:
    """(b): a claim that holds and one that is refuted, on made-up runs, through the audit, its one
    writer and reader, the renderer and the forest."""
    rng = np.random.default_rng(1)
    known = truths(claim)
    holds, holds_runs = renamed(
        experiment_runs(claim, known["far inside the claimed region"][0], rng), claim, "-holds"
    )
    refuted, refuted_runs = renamed(
        experiment_runs(claim, known["far inside the refuting region"][0], rng), claim, "-refuted"
    )
    shipped = load_claims()
    rules = {**shipped.rules.texts(), claim.kind: f"the made-up rule of {claim.kind}"}
    claims = ClaimsFile.model_validate(
        {
            "version": 1,
            "defaults": shipped.defaults,
            "rules": rules,
            "claims": [holds, refuted],
            "discrepancies": [],
            "conditions": conditions_of([holds, refuted]),
        }
    )
    runs = {**holds_runs, **refuted_runs}
    audit = run_audit(claims, runs, AuditContext(experiments={}), scales=dict.fromkeys(runs, 1.0))
    assert [c.claim for c in audit.claims] == [holds, refuted]
    assert [c.verdict for c in audit.claims] == [REPRODUCED, NOT_REPRODUCED], [c.reason for c in audit.claims]
    assert audit.claims[1].category == OPPOSITE
    assert audit.summary[REPRODUCED] == audit.summary[NOT_REPRODUCED] == 1
    # the one writer and the one reader: the record back, unchanged (compared as data: a nan read
    # back is a new nan, and nan != nan)
    text = audit_json(audit)
    back = parse_audit(json.loads(text))
    path = tmp_path / "audit.json"
    path.write_text(text, encoding="utf-8")
    assert same(back.model_dump(), audit.model_dump())
    assert same(read_audit(path).model_dump(), audit.model_dump())
    assert audit_json(back) == text
    assert [c.claim for c in back.claims] == [holds, refuted] and back.claims[0].claim.spec.name == claim.kind
    # rendered: every claim under its heading, with its verdict and its kind's rule
    md = render_markdown(back)
    assert md == render_markdown(audit)
    for c in (holds, refuted):
        assert f"### {c.id}" in md
    assert f"### {holds.id}\n\nVerdict: reproduced." in md
    assert f"Rule: the made-up rule of {claim.kind}" in md
    # drawn: a row per comparison with a finite positive estimate, both files written
    rows = forest_rows(back)
    assert {r.claim for r in rows} == {holds.id, refuted.id}
    paths = audit_forest(back, tmp_path / "audit_forest")
    assert [p.suffix for p in paths] == [".pdf", ".png"]
    assert all(p.is_file() and p.stat().st_size > 1_000 for p in paths)


def same(a: Any, b: Any) -> bool:
    """Equal data, a nan equal to a nan (a record read back holds a new nan where it held one)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def check_contract_in_the_calibration(claim: Claim) -> None:
    """(c): the benchmark's rates of the claim's rule, each a share in [0, 1]."""
    rule = calibration.rule_of(claim)
    assert (rule.experiments, rule.comparisons) == (
        len(claim.pairs or claim.experiments),
        claim.spec.per_unit(claim),
    )
    row = calibration.rates(rule, n=20, distribution="normal", repetitions=3, seed=0, cv=0.1)
    shares = [
        row.false_reproduction,
        row.false_refutation,
        row.false_opposite,
        row.tie_reproduced,
        row.tie_opposite,
        row.tie_no_effect,
    ]
    assert all(0.0 <= x <= 1.0 for x in shares), row
    assert (row.rule, row.seeds, row.distribution, row.repetitions) == (rule.name, 20, "normal", 3)


def check_declaration(name: str) -> None:
    """What a kind declares is what the claims file's validator and the audit read."""
    kind = CLAIM_KINDS[name]
    assert isinstance(kind(), ClaimKind) and kind.name == name
    assert set(kind.keys) <= set(Claim.model_fields), kind.keys
    assert set(kind.thresholds) <= set(Thresholds.model_fields), kind.thresholds
    assert set(kind.thresholds) <= set(kind.example["thresholds"])
    assert set(kind.example) - {"thresholds", "statistic"} <= set(kind.keys)
    claim = made_up_claim(name)
    assert claim.spec.name == name
    claimed, refuting = claim.spec.regions(claim)
    assert claimed and refuting and all(isinstance(r, Region) for r in (*claimed, *refuting))
    # the calibrated margins are the regions': the claimed one on its side, the refuting one across
    margin, against, side = claim.spec.margins(claim)
    below, above = ("less", "greater") if side < 0 else ("greater", "less")
    assert Region(below, margin) in claimed and Region(above, against) in refuting
    # the test's own truths lie where they are meant to
    known = truths(claim)
    assert all(inside(r, known["far inside the claimed region"][0]) for r in claimed)
    assert any(inside(r, known["far inside the refuting region"][0]) for r in refuting)
    assert not all(inside(r, known["between the margins"][0]) for r in claimed)
    # a claim missing a key or a threshold its kind needs is refused, naming it
    for key in kind.keys:
        data = claim.model_dump(exclude_none=True)
        data.pop(key, None)
        with pytest.raises(ValueError, match=f"'{key}' is a required property of a {name} claim"):
            Claim.model_validate(data)
    for key in kind.thresholds:
        data = claim.model_dump(exclude_none=True)
        del data["thresholds"][key]
        if not data["thresholds"]:  # an empty block is refused by its type: give another kind's margin
            data["thresholds"] = next({k: v} for k, v in OTHER_MARGINS.items() if k not in kind.thresholds)
        with pytest.raises(ValueError, match=f"'{key}' is a required property of a {name} claim"):
            Claim.model_validate(data)


def check_contract(name: str, tmp_path: Path) -> None:
    check_declaration(name)
    claim = made_up_claim(name)
    check_contract_on_samples(claim)
    check_contract_on_runs(claim, tmp_path)
    check_contract_in_the_calibration(claim)


@pytest.mark.parametrize("name", KINDS)
def test_every_kind_keeps_the_contract(name, tmp_path):
    check_contract(name, tmp_path)


def test_the_registry_holds_every_kind_the_claims_file_and_its_schema_know():
    assert KINDS and len(set(KINDS)) == len(KINDS)
    assert {c.kind for c in load_claims().claims} <= set(KINDS)
    assert Claim.model_json_schema()["properties"]["kind"]["enum"] == KINDS


# ---------------------------------------------------------------- a kind added in one class and one row


class Lower(ClaimKind):
    """The target's statistic is lower than each other's by at least ``min_relative_effect``, and
    refuted only where it is higher (a different refuting margin than ``lowest``'s)."""

    name = "made_up_lower"
    thresholds = ("min_relative_effect",)
    example = {"target": "A", "others": ["B"], "thresholds": {"min_relative_effect": 0.2}}

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        return (Region("less", 1.0 - claim.thresholds.min_relative_effect),), (Region("greater", 1.0),)


@pytest.fixture
def lower() -> Iterator[str]:
    """The ``Lower`` kind registered for one test (its one row), and unregistered after it."""
    CLAIM_KINDS.register(Lower)
    try:
        yield Lower.name
    finally:
        CLAIM_KINDS.unregister(Lower.name)


def test_a_kind_registered_in_one_row_keeps_the_same_contract(lower, tmp_path):
    assert lower in CLAIM_KINDS and lower not in KINDS  # not a kind of the package
    claim = made_up_claim(lower)
    assert claim.spec.margins(claim) == (pytest.approx(0.8), 1.0, -1)
    assert claim.spec.intervals(claim) == ([(0.0, pytest.approx(0.8))], [(1.0, math.inf)])
    check_contract(lower, tmp_path)  # its rule text accepted in a claims file, its claims audited
    # the claims file's schema follows the registry: the kind, and what it needs
    schema = Claim.model_json_schema()
    assert lower in schema["properties"]["kind"]["enum"]
    (then,) = [r["then"] for r in schema["allOf"] if r["if"]["properties"]["kind"]["const"] == lower]
    assert then["required"] == list(Lower.keys)
    assert then["properties"]["thresholds"]["required"] == list(Lower.thresholds)


def test_an_unregistered_kind_is_refused_naming_the_known_ones():
    assert Lower.name not in CLAIM_KINDS  # the fixture's row is gone with its test
    data = made_up_claim(KINDS[0]).model_dump(exclude_none=True)
    with pytest.raises(ValueError, match=rf"unknown kind '{Lower.name}' \(known: " + ", ".join(KINDS)):
        Claim.model_validate({**data, "kind": Lower.name})
    with pytest.raises(ValueError, match=rf"key {Lower.name}: not a kind of claim"):
        Rules.model_validate({"footing": "f", "combine": "c", Lower.name: "a rule"})
