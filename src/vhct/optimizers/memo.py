"""Memoization of a deterministic black box by exact point: no point is ever evaluated twice.

The tree methods pull each node's representative point again and again (on the Landmine domain,
VHCT evaluated 176 distinct points in 500 rounds), so a deterministic objective, whose value at a
point never changes, is worth evaluating once per point. The key is the point's exact float64
bytes: two points are the same only if every coordinate is the same float (no rounding), so the
values returned are exactly those the function would have returned.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class PointMemo:
    """``memo(x)``: ``function(x)`` the first time ``x`` (exactly) is seen, the stored value after.

    ``calls`` counts the evaluations of ``function`` (distinct points), ``lookups`` every call.
    """

    def __init__(self, function: Callable[[np.ndarray], float]):
        self.function = function
        self.values: dict[bytes, float] = {}
        self.lookups = 0

    @property
    def calls(self) -> int:
        """Evaluations of the wrapped function: the number of distinct points seen."""
        return len(self.values)

    def __call__(self, x: np.ndarray) -> float:
        self.lookups += 1
        key = np.ascontiguousarray(x, dtype=np.float64).tobytes()
        value = self.values.get(key)
        if value is None:
            value = self.values[key] = self.function(x)
        return value
