"""One optimization run: an optimizer against a (noisy) objective for ``n`` rounds, as a per-round table.

A run owns its randomness: the seed feeds a ``SeedSequence`` whose children seed the
optimizer (split dimensions, instance seeds), the additive noise, and, for objectives
whose evaluation is itself random, the evaluation of round ``t`` (seeded by ``(seed, t)``).
Same seed, same table (wall times excepted: they sit in their own column).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from vhct.objectives import make_objective
from vhct.objectives.base import Objective
from vhct.objectives.noise import UniformNoise
from vhct.optimizers.base import Optimizer, check_horizon, check_reward
from vhct.optimizers.memo import PointMemo
from vhct.optimizers.registry import make_optimizer
from vhct.pipeline.records import SPEC_FIELDS, RunSpec
from vhct.pipeline.tables import GUARANTEE_CODES, regret_columns, run_table_columns
from vhct.pipeline.versions import package_versions

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

#: the constant a of the paper's selection guarantee f* - f(x_{h_t,i_t}) <= a max(SE, OE) (Sec. 4.3 and
#: the appendix lemma "upper bound of simple regret": a = 3)
GUARANTEE_FACTOR = 3.0


def guarantee_holds(f_star: float, values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per round, whether ``f* - f(x_t) <= GUARANTEE_FACTOR * max(SE, OE)`` (``bounds``: ``inf`` holds
    whatever the gap, NaN never holds)."""
    with np.errstate(invalid="ignore"):
        return f_star - values <= GUARANTEE_FACTOR * bounds


