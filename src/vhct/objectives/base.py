"""The interface of an objective function: a box domain, a value, and what is known of its maximum."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np


class Objective(ABC):
    """A function to maximize over a box.

    ``f_star`` and ``maximizer`` are exact (to 1e-9) where known; for objectives
    whose maximum is unknown (real-data tuning) ``f_star`` is None and
    ``regret_reference`` is the value regret is measured against (the paper uses 1).
    ``seed`` lets objectives whose evaluation is itself random (training a network)
    draw from a generator derived from (run seed, round); deterministic objectives ignore it.
    """

    #: registry name, as in the config
    name: str = "objective"
    #: True when an evaluation is random and uses ``seed``
    stochastic: bool = False

    def __init__(self, domain: Sequence[Sequence[float]] | np.ndarray):
        self.domain = np.asarray(domain, dtype=float)
        self.dim = self.domain.shape[0]

    @abstractmethod
    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        """Value of the objective at ``x`` (shape (d,))."""

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
        """Value the regret is measured against: ``f_star`` when known, else 1 (the paper's convention)."""
        return 1.0 if self.f_star is None else self.f_star
