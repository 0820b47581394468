"""The interface of an objective function: a box domain, a value, and what is known of its maximum."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

#: points this far outside the domain (relative to its side) are clipped onto it rather than
#: rejected, so that floating-point rounding in an optimizer does not abort a run
DOMAIN_TOLERANCE = 1e-12
#: points (log2) of the scrambled Sobol sequence that estimate an objective's mean over its domain
MEAN_POINTS_LOG2 = 14
#: seed of that sequence (the estimate is deterministic)
MEAN_SEED = 0


class Objective(ABC):
    """A function to maximize over a box.

    ``f_star`` and ``maximizer`` are exact (to 1e-9) where known, and the class says so
    (``exact_optimum``); for objectives whose maximum is unknown (real-data tuning) ``f_star``
    is None and ``regret_reference`` is the value regret is measured against (1, as the authors'
    library PyXAB does; the paper defines regret against f* only).
    ``seed`` lets objectives whose evaluation is itself random (training a network)
    draw from a generator derived from (run seed, round); deterministic objectives ignore it.
    """

    #: registry name, as in the config
    name: str = "objective"
    #: True when an evaluation is random and uses ``seed``
    stochastic: bool = False
    #: True when ``f_star`` and ``maximizer`` are known exactly (the synthetic functions): the
    #: pipeline reads it from the class, without building one, to require f* in a run's record
    exact_optimum: bool = False

    def __init__(self, domain: Sequence[Sequence[float]] | np.ndarray):
        self.domain = np.asarray(domain, dtype=float)
        self.dim = self.domain.shape[0]

    @abstractmethod
    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        """Value of the objective at ``x`` (shape (d,))."""

    def check_point(self, x: np.ndarray | Sequence[float]) -> np.ndarray:
        """``x`` as a float vector inside the domain (clipped within tolerance); ValueError naming ``x``."""
        point = np.asarray(x, dtype=float)
        if point.shape != (self.dim,) or not np.all(np.isfinite(point)):
            raise ValueError(f"x must be {self.dim} finite numbers, got {x!r}")
        lo, hi = self.domain[:, 0], self.domain[:, 1]
        slack = DOMAIN_TOLERANCE * (hi - lo)
        if np.any(point < lo - slack) or np.any(point > hi + slack):
            raise ValueError(f"x={point.tolist()} lies outside the domain {self.domain.tolist()}")
        return np.clip(point, lo, hi)

    def random_search_regret(self) -> float | None:
        """``f* - mean of f over the domain``: the per-round regret of uniform random search.

        Dividing R_n / n by it gives a scale-free difficulty (0: no regret, 1: no better than random
        search), so objectives of different ranges can be compared. None where f* is unknown.
        """
        if self.f_star is None:
            return None
        from scipy.stats import qmc

        unit = qmc.Sobol(self.dim, scramble=True, seed=MEAN_SEED).random_base2(MEAN_POINTS_LOG2)
        points = qmc.scale(unit, self.domain[:, 0], self.domain[:, 1])
        return float(self.f_star - np.mean([self(x) for x in points]))

    @property
    def f_star(self) -> float | None:
        """Exact maximum value, or None when unknown."""
        return None

    @property
    def maximizer(self) -> np.ndarray | None:
        """A point attaining ``f_star``, or None when unknown."""
        return None

    @property
    def regret_reference(self) -> float:
        """Value the regret is measured against: ``f_star`` when known, else 1 (the authors' library's)."""
        return 1.0 if self.f_star is None else self.f_star
