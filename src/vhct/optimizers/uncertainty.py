"""Uncertainty quantifiers SE_{h,i}(T, t) (the paper's Definition 2) and their thresholds tau.

Both quantifiers depend on the round only through the log term
``L(t) = log(1 / delta~(t+))`` of the :class:`ConfidenceSchedule`; both decrease in the
pull count ``T``, so the threshold ``tau = min{T : SE(T) <= OE_h}`` is well defined; it
has a closed form, made exact by a bounded integer search (no loop runs unboundedly,
whatever the parameters). ``c`` and ``b`` are validated so that SE stays finite.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Protocol

from .base import MAX_ROUNDS, check_open_unit, check_positive

#: Floor on the node variance in the Bernstein quantifier. The paper assumes the variance
#: exceeds "a fixed small constant" (appendix, Preliminary Notations); the authors'
#: library uses 1e-3, which we keep so that results are comparable.
DEFAULT_VARIANCE_FLOOR = 1e-3

#: ``-log`` of the smallest positive float: no positive ``delta`` or ``c1`` lies further below 1
_LOG_TINY = -math.log(math.ulp(0.0))
#: bound on ``L(t) = log(t+) - log(c1 delta)`` for every valid schedule and ``t <= MAX_ROUNDS``;
#: the quantifiers are validated so that SE stays finite up to it
MAX_LOG_TERM = math.log(MAX_ROUNDS) + 2.0 * _LOG_TINY
#: largest pull count searched for a threshold (``SE`` needs ``float(T)``); beyond it tau is infinite
_MAX_COUNT = 2**1023


@dataclass(frozen=True)
class ConfidenceSchedule:
    """``t+ = 2**ceil(log2 t)``, ``delta~(t) = min(1, c1 * delta / t)``, ``L(t) = log(1/delta~(t+))``.

    ``c1 = (rho / (3 nu))**(1/8)`` is HCT's choice (also the authors' library default);
    see :meth:`for_smoothness`.
    """

    delta: float = 0.01
    c1: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        object.__setattr__(self, "c1", check_positive("c1", self.c1))

    @classmethod
    def for_smoothness(cls, delta: float, nu: float, rho: float) -> ConfidenceSchedule:
        nu, rho = check_positive("nu", nu), check_open_unit("rho", rho)
        c1 = (rho / (3.0 * nu)) ** 0.125
        if not (0.0 < c1 < math.inf):
            raise ValueError(
                f"nu={nu!r} with rho={rho!r} gives c1 = (rho / (3 nu))**(1/8) = {c1!r}: rho / (3 nu) must "
                f"lie within the positive float range, i.e. nu in [{rho / 3.0 / sys.float_info.max:.3g}, "
                f"{sys.float_info.max / 3.0:.3g}]"
            )
        return cls(delta=delta, c1=c1)

    @staticmethod
    def t_plus(t: int) -> int:
        """Smallest power of two >= t (t >= 1)."""
        if t < 1:
            raise ValueError(f"round t must be >= 1, got {t}")
        return 1 << (t - 1).bit_length()

    def log_term(self, t: int) -> float:
        """``log(1 / delta~(t+))`` at round ``t``; in log space where ``delta~`` underflows (tiny delta)."""
        t_plus = self.t_plus(t)
        delta_tilde = min(1.0, self.c1 * self.delta / t_plus)
        if delta_tilde >= sys.float_info.min:
            return -math.log(delta_tilde)
        return math.log(t_plus) - math.log(self.c1) - math.log(self.delta)


class Uncertainty(Protocol):
    """An uncertainty quantifier: ``SE`` and its threshold given a node's statistics."""

    uses_variance: bool

    def __call__(self, count: int, variance: float, log_term: float) -> float:
        """``SE`` after ``count`` pulls; ``+inf`` when ``count == 0``."""
        ...

    def threshold(self, resolution: float, variance: float, log_term: float) -> int | float:
        """Least ``T >= 1`` with ``SE(T) <= resolution`` (``math.inf`` if no count reaches it)."""
        ...


def _start(se, bound: float, estimate: float) -> int:
    """Where the search starts: ``ceil(estimate)``; for an overflowed estimate, 1 if it is the answer
    (SE is 0 when the log term is), else the largest count searched."""
    if estimate < _MAX_COUNT:
        return max(1, math.ceil(estimate))
    return 1 if se(1) <= bound else _MAX_COUNT


