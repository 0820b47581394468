"""One-dimensional objectives on the standard partition: near-optimal cells per depth and the function's
drop inside the optimal cell (the paper's Sec. 2 near-optimality dimension, Sec. 4.1 local smoothness and
Condition GLS, Fig. 1), computed, not run.

The standard partition halves a cell at its midpoint (``vhct.optimizers.partition.BoxPartition`` in one
dimension): the cells of depth ``h`` are ``[lo + k w, lo + (k + 1) w]``, ``w = (hi - lo) / 2^h``, closed
here, since the paper's sup and inf range over the cell. Per cell, the infimum and supremum of ``f`` are
exact for the two functions the paper's statements are about (Fig. 1): the counterexample g, monotone,
and the difficult function, monotone in |x - 1/2| on each band of ln|x - 1/2|, whose ends are the
only other candidates; any other 1-D objective is sampled at :data:`SAMPLES_PER_CELL` points per cell,
ends included (approximate: for tests and comparisons, not for the paper's claims).

``N_h(eps)`` counts the cells of depth ``h`` whose supremum is at least ``f* - eps``. With ``eps_h``
non-increasing in ``h``, a near-optimal cell's parent is near-optimal too, so the count descends only
into near-optimal cells (exact, and cheap where ``N_h`` is small next to ``2^h``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from vhct.objectives.base import Objective
from vhct.objectives.synthetic import DIFFICULT_CENTER, DIFFICULT_THRESHOLD, CounterExample, DifficultFunction

#: points per cell where a cell's extrema are sampled (objectives without exact extrema)
SAMPLES_PER_CELL = 65
#: a count of the growth per depth is fitted over the deeper half of the depths computed
FIT_FROM = 0.5

#: the difficult function's local smoothness on the standard partition: the optimal cell of depth h spans
#: |x - 1/2| <= 2^-h and f >= -sqrt(|x - 1/2|), so f >= f* - nu_1 rho^h with nu_1 = 1, rho = 2^(-1/2)
DIFFICULT_NU, DIFFICULT_RHO = 1.0, 2.0**-0.5
#: relative slack on a drop equal to its bound (the difficult function's drop is exactly nu_1 rho^h at
#: some depths, up to rounding)
ROUNDING = 1e-12

#: ``extrema(lo, hi)``: the infimum and supremum of ``f`` on each closed cell ``[lo_k, hi_k]``
Extrema = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _counterexample_extrema(f: CounterExample) -> Extrema:
    """g decreases on [0, 1/e] (g(0) = 1, its continuous extension): inf at the right end, sup at the left."""

    def extrema(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return f.values(hi[:, None]), f.values(lo[:, None])

    return extrema


def _difficult_extrema(f: DifficultFunction) -> Extrema:
    """With y = |x - 1/2|: f = -y^2 where frac(ln y) >= 1/2, else -sqrt(y); both decrease in y (y <= 1/2).
    On [y_lo, y_hi] the sup is f(y_lo) or the value at the start of a band inside (-s^2 where a y^2 band
    starts at s = e^(k + 1/2), -sqrt(s) where a sqrt band starts at s = e^k); the inf is f(y_hi) or the
    limit from below at the start of a y^2 band inside (-sqrt(s)); a cell holding x = 1/2 has sup 0."""

    def extrema(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, b = np.abs(lo - DIFFICULT_CENTER), np.abs(hi - DIFFICULT_CENTER)
        holds = (lo <= DIFFICULT_CENTER) & (hi >= DIFFICULT_CENTER)
        y_lo, y_hi = np.where(holds, 0.0, np.minimum(a, b)), np.maximum(a, b)
        sup = f.values(DIFFICULT_CENTER + y_lo[:, None])
        inf = f.values(DIFFICULT_CENTER + y_hi[:, None])
        ends = np.concatenate([y_lo, y_hi])
        positive = ends[ends > 0.0]
        # the bands reaching below the smallest positive end: one more, whose start may be the largest
        # below a cell's upper end
        deepest = math.floor(math.log(positive.min())) - 1 if positive.size else -1
        for k in range(deepest, 0):
            for s, start, limit in (
                (math.exp(k), -math.sqrt(math.exp(k)), None),
                (math.exp(k + DIFFICULT_THRESHOLD), -math.exp(2 * k + 1), -math.exp((k + 0.5) / 2)),
            ):
                inside = (y_lo < s) & (s <= y_hi)
                sup = np.where(inside, np.maximum(sup, start), sup)
                if limit is not None:
                    inf = np.where(inside, np.minimum(inf, limit), inf)
        return inf, sup

    return extrema


def sampled_extrema(f: Objective, points: int = SAMPLES_PER_CELL) -> Extrema:
    """Extrema of any 1-D objective sampled at ``points`` equally spaced points per cell, ends included."""

    def extrema(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, points)[None, :]
        values = f.values(grid.reshape(-1, 1)).reshape(grid.shape)
        return values.min(axis=1), values.max(axis=1)

    return extrema


def extrema_of(f: Objective) -> Extrema:
    """The exact extrema of the counterexample and the difficult function; sampled ones otherwise."""
    if f.dim != 1:
        raise ValueError(f"{f.name}: cells are computed for one-dimensional objectives, this one has {f.dim}")
    if isinstance(f, CounterExample):
        return _counterexample_extrema(f)
    if isinstance(f, DifficultFunction):
        return _difficult_extrema(f)
    return sampled_extrema(f)


@dataclass(frozen=True)
class Cells:
    """A 1-D objective on its standard partition: its domain, maximum, maximizer and cell extrema."""

    name: str
    lo: float
    hi: float
    f_star: float
    maximizer: float
    extrema: Extrema

    @classmethod
    def of(cls, f: Objective) -> Cells:
        (lo, hi), x_star = f.domain[0], f.maximizer
        if x_star is None:
            raise ValueError(f"{f.name}: its maximizer is unknown")
        return cls(f.name, float(lo), float(hi), float(f.f_star), float(np.ravel(x_star)[0]), extrema_of(f))

    def width(self, depth: int) -> float:
        return (self.hi - self.lo) / 2.0**depth

    def optimal_gap(self, depth: int) -> float:
        """``sup (f* - f(x))`` over the cells of depth ``depth`` whose closure holds the maximizer (both
        cells where it lies on their common end: the condition must hold on either)."""
        w = self.width(depth)
        k = (self.maximizer - self.lo) / w
        ks = np.unique(np.clip([math.floor(k), math.ceil(k) - 1], 0, 2**depth - 1)).astype(float)
        inf, _ = self.extrema(self.lo + ks * w, self.lo + (ks + 1.0) * w)
        return float(self.f_star - inf.min())

    def optimal_gaps(self, max_depth: int) -> list[float]:
        """:meth:`optimal_gap` at the depths 0..max_depth."""
        return [self.optimal_gap(h) for h in range(max_depth + 1)]

    def near_optimal_counts(self, epsilon: Callable[[int], float], max_depth: int) -> list[int]:
        """``N_h(epsilon(h))`` for h = 0..max_depth (``epsilon`` non-increasing: a ValueError otherwise)."""
        counts, ks, previous = [], np.zeros(1, dtype=np.int64), math.inf
        for depth in range(max_depth + 1):
            eps = float(epsilon(depth))
            if eps > previous:
                raise ValueError(f"epsilon must not increase with the depth: {eps} at {depth} > {previous}")
            if depth:
                ks = np.concatenate([2 * ks, 2 * ks + 1])
            w = self.width(depth)
            _, sup = self.extrema(self.lo + ks * w, self.lo + (ks + 1) * w)
            ks = np.sort(ks[sup >= self.f_star - eps])
            counts.append(int(ks.size))
            previous = eps
        return counts


def first_violation(gaps: Sequence[float], phi: Callable[[int], float]) -> int | None:
    """The first depth whose optimal-cell drop exceeds ``phi(h)`` (beyond rounding, :data:`ROUNDING`):
    where f >= f* - phi(h) (local smoothness, Condition GLS) fails; None where it holds at every depth."""
    return next((h for h, gap in enumerate(gaps) if gap > phi(h) * (1.0 + ROUNDING)), None)


def growth_factor(counts: Sequence[int], start: float = FIT_FROM) -> float:
    """The exponential part of the growth of ``N_h`` per depth: ``exp(b)`` of the least-squares fit
    ``ln N_h = a + b h + c ln h`` over the depths from ``start`` of the deepest (a power of h fitted
    out: 1 for a count growing polynomially, ``lambda`` for one growing like ``lambda^h``)."""
    depths = np.arange(len(counts), dtype=float)
    keep = (depths >= max(1.0, math.floor(start * (len(counts) - 1)))) & (np.asarray(counts) > 0)
    if keep.sum() < 4:
        raise ValueError(f"a growth per depth needs at least 4 depths with cells, got {int(keep.sum())}")
    h = depths[keep]
    design = np.column_stack([np.ones_like(h), h, np.log(h)])
    coef, *_ = np.linalg.lstsq(design, np.log(np.asarray(counts, dtype=float)[keep]), rcond=None)
    return float(math.exp(coef[1]))


@dataclass(frozen=True)
class Threshold:
    """The near-optimality threshold ``eps_h`` a statement of the paper counts cells with, and the depths."""

    text: str
    epsilon: Callable[[int], float]
    max_depth: int


#: per objective, the threshold of the paper's statement about its near-optimal cells: Fig. 1a's
#: (2 nu_1 rho^h)-near-optimal regions of the difficult function, and d(2, C, 1/h) of the counterexample
#: (alpha xi(h) = 2/h, xi(0) taken as xi(1)); depths as deep as the counts stay cheap (a few 10^5 cells)
PAPER_THRESHOLDS = {
    "difficult": Threshold(
        "2 nu_1 rho^h (nu_1 = 1, rho = 2^(-1/2))", lambda h: 2.0 * DIFFICULT_NU * DIFFICULT_RHO**h, 24
    ),
    "counterexample": Threshold("2 / h, as in d(2, C, 1/h)", lambda h: 2.0 / max(h, 1), 60),
}


@dataclass(frozen=True)
class NearOptimalTable:
    """The near-optimal cells per depth of one objective at its paper threshold, and their growth."""

    objective: str
    threshold: str
    counts: tuple[int, ...]
    growth: float

    @property
    def depths(self) -> tuple[int, ...]:
        return tuple(range(len(self.counts)))


def near_optimal_table(f: Objective) -> NearOptimalTable:
    """:class:`NearOptimalTable` of ``f`` at :data:`PAPER_THRESHOLDS` (a ValueError for another objective)."""
    if f.name not in PAPER_THRESHOLDS:
        known = sorted(PAPER_THRESHOLDS)
        raise ValueError(f"no near-optimality threshold of the paper for {f.name!r} (known: {known})")
    threshold = PAPER_THRESHOLDS[f.name]
    counts = Cells.of(f).near_optimal_counts(threshold.epsilon, threshold.max_depth)
    return NearOptimalTable(f.name, threshold.text, tuple(counts), growth_factor(counts))
