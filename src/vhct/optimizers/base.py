"""The interface every optimizer shares, and the argument checks they reuse.

All optimizers maximize. A run is a loop of ``x = opt.ask()``, ``opt.tell(x, r)``;
``opt.recommend()`` gives the current best guess at any time.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

SeedLike = int | np.random.Generator | np.random.SeedSequence | None

#: rounds any run may reach; bounds the sums the optimizers keep
MAX_ROUNDS = 2**64
#: largest reward magnitude: a node's sum of squared reward differences (Welford's ``M2``, at most
#: ``rounds * (2 * limit)**2``) stays finite over ``MAX_ROUNDS`` rounds, so no later reward can overflow it
REWARD_LIMIT = math.sqrt(sys.float_info.max / (4.0 * MAX_ROUNDS))


def as_generator(seed: SeedLike) -> np.random.Generator:
    """Return a generator owned by the caller: a fresh one for an int/None/SeedSequence.

    An integer seed must be >= 0 (numpy's own rule, checked here so the error names ``seed``);
    a bool is rejected although Python counts it as an int.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an int, a SeedSequence or a numpy Generator, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng(seed)


def as_domain(domain: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """Validate a box ``[[lo, hi], ...]`` and return it as a float array of shape (d, 2)."""
    try:
        box = np.asarray(domain, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"domain must be a list of [lo, hi] pairs, got {domain!r}") from exc
    if box.ndim != 2 or box.shape[1] != 2 or box.shape[0] == 0:
        raise ValueError(f"domain must be a non-empty list of [lo, hi] pairs, got {domain!r}")
    if not np.all(np.isfinite(box)):
        raise ValueError(f"domain bounds must be finite, got {domain!r}")
    if np.any(box[:, 0] >= box[:, 1]):
        bad = int(np.argmax(box[:, 0] >= box[:, 1]))
        raise ValueError(f"domain dimension {bad} is empty or inverted: {box[bad].tolist()}")
    return box


def is_number(value: object) -> bool:
    """The one rule for numeric parameters: a real number (Python's or numpy's), never a bool.

    ``numbers.Real`` covers int, float, fractions and numpy's integer and floating types;
    a bool is an int to Python but a mistake here, so it is refused.
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def check_real(name: str, value: float) -> float:
    """Require a finite real number (the numeric rule of :func:`is_number`; NaN and infinity refused)."""
    if not is_number(value):
        raise ValueError(f"{name} must be a real number (not a bool or a string), got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return number


def check_open_unit(name: str, value: float) -> float:
    """Require a real number with ``0 < value < 1``."""
    number = check_real(name, value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}")
    return number


def check_positive(name: str, value: float) -> float:
    """Require a finite real number ``> 0``."""
    number = check_real(name, value)
    if not number > 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def check_horizon(name: str, value: int, least: int = 1) -> int:
    """Require an integer ``value >= least`` (a horizon, a budget, an epoch length); a bool is refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


def check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    """Require ``value`` to be one of ``choices`` (the readings of an open implementation choice)."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_reward(reward: float) -> float:
    """Require a finite real reward: a real number (numpy's too; not a string or a bool) or a 0-d array."""
    value = reward.item() if isinstance(reward, np.ndarray) and reward.ndim == 0 else reward
    return check_real("reward", value)


class RewardRangeWarning(UserWarning):
    """Rewards break the range an optimizer assumes (the paper's known bound ``b``); see docs/library.md."""


#: where docs/library.md says what scaling the rewards does (the section a RewardRangeWarning names)
SCALING_DOCS = "docs/library.md, 'Scaling the values is not a rule'"


def reward_range_message(name: str, b: float, variance: float) -> str:
    """The message of a :class:`RewardRangeWarning` from a node's ``variance`` above ``b^2/4``: the
    assumption that does not hold, what follows for the tree, and what the docs measured of scaling
    (it helped on some functions and hurt on others), so no rule the docs do not give."""
    return (
        f"{name}: the rewards at one point vary more than b={b!r} allows (a node's variance {variance:.4g} "
        f"> b^2/4 = {b * b / 4:.4g}), so the paper's assumption (rewards in [0, 1], noise within [-b/2, "
        "b/2]) does not hold. The thresholds grow with the variance, so the tree stays shallower than "
        "under it. That need not make the run worse: scaling the rewards into [0, 1] helped on some "
        f"functions and hurt on others, so it is not a rule ({SCALING_DOCS}); if you can afford it, try "
        "both, or declare a larger b to meet the assumption. (Warned once per optimizer.)"
    )


def reward_overflow(name: str, reward: float, reason: str) -> ValueError:
    """The error for a reward whose arithmetic would overflow: it names the reward and the reason."""
    return ValueError(
        f"reward {reward!r} is too large for {name}: {reason}; nothing was recorded (tell() the pending "
        "point again with a valid reward). Rewards should lie in a known range such as [0, 1]: scale "
        "them (see docs/library.md)"
    )


class AlgorithmError(RuntimeError):
    """An algorithm broke its side of the ask/tell contract: it asked a point that is not a finite
    point of its box, recommended one, or did not answer an ask in time; the message names it."""


class AskTimeoutError(AlgorithmError, TimeoutError):
    """An algorithm's ask did not return within the time limit of the run (``ask_timeout``)."""


class HorizonWarning(UserWarning):
    """An optimizer built for a horizon (T-HOO, POO, PCT with a fixed budget) runs past it."""


def warn_past_horizon(optimizer: Optimizer, horizon: int | None, why: str) -> None:
    """Warn once when ``optimizer`` is asked a round beyond ``horizon`` (None: nothing to check).

    Call it at the start of ``_ask``. The warning is issued once per optimizer (by its warning
    owner, so a wrapper's instances do not repeat it); the run goes on, since the rounds stay
    well defined, only the guarantees tied to the horizon (``why``) no longer hold.
    """
    if horizon is None or optimizer.t < horizon:
        return
    owner = optimizer._warning_owner
    if getattr(owner, "_horizon_warned", False):
        return
    owner._horizon_warned = True
    warnings.warn(
        f"{optimizer.name} was built for horizon={horizon} rounds and is asked round {optimizer.t + 1}: "
        f"its guarantees no longer hold ({why}); build it with the number of rounds you will run "
        "(warned once)",
        HorizonWarning,
        stacklevel=4,
    )


class Optimizer(ABC):
    """Ask/tell maximizer over a box domain.

    Subclasses implement ``_ask`` and ``_tell``; this class enforces the protocol
    (one ``tell`` per ``ask``, with the point that was asked and a finite reward).
    ``_tell`` must be atomic: it raises before changing anything, or records the round
    completely; ``tell`` then counts the round, so a rejected reward leaves the optimizer
    as it was and the pending point can be told again.
    """

    #: short name used in tables and figures
    name: str = "optimizer"

    def __init__(self, domain: Sequence[Sequence[float]] | np.ndarray, seed: SeedLike = None):
        self.domain = as_domain(domain)
        self.dim = self.domain.shape[0]
        self.rng = as_generator(seed)
        self._pending: np.ndarray | None = None
        #: number of completed ask/tell rounds
        self.t = 0
        #: the optimizer that issues this one's reward-range warning (a wrapper adopts its instances)
        self._warning_owner: Optimizer = self
        self._reward_warning: str | None = None
        self._reward_warned = False
        self._horizon_warned = False

    def ask(self) -> np.ndarray:
        """Return the next point to evaluate (a fresh array of shape (d,))."""
        if self._pending is not None:
            return self._pending.copy()
        point = np.asarray(self._ask(), dtype=float)
        self._pending = point
        return point.copy()

    def tell(self, point: np.ndarray | Sequence[float], reward: float) -> None:
        """Feed back the reward observed at the point returned by the last ``ask``."""
        if self._pending is None:
            raise ValueError("tell() called without a pending ask()")
        r = check_reward(reward)
        if abs(r) > REWARD_LIMIT:
            reason = f"|reward| must be <= {REWARD_LIMIT:.3g}, beyond which a node's variance can overflow"
            raise reward_overflow(self.name, reward, reason)
        given = np.asarray(point, dtype=float)
        pending = self._pending
        # byte comparison first: this runs every round and np.allclose costs ~20 us
        if given.tobytes() != pending.tobytes() and not np.array_equal(given, pending):
            raise ValueError(f"tell() point {point!r} is not the pending point {pending.tolist()}")
        self._tell(r)  # atomic: raises before changing anything
        self._pending = None
        self.t += 1
        if self._reward_warning is not None and self._warning_owner is self:
            message, self._reward_warning = self._reward_warning, None
            warnings.warn(message, RewardRangeWarning, stacklevel=2)

    def _flag_reward_range(self, message: str) -> None:
        """Ask for a :class:`RewardRangeWarning`, issued once per optimizer after the round is recorded.

        A wrapper's instances flag their owner, so a wrapper warns once, not once per instance.
        """
        owner = self._warning_owner
        if not owner._reward_warned:
            owner._reward_warned = True
            owner._reward_warning = message

    def adopt(self, child: Optimizer) -> Optimizer:
        """Make this optimizer (or its own owner) issue ``child``'s reward-range warning."""
        child._warning_owner = self._warning_owner
        return child

    @abstractmethod
    def _ask(self) -> np.ndarray:
        """Choose the next point."""

    @abstractmethod
    def _tell(self, reward: float) -> None:
        """Update with the reward of the pending point."""

    @abstractmethod
    def recommend(self) -> np.ndarray:
        """Return the current best guess of a maximizer."""

    @property
    def pulled_depth(self) -> int | None:
        """Depth of the node pulled in the last round (tree methods), else None."""
        return None

    @property
    def selection_bound(self) -> float | None:
        """``max(SE, OE)`` of the node pulled in the last round, at its selection (the OSC methods;
        ``vhct.optimizers.tree.OSC``), else None."""
        return None
