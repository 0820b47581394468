""":class:`VHCTSampler`: Optuna's sampler interface around one of the project's optimizers, its
rounds kept in step with the study's trials (what it does: the package's docstring)."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from vhct.integrations.optuna import record
from vhct.integrations.optuna.identity import refuse_trial, study_identity, study_label
from vhct.integrations.optuna.penalty import (
    FAILURES_BEFORE_PENALTY,
    REFUSED_REASON,
    acceptable,
    penalty_warning,
    refused_warning,
    result,
    worst_reward,
)
from vhct.integrations.optuna.space import (
    FROM_ARGUMENT,
    FROM_FIRST_TRIAL,
    FROM_RECORD,
    check_distributions,
    check_space,
    check_suggested,
    evaluated,
    numeric,
    values_at,
)
from vhct.optimizers.base import Optimizer, as_generator, check_horizon
from vhct.optimizers.registry import make_optimizer, needs_horizon

#: exclusive upper bound of the independent sampler's seed, drawn from ``seed``
_SEED_BOUND = 2**31


def _silent(key: str, message: str) -> None:
    """A ``_warn_once`` that says nothing."""


class VHCTSampler(BaseSampler):
    """Run one of the project's optimizers (default VHCT) as an Optuna sampler (single objective).

    Args:
        algorithm: a registered name (``vhct.algorithm_names()``), e.g. ``"VHCT"``, ``"HCT"``.
        seed: integer seed of the optimizer (and of the independent sampler's seed); needed to
            resume a study. None draws a fresh one.
        search_space: the numeric parameters the optimizer owns, as Optuna distributions; None
            infers them from the first completed trial (see the package's docstring).
        horizon: the number of rounds, for the algorithms that need it (T-HOO, POO, PCT); past it
            they warn once (``HorizonWarning``).
        independent_sampler: draws categorical parameters, the first trial when the space is
            inferred, and concurrent trials; default ``RandomSampler`` seeded from ``seed``.
        **params: the algorithm's parameters, as in the configs (e.g. ``rho=0.75``).

    One sampler drives one study (told apart by storage and id, not name): a trial of a second
    study raises ``ValueError``, as does resuming a study run with other settings.
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
            check_space(search_space)
            self._space: dict[str, BaseDistribution] | None = numeric(search_space)
            self._space_source = FROM_ARGUMENT
        else:
            self._space = None
            self._space_source = ""
        #: the one study this sampler drives (its identity, see ``identity.study_identity``) and
        #: its description for messages, bound at its first trial
        self._study: tuple[Any, int] | None = None
        self._study_label = ""
        if independent_sampler is None:
            independent_sampler = RandomSampler(seed=int(as_generator(self.seed).integers(_SEED_BOUND)))
        self._independent = independent_sampler
        self._intersection = IntersectionSearchSpace(include_pruned=True)
        self._optimizer: Optimizer | None = None
        #: penalties told during the current proposal, recorded on its trial ([round, reward])
        self._told_penalties: list[list[float]] = []
        #: whether the current round failed repeatedly before the study had any value
        self._awaiting_value = False
        #: the search_space parameters some trial of the study has suggested
        self._suggested: set[str] = set()
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
            self._space = record.recorded_space(study)
            self._space_source = FROM_RECORD
        if self._space is None:
            inferred = numeric(self._intersection.calculate(study))
            if inferred:
                self._space = dict(sorted(inferred.items()))
                self._space_source = FROM_FIRST_TRIAL
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
        if self._told_penalties:
            record.record_penalties(study, trial, self._told_penalties)
        if self._awaiting_value:
            return {}  # warned by _settle_round
        if record.round_running_elsewhere(study, trial, optimizer.t):
            self._warn_once(
                "concurrent",
                f"trial {trial.number} started while round {optimizer.t} of {self.algorithm} is still "
                "running: it is drawn by the independent sampler and not told to the optimizer",
            )
            return {}
        point = optimizer.ask()
        record.record_proposal(study, trial, optimizer.t, point, list(self._space))
        return values_at(point, self._space)

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
        if record.proposed(trial) and state == TrialState.COMPLETE and values:
            self._check_value(trial.number, values[0])
        check_distributions(self._space or {}, self._space_source, trial, self.algorithm)
        if self._space_source == FROM_ARGUMENT:
            check_suggested(self._space, self._suggested, study, self.algorithm)

    # ------------------------------------------------------------------ what the optimizer may be told

    def _bind(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Refuse a second study (the optimizer's state is one study's rounds) and a study that
        another sampler ran with other settings (its rounds would not replay)."""
        identity = study_identity(study)
        label = study_label(study, identity)
        if self._study is None:
            mine = record.settings(self.algorithm, self.seed, self.horizon, self.params)
            record.check_settings(study, trial, mine)
            self._study, self._study_label = identity, label
        elif identity != self._study:
            refuse_trial(study, trial)
            raise ValueError(
                f"this VHCTSampler drives study {self._study_label} and cannot drive study {label} "
                f"too: its {self.algorithm} state is one study's rounds. Create one sampler per study, "
                f"e.g. VHCTSampler({self.algorithm!r}, seed=...) for each"
            )

    def _check_value(self, number: int, value: float) -> bool:
        """Whether the optimizer can be told ``value``; if not, warn once naming the trial."""
        if acceptable(value):
            return True
        self._warn_refused(number, value, REFUSED_REASON)
        return False

    def _warn_refused(self, number: int, value: float, reason: str) -> None:
        self._warn_once(f"refused:{number}", refused_warning(self.algorithm, number, value, reason))

    def _evaluated(self, trial: FrozenTrial, point: np.ndarray, warn: bool = True) -> bool:
        """Whether ``trial`` evaluated exactly the optimizer's ``point`` (if ``warn``, warns once per
        cause if not; a failed trial may have stopped before suggesting them all: no warning)."""
        return evaluated(self._space, trial, point, self.algorithm, self._warn_once if warn else _silent)

    # ------------------------------------------------------------------ the optimizer's state

    def _catch_up(self, study: optuna.Study) -> Optimizer:
        """Build the optimizer if needed and tell it every finished round it has not seen, in order."""
        if self._optimizer is None:
            cube = [[0.0, 1.0]] * len(self._space)
            self._optimizer = make_optimizer(
                self.algorithm, cube, self.horizon, seed=self.seed, **self.params
            )
        optimizer = self._optimizer
        trials = study.get_trials(deepcopy=False)
        by_round, recorded = record.recorded_rounds(trials, optimizer.t)
        sign = 1.0 if study.direction == StudyDirection.MAXIMIZE else -1.0
        self._told_penalties, self._awaiting_value = [], False
        while self._settle_round(optimizer, by_round.get(optimizer.t, []), trials, recorded, sign):
            pass  # each pass tells one round
        return optimizer

    def _settle_round(
        self,
        optimizer: Optimizer,
        round_trials: Sequence[FrozenTrial],
        trials: Sequence[FrozenTrial],
        recorded: dict[int, float],
        sign: float,
    ) -> bool:
        """Tell the optimizer its current round's outcome from the round's trials, in order: the
        first value it accepts of a trial that evaluated its point, or the penalty once the point
        has failed ``FAILURES_BEFORE_PENALTY`` times (``recorded``: the penalties told before, by
        round; ``trials``: the study's, for a new one). False: the round stays open."""
        point = optimizer.ask()
        failed: list[FrozenTrial] = []
        for trial in sorted(round_trials, key=lambda t: t.number):
            self._check_replayed(optimizer, trial, point)
            value = result(trial)
            if trial.state == TrialState.FAIL:
                if self._evaluated(trial, point, warn=False):
                    failed.append(trial)
            elif value is not None and self._evaluated(trial, point):
                if self._tell(optimizer, point, trial, value, sign):
                    return True
                failed.append(trial)
            if len(failed) >= FAILURES_BEFORE_PENALTY:
                return self._penalize(optimizer, point, failed, trials, recorded.get(optimizer.t), sign)
        return False

    def _check_replayed(self, optimizer: Optimizer, trial: FrozenTrial, point: np.ndarray) -> None:
        """Raise if ``trial`` recorded another point for this round than the optimizer asks."""
        recorded = record.recorded_point(trial)
        if not np.array_equal(point, recorded):
            raise RuntimeError(
                f"replaying round {optimizer.t} (trial {trial.number}): {self.algorithm} asks "
                f"{point.tolist()}, the study recorded {recorded.tolist()}; resume with the same "
                "algorithm, seed and parameters as the sampler that ran the study"
            )

    def _tell(
        self, optimizer: Optimizer, point: np.ndarray, trial: FrozenTrial, value: float, sign: float
    ) -> bool:
        """Tell ``sign * value`` for ``point``; False (with a warning) if the optimizer refuses it."""
        if not self._check_value(trial.number, value):
            return False
        reward = sign * value
        try:
            optimizer.tell(point, reward)
        except ValueError as exc:  # tell() is atomic: the optimizer is as it was
            self._warn_refused(trial.number, value, str(exc))
            return False
        return True

    def _penalize(
        self,
        optimizer: Optimizer,
        point: np.ndarray,
        failed: list[FrozenTrial],
        trials: Sequence[FrozenTrial],
        recorded: float | None,
        sign: float,
    ) -> bool:
        """Tell the failed ``point`` its penalty: the one ``recorded`` when it was first told (a
        resumed study replays it), else the worst value of the study's finished trials now
        (queued to be recorded). False if the study has no value yet: until it has, trials are
        drawn by the independent sampler. One warning per sampler, naming the trials."""
        if recorded is None:
            recorded = worst_reward(trials, sign)
            self._awaiting_value = recorded is None
            if recorded is not None:
                self._told_penalties.append([optimizer.t, recorded])
        if recorded is not None:
            optimizer.tell(point, recorded)
        told = None if recorded is None else sign * recorded
        self._warn_once("penalty", penalty_warning(self.algorithm, failed, self._space, told))
        return recorded is not None

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, UserWarning, stacklevel=3)
