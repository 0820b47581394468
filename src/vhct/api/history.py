"""The points and values of a run in evaluation order, kept without allocating the whole budget."""

from __future__ import annotations

import numpy as np

#: bytes of history allocated up front at most (the whole budget's rows when they fit, as before); beyond
#: that the history doubles when full, so a huge budget allocates only what its evaluations fill
UPFRONT_BYTES = 2**27


class History:
    """Points and values in evaluation order; grows by doubling, never allocating the budget up front."""

    def __init__(self, budget: int, dim: int):
        rows = min(budget, max(1024, UPFRONT_BYTES // (8 * (dim + 1))))
        self.budget = budget
        self.points = np.empty((rows, dim))
        self.values = np.empty(rows)
        self.n = 0

    def add(self, point: np.ndarray, value: float) -> None:
        if self.n == len(self.values):
            rows = min(self.budget, 2 * self.n)
            self.points = np.concatenate([self.points, np.empty((rows - self.n, self.points.shape[1]))])
            self.values = np.concatenate([self.values, np.empty(rows - self.n)])
        self.points[self.n] = point
        self.values[self.n] = value
        self.n += 1

    def final_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows so far, writable, for the caller to keep (views: no copy of a long history)."""
        return self.points[: self.n], self.values[: self.n]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views of the rows so far (rows are never written again, so views stay valid)."""
        points, values = self.points[: self.n], self.values[: self.n]
        points.flags.writeable = values.flags.writeable = False
        return points, values


def distinct_rows(points: np.ndarray) -> int:
    """Distinct rows by their exact bytes (the cache's key), with one sorted copy, not a set of rows."""
    if len(points) == 0:
        return 0
    rows = np.ascontiguousarray(points).view(np.dtype((np.void, points.dtype.itemsize * points.shape[1])))
    return len(np.unique(rows.ravel()))


def values_at(points: np.ndarray, values: np.ndarray, point: np.ndarray) -> tuple[float | None, int]:
    """The mean of the values observed at exactly ``point`` (the same floats) and how many there are;
    ``(None, 0)`` where it was never evaluated."""
    if len(points) == 0:
        return None, 0
    here = np.all(points == point, axis=1)
    count = int(np.count_nonzero(here))
    return (float(values[here].mean()) if count else None), count
