"""Fig. 1 and Sec. 4.1 on the standard partition, computed (``vhct.objectives.cells``): the cells' exact
extrema, the near-optimal cells per depth against hand-computed values at depths 0-4, the drop on the
optimal cell, Condition GLS failing on a function that violates it, the claims file's ``computed``
statements through the audit's one writer and reader, and the figure drawn from the computed table."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from vhct.objectives import make_objective
from vhct.objectives.cells import (
    DIFFICULT_RHO,
    PAPER_THRESHOLDS,
    Cells,
    first_violation,
    growth_factor,
    near_optimal_table,
    sampled_extrema,
)
from vhct.objectives.synthetic import SyntheticObjective
from vhct.optimizers.partition import BoxPartition
from vhct.optimizers.resolution import Exponential, Polynomial
from vhct.pipeline.specs import FigureSpec, PanelSpec
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.claims_model import ComputedClaim
from vhct.reporting.audit.computed import evaluate_computed
from vhct.reporting.audit.evaluate import run_audit
from vhct.reporting.audit.records import AuditContext, audit_json, parse_audit
from vhct.reporting.audit.verdicts import NOT_REPRODUCED, REPRODUCED
from vhct.reporting.render import render_markdown

LN2 = math.log(2.0)


def difficult() -> Cells:
    return Cells.of(make_objective("difficult"))


def counterexample() -> Cells:
    return Cells.of(make_objective("counterexample"))


def test_the_cells_are_the_partitions():
    """Depth h's cells are [lo + k w, lo + (k + 1) w], as BoxPartition halves them (1-D: no random axis)."""
    g = counterexample()
    partition = BoxPartition([[g.lo, g.hi]], seed=0)
    leaves = [0]
    for depth in range(1, 4):
        leaves = [child for node in leaves for child in partition.split(node)]
        lows = sorted(float(partition.lower(n)[0]) for n in leaves)
        np.testing.assert_allclose(lows, g.lo + np.arange(2**depth) * g.width(depth), rtol=0, atol=1e-15)


def test_difficult_near_optimal_cells_by_hand():
    """eps_h = 2 * 2^(-h/2). Every f >= -sqrt(1/2) = -0.707 (y = |x - 1/2| <= 1/2), so at h <= 3
    (eps >= 0.707) every cell counts: 1, 2, 4, 8. At h = 4 (eps = 1/2), by symmetry the left half's cells
    k = 0..7 of width 1/16: k = 7 holds x = 1/2 (sup 0); k = 6 (y in [1/16, 1/8]) meets the y^2 band at
    e^-2.5 = 0.082 (sup -0.0067); k = 5 (y from 0.125, frac(ln y) = 0.92: -y^2 = -0.016); k = 4 meets
    e^-1.5 = 0.223 (-0.050); k = 3 (-0.0625) and k = 2 (-0.098) start in y^2 bands; k = 1 (y from
    0.375, a sqrt band to e^-0.5: -0.612) and k = 0 (-0.661) fall below -1/2: 6 + 6 = 12."""
    counts = difficult().near_optimal_counts(PAPER_THRESHOLDS["difficult"].epsilon, 4)
    assert counts == [1, 2, 4, 8, 12]


def test_counterexample_near_optimal_cells_by_hand():
    """eps_h = 2/h (2 at h = 0): g >= 0, so every cell counts at h <= 2 (eps >= 1); at h = 3 a cell
    counts when g(left end) >= 1/3, i.e. left end <= e^-1.5 = 0.2231, with w = (1/e) / 8 = 0.04598:
    k <= 4.85, 5 cells. Beyond: floor(e (2 / sqrt(e))^h) + 1."""
    counts = counterexample().near_optimal_counts(PAPER_THRESHOLDS["counterexample"].epsilon, 30)
    assert counts[:4] == [1, 2, 4, 5]
    closed = [math.floor(math.e * (2.0 / math.sqrt(math.e)) ** h) + 1 for h in range(3, 31)]
    assert counts[3:] == closed


def test_growth_per_depth_separates_exponential_from_polynomial_counts():
    h = np.arange(41)
    assert growth_factor([round(3 * 1.3**k) for k in h]) == pytest.approx(1.3, rel=1e-3)
    assert growth_factor([1 + k**3 for k in h]) == pytest.approx(1.0, abs=0.02)
    counter = near_optimal_table(make_objective("counterexample"))
    assert counter.growth == pytest.approx(2 / math.sqrt(math.e), rel=1e-3)
    assert near_optimal_table(make_objective("difficult")).growth == pytest.approx(2**0.75, rel=0.02)
    with pytest.raises(ValueError, match="at least 4 depths"):
        growth_factor([1, 2, 3])


def test_optimal_cell_drop_by_hand():
    """g: 1 at depth 0 (g(1/e) = 0), then 1 / (1 + h ln 2) (inf at the right end 2^-h / e). The difficult
    function: sqrt(1/2) at depths 0 and 1 (y up to 1/2, in a sqrt band), at depth 2 the limit -sqrt(s) at
    the y^2 band's start s = e^-1.5 = 0.2231 inside y <= 1/4: 0.4724."""
    gaps = counterexample().optimal_gaps(3)
    np.testing.assert_allclose(gaps, [1.0, *(1.0 / (1.0 + h * LN2) for h in (1, 2, 3))], rtol=1e-12)
    np.testing.assert_allclose(
        difficult().optimal_gaps(2), [math.sqrt(0.5), math.sqrt(0.5), math.exp(-0.75)], rtol=1e-12
    )