def _least_count(se, bound: float, estimate: float) -> int | float:
    """The least integer ``T >= 1`` with ``se(T) <= bound``, given a real solution ``estimate`` of equality.

    ``se`` is non-increasing in ``T`` (also in floating point), so the least count is unique:
    starting at ``ceil(estimate)``, a galloping search brackets it and a bisection on integers
    pins it, which is exact and takes O(log) evaluations however wrong the estimate (an
    estimate beyond ``2**53`` is only approximate; one that overflowed is infinite). Ordinary
    thresholds cost two evaluations, as stepping by one did. ``math.inf`` when no count up
    to ``2**1023`` reaches the bound: no run can pull a node that often.
    """
    tau = _start(se, bound, estimate)
    if se(tau) <= bound:
        hi, step = tau, 1
        lo = hi - 1
        while lo >= 1 and se(lo) <= bound:
            hi, step = lo, 2 * step
            lo = hi - step
        lo = max(lo, 0)  # se(0) is +inf
    else:
        lo, step = tau, 1
        hi = lo + 1
        while se(hi) > bound:
            if hi >= _MAX_COUNT:
                return math.inf
            lo, step = hi, 2 * step
            hi = min(lo + step, _MAX_COUNT)
    while hi - lo > 1:  # se(lo) > bound >= se(hi)
        mid = (lo + hi) // 2
        if se(mid) <= bound:
            hi = mid
        else:
            lo = mid
    return hi


def _check_c(c: float, b: float, c_max: float, term: str) -> None:
    """Reject a ``c`` for which SE at one pull could overflow (for this ``b``, any reachable log term)."""
    if c > c_max:
        raise ValueError(
            f"c={c!r} with b={b!r} makes the uncertainty SE overflow ({term} for log terms up to "
            f"{MAX_LOG_TERM:.0f}); usable range for this b: 0 < c <= {c_max:.3g}"
        )


@dataclass(frozen=True)
class Hoeffding:
    """HCT's quantifier ``SE = b c sqrt(L / T)``; ``tau = ceil(b^2 c^2 L / OE^2)``."""

    c: float = 0.1
    b: float = 1.0
    uses_variance = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "c", check_positive("c", self.c))
        object.__setattr__(self, "b", check_positive("b", self.b))
        _check_c(self.c, self.b, sys.float_info.max / (2.0 * self.b * math.sqrt(MAX_LOG_TERM)), "b c sqrt(L)")

    def __call__(self, count: int, variance: float, log_term: float) -> float:
        if count <= 0:
            return math.inf
        return self.b * self.c * math.sqrt(log_term / count)

    def threshold(self, resolution: float, variance: float, log_term: float) -> int | float:
        try:
            estimate = (self.b * self.c) ** 2 * log_term / resolution**2
        except (OverflowError, ZeroDivisionError):  # tau beyond any float: searched from the top
            estimate = math.inf
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
        object.__setattr__(self, "c", check_positive("c", self.c))
        object.__setattr__(self, "b", check_positive("b", self.b))
        object.__setattr__(self, "variance_floor", check_positive("variance_floor", self.variance_floor))
        _check_c(self.c, self.b, math.sqrt(sys.float_info.max / (8.0 * self.b * MAX_LOG_TERM)), "3 b c^2 L")
        floor_max = sys.float_info.max / (4.0 * MAX_LOG_TERM)
        if self.variance_floor > floor_max:
            raise ValueError(
                f"variance_floor={self.variance_floor!r} makes the uncertainty SE overflow (c sqrt(2 V L)); "
                f"usable range: 0 < variance_floor <= {floor_max:.3g}"
            )

    def __call__(self, count: int, variance: float, log_term: float) -> float:
        if count <= 0:
            return math.inf
        v = max(variance, self.variance_floor)
        c = self.c
        return c * math.sqrt(2.0 * v * log_term / count) + 3.0 * self.b * c * c * log_term / count

    def threshold(self, resolution: float, variance: float, log_term: float) -> int | float:
        v = max(variance, self.variance_floor)
        try:
            root = 1.0 + math.sqrt(1.0 + 3.0 * self.b * resolution / (v / 2.0))
            estimate = root * root * self.c**2 * v * log_term / (2.0 * resolution**2)
        except (OverflowError, ZeroDivisionError):  # tau beyond any float: searched from the top
            estimate = math.inf
        return _least_count(lambda n: self(n, v, log_term), resolution, estimate)
