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
has one: until then (the first trial) parameters come from the independent sampler. The box is
fixed: a trial whose objective suggests one of its parameters with another distribution (other
bounds, step, or, checked by Optuna itself at the ``suggest_*`` call, kind or log scale) stops
the study with a ``ValueError`` naming the parameter and both distributions, whatever ``catch``.

What the optimizer is told. Only a trial that evaluated the optimizer's point: one that
suggested every parameter of the space with the proposed values. A trial of a conditional
search space that skipped one of them (another branch), or that took an enqueued value, is not
told (a warning says so, with how to restructure: suggest every parameter unconditionally, or
one study per branch); its round stays open, as for a failed trial. So in a conditional space
the optimizer learns its parameters only from the trials that suggested them.

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
counts as failed. A value the optimizer refuses (infinite, or beyond ``REWARD_LIMIT`` such as
1e200; Optuna stores it as COMPLETE, and NaN as FAIL) also counts as failed for the optimizer,
with one warning naming the trial and the value: the study goes on, resumed ones too.

One study per sampler. The optimizer's state is one study's rounds, so a sampler is bound to
the study (by name) of its first trial; a trial of another study raises a ``ValueError`` (that
trial is marked FAIL). Create one sampler per study.

Horizon. For T-HOO, POO and PCT with ``schedule="fixed_budget"`` the horizon counts the
optimizer's rounds (trials it was told, not the independent sampler's); past it the optimizer
runs on with one ``HorizonWarning`` (its guarantees assume that horizon). PCT's anytime
schedule does not use it.

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