def test_exact_extrema_bracket_a_fine_sample():
    """The exact inf and sup of every cell of depth 10 bracket those sampled at 4097 points per cell."""
    for name in ("difficult", "counterexample"):
        f = make_objective(name)
        cells = Cells.of(f)
        w = cells.width(10)
        lo = cells.lo + np.arange(2**10) * w
        inf, sup = cells.extrema(lo, lo + w)
        s_inf, s_sup = sampled_extrema(f, 4097)(lo, lo + w)
        assert np.all(sup >= s_sup) and np.all(inf <= s_inf), name
        assert np.max(sup - s_sup) < 1e-3 and np.max(s_inf - inf) < 1e-2, name


class Steep(SyntheticObjective):
    """f(x) = -x^(1/8) on [0, 1]: its drop on the optimal cell [0, 2^-h] is 2^(-h/8), above 2/h from h = 3."""

    name = "steep"

    def __init__(self) -> None:
        super().__init__([[0.0, 1.0]])

    def __call__(self, x, seed=None) -> float:
        return -(self._point(x)[0] ** 0.125)

    def _values(self, X: np.ndarray) -> np.ndarray:
        return -(X[:, 0] ** 0.125)

    @property
    def f_star(self) -> float:
        return 0.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.zeros(1)


def test_gls_fails_on_a_function_that_violates_it():
    cells = Cells.of(Steep())  # sampled extrema: exact here (f monotone, the ends are sampled)
    gaps = cells.optimal_gaps(20)
    np.testing.assert_allclose(gaps[:4], [2.0 ** (-h / 8) for h in range(4)], rtol=1e-12)
    assert first_violation(gaps, Polynomial(a=2.0, p=1.0)) == 3  # 2^(-3/8) = 0.771 > 2/3
    assert first_violation(counterexample().optimal_gaps(200), Polynomial(a=2.0, p=1.0)) is None
    assert first_violation(counterexample().optimal_gaps(200), Exponential(nu=1.0, rho=0.75)) == 6
    assert first_violation(difficult().optimal_gaps(60), Exponential(nu=1.0, rho=DIFFICULT_RHO)) is None
    with pytest.raises(ValueError, match="must not increase"):
        counterexample().near_optimal_counts(lambda h: float(h), 3)


def computed_claim(**given) -> ComputedClaim:
    return ComputedClaim.model_validate({"id": "made-up", "quote": "q", "location": "l", **given})


def test_computed_claims_decide_by_their_rule():
    holds = {"objective": "counterexample", "check": "gls", "max_depth": 50}
    phi = [{"kind": "polynomial", "a": 2.0, "p": 1.0}]
    rho = [{"kind": "exponential", "nu": 1.0, "rho": 0.5}]

    def verdict(claimed: str, resolutions: list) -> str:
        return evaluate_computed(computed_claim(**holds, claimed=claimed, resolutions=resolutions)).verdict

    assert verdict("holds", phi) == REPRODUCED
    assert verdict("holds", rho) == NOT_REPRODUCED
    assert verdict("violated", rho) == REPRODUCED
    growth = {"objective": "counterexample", "check": "near_optimal_growth", "min_growth": 1.05}
    result = evaluate_computed(computed_claim(**growth, claimed="polynomial"))
    assert result.verdict == NOT_REPRODUCED and "1.213" in result.reason
    assert result.table["near_optimal_cells"][:4] == [1.0, 2.0, 4.0, 5.0]
    assert evaluate_computed(computed_claim(**growth, claimed="exponential")).verdict == REPRODUCED
    with pytest.raises(ValueError, match="min_growth"):
        computed_claim(objective="difficult", check="near_optimal_growth", claimed="exponential")
    with pytest.raises(ValueError, match="claims holds or violated"):
        computed_claim(**holds, claimed="exponential", resolutions=phi)


def test_shipped_computed_statements_through_the_audits_writer_and_reader():
    claims = load_claims()
    verdicts = {c.claim.id: c for c in run_audit(claims, {}, AuditContext(experiments={})).computed}
    assert {k: v.verdict for k, v in verdicts.items()} == {
        "difficult-locally-smooth": REPRODUCED,
        "difficult-exponential-near-optimal": REPRODUCED,
        "counterexample-not-locally-smooth": REPRODUCED,
        "gls-counterexample-2-over-h": REPRODUCED,
        "counterexample-near-optimality-dimension-finite": NOT_REPRODUCED,
    }
    one = claims.model_copy(update={"claims": claims.claims[:1]})
    audit = run_audit(one, {}, AuditContext(experiments={}))
    back = parse_audit(json.loads(audit_json(audit)))
    assert back.computed == audit.computed
    text = render_markdown(back)
    assert "Statements checked by computation" in text
    assert "counterexample-near-optimality-dimension-finite" in text


def test_the_figure_draws_the_computed_table():
    from vhct.reporting.plots.cells import NEAR_OPTIMAL, near_optimal_figure

    spec = FigureSpec(
        name="fig1_near_optimal_cells",
        kind="near_optimal",
        experiments={},
        panels=[PanelSpec(objective="difficult", title="Difficult"), PanelSpec(objective="counterexample")],
    )
    fig = near_optimal_figure(spec)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 2
    for ax, name in zip(panels, ("difficult", "counterexample"), strict=True):
        table = near_optimal_table(make_objective(name))
        (line,) = [ln for ln in ax.get_lines() if ln.get_label() == NEAR_OPTIMAL]
        np.testing.assert_array_equal(line.get_ydata(), table.counts)
        assert table.threshold in ax.get_title() and f"{table.growth:.3g}" in ax.get_title()
    assert fig.texts or fig._suptitle is not None
