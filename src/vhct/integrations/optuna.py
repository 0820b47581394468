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
A parameter of ``search_space`` that the objective never suggests is refused (``ValueError``
naming it, whatever ``catch``) once ``UNSUGGESTED_LIMIT`` trials have finished without any trial
suggesting it: a trial that does not suggest every parameter of the box is not told (below), so
such a parameter would pin every trial at the optimizer's current point. Not at the first trial,
because a conditional parameter is legitimately missing from the trials of the other branches.

What the optimizer is told. Only a trial that evaluated the optimizer's point: one that
suggested every parameter of the space with the proposed values. A trial of a conditional
search space that skipped one of them (another branch), or that took an enqueued value, is not
told (a warning says so, with how to restructure: suggest every parameter unconditionally, or
one study per branch); its round stays open, and it is no failure either (it did not evaluate
the point: nothing is learnt about it). So in a conditional space
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

Failed and pruned trials. A trial that fails after suggesting the optimizer's point (the
objective raised, or returned NaN, or a value the optimizer refuses: infinite, or beyond
``REWARD_LIMIT`` such as 1e200, which Optuna stores as COMPLETE) leaves its round open once: the
next trial gets the same point again, in case the failure was passing. When the same point has
failed ``FAILURES_BEFORE_PENALTY`` times, the optimizer is told its penalty: the worst value of
the study's finished trials at that moment (told to the optimizer or not, e.g. the independent
sampler's first trial). An objective that fails in a region is taken as a bad value there, no
better than the worst point seen, so the tree's bounds steer the search elsewhere instead of
retrying the point for ever (which would take every later trial); the worst value
and not some lower constant, so that the rewards keep their scale (VHCT's variance estimates use
them). The penalty is recorded in the system attributes of the trial being proposed when it is
told (``vhct:penalty``, ``[round, reward]`` pairs), so a resumed study replays it exactly. If
the study has no value yet, there is nothing to penalize with: the next trials are drawn by the
independent sampler (not the optimizer's rounds) until one has a value. One warning (per
sampler) names the trials of the first penalized point; later ones are penalized the same way
in silence (their trials are the FAIL ones carrying ``vhct:round``). Optuna's own samplers
simply skip failed trials, which is enough for samplers that draw at random but would stall a
deterministic tree. A pruned trial with an intermediate value is told that value; without one
it is no failure of the objective: its round stays open. A refused value gets one warning naming
the trial and the value: the study goes on, resumed ones too.

One study per sampler. The optimizer's state is one study's rounds, so a sampler is bound to
the study of its first trial, told apart by its identity, not its name: the study's id in its
storage, the storage by its database URL (an SQLite path made absolute) or journal file, or for
any other storage (in memory) the storage object itself. A trial of another study (another
name, or the same name in another storage) raises a ``ValueError`` (that trial is marked FAIL).
Create one sampler per study.

Horizon. For T-HOO, POO and PCT with ``schedule="fixed_budget"`` the horizon counts the
optimizer's rounds (trials it was told, not the independent sampler's); past it the optimizer
runs on with one ``HorizonWarning`` (its guarantees assume that horizon). PCT's anytime
schedule does not use it.