def guarantee_codes(f_star: float | None, values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The ``guarantee`` column (:data:`GUARANTEE_CODES`) of a run from its values and the selected
    nodes' ``max(SE, OE)``: what the audit's guarantee statistics read, a byte a round."""
    codes = np.full(len(bounds), GUARANTEE_CODES["none"], dtype=np.int8)
    finite = np.isfinite(bounds)
    codes[finite] = GUARANTEE_CODES["fails"]
    if f_star is not None:
        codes[finite & guarantee_holds(f_star, values, bounds)] = GUARANTEE_CODES["holds"]
    codes[np.isinf(bounds)] = GUARANTEE_CODES["infinite"]
    return codes


def run(
    optimizer: Optimizer,
    objective: Objective,
    horizon: int,
    noise: UniformNoise,
    seed: int,
    progress_every: int | None = None,
) -> pd.DataFrame:
    """Run ``horizon`` rounds and return the per-round table (``run_columns`` as a DataFrame)."""
    return as_frame(run_columns(optimizer, objective, horizon, noise, seed, progress_every))


def as_frame(columns: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """A run table's columns as a pandas DataFrame (pandas is imported here, on first use)."""
    import pandas as pd

    return pd.DataFrame(dict(columns), columns=list(columns))


def run_columns(
    optimizer: Optimizer,
    objective: Objective,
    horizon: int,
    noise: UniformNoise,
    seed: int,
    progress_every: int | None = None,
    evaluations: dict[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Run ``horizon`` rounds and return the per-round table as columns, in table order.

    Without pandas, whose import takes about a second: a run job writes the columns directly
    (``vhct.pipeline.jobs.write_table``).

    Columns: ``t``; the point ``x0..x{d-1}``; ``reward`` (what the optimizer saw:
    ``f(x)`` plus noise); ``value`` ``f(x)``; ``regret`` = reference - ``f(x)`` (the
    pseudo-regret the paper plots, with reference ``f*`` or 1 when unknown);
    ``cumulative_regret``; ``depth`` of the pulled node (NaN for non-tree methods);
    ``selection_bound``, ``max(SE, OE)`` of the pulled node when the round selected it (VHCT and HCT:
    ``inf`` for a node never pulled before; NaN for the other methods); ``guarantee``, whether the
    selection guarantee ``f* - f(x_t) <= 3 max(SE, OE)`` holds that round (:func:`guarantee_codes`),
    which the audit reads;
    ``step_seconds``, the wall time of the round (ask + evaluate + tell);
    ``optimizer_seconds``, the optimizer's own part of it (ask + tell, without the objective's
    evaluation and its noise): the cost a paper attributes to the method, not to the objective.

    A deterministic objective (``stochastic`` False) is memoized per run by exact point
    (:class:`~vhct.optimizers.memo.PointMemo`): a point pulled again gets its stored value, the
    same float the objective would return, so the table is unchanged and only the time is saved.
    ``evaluations`` (if given, a dict) receives the number of distinct evaluations.
    """
    horizon = check_horizon("horizon", horizon)
    dim = objective.dim
    points = np.empty((horizon, dim))
    rewards = np.empty(horizon)
    values = np.empty(horizon)
    depths = np.full(horizon, np.nan)
    bounds = np.full(horizon, np.nan)
    nanoseconds = np.empty(horizon, dtype=np.int64)  # the clock's resolution: short table text
    optimizer_nanoseconds = np.empty(horizon, dtype=np.int64)
    stochastic = objective.stochastic
    evaluate = objective if stochastic else PointMemo(objective)
    started = time.perf_counter()
    for k in range(horizon):
        tick = time.perf_counter_ns()
        x = optimizer.ask()
        asked = time.perf_counter_ns()
        value = check_reward(evaluate(x, seed=(seed, k + 1)) if stochastic else evaluate(x))
        reward = value + noise.sample()
        evaluated = time.perf_counter_ns()
        optimizer.tell(x, reward)
        told = time.perf_counter_ns()
        nanoseconds[k] = told - tick
        optimizer_nanoseconds[k] = (asked - tick) + (told - evaluated)
        points[k] = x
        values[k] = value
        rewards[k] = reward
        depth = optimizer.pulled_depth
        if depth is not None:
            depths[k] = depth
        bound = optimizer.selection_bound
        if bound is not None:
            bounds[k] = bound
        if progress_every and (k + 1) % progress_every == 0:
            elapsed = time.perf_counter() - started
            log.info("round %d/%d (%.0f%%), %.1f s elapsed", k + 1, horizon, 100 * (k + 1) / horizon, elapsed)
    if evaluations is not None:
        evaluations["evaluations"] = horizon if stochastic else evaluate.calls
    columns = {
        "t": np.arange(1, horizon + 1),
        **{f"x{j}": points[:, j] for j in range(dim)},
        "reward": rewards,
        "value": values,
        **regret_columns(objective.regret_reference, values),
        "depth": depths,
        "selection_bound": bounds,
        "guarantee": guarantee_codes(objective.f_star, values, bounds),
        "step_seconds": nanoseconds / 1e9,
        "optimizer_seconds": optimizer_nanoseconds / 1e9,
    }
    return {name: columns[name] for name in run_table_columns(dim)}


def seeded_run(spec: RunSpec) -> tuple[Objective, Optimizer, UniformNoise]:
    """The objective, optimizer and noise of the run ``spec``, each random source from its seed.

    The seed spawns two independent streams, one for the optimizer and one for the noise, so a run
    (and a replay of its first rounds, ``vhct.reporting.plots.osc_report``) is reproducible.
    """
    f = make_objective(spec.objective, **spec.objective_params)
    optimizer_seed, noise_seed = np.random.SeedSequence(spec.seed).spawn(2)
    optimizer = make_optimizer(
        spec.algorithm, f.domain, spec.horizon, np.random.default_rng(optimizer_seed), **spec.params
    )
    return f, optimizer, UniformNoise(spec.noise, np.random.default_rng(noise_seed))


def run_experiment(spec: RunSpec) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Build the objective and optimizer of ``spec``, run it, and return (table, metadata)."""
    columns, meta = experiment_columns(spec)
    return as_frame(columns), meta


def experiment_columns(spec: RunSpec) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``run_experiment`` with the table as columns (``run_columns``): what a run job writes.

    The metadata starts with the spec's ``SPEC_FIELDS`` (the sidecar's ``metadata`` has carried
    them since its first layout), then what the run found and cost.
    """
    f, optimizer, noise_source = seeded_run(spec)
    started = time.perf_counter()
    counted: dict[str, int] = {}
    table = run_columns(optimizer, f, spec.horizon, noise_source, spec.seed, spec.progress_every, counted)
    wall = time.perf_counter() - started
    recommendation = optimizer.recommend()
    meta = {
        **spec.model_dump(include=set(SPEC_FIELDS)),
        "f_star": f.f_star,
        "regret_reference": f.regret_reference,
        "final_cumulative_regret": float(table["cumulative_regret"][-1]),
        # evaluations of the objective: the distinct points for a deterministic one (memoized)
        "evaluations": counted["evaluations"],
        "recommendation": recommendation.tolist(),
        "recommendation_value": float(
            f(recommendation, seed=(spec.seed, 0)) if f.stochastic else f(recommendation)
        ),
        "tree_depth": getattr(optimizer, "tree_depth", None),
        "tree_size": getattr(optimizer, "size", None),
        "wall_seconds": wall,
        "versions": package_versions(),
    }
    for attr in ("mode",):
        if hasattr(f, attr):
            meta[f"objective_{attr}"] = getattr(f, attr)
    return table, meta
