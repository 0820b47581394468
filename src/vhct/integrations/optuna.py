"""VHCT (or any of the project's optimizers) as an Optuna sampler: :class:`VHCTSampler`.

    import optuna
    from vhct.integrations.optuna import VHCTSampler

    study = optuna.create_study(sampler=VHCTSampler("VHCT", seed=0, rho=0.75))
    study.optimize(objective, n_trials=100)

How the study's parameters become the optimizer's box. The optimizer works on the unit cube,
one dimension per numeric parameter in sorted name order: a float parameter on a linear scale
maps ``u -> low + u (high - low)``, on a log scale ``u -> exp(log low + u (log high - log low))``
(the cube is uniform in log space); a ``step`` rounds to the nearest grid point. An integer
parameter maps its cube side to ``[low - step/2, high + step/2]`` (log scale: in log space) and is
rounded to the nearest allowed integer, so every integer gets an equal share of the side; the
optimizer is told the cube point it asked, the objective sees the rounded value.

The search space. Pass ``search_space`` (a dict of Optuna distributions) to have every trial,
the first included, proposed by the optimizer. Without it the space is the intersection of the
completed trials' spaces (Optuna's ``IntersectionSearchSpace``), frozen at the first trial that
has one: until then (the first trial) parameters come from the independent sampler.

Categorical parameters are not the optimizer's (a hierarchical partition needs an ordered
box): they are drawn by the independent sampler (default ``RandomSampler``, seeded from
``seed``), with one warning per parameter.

Several trials at once. The optimizers are sequential: a round's point is asked, evaluated and
told before the next is asked. A trial that starts while the optimizer's current point is still
being evaluated by another running trial is drawn by the independent sampler and never told to
the optimizer (a warning says so): with ``n_jobs > 1`` only one trial at a time is VHCT's (and
Optuna reseeds the independent sampler in each thread, so those other trials are not
reproducible; the optimizer's are).

Failed and pruned trials. A trial that fails leaves its round open: the next trial gets the
same point again. A pruned trial with an intermediate value is told that value; without one it
counts as failed.

Stop and resume. The sampler keeps no state of its own that the study does not hold: each
proposed trial records its round and cube point in its system attributes (``vhct:round``,
``vhct:point``). A fresh sampler (a new process, the study loaded from its storage) rebuilds
the optimizer by replaying the completed rounds in order, checking that each replayed point is
the recorded one (so the same ``algorithm``, ``seed`` and parameters are required; a mismatch
raises). Resuming therefore needs an integer ``seed``.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from vhct.extras import require

require(("optuna",), "optuna", "the Optuna sampler (vhct.integrations.optuna)")

import optuna  # noqa: E402
from optuna.distributions import (  # noqa: E402
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler, RandomSampler  # noqa: E402
from optuna.search_space import IntersectionSearchSpace  # noqa: E402
from optuna.trial import FrozenTrial, TrialState  # noqa: E402

from vhct.optimizers.base import Optimizer, as_generator, check_horizon  # noqa: E402
from vhct.optimizers.registry import make_optimizer, needs_horizon  # noqa: E402

#: trial system attributes the sampler writes (and reads back when it resumes)
ROUND_ATTR = "vhct:round"
POINT_ATTR = "vhct:point"
NAMES_ATTR = "vhct:params"
#: exclusive upper bound of the independent sampler's seed, drawn from ``seed``
_SEED_BOUND = 2**31


class VHCTSampler(BaseSampler):
    """Run one of the project's optimizers (default VHCT) as an Optuna sampler (single objective).

    Args:
        algorithm: a registered name (``vhct.algorithm_names()``), e.g. ``"VHCT"``, ``"HCT"``.
        seed: integer seed of the optimizer (and of the independent sampler's seed); needed to
            resume a study. None draws a fresh one.
        search_space: the numeric parameters the optimizer owns, as Optuna distributions; None
            infers them from the first completed trial (see the module docstring).
        horizon: the number of trials, for the algorithms that need it (T-HOO, POO, PCT).
        independent_sampler: draws categorical parameters, the first trial when the space is
            inferred, and concurrent trials; default ``RandomSampler`` seeded from ``seed``.
        **params: the algorithm's parameters, as in the configs (e.g. ``rho=0.75``).
    """

    def __init__(
        self,
        algorithm: str = "VHCT",
        seed: int | None = None,
        *,
        search_space: dict[str, BaseDistribution] | None = None,
        horizon: int | None = None,
        independent_sampler: BaseSampler | None = None,
        **params: Any,
    ):
        if seed is None:
            seed = int(np.random.default_rng().integers(_SEED_BOUND))
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        if horizon is not None:
            horizon = check_horizon("horizon", horizon)
        elif needs_horizon(algorithm):
            raise ValueError(f"{algorithm} needs the horizon: pass horizon=<number of trials>")
        self.algorithm = algorithm
        self.seed = int(seed)
        self.horizon = horizon
        self.params = dict(params)
        # built once now, so a wrong name or parameter fails here, not inside a trial
        make_optimizer(algorithm, [[0.0, 1.0]], horizon, seed=0, **self.params)
        if search_space is not None:
            _check_space(search_space)
            self._space: dict[str, BaseDistribution] | None = _numeric(search_space)
        else:
            self._space = None
        if independent_sampler is None:
            independent_sampler = RandomSampler(seed=int(as_generator(self.seed).integers(_SEED_BOUND)))
        self._independent = independent_sampler
        self._intersection = IntersectionSearchSpace(include_pruned=True)
        self._optimizer: Optimizer | None = None
        self._warned: set[str] = set()
        # n_jobs > 1 runs trials in threads: one proposal at a time, so that a trial started
        # meanwhile sees the round the other one took
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ Optuna's sampler interface

    def reseed_rng(self) -> None:
        self._independent.reseed_rng()

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        if self._space is None:
            self._space = self._recorded_space(study)
        if self._space is None:
            inferred = _numeric(self._intersection.calculate(study))
            if inferred:
                self._space = dict(sorted(inferred.items()))
        return dict(self._space or {})

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        self._raise_error_if_multi_objective(study)
        with self._lock:
            return self._propose(study, trial)

    def _propose(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, Any]:
        """The next round's point for ``trial`` (recorded in its system attributes), or {} when
        the round is still being evaluated by another trial."""
        optimizer = self._catch_up(study)
        if self._round_running_elsewhere(study, trial, optimizer.t):
            self._warn_once(
                "concurrent",
                f"trial {trial.number} started while round {optimizer.t} of {self.algorithm} is still "
                "running: it is drawn by the independent sampler and not told to the optimizer",
            )
            return {}
        point = optimizer.ask()
        storage = study._storage
        storage.set_trial_system_attr(trial._trial_id, ROUND_ATTR, optimizer.t)
        storage.set_trial_system_attr(trial._trial_id, POINT_ATTR, point.tolist())
        storage.set_trial_system_attr(trial._trial_id, NAMES_ATTR, list(self._space))
        return {name: _from_unit(u, dist) for u, (name, dist) in zip(point, self._space.items(), strict=True)}

    def sample_independent(
        self, study: optuna.Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Any:
        if isinstance(param_distribution, CategoricalDistribution):
            self._warn_once(
                f"categorical:{param_name}",
                f"categorical parameter {param_name!r} is drawn by the independent sampler "
                f"({type(self._independent).__name__}), not by {self.algorithm}",
            )
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self._independent.before_trial(study, trial)

    def after_trial(self, study, trial, state, values) -> None:
        self._independent.after_trial(study, trial, state, values)

    # ------------------------------------------------------------------ the optimizer's state

    def _recorded_space(self, study: optuna.Study) -> dict[str, BaseDistribution] | None:
        """The space a previous sampler of this study froze (read back when resuming)."""
        for t in study.get_trials(deepcopy=False):
            names = t.system_attrs.get(NAMES_ATTR)
            if names is not None and all(n in t.distributions for n in names):
                return {n: t.distributions[n] for n in names}
        return None

    def _catch_up(self, study: optuna.Study) -> Optimizer:
        """Build the optimizer if needed and tell it every finished round it has not seen, in order."""
        if self._optimizer is None:
            cube = [[0.0, 1.0]] * len(self._space)
            self._optimizer = make_optimizer(
                self.algorithm, cube, self.horizon, seed=self.seed, **self.params
            )
        optimizer = self._optimizer
        by_round: dict[int, list[FrozenTrial]] = {}
        for t in study.get_trials(deepcopy=False):
            k = t.system_attrs.get(ROUND_ATTR)
            if k is not None and k >= optimizer.t:
                by_round.setdefault(k, []).append(t)
        while True:
            reward = self._round_reward(study, by_round.get(optimizer.t, []))
            if reward is None:
                return optimizer
            trial, value = reward
            point = optimizer.ask()
            recorded = np.asarray(trial.system_attrs[POINT_ATTR], dtype=float)
            if not np.array_equal(point, recorded):
                raise RuntimeError(
                    f"replaying round {optimizer.t} (trial {trial.number}): {self.algorithm} asks "
                    f"{point.tolist()}, the study recorded {recorded.tolist()}; resume with the same "
                    "algorithm, seed and parameters as the sampler that ran the study"
                )
            optimizer.tell(point, value)

    @staticmethod
    def _round_reward(study: optuna.Study, trials: Sequence[FrozenTrial]) -> tuple[FrozenTrial, float] | None:
        """The first finished trial of a round and its reward (maximized), or None if none finished."""
        sign = 1.0 if study.direction == optuna.study.StudyDirection.MAXIMIZE else -1.0
        for t in sorted(trials, key=lambda t: t.number):
            if t.state == TrialState.COMPLETE:
                return t, sign * float(t.value)
            if t.state == TrialState.PRUNED and t.intermediate_values:
                last = t.intermediate_values[max(t.intermediate_values)]
                if math.isfinite(last):
                    return t, sign * float(last)
        return None

    @staticmethod
    def _round_running_elsewhere(study: optuna.Study, trial: FrozenTrial, round_: int) -> bool:
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        return any(t.number != trial.number and t.system_attrs.get(ROUND_ATTR) == round_ for t in running)

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, UserWarning, stacklevel=3)


def _check_space(space: dict[str, BaseDistribution]) -> None:
    if not isinstance(space, dict) or not all(isinstance(d, BaseDistribution) for d in space.values()):
        raise ValueError(f"search_space must map parameter names to Optuna distributions, got {space!r}")


def _numeric(space: dict[str, BaseDistribution]) -> dict[str, BaseDistribution]:
    """The float and integer parameters of ``space`` (sorted by name), except single values."""
    return {
        name: dist
        for name, dist in sorted(space.items())
        if isinstance(dist, FloatDistribution | IntDistribution) and not dist.single()
    }


def _from_unit(u: float, dist: BaseDistribution) -> float | int:
    """The parameter value at cube coordinate ``u`` (see the module docstring)."""
    u = min(max(float(u), 0.0), 1.0)
    if isinstance(dist, IntDistribution):
        half = 0.5 * dist.step
        lo, hi = dist.low - half, dist.high + half
        raw = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo))) if dist.log else lo + u * (hi - lo)
        value = dist.low + round((raw - dist.low) / dist.step) * dist.step
        return int(min(max(value, dist.low), dist.high))
    if dist.log:
        value = math.exp(math.log(dist.low) + u * (math.log(dist.high) - math.log(dist.low)))
    else:
        value = dist.low + u * (dist.high - dist.low)
    if dist.step is not None:
        value = dist.low + round((value - dist.low) / dist.step) * dist.step
    return float(min(max(value, dist.low), dist.high))