Stop and resume. The sampler keeps no state of its own that the study does not hold: the
first sampler of a study records its ``algorithm``, ``seed``, ``horizon`` and parameters in the
study's system attributes (``vhct:sampler``; a parameter that is not JSON, such as a callable, by
its qualified name), and each proposed trial records its round and cube point in its system
attributes (``vhct:round``, ``vhct:point``). A fresh sampler (a new process, the study loaded
from its storage) is refused at its first trial (``ValueError`` naming the setting and both
values) if any of those differs, and otherwise rebuilds the optimizer by replaying the completed
rounds in order, checking that each replayed point is the recorded one (a mismatch raises).
Resuming therefore needs an integer ``seed``.
"""

from __future__ import annotations

import json
import math
import os
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
from optuna.storages import BaseStorage, JournalStorage, RDBStorage  # noqa: E402
from optuna.study import StudyDirection  # noqa: E402
from optuna.trial import FrozenTrial, TrialState  # noqa: E402

from vhct.optimizers.base import REWARD_LIMIT, Optimizer, as_generator, check_horizon  # noqa: E402
from vhct.optimizers.registry import make_optimizer, needs_horizon  # noqa: E402

#: trial system attributes the sampler writes (and reads back when it resumes)
ROUND_ATTR = "vhct:round"
POINT_ATTR = "vhct:point"
NAMES_ATTR = "vhct:params"
#: study system attribute: the sampler's settings, checked when another sampler resumes the study
SETTINGS_ATTR = "vhct:sampler"
#: trial system attribute: the penalties ([round, reward]) told while proposing that trial
PENALTY_ATTR = "vhct:penalty"
#: a round whose point failed this many times is told the penalty (one retry: a failure may pass)
FAILURES_BEFORE_PENALTY = 2
#: finished trials after which a ``search_space`` parameter that none suggested is refused
#: (a conditional parameter missing from every one of them is then unlikely: 2**-10 for one
#: branch in two)
UNSUGGESTED_LIMIT = 10
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
            _check_space(search_space)
            self._space: dict[str, BaseDistribution] | None = _numeric(search_space)
            self._space_source = "the search_space argument"
        else:
            self._space = None
            self._space_source = ""
        #: the one study this sampler drives (its identity, see ``_study_identity``) and its
        #: description for messages, bound at its first trial
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
        storage = study._storage
        if self._told_penalties:
            storage.set_trial_system_attr(trial._trial_id, PENALTY_ATTR, self._told_penalties)
        if self._awaiting_value:
            return {}  # warned by _settle_round
        if self._round_running_elsewhere(study, trial, optimizer.t):
            self._warn_once(
                "concurrent",
                f"trial {trial.number} started while round {optimizer.t} of {self.algorithm} is still "
                "running: it is drawn by the independent sampler and not told to the optimizer",
            )
            return {}
        point = optimizer.ask()
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
        self._check_suggested(study)

    # ------------------------------------------------------------------ what the optimizer may be told

    def _bind(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Refuse a second study (the optimizer's state is one study's rounds) and a study that
        another sampler ran with other settings (its rounds would not replay)."""
        identity = _study_identity(study)
        label = f"{study.study_name!r} (id {study._study_id} in {_storage_label(identity[0])})"
        if self._study is None:
            self._check_settings(study, trial)
            self._study, self._study_label = identity, label
        elif identity != self._study:
            _refuse_trial(study, trial)
            raise ValueError(
                f"this VHCTSampler drives study {self._study_label} and cannot drive study {label} "
                f"too: its {self.algorithm} state is one study's rounds. Create one sampler per study, "
                f"e.g. VHCTSampler({self.algorithm!r}, seed=...) for each"
            )

    def _settings(self) -> dict[str, Any]:
        """What makes this sampler's rounds: recorded in the study, compared when resuming."""
        params = {name: _describe(value) for name, value in sorted(self.params.items())}
        return {"algorithm": self.algorithm, "seed": self.seed, "horizon": self.horizon, **params}

    def _check_settings(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Record this sampler's settings in a study that has none; refuse a study recorded with
        others, naming the first setting that differs and both values."""
        mine = self._settings()
        recorded = study._storage.get_study_system_attrs(study._study_id).get(SETTINGS_ATTR)
        if recorded is None:
            study._storage.set_study_system_attr(study._study_id, SETTINGS_ATTR, mine)
            return
        for key in sorted(recorded.keys() | mine.keys()):
            theirs, ours = recorded.get(key), mine.get(key)
            if theirs != ours:
                _refuse_trial(study, trial)
                raise ValueError(
                    f"study {study.study_name!r} was run with {key}={theirs!r}, this VHCTSampler has "
                    f"{key}={ours!r}: its rounds would not replay. Resume with the same algorithm, seed "
                    "and parameters as the sampler that ran the study (None: not given)"
                )

    def _check_value(self, number: int, value: float) -> bool:
        """Whether the optimizer can be told ``value``; if not, warn once naming the trial."""
        if _acceptable(value):
            return True
        self._warn_refused(number, value, f"rewards must be finite with |reward| <= {REWARD_LIMIT:.3g}")
        return False

    def _warn_refused(self, number: int, value: float, reason: str) -> None:
        self._warn_once(
            f"refused:{number}",
            f"trial {number} returned {value!r}, which {self.algorithm} cannot be told ({reason}): "
            f"for {self.algorithm} it counts as a failed trial: the next trial gets its point again, and "
            f"a point that fails {FAILURES_BEFORE_PENALTY} times is told the worst value of the study",
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

    def _check_suggested(self, study: optuna.Study) -> None:
        """Refuse a ``search_space`` parameter that none of the study's first ``UNSUGGESTED_LIMIT``
        finished trials suggested: trials that skip it are never told (see the module docstring)."""
        if self._space_source != "the search_space argument" or self._space.keys() <= self._suggested:
            return
        trials = study.get_trials(deepcopy=False)
        for t in trials:
            self._suggested.update(name for name in self._space if name in t.distributions)
        unsuggested = sorted(self._space.keys() - self._suggested)
        # this trial is still RUNNING in the storage: it counts as finished
        finished = 1 + sum(t.state.is_finished() for t in trials)
        if unsuggested and finished >= UNSUGGESTED_LIMIT:
            raise ValueError(
                f"search_space names {unsuggested}, but none of the study's {finished} finished "
                f"trials suggested {'it' if len(unsuggested) == 1 else 'them'}: {self.algorithm} is "
                "told only the trials that suggest every parameter of its box, so every trial would "
                f"stay at its current point. Remove {unsuggested} from search_space, or suggest "
                f"{'it' if len(unsuggested) == 1 else 'them'} in the objective"
            )

    def _evaluated(self, trial: FrozenTrial, point: np.ndarray, warn: bool = True) -> bool:
        """Whether ``trial`` evaluated exactly the optimizer's ``point`` (if ``warn``, warns once per
        cause if not; a failed trial may have stopped before suggesting them all: no warning).

        A trial that skipped a parameter (a conditional space), gave it another distribution,
        or took a fixed value (``enqueue_trial``) did not evaluate the point: it is not told.
        """
        space = self._space
        say = self._warn_once if warn else _silent
        missing = [name for name in space if name not in trial.distributions]
        if missing:
            say(
                "conditional",
                f"trial {trial.number} did not suggest {missing} of {self.algorithm}'s parameters "
                f"{list(space)}: {self.algorithm} is told only the trials that suggest all of them "
                "(for the others its point is asked again). For a "
                f"conditional search space, suggest every parameter {self.algorithm} should tune "
                "unconditionally, or run one study per branch (docs/library.md)",
            )
            return False
        for u, (name, dist) in zip(point, space.items(), strict=True):
            if trial.distributions[name] != dist:
                say(f"distribution:{name}", f"trial {trial.number}: parameter {name!r} has "
                                f"{trial.distributions[name]}, not {dist}: not told to {self.algorithm}")
                return False
            proposed = _from_unit(u, dist)
            if not math.isclose(trial.params[name], proposed, rel_tol=1e-12, abs_tol=1e-300):
                say(
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
        trials = study.get_trials(deepcopy=False)
        by_round: dict[int, list[FrozenTrial]] = {}
        recorded: dict[int, float] = {}
        for t in trials:
            k = t.system_attrs.get(ROUND_ATTR)
            if k is not None and k >= optimizer.t:
                by_round.setdefault(k, []).append(t)
            recorded.update((int(k), reward) for k, reward in t.system_attrs.get(PENALTY_ATTR, ()))
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
            value = _result(trial)
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
        recorded = np.asarray(trial.system_attrs[POINT_ATTR], dtype=float)
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
            values = [v for t in trials if (v := _result(t)) is not None and _acceptable(v)]
            self._awaiting_value = not values
            if values:
                recorded = min(sign * v for v in values)
                self._told_penalties.append([optimizer.t, recorded])
        if recorded is None:
            told = (
                "before any trial of the study had a value: there is none to penalize it with yet, so "
                f"the next trials are drawn by the independent sampler (not told to {self.algorithm}) "
                "until one has a value; then the point is told the worst value of the study"
            )
        else:
            optimizer.tell(point, recorded)
            told = f"it is told {sign * recorded!r} there, the worst value of the study so far"
        self._warn_once(
            "penalty",
            f"trials {[t.number for t in failed]} failed at the same point of {self.algorithm}, "
            f"{_where(failed[-1], self._space)}: {told}, and {self.algorithm} searches elsewhere (an "
            "objective that fails in a region counts as a bad value there). Later points that fail "
            f"{FAILURES_BEFORE_PENALTY} times are penalized the same way without another warning: "
            "their trials are the FAIL ones with the system attribute 'vhct:round'",
        )
        return recorded is not None

    @staticmethod
    def _round_running_elsewhere(study: optuna.Study, trial: FrozenTrial, round_: int) -> bool:
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        return any(t.number != trial.number and t.system_attrs.get(ROUND_ATTR) == round_ for t in running)

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, UserWarning, stacklevel=3)


def _silent(key: str, message: str) -> None:
    """A ``_warn_once`` that says nothing."""


def _result(trial: FrozenTrial) -> float | None:
    """A finished trial's value: a complete one's, a pruned one's last finite intermediate value;
    None for the others (failed, running, pruned before reporting)."""
    if trial.state == TrialState.COMPLETE:
        return float(trial.value)
    if trial.state == TrialState.PRUNED and trial.intermediate_values:
        last = trial.intermediate_values[max(trial.intermediate_values)]
        if math.isfinite(last):
            return float(last)
    return None


def _acceptable(value: float) -> bool:
    """Whether the optimizers accept ``value`` as a reward (or its negation)."""
    return math.isfinite(value) and abs(value) <= REWARD_LIMIT


def _where(trial: FrozenTrial, space: dict[str, BaseDistribution]) -> dict[str, Any]:
    """The values ``trial`` took for the optimizer's parameters (the point, for messages)."""
    return {name: trial.params.get(name) for name in space}


