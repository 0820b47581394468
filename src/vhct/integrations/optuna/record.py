"""What a sampler records in its study so that a fresh sampler resumes it: the settings (study
system attributes), each proposed trial's round, cube point and parameter names, and the penalties
told (trial system attributes). The one writer and reader of those attributes ("Stop and resume"
in the package's docstring)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.trial import FrozenTrial, TrialState

from vhct.integrations.optuna.identity import refuse_trial

#: trial system attributes the sampler writes (and reads back when it resumes)
ROUND_ATTR = "vhct:round"
POINT_ATTR = "vhct:point"
NAMES_ATTR = "vhct:params"
#: study system attribute: the sampler's settings, checked when another sampler resumes the study
SETTINGS_ATTR = "vhct:sampler"
#: trial system attribute: the penalties ([round, reward]) told while proposing that trial
PENALTY_ATTR = "vhct:penalty"


def describe(value: Any) -> Any:
    """A parameter as JSON to record and compare: itself if JSON, else its qualified name."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        named = value if hasattr(value, "__qualname__") else type(value)
        return f"{named.__module__}.{named.__qualname__}"


def settings(algorithm: str, seed: int, horizon: int | None, params: Mapping[str, Any]) -> dict[str, Any]:
    """What makes a sampler's rounds: recorded in the study, compared when resuming."""
    described = {name: describe(value) for name, value in sorted(params.items())}
    return {"algorithm": algorithm, "seed": seed, "horizon": horizon, **described}


def check_settings(study: optuna.Study, trial: FrozenTrial, mine: dict[str, Any]) -> None:
    """Record the settings ``mine`` in a study that has none; refuse a study recorded with others
    (``trial`` marked FAIL), naming the first setting that differs and both values."""
    recorded = study._storage.get_study_system_attrs(study._study_id).get(SETTINGS_ATTR)
    if recorded is None:
        study._storage.set_study_system_attr(study._study_id, SETTINGS_ATTR, mine)
        return
    for key in sorted(recorded.keys() | mine.keys()):
        theirs, ours = recorded.get(key), mine.get(key)
        if theirs != ours:
            refuse_trial(study, trial)
            raise ValueError(
                f"study {study.study_name!r} was run with {key}={theirs!r}, this VHCTSampler has "
                f"{key}={ours!r}: its rounds would not replay. Resume with the same algorithm, seed "
                "and parameters as the sampler that ran the study (None: not given)"
            )


def record_proposal(
    study: optuna.Study, trial: FrozenTrial, round_: int, point: np.ndarray, names: Sequence[str]
) -> None:
    """Record in ``trial`` the round it was proposed for, the cube point and the box's parameters."""
    storage = study._storage
    storage.set_trial_system_attr(trial._trial_id, ROUND_ATTR, round_)
    storage.set_trial_system_attr(trial._trial_id, POINT_ATTR, point.tolist())
    storage.set_trial_system_attr(trial._trial_id, NAMES_ATTR, list(names))


def record_penalties(study: optuna.Study, trial: FrozenTrial, penalties: list[list[float]]) -> None:
    """Record in ``trial`` the penalties ([round, reward]) told while proposing it."""
    study._storage.set_trial_system_attr(trial._trial_id, PENALTY_ATTR, penalties)


def recorded_space(study: optuna.Study) -> dict[str, BaseDistribution] | None:
    """The space a previous sampler of this study froze (read back when resuming)."""
    for t in study.get_trials(deepcopy=False):
        names = t.system_attrs.get(NAMES_ATTR)
        if names is not None and all(n in t.distributions for n in names):
            return {n: t.distributions[n] for n in names}
    return None


def recorded_rounds(
    trials: Sequence[FrozenTrial], first: int
) -> tuple[dict[int, list[FrozenTrial]], dict[int, float]]:
    """The trials proposed for each round from ``first`` on, and the penalties told, by round."""
    by_round: dict[int, list[FrozenTrial]] = {}
    penalties: dict[int, float] = {}
    for t in trials:
        k = t.system_attrs.get(ROUND_ATTR)
        if k is not None and k >= first:
            by_round.setdefault(k, []).append(t)
        penalties.update((int(k), reward) for k, reward in t.system_attrs.get(PENALTY_ATTR, ()))
    return by_round, penalties


def recorded_point(trial: FrozenTrial) -> np.ndarray:
    """The cube point ``trial`` was proposed."""
    return np.asarray(trial.system_attrs[POINT_ATTR], dtype=float)


def proposed(trial: FrozenTrial) -> bool:
    """Whether ``trial`` was proposed by the optimizer (it carries a round)."""
    return ROUND_ATTR in trial.system_attrs


def round_running_elsewhere(study: optuna.Study, trial: FrozenTrial, round_: int) -> bool:
    """Whether a running trial other than ``trial`` was proposed for ``round_``."""
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    return any(t.number != trial.number and t.system_attrs.get(ROUND_ATTR) == round_ for t in running)
