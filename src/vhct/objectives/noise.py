"""Additive reward noise: Uniform(-a, a), drawn from the run's own generator.

The paper's low noise is ``a = 0.05`` and its high noise ``a = 0.5``; ``a = 0`` adds nothing
(and draws nothing, so noiseless runs do not consume the generator).
"""

from __future__ import annotations

import math

import numpy as np

#: the paper's low noise level (half-width of the uniform noise; the benchmarks' default)
LOW_NOISE = 0.05


class UniformNoise:
    """Draws ``Uniform(-a, a)`` values one at a time from ``rng``."""

    def __init__(self, a: float, rng: np.random.Generator):
        if not (isinstance(a, int | float) and math.isfinite(a) and a >= 0):
            raise ValueError(f"noise must be a finite half-width >= 0, got {a!r}")
        self.a = float(a)
        self.rng = rng

    def sample(self) -> float:
        if self.a == 0.0:
            return 0.0
        return float(self.rng.uniform(-self.a, self.a))
