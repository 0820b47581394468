"""Uncertainty quantifiers SE_{h,i}(T, t) (the paper's Definition 2) and their thresholds tau.

Both quantifiers depend on the round only through the log term
``L(t) = log(1 / delta~(t+))`` of the :class:`ConfidenceSchedule`; both decrease in the
pull count ``T``, so the threshold ``tau = min{T : SE(T) <= OE_h}`` is well defined and
has a closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from .base import check_open_unit, check_positive

#: Floor on the node variance in the Bernstein quantifier. The paper assumes the variance
#: exceeds "a fixed small constant" (appendix, Preliminary Notations); the authors'
#: library uses 1e-3, which we keep so that results are comparable.
DEFAULT_VARIANCE_FLOOR = 1e-3


@dataclass(frozen=True)
class ConfidenceSchedule:
    """``t+ = 2**ceil(log2 t)``, ``delta~(t) = min(1, c1 * delta / t)``, ``L(t) = log(1/delta~(t+))``.

    ``c1 = (rho / (3 nu))**(1/8)`` is HCT's choice (also the authors' library default);
    see :meth:`for_smoothness`.
    """

    delta: float = 0.01
    c1: float = 1.0

    def __post_init__(self) -> None:
        check_open_unit("delta", self.delta)
        check_positive("c1", self.c1)

    @classmethod
    def for_smoothness(cls, delta: float, nu: float, rho: float) -> ConfidenceSchedule:
        check_positive("nu", nu)
        check_open_unit("rho", rho)
        return cls(delta=delta, c1=(rho / (3.0 * nu)) ** 0.125)

    @staticmethod
    def t_plus(t: int) -> int:
        """Smallest power of two >= t (t >= 1)."""
        if t < 1:
            raise ValueError(f"round t must be >= 1, got {t}")
        return 1 << (t - 1).bit_length()

    def log_term(self, t: int) -> float:
        """``log(1 / delta~(t+))`` at round ``t``."""
        delta_tilde = min(1.0, self.c1 * self.delta / self.t_plus(t))
        return -math.log(delta_tilde)


class Uncertainty(Protocol):
    """An uncertainty quantifier: ``SE`` and its threshold given a node's statistics."""

    uses_variance: bool

    def __call__(self, count: int, variance: float, log_term: float) -> float:
        """``SE`` after ``count`` pulls; ``+inf`` when ``count == 0``."""
        ...

    def threshold(self, resolution: float, variance: float, log_term: float) -> int:
        """Least ``T >= 1`` with ``SE(T) <= resolution``."""
        ...


def _least_count(se, bound: float, estimate: float) -> int:
    """Round a real solution of ``SE(T) = bound`` to the least integer ``T >= 1`` with ``SE(T) <= bound``.

    The closed form is exact in real arithmetic; this corrects the last unit of
    floating-point rounding so the result equals the brute-force search.
    """
    if not math.isfinite(estimate):
        raise OverflowError(f"threshold overflow (estimate {estimate})")
    tau = max(1, math.ceil(estimate))
    while tau > 1 and se(tau - 1) <= bound:
        tau -= 1
    while se(tau) > bound:
        tau += 1
    return tau


@dataclass(frozen=True)
class Hoeffding:
    """HCT's quantifier ``SE = b c sqrt(L / T)``; ``tau = ceil(b^2 c^2 L / OE^2)``."""

    c: float = 0.1
    b: float = 1.0
    uses_variance = False

    def __post_init__(self) -> None:
        check_positive("c", self.c)
        check_positive("b", self.b)

    def __call__(self, count: int, variance: float, log_term: float) -> float:
        if count <= 0:
            return math.inf
        return self.b * self.c * math.sqrt(log_term / count)

    def threshold(self, resolution: float, variance: float, log_term: float) -> int:
        estimate = (self.b * self.c) ** 2 * log_term / resolution**2
        return _least_count(lambda n: self(n, variance, log_term), resolution, estimate)


@dataclass(frozen=True)
class Bernstein:
    """VHCT's variance-adaptive quantifier (the paper's Eq. VHCT_SE).

    ``SE = c sqrt(2 V L / T) + 3 b c^2 L / T`` with ``V`` the node's running variance,
    floored at ``variance_floor``. The threshold is the paper's lemma "Details for
    solving tau": ``(1 + sqrt(1 + 3 b OE / (V/2)))^2 c^2 V L / (2 OE^2)``.
    """

    c: float = 0.1
    b: float = 1.0
    variance_floor: float = DEFAULT_VARIANCE_FLOOR
    uses_variance = True

    def __post_init__(self) -> None:
        check_positive("c", self.c)
        check_positive("b", self.b)
        check_positive("variance_floor", self.variance_floor)

    def __call__(self, count: int, variance: float, log_term: float) -> float:
        if count <= 0:
            return math.inf
        v = max(variance, self.variance_floor)
        c = self.c
        return c * math.sqrt(2.0 * v * log_term / count) + 3.0 * self.b * c * c * log_term / count

    def threshold(self, resolution: float, variance: float, log_term: float) -> int:
        v = max(variance, self.variance_floor)
        root = 1.0 + math.sqrt(1.0 + 3.0 * self.b * resolution / (v / 2.0))
        estimate = root * root * self.c**2 * v * log_term / (2.0 * resolution**2)
        return _least_count(lambda n: self(n, v, log_term), resolution, estimate)
