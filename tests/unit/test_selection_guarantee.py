"""The selection policy's guarantee f* - f(x_{h_t,i_t}) <= 3 max{SE, OE} (Sec. 4.3), per round: the
OSC optimizers expose the selected node's max(SE, OE) at selection, the run records it as its table's
``selection_bound`` column (``inf`` for a node never pulled) and whether the guarantee holds as its
``guarantee`` code (what the run store keeps), the audit's reader reads the codes back, and the
``share_at_least`` kind decides the claim on the per-seed share of rounds where it holds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from support import run_job_of, run_spec

from vhct.objectives.noise import UniformNoise
from vhct.objectives.synthetic import SyntheticObjective
from vhct.optimizers.registry import make_optimizer
from vhct.optimizers.tree import HCT
from vhct.pipeline.jobs import run_job
from vhct.pipeline.run import GUARANTEE_FACTOR, guarantee_holds, run_columns
from vhct.pipeline.tables import GUARANTEE_CODES, read_runs
from vhct.reporting.audit.claims_model import Claim
from vhct.reporting.audit.evaluate import conclude
from vhct.reporting.audit.runs import AUDITED_COLUMNS, Run, statistic
from vhct.reporting.audit.statistics import guarantee_share
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
    codes = GUARANTEE_CODES
    np.testing.assert_array_equal(table["guarantee"], [codes["infinite"], codes["infinite"], codes["fails"]])
    run = Run(0, pd.DataFrame(table), 1.0)
    assert statistic(run, "guarantee_share", 3) == pytest.approx(2 / 3)
    assert statistic(run, "guarantee_share_finite", 3) == 0.0
    assert math.isnan(statistic(run, "guarantee_share_finite", 2))  # no finite round yet


def test_methods_without_se_and_oe_record_nan_and_give_no_share():
    spec = run_spec("T-HOO", "garland", 50, 0, params={"rho": 0.25})
    from vhct.pipeline.run import experiment_columns

    table, meta = experiment_columns(spec)
    assert np.isnan(table["selection_bound"]).all()
    assert (table["guarantee"] == GUARANTEE_CODES["none"]).all()
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


def old_guarantee_share(table, f_star: float, finite_only: bool = False) -> float:
    """The audit's share as it was computed before the ``guarantee`` column, from the run table's
    ``value`` and ``selection_bound`` (``f* - f(x) <= GUARANTEE_FACTOR * max(SE, OE)``, ``inf`` holds)."""
    bounds = np.asarray(table["selection_bound"], dtype=float)
    if np.all(np.isnan(bounds)):
        return math.nan
    with np.errstate(invalid="ignore"):
        holds = f_star - np.asarray(table["value"], dtype=float) <= GUARANTEE_FACTOR * bounds
    if finite_only:
        holds = holds[np.isfinite(bounds)]
    return float(holds.mean()) if holds.size else math.nan


def same(a: float, b: float) -> bool:
    """Equal, or both nan (a share that is undefined both ways)."""
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize(("algorithm", "seed"), [("VHCT", 1), ("HCT", 2), ("T-HOO", 0)])
def test_the_stored_guarantee_codes_give_the_share_the_bounds_gave(tmp_path, algorithm, seed):
    """A run job stores the guarantee code, not the bound: the audit's share read from the stored
    codes equals the share computed from the same run's ``selection_bound`` as the audit computed it
    before, at every round checked, over every round and over the finite ones."""
    from vhct.pipeline.run import experiment_columns

    spec = run_spec(algorithm, "garland", 300, seed, params={"rho": 0.75})
    job = run_job_of(spec)
    batch = job.path(str(tmp_path))
    run_job(job, batch)
    tables, records = read_runs({"s": [batch]}, AUDITED_COLUMNS, jobs={batch: job})
    (frame,), (record,) = tables["s"], records["s"]
    memory, meta = experiment_columns(spec)
    np.testing.assert_array_equal(frame["guarantee"], memory["guarantee"])
    bounds = memory["selection_bound"]
    if algorithm == "T-HOO":
        assert np.isnan(bounds).all()
    else:
        assert np.isinf(bounds).any() and np.isfinite(bounds).any() and not np.isnan(bounds).any()
    assert record.f_star == meta["f_star"]
    for rounds in (1, 2, 50, 300):
        for finite_only in (False, True):
            new = guarantee_share(frame.head(rounds), record.f_star, finite_only)
            old = old_guarantee_share({k: v[:rounds] for k, v in memory.items()}, record.f_star, finite_only)
            assert same(new, old), (rounds, finite_only)
    run, in_memory = Run(record.seed, frame, record.f_star), Run(seed, pd.DataFrame(memory), record.f_star)
    for name in ("guarantee_share", "guarantee_share_finite"):
        assert same(statistic(run, name, 300), statistic(in_memory, name, 300))


def share_claim(min_share: float = 0.95) -> Claim:
    return Claim.model_validate(
        {
            "id": "made-up-guarantee",
            "quote": "q, with high probability",
            "size": "with high probability",
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
    in the first share x n rounds and not after (their ``guarantee`` codes)."""
    runs = []
    for seed, share in enumerate(shares):
        holds = np.arange(horizon) < round(share * horizon)
        table = pd.DataFrame(
            {
                "t": np.arange(1, horizon + 1),
                "value": np.full(horizon, -0.1),
                "cumulative_regret": 0.1 * np.arange(1, horizon + 1),
                "depth": np.full(horizon, 2.0),
                "guarantee": np.where(holds, GUARANTEE_CODES["holds"], GUARANTEE_CODES["fails"]),
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
    none = GUARANTEE_CODES["none"]
    runs = [Run(r.seed, r.table.assign(guarantee=none), r.f_star) for r in shares_runs([1.0] * 5)]
    (comp,) = claim.spec.check(claim, "e", [{"A": runs}], [None], "")
    assert comp.verdict == "not evaluated" and "undefined" in comp.reason