from vhct.optimizers.base import REWARD_LIMIT, Optimizer, as_generator, check_horizon  # noqa: E402
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
        horizon: the number of rounds, for the algorithms that need it (T-HOO, POO, PCT); past it
            they warn once (``HorizonWarning``).
        independent_sampler: draws categorical parameters, the first trial when the space is
            inferred, and concurrent trials; default ``RandomSampler`` seeded from ``seed``.
        **params: the algorithm's parameters, as in the configs (e.g. ``rho=0.75``).

    One sampler drives one study: a trial of a second study raises ``ValueError``.
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
            self._space_source = "the search_space argument"
        else:
            self._space = None
            self._space_source = ""
        #: the one study this sampler drives (its name), bound at its first trial
        self._study_name: str | None = None
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
            self._space_source = "the space recorded in the study"
        if self._space is None:
            inferred = _numeric(self._intersection.calculate(study))
            if inferred:
                self._space = dict(sorted(inferred.items()))
                self._space_source = "the space inferred from the study's first completed trial"
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
        self._bind(study, trial)
        self._independent.before_trial(study, trial)

    def after_trial(self, study, trial, state, values) -> None:
        self._independent.after_trial(study, trial, state, values)
        if ROUND_ATTR in trial.system_attrs and state == TrialState.COMPLETE and values:
            self._check_value(trial.number, values[0])
        self._check_distributions(trial)

    # ------------------------------------------------------------------ what the optimizer may be told

    def _bind(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Refuse a second study: the optimizer's state is one study's rounds."""
        name = study.study_name
        if self._study_name is None:
            self._study_name = name
        elif name != self._study_name:
            # the trial Optuna just created for the refused study would stay RUNNING forever
            study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
            raise ValueError(
                f"this VHCTSampler drives study {self._study_name!r} and cannot drive study {name!r} "
                f"too: its {self.algorithm} state is one study's rounds. Create one sampler per study, "
                f"e.g. VHCTSampler({self.algorithm!r}, seed=...) for each"
            )

    def _check_value(self, number: int, value: float) -> bool:
        """Whether the optimizer can be told ``value``; if not, warn once naming the trial."""
        if math.isfinite(value) and abs(value) <= REWARD_LIMIT:
            return True
        self._warn_refused(number, value, f"rewards must be finite with |reward| <= {REWARD_LIMIT:.3g}")
        return False

    def _warn_refused(self, number: int, value: float, reason: str) -> None:
        self._warn_once(
            f"refused:{number}",
            f"trial {number} returned {value!r}, which {self.algorithm} cannot be told ({reason}): "
            f"for {self.algorithm} it counts as a failed trial, and the next trial gets its point again "
            "(an objective that always gives such a value there stalls the optimizer: return a finite "
            "penalty instead)",
        )

    def _check_distributions(self, trial: FrozenTrial) -> None:
        """Refuse a trial whose distribution of one of the optimizer's parameters is not the space's."""
        for name, dist in (self._space or {}).items():
            suggested = trial.distributions.get(name)
            if suggested is not None and suggested != dist:
                raise ValueError(
                    f"parameter {name!r}: the objective suggests {suggested} in trial {trial.number}, but "
                    f"{self.algorithm}'s box has {dist} (from {self._space_source}); {self.algorithm} "
                    "needs one fixed distribution per parameter: make search_space match the objective's "
                    "suggest_* calls (or leave it out to infer it)"
                )

    def _evaluated(self, trial: FrozenTrial, point: np.ndarray) -> bool:
        """Whether ``trial`` evaluated exactly the optimizer's ``point`` (warns once per cause if not).

        A trial that skipped a parameter (a conditional space), gave it another distribution,
        or took a fixed value (``enqueue_trial``) did not evaluate the point: it is not told.
        """
        space = self._space
        missing = [name for name in space if name not in trial.distributions]
        if missing:
            self._warn_once(
                "conditional",
                f"trial {trial.number} did not suggest {missing} of {self.algorithm}'s parameters "
                f"{list(space)}: {self.algorithm} is told only the trials that suggest all of them "
                "(the others count as failed for it, and their points are asked again). For a "
                f"conditional search space, suggest every parameter {self.algorithm} should tune "
                "unconditionally, or run one study per branch (docs/library.md)",
            )
            return False
        for u, (name, dist) in zip(point, space.items(), strict=True):
            if trial.distributions[name] != dist:
                self._warn_once(f"distribution:{name}", f"trial {trial.number}: parameter {name!r} has "
                                f"{trial.distributions[name]}, not {dist}: not told to {self.algorithm}")
                return False
            proposed = _from_unit(u, dist)
            if not math.isclose(trial.params[name], proposed, rel_tol=1e-12, abs_tol=1e-300):
                self._warn_once(
                    f"fixed:{trial.number}",
                    f"trial {trial.number} evaluated {name}={trial.params[name]!r}, not the proposed "
                    f"{proposed!r} (an enqueued or fixed parameter): not told to {self.algorithm}",
                )
                return False
        return True

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
        sign = 1.0 if study.direction == optuna.study.StudyDirection.MAXIMIZE else -1.0
        while any(
            self._tell_round(optimizer, trial, value, sign)
            for trial, value in self._round_results(by_round.get(optimizer.t, []))
        ):
            pass  # each pass tells one round
        return optimizer

    def _tell_round(self, optimizer: Optimizer, trial: FrozenTrial, value: float, sign: float) -> bool:
        """Tell the optimizer ``sign * value`` if ``trial`` evaluated its point with a value it
        accepts; False (the round stays open, as for a failed trial) otherwise."""
        point = optimizer.ask()
        recorded = np.asarray(trial.system_attrs[POINT_ATTR], dtype=float)
        if not np.array_equal(point, recorded):
            raise RuntimeError(
                f"replaying round {optimizer.t} (trial {trial.number}): {self.algorithm} asks "
                f"{point.tolist()}, the study recorded {recorded.tolist()}; resume with the same "
                "algorithm, seed and parameters as the sampler that ran the study"
            )
        if not self._evaluated(trial, point) or not self._check_value(trial.number, value):
            return False
        try:
            optimizer.tell(point, sign * value)
        except ValueError as exc:  # tell() is atomic: the optimizer is as it was
            self._warn_refused(trial.number, value, str(exc))
            return False
        return True

    @staticmethod
    def _round_results(trials: Sequence[FrozenTrial]) -> list[tuple[FrozenTrial, float]]:
        """A round's finished trials in order, with their values (a pruned one's last intermediate)."""
        results = []
        for t in sorted(trials, key=lambda t: t.number):
            if t.state == TrialState.COMPLETE:
                results.append((t, float(t.value)))
            elif t.state == TrialState.PRUNED and t.intermediate_values:
                last = t.intermediate_values[max(t.intermediate_values)]
                if math.isfinite(last):
                    results.append((t, float(last)))
        return results

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
