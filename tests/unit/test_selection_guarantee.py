"""The selection policy's guarantee f* - f(x_{h_t,i_t}) <= 3 max{SE, OE} (Sec. 4.3), per round: the
OSC optimizers expose the selected node's max(SE, OE) at selection, the run's writer records it as the
run table's ``selection_bound`` column (``inf`` for a node never pulled), the audit's reader reads it
back, and the ``share_at_least`` kind decides the claim on the per-seed share of rounds where it holds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from support import run_spec

from vhct.objectives.noise import UniformNoise
from vhct.objectives.synthetic import SyntheticObjective
from vhct.optimizers.registry import make_optimizer
from vhct.optimizers.tree import HCT
from vhct.pipeline.jobs import run_job
from vhct.pipeline.run import run_columns
from vhct.pipeline.tables import read_run, sidecar_path
from vhct.reporting.audit.claims_model import Claim
from vhct.reporting.audit.evaluate import conclude
from vhct.reporting.audit.runs import AUDITED_COLUMNS, Run, statistic
from vhct.reporting.audit.statistics import guarantee_holds
from vhct.reporting.audit.verdicts import NO_EFFECT, NOT_REPRODUCED, OPPOSITE, REPRODUCED

#: the hand-computed case: HCT on f(x) = x over [0, 1] without noise, rho = 1/2, nu = 0.01 (so no leaf is
#: split in the first rounds), c = 0.01, delta = 0.01, b = 1
RHO, NU, C, DELTA = 0.5, 0.01, 0.01, 0.01


class Identity(SyntheticObjective):
    """f(x) = x on [0, 1]: f* = 1 at x = 1."""

    name = "identity"

    def __init__(self) -> None:
        super().__init__([[0.0, 1.0]])

    def __call__(self, x, seed=None) -> float:
        return self._point(x)[0]

    def _values(self, X: np.ndarray) -> np.ndarray:
        return X[:, 0]

    @property
    def f_star(self) -> float:
        return 1.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.ones(1)


def hand_table(rounds: int = 3) -> dict[str, np.ndarray]:
    optimizer = HCT([[0.0, 1.0]], rho=RHO, nu=NU, c=C, delta=DELTA, b=1.0, seed=0)
    noise = UniformNoise(0.0, np.random.default_rng(0))
    return run_columns(optimizer, Identity(), rounds, noise, seed=0)


def test_the_selected_nodes_bound_by_hand():
    """Round 1 selects the left child (B = +inf on both, ties go left), round 2 the right one, both
    never pulled: SE = +inf. Round 3 selects the right child (mean 0.75 > 0.25) after one pull:
    SE = b c sqrt(L) with L = log(t+ / (c1 delta)), t+ = 4, c1 = (rho / (3 nu))^(1/8); OE_1 = nu rho."""
    table = hand_table()
    np.testing.assert_array_equal(table["x0"], [0.25, 0.75, 0.75])
    c1 = (RHO / (3.0 * NU)) ** 0.125  # 1.4215
    log_term = math.log(4.0 / (c1 * DELTA))  # 5.640
    se = C * math.sqrt(log_term)  # 0.02375 > OE_1 = 0.005
    assert se > NU * RHO
    bounds = table["selection_bound"]
    assert np.isinf(bounds[:2]).all() and bounds[2] == pytest.approx(se, rel=1e-12)
    # f* - f(x): 0.75, 0.25, 0.25; the guarantee holds where SE is infinite and fails at round 3
    # (0.25 > 3 x 0.02375)
    np.testing.assert_array_equal(guarantee_holds(1.0, table["value"], bounds), [True, True, False])
    run = Run(0, pd.DataFrame(table), 1.0)
    assert statistic(run, "guarantee_share", 3) == pytest.approx(2 / 3)
    assert statistic(run, "guarantee_share_finite", 3) == 0.0
    assert math.isnan(statistic(run, "guarantee_share_finite", 2))  # no finite round yet


def test_methods_without_se_and_oe_record_nan_and_give_no_share():
    spec = run_spec("T-HOO", "garland", 50, 0, params={"rho": 0.25})
    from vhct.pipeline.run import experiment_columns

    table, meta = experiment_columns(spec)
    assert np.isnan(table["selection_bound"]).all()
    assert math.isnan(statistic(Run(0, pd.DataFrame(table), meta["f_star"]), "guarantee_share", 50))
    # f* unknown (real data): undefined too
    osc = Run(0, pd.DataFrame(hand_table()), None)
    assert math.isnan(statistic(osc, "guarantee_share", 3))


def test_the_bound_is_the_optimizers_at_selection_not_after_the_pull():
    """The optimizer's own SE and OE of the node the next ask selects, read before the pull."""
    optimizer = make_optimizer("VHCT", np.array([[0.0, 1.0]]), seed=3, rho=0.75)
    f = Identity()
    rng = np.random.default_rng(0)
    for _ in range(200):
        x = optimizer.ask()
        node = optimizer._path[-1]
        before = max(optimizer.se(node), optimizer.oe(optimizer.partition.depth[node]))
        optimizer.tell(x, f(x) + rng.uniform(-0.05, 0.05))
        assert optimizer.selection_bound == before


