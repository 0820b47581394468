"""Failed trials: what a finished trial tells, which values the optimizer accepts, and the penalty
a point that keeps failing is told ("Failed and pruned trials" in the package's docstring)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from optuna.distributions import BaseDistribution
from optuna.trial import FrozenTrial, TrialState

from vhct.integrations.optuna.record import ROUND_ATTR
from vhct.integrations.optuna.space import where
from vhct.optimizers.base import REWARD_LIMIT

#: a round whose point failed this many times is told the penalty (one retry: a failure may pass)
FAILURES_BEFORE_PENALTY = 2
#: why a value that is not :func:`acceptable` is refused
REFUSED_REASON = f"rewards must be finite with |reward| <= {REWARD_LIMIT:.3g}"


def result(trial: FrozenTrial) -> float | None:
    """A finished trial's value: a complete one's, a pruned one's last finite intermediate value;
    None for the others (failed, running, pruned before reporting)."""
    if trial.state == TrialState.COMPLETE:
        return float(trial.value)
    if trial.state == TrialState.PRUNED and trial.intermediate_values:
        last = trial.intermediate_values[max(trial.intermediate_values)]
        if math.isfinite(last):
            return float(last)
    return None


def acceptable(value: float) -> bool:
    """Whether the optimizers accept ``value`` as a reward (or its negation)."""
    return math.isfinite(value) and abs(value) <= REWARD_LIMIT


def worst_reward(trials: Sequence[FrozenTrial], sign: float) -> float | None:
    """The penalty: the worst reward (``sign`` times the value) of the finished ``trials`` that
    have an acceptable value; None when none has one."""
    values = [v for t in trials if (v := result(t)) is not None and acceptable(v)]
    return min(sign * v for v in values) if values else None


def refused_warning(algorithm: str, number: int, value: float, reason: str) -> str:
    """The warning for a trial whose value the optimizer cannot be told."""
    return (
        f"trial {number} returned {value!r}, which {algorithm} cannot be told ({reason}): "
        f"for {algorithm} it counts as a failed trial: the next trial gets its point again, and "
        f"a point that fails {FAILURES_BEFORE_PENALTY} times is told the worst value of the study"
    )


def penalty_warning(
    algorithm: str,
    failed: Sequence[FrozenTrial],
    space: dict[str, BaseDistribution],
    value: float | None,
) -> str:
    """The one warning of a penalized point: its failed trials and the study's worst ``value`` it
    is told (None: the study has no value yet)."""
    if value is None:
        told = (
            "before any trial of the study had a value: there is none to penalize it with yet, so "
            f"the next trials are drawn by the independent sampler (not told to {algorithm}) "
            "until one has a value; then the point is told the worst value of the study"
        )
    else:
        told = f"it is told {value!r} there, the worst value of the study so far"
    return (
        f"trials {[t.number for t in failed]} failed at the same point of {algorithm}, "
        f"{where(failed[-1], space)}: {told}, and {algorithm} searches elsewhere (an "
        "objective that fails in a region counts as a bad value there). Later points that fail "
        f"{FAILURES_BEFORE_PENALTY} times are penalized the same way without another warning: "
        f"their trials are the FAIL ones with the system attribute '{ROUND_ATTR}'"
    )
