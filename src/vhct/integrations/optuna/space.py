"""The optimizer's box in a study: which parameters it owns, the values at a cube point, and
whether a trial evaluated that point (the mapping and the rules: the package's docstring)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, FloatDistribution, IntDistribution
from optuna.trial import FrozenTrial

#: finished trials after which a ``search_space`` parameter that none suggested is refused
#: (a conditional parameter missing from every one of them is then unlikely: 2**-10 for one
#: branch in two)
UNSUGGESTED_LIMIT = 10
#: where the box came from (quoted in messages); only a box given as an argument can name a
#: parameter that no trial suggests
FROM_ARGUMENT = "the search_space argument"
FROM_RECORD = "the space recorded in the study"
FROM_FIRST_TRIAL = "the space inferred from the study's first completed trial"
#: relative and absolute tolerance of "the trial took the proposed value" (a float round trip)
SAME_VALUE_REL_TOL = 1e-12
SAME_VALUE_ABS_TOL = 1e-300


def check_space(space: dict[str, BaseDistribution]) -> None:
    """Refuse a ``search_space`` that is not a dict of Optuna distributions."""
    if not isinstance(space, dict) or not all(isinstance(d, BaseDistribution) for d in space.values()):
        raise ValueError(f"search_space must map parameter names to Optuna distributions, got {space!r}")


def numeric(space: dict[str, BaseDistribution]) -> dict[str, BaseDistribution]:
    """The float and integer parameters of ``space`` (sorted by name), except single values."""
    return {
        name: dist
        for name, dist in sorted(space.items())
        if isinstance(dist, FloatDistribution | IntDistribution) and not dist.single()
    }


def from_unit(u: float, dist: BaseDistribution) -> float | int:
    """The parameter value at cube coordinate ``u`` (see the package's docstring)."""
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


def values_at(point: np.ndarray, space: dict[str, BaseDistribution]) -> dict[str, Any]:
    """The parameters' values at the cube ``point`` (one coordinate per parameter, in order)."""
    return {name: from_unit(u, dist) for u, (name, dist) in zip(point, space.items(), strict=True)}


def where(trial: FrozenTrial, space: dict[str, BaseDistribution]) -> dict[str, Any]:
    """The values ``trial`` took for the optimizer's parameters (the point, for messages)."""
    return {name: trial.params.get(name) for name in space}


def check_distributions(
    space: dict[str, BaseDistribution], source: str, trial: FrozenTrial, algorithm: str
) -> None:
    """Refuse a trial whose distribution of one of the box's parameters is not the box's."""
    for name, dist in space.items():
        suggested = trial.distributions.get(name)
        if suggested is not None and suggested != dist:
            raise ValueError(
                f"parameter {name!r}: the objective suggests {suggested} in trial {trial.number}, but "
                f"{algorithm}'s box has {dist} (from {source}); {algorithm} "
                "needs one fixed distribution per parameter: make search_space match the objective's "
                "suggest_* calls (or leave it out to infer it)"
            )


def check_suggested(
    space: dict[str, BaseDistribution], suggested: set[str], study: optuna.Study, algorithm: str
) -> None:
    """Refuse a ``search_space`` parameter that none of the study's first ``UNSUGGESTED_LIMIT``
    finished trials suggested: trials that skip it are never told (see the package's docstring).
    ``suggested``: the parameters some trial suggested, updated here."""
    if space.keys() <= suggested:
        return
    trials = study.get_trials(deepcopy=False)
    for t in trials:
        suggested.update(name for name in space if name in t.distributions)
    unsuggested = sorted(space.keys() - suggested)
    # this trial is still RUNNING in the storage: it counts as finished
    finished = 1 + sum(t.state.is_finished() for t in trials)
    if unsuggested and finished >= UNSUGGESTED_LIMIT:
        raise ValueError(
            f"search_space names {unsuggested}, but none of the study's {finished} finished "
            f"trials suggested {'it' if len(unsuggested) == 1 else 'them'}: {algorithm} is "
            "told only the trials that suggest every parameter of its box, so every trial would "
            f"stay at its current point. Remove {unsuggested} from search_space, or suggest "
            f"{'it' if len(unsuggested) == 1 else 'them'} in the objective"
        )


def evaluated(
    space: dict[str, BaseDistribution],
    trial: FrozenTrial,
    point: np.ndarray,
    algorithm: str,
    say: Callable[[str, str], None],
) -> bool:
    """Whether ``trial`` evaluated exactly the optimizer's ``point``; if not, ``say(key, message)``
    is given the cause (the sampler's warn-once, keyed by cause).

    A trial that skipped a parameter (a conditional space), gave it another distribution,
    or took a fixed value (``enqueue_trial``) did not evaluate the point: it is not told.
    """
    missing = [name for name in space if name not in trial.distributions]
    if missing:
        say(
            "conditional",
            f"trial {trial.number} did not suggest {missing} of {algorithm}'s parameters "
            f"{list(space)}: {algorithm} is told only the trials that suggest all of them "
            "(for the others its point is asked again). For a "
            f"conditional search space, suggest every parameter {algorithm} should tune "
            "unconditionally, or run one study per branch (docs/library.md)",
        )
        return False
    for u, (name, dist) in zip(point, space.items(), strict=True):
        if trial.distributions[name] != dist:
            say(
                f"distribution:{name}",
                f"trial {trial.number}: parameter {name!r} has "
                f"{trial.distributions[name]}, not {dist}: not told to {algorithm}",
            )
            return False
        proposed = from_unit(u, dist)
        if not math.isclose(
            trial.params[name], proposed, rel_tol=SAME_VALUE_REL_TOL, abs_tol=SAME_VALUE_ABS_TOL
        ):
            say(
                f"fixed:{trial.number}",
                f"trial {trial.number} evaluated {name}={trial.params[name]!r}, not the proposed "
                f"{proposed!r} (an enqueued or fixed parameter): not told to {algorithm}",
            )
            return False
    return True