def test_the_writers_column_meets_the_audits_reader(tmp_path):
    """A run job writes ``inf`` for the never-pulled nodes; the audit's reader reads it back as inf,
    the table's bytes unchanged, and the share of the written run is the in-memory run's."""
    spec = run_spec("VHCT", "garland", 300, 1, params={"rho": 0.75})
    table = tmp_path / "seed1.csv.gz"
    run_job(spec, table, sidecar_path(table))
    frame, record = read_run(table, AUDITED_COLUMNS)
    bounds = frame["selection_bound"].to_numpy()
    assert np.isinf(bounds).any() and np.isfinite(bounds).any() and not np.isnan(bounds).any()
    from vhct.pipeline.run import experiment_columns

    memory, _ = experiment_columns(spec)
    np.testing.assert_array_equal(bounds, memory["selection_bound"])
    run = Run(record.seed, frame, record.f_star)
    for name in ("guarantee_share", "guarantee_share_finite"):
        assert statistic(run, name, 300) == statistic(Run(1, pd.DataFrame(memory), record.f_star), name, 300)


def share_claim(min_share: float = 0.95) -> Claim:
    return Claim.model_validate(
        {
            "id": "made-up-guarantee",
            "quote": "q",
            "location": "l",
            "kind": "share_at_least",
            "statistic": "guarantee_share_finite",
            "experiments": ["e"],
            "target": "A",
            "alpha": 0.05,
            "min_seeds": 5,
            "round": "final",
            "require": "all",
            "thresholds": {"min_share": min_share},
            "effect_of_interest": {"value": 0.99, "reason": "made up"},
        }
    )


def shares_runs(shares: list[float], horizon: int = 200) -> list[Run]:
    """Runs against f* = 0 whose regret is 0.1 every round and whose selected node's bound covers it
    (0.1) in the first share x n rounds and not (0.01) after."""
    runs = []
    for seed, share in enumerate(shares):
        holds = np.arange(horizon) < round(share * horizon)
        table = pd.DataFrame(
            {
                "t": np.arange(1, horizon + 1),
                "value": np.full(horizon, -0.1),
                "cumulative_regret": 0.1 * np.arange(1, horizon + 1),
                "depth": np.full(horizon, 2.0),
                "selection_bound": np.where(holds, 0.1, 0.01),
                "step_seconds": np.full(horizon, 1e-3),
                "optimizer_seconds": np.full(horizon, 1e-4),
            }
        )
        runs.append(Run(seed, table, 0.0))
    return runs


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        (0.99, (REPRODUCED, REPRODUCED)),  # every seed near 1: held
        (0.60, (NOT_REPRODUCED, OPPOSITE)),  # well below the level
        (0.95, (NOT_REPRODUCED, OPPOSITE)),  # just below: with 20 tight seeds, refuted
    ],
)
def test_share_claim_on_runs_of_known_truth(level, expected):
    rng = np.random.default_rng(round(level * 100))
    shares = np.clip(level + 0.01 * rng.standard_normal(20), 0.0, 1.0)
    if level == 0.95:
        shares = shares - 0.02  # a true share of 0.93, just under the claimed 0.95
    claim = share_claim()
    runs = shares_runs(list(shares))
    comps = claim.spec.check(claim, "e", [{"A": runs}], [None], "")
    result = conclude(claim, [("e", comps)])
    assert (result["verdict"], result["category"]) == expected, result["reason"]
    (comp,) = comps
    assert comp.effect == pytest.approx(np.mean([round(s * 200) / 200 for s in shares]))


def test_share_claim_with_a_band_gives_no_effect_between_its_margins():
    """refuted_below under min_share: a true share between the two is "no effect of the claimed size"."""
    claim = share_claim().model_copy(
        update={"thresholds": share_claim().thresholds.model_copy(update={"refuted_below": 0.8})}
    )
    shares = np.full(20, 0.875) + 0.005 * np.random.default_rng(0).standard_normal(20)
    comps = claim.spec.check(claim, "e", [{"A": shares_runs(list(shares))}], [None], "")
    result = conclude(claim, [("e", comps)])
    assert (result["verdict"], result["category"]) == (NOT_REPRODUCED, NO_EFFECT), result["reason"]


def test_share_claim_is_not_evaluated_where_the_share_is_undefined():
    claim = share_claim()
    runs = [Run(r.seed, r.table.assign(selection_bound=np.nan), r.f_star) for r in shares_runs([1.0] * 5)]
    (comp,) = claim.spec.check(claim, "e", [{"A": runs}], [None], "")
    assert comp.verdict == "not evaluated" and "undefined" in comp.reason