def _study_identity(study: optuna.Study) -> tuple[Any, int]:
    """What tells a study apart: its storage (see ``_storage_identity``) and its id there."""
    return _storage_identity(study._storage), study._study_id


def _storage_identity(storage: BaseStorage) -> Any:
    """A storage as the same data: a database by its URL (SQLite: by its absolute path), a journal
    file by its absolute path; any other (in memory, a server) by the object itself."""
    if isinstance(storage, JournalStorage):
        path = getattr(storage._backend, "_file_path", None)
        return storage if path is None else ("journal file", os.path.abspath(path))
    storage = getattr(storage, "_backend", storage)  # a database storage comes wrapped in a cache
    if isinstance(storage, RDBStorage):
        prefix = "sqlite:///"
        url = storage.url
        if url.startswith(prefix) and url[len(prefix):] not in ("", ":memory:"):
            url = prefix + os.path.abspath(url[len(prefix):])
        return ("database", url)
    return storage


def _storage_label(identity: Any) -> str:
    """A storage identity as words, for messages."""
    if isinstance(identity, tuple):
        return f"{identity[0]} {identity[1]}"
    return f"{type(identity).__name__} at {id(identity):#x}"


def _describe(value: Any) -> Any:
    """A parameter as JSON to record and compare: itself if JSON, else its qualified name."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        named = value if hasattr(value, "__qualname__") else type(value)
        return f"{named.__module__}.{named.__qualname__}"


def _refuse_trial(study: optuna.Study, trial: FrozenTrial) -> None:
    """Mark FAIL the trial Optuna just created for a refused study (it would stay RUNNING)."""
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)


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
