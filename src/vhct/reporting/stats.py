"""The audit's statistics: one-sided tests on means over seeds, margin inside, and the intervals
that invert them.

A claim says where a ratio of means lies, ``mean_a < c * mean_b`` (or ``>``), ``c`` a margin such
as 0.95 or 1.25; that is linear in the means, so Welch's statistic of ``a`` against ``c * b`` tests
it, its p from the studentized bootstrap (:class:`Bootstrap`): Welch's t-test exceeds its level on
bimodal samples (T-HOO on 2-D Rastrigin: 0.066 at 20 seeds), the bootstrap-t keeps it
(``benchmarks/audit_calibration.py``). :func:`bootstrap_tests` adds resamples (``RESAMPLES``) while
a p lies within ``MC_Z`` Monte Carlo standard errors of a decision level (alpha / j, Holm's levels),
so a verdict differs from the infinite-resample one only if |p - 0.05| < 0.0021 (at alpha = 0.05).

An interval is the set of margins neither one-sided test rejects (1 - 2 alpha), found by bisection
on the same resamples. When more than alpha of the resamples have no spread in either sample (t*
undefined: DoubleSine's 14 x 19 and 15 against 12 x 20 gave [1.166, inf)), it is Fieller's from
Student's t at Hsu's degrees of freedom instead (:meth:`Bootstrap.t_interval`; the point ``[r, r]``
with no spread at all); the p-values stay the bootstrap's. Contrasts of two ratios use the log
ratios' delta-method variance and Student's t (:func:`contrast_test`); trends are per-seed slopes
(:func:`log_slopes`); :func:`holm` controls family-wise error.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: resample counts of the studentized bootstrap, tried in turn while a p-value is near a level
RESAMPLES = (999, 9999, 99999)
#: the default (first) resample count and the seed of the generator
BOOTSTRAP_RESAMPLES = RESAMPLES[0]
BOOTSTRAP_SEED = 20231124
#: Monte Carlo standard errors a p-value must be away from every decision level
MC_Z = 3.0
#: decision levels refined around: alpha / j for j = 1..HOLM_LEVELS (Holm's step-down levels)
HOLM_LEVELS = 64
#: bisection steps of an interval's end (the bracket, 20 standard errors, shrinks 2^-24-fold)
BISECTIONS = 24
#: power at which :func:`seeds_for_power` sizes a comparison
POWER = 0.8
#: the one-sided alternatives (scipy's names)
ALTERNATIVES = ("less", "greater")

Samples = Mapping[int, float]


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


def values(sample: Samples | Sequence[float] | np.ndarray) -> np.ndarray:
    """The sample's numbers as a float array (a mapping seed -> value gives its values)."""
    if isinstance(sample, Mapping):
        return np.array(list(sample.values()), dtype=float)
    return np.asarray(sample, dtype=float)


def _degenerate(difference: float, alternative: str) -> float:
    """p of a test whose samples have no spread: 0 if the difference lies in the alternative, else 1."""
    holds = difference < 0.0 if alternative == "less" else difference > 0.0
    return 0.0 if holds else 1.0


#: resample count matrices kept per process (:func:`resample_counts`; 99 999 x 200 is 160 MB a sample:
#: a pilot of 20 and a confirmatory sample at the cap, at three resample counts each, fit)
COUNTS_KEPT = 8


def _counts(index: np.ndarray, n: int) -> np.ndarray:
    """Per resample (row of ``index``), how often each of the ``n`` values is drawn (float, for BLAS)."""
    rows = index.shape[0]
    flat = (index + (np.arange(rows) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)


@dataclass(frozen=True)
class Counts:
    """A sample's resamples as counts (resamples x values), and which resamples draw one value only."""

    counts: np.ndarray
    single: np.ndarray


def _drawn(index: np.ndarray, n: int) -> Counts:
    counts = _counts(index, n)
    return Counts(counts, counts.max(axis=1) == n)


@functools.lru_cache(maxsize=COUNTS_KEPT)
def resample_counts(nx: int, ny: int, resamples: int) -> tuple[Counts, Counts | None]:
    """The seeded generator's resamples of ``nx`` values (then of ``ny``, None when ``ny`` < 2: a
    constant) as counts per resample: every bootstrap of those sizes draws the same indices (the
    generator's seed is fixed), so they are drawn once per process and shared by every comparison."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    cx = _drawn(rng.integers(0, nx, (resamples, nx)), nx)
    cy = _drawn(rng.integers(0, ny, (resamples, ny)), ny) if ny >= 2 else None
    return cx, cy


def _resampled(x: np.ndarray, drawn: Counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means, squared standard errors (centred first: stable) and flatness (all tied) of the resamples
    ``drawn`` (counts: resamples x values), one per row: one matrix product over all resamples."""
    n = x.size
    d = x - x.mean()
    sums = drawn.counts @ np.column_stack([d, d * d])
    s1 = sums[:, 0]
    var = (sums[:, 1] - s1 * s1 / n) / (n - 1)
    _, group = np.unique(x, return_inverse=True)
    if group.max() == n - 1:  # no ties: flat only where one value is drawn every time
        flat = drawn.single
    else:  # every draw one value of the tied ones
        flat = (drawn.counts @ np.eye(group.max() + 1)[group]).max(axis=1) == n
    return x.mean() + s1 / n, np.maximum(var, 0.0) / n, flat


@dataclass(frozen=True)
class Bootstrap:
    """Studentized-bootstrap resamples of ``mean_x - c * mean_y`` for any margin ``c`` (``y`` may be
    a constant: a one-sample test), kept so every margin's test and the interval share them (seeded:
    the same data give the same p). ``flat``: resamples without spread in either sample; ``df``:
    Hsu's degrees of freedom (the smaller sample's size - 1)."""

    mx: float
    my: float
    vx: float
    vy: float
    bmx: np.ndarray
    bmy: np.ndarray
    bvx: np.ndarray
    bvy: np.ndarray
    resamples: int
    flat: int
    df: int

    @classmethod
    def of(cls, x, y, resamples: int = BOOTSTRAP_RESAMPLES) -> Bootstrap:
        x = values(x)
        constant_y = np.ndim(y) == 0
        y = np.full(2, float(y)) if constant_y else values(y)
        cx, cy = resample_counts(x.size, 0 if constant_y else y.size, resamples)
        bmx, bvx, flat_x = _resampled(x, cx)
        if np.ptp(y) > 0.0:
            bmy, bvy, flat_y = _resampled(y, cy)
        else:
            bmy, bvy, flat_y = np.full(resamples, y[0]), np.zeros(resamples), np.ones(resamples, bool)
        df = x.size - 1 if constant_y else min(x.size, y.size) - 1
        return cls(
            float(x.mean()),
            float(y.mean()),
            float(x.var(ddof=1) / x.size),
            float(y.var(ddof=1) / y.size),
            bmx,
            bmy,
            bvx,
            bvy,
            resamples,
            int(np.count_nonzero(flat_x & flat_y)),
            df,
        )

    @property
    def floor(self) -> float:
        """The smallest p-value these resamples can give."""
        return 1.0 / (self.resamples + 1)

    def p(self, factor: float, alternative: str) -> float:
        """One-sided p of ``mean_x < factor * mean_y`` (``less``) or ``>`` (``greater``)."""
        _check_alternative(alternative)
        diff = self.mx - factor * self.my
        se = math.sqrt(self.vx + factor**2 * self.vy)
        if se == 0.0:
            return _degenerate(diff, alternative)
        bse = np.sqrt(self.bvx + factor**2 * self.bvy)
        centred = self.bmx - factor * self.bmy - diff
        t_star = np.divide(centred, bse, out=np.zeros_like(centred), where=bse > 0.0)
        t = diff / se
        extreme = (t_star <= t) if alternative == "less" else (t_star >= t)
        return float((1 + extreme.sum()) / (self.resamples + 1))

    def degenerate(self, alpha: float) -> bool:
        """Whether the flat resamples (t* undefined) alone exceed a one-sided tail at ``alpha``."""
        return (1 + self.flat) / (self.resamples + 1) > alpha

    def interval(self, alpha: float, ratio: bool = True) -> tuple[float, float]:
        """The margins ``c`` neither one-sided test at ``alpha`` rejects (1 - 2 alpha), by bisection:
        of ``mean_x / mean_y`` on a log scale (``ratio``; nan for non-positive means), else of ``mean_x``
        (``y`` = 1); an end no margin reaches is 0 (or -inf) or inf; degenerate: :meth:`t_interval`."""
        if ratio and (self.mx <= 0.0 or self.my <= 0.0):
            return math.nan, math.nan
        if self.degenerate(alpha):
            return self.t_interval(alpha, ratio)
        if ratio:
            centre = math.log(self.mx / self.my)
            width = 20.0 * math.sqrt(self.vx / self.mx**2 + self.vy / self.my**2) + 1e-6
            to_c = math.exp
        else:
            centre, width = self.mx, 20.0 * max(math.sqrt(self.vx), 1e-12 * max(abs(self.mx), 1.0))
            to_c = float
        lower = self._edge(centre, centre - width, "greater", alpha, to_c)
        upper = self._edge(centre, centre + width, "less", alpha, to_c)
        return lower, upper

    def t_interval(self, alpha: float, ratio: bool = True) -> tuple[float, float]:
        """The margins with ``|mean_x - c mean_y| <= q sqrt(vx + c^2 vy)``, q Student's at ``df``:
        Fieller's interval of the ratio (inf above when ``mean_y`` is not significantly positive, 0
        below when ``mean_x`` is not), else the t interval of ``mean_x``; no spread: the point."""
        q = float(stats.t.ppf(1.0 - alpha, self.df))
        if not ratio:
            half = q * math.sqrt(self.vx)
            return self.mx - half, self.mx + half
        r, mx, my = self.mx / self.my, self.mx, self.my
        g = (q * q) * self.vy / (my * my)
        if g < 1.0:
            half = q / my * math.sqrt(self.vx * (1.0 - g) + r * r * self.vy)
            return max(0.0, (r - half) / (1.0 - g)), (r + half) / (1.0 - g)
        # mean_y not significant: the set is [root, inf) with the positive root (stable form) of
        # (my^2 - q^2 vy) c^2 - 2 mx my c + (mx^2 - q^2 vx), or all of (0, inf) if mean_x is not either
        numerator = mx * mx - (q * q) * self.vx
        if numerator <= 0.0:
            return 0.0, math.inf
        a, b = my * my * (1.0 - g), mx * my
        return numerator / (b + math.sqrt(b * b - a * numerator)), math.inf

    def _edge(self, inside: float, outside: float, alternative: str, alpha: float, to_c) -> float:
        """The boundary between ``inside`` (not rejected) and ``outside`` (rejected), by bisection."""
        if self.p(to_c(outside), alternative) > alpha:
            return (0.0 if to_c is math.exp else -math.inf) if alternative == "greater" else math.inf
        if self.p(to_c(inside), alternative) <= alpha:
            return to_c(inside)
        for _ in range(BISECTIONS):
            mid = 0.5 * (inside + outside)
            if self.p(to_c(mid), alternative) <= alpha:
                outside = mid
            else:
                inside = mid
        return to_c(0.5 * (inside + outside))


def near_level(p: float, resamples: int, alpha: float, family: int = HOLM_LEVELS) -> bool:
    """Whether ``p`` lies within ``MC_Z`` Monte Carlo standard errors of a decision level (Holm's
    step-down levels of ``family`` tests: alpha / j, j = 1..family)."""
    levels = alpha / np.arange(1, max(1, min(family, HOLM_LEVELS)) + 1)
    se = np.sqrt(levels * (1.0 - levels) / resamples)
    return bool(np.any(np.abs(p - levels) < MC_Z * se))


def bootstrap_tests(
    x,
    y,
    queries: Sequence[tuple[float, str]],
    alpha: float,
    resamples: Sequence[int] = RESAMPLES,
    family: int = HOLM_LEVELS,
) -> tuple[list[float], Bootstrap]:
    """p of ``mean_x <> factor * mean_y`` per ``(factor, alternative)`` and their bootstrap: the next
    resample count while any p is :func:`near_level`."""
    x_ = values(x)
    y_ = y if np.ndim(y) == 0 else values(y)
    if x_.size < 2 or (np.ndim(y_) and np.size(y_) < 2):
        raise ValueError(f"a bootstrap test needs 2 values per sample, got {x_.size} and {np.size(y_)}")
    for count in resamples:
        boot = Bootstrap.of(x_, y_, count)
        ps = [boot.p(f, alt) for f, alt in queries]
        if not any(near_level(p, count, alpha, family) for p in ps):
            break
    return ps, boot


def ratio_test(a, b, factor: float, alternative: str, alpha: float = 0.05) -> float:
    """One-sided p of ``mean_a < factor * mean_b`` (``less``) or ``>`` (``greater``) by
    :func:`bootstrap_tests` (2 values per sample at least; no spread: 0 or 1 by the difference's sign)."""
    _check_alternative(alternative)
    if factor <= 0.0:
        raise ValueError(f"factor must be positive, got {factor!r}")
    return bootstrap_tests(a, values(b), [(factor, alternative)], alpha)[0][0]


def log_ratio(a, b) -> tuple[float, float, int]:
    """``log(mean_a / mean_b)``, its delta-method variance, and the smaller sample size."""
    x, y = values(a), values(b)
    ma, mb = float(x.mean()), float(y.mean())
    if ma <= 0.0 or mb <= 0.0:
        raise ValueError(f"a log ratio needs positive means, got {ma!r} and {mb!r}")
    var = x.var(ddof=1) / (x.size * ma**2) + y.var(ddof=1) / (y.size * mb**2)
    return math.log(ma / mb), float(var), int(min(x.size, y.size))


def difference(a, b) -> tuple[float, float, int]:
    """``mean_a - mean_b``, its variance (Welch's, unpooled), and the smaller sample size."""
    x, y = values(a), values(b)
    var = x.var(ddof=1) / x.size + y.var(ddof=1) / y.size
    return float(x.mean() - y.mean()), float(var), int(min(x.size, y.size))


def _contrast(a1, b1, a2, b2, differences: bool = False) -> tuple[float, float, int]:
    """The contrast of the first pair's effect against the second's: the difference of their log
    ratios, or with ``differences`` of their differences of means; its variance; its degrees of freedom."""
    one = difference if differences else log_ratio
    r1, v1, n1 = one(a1, b1)
    r2, v2, n2 = one(a2, b2)
    return r1 - r2, v1 + v2, min(n1, n2) - 1


def contrast_test(a1, b1, a2, b2, alternative: str, factor: float = 1.0, differences: bool = False) -> float:
    """One-sided p of ``mean_a1/mean_b1 < factor * mean_a2/mean_b2`` (or ``>``): log ratios'
    difference over its delta-method standard error, Student's t at ``min(n) - 1`` (conservative).
    With ``differences``: of ``(mean_a1 - mean_b1) - (mean_a2 - mean_b2) < factor`` (or ``>``), the
    same t on its exact standard error (``factor`` a margin in the statistic's units)."""
    _check_alternative(alternative)
    d, v, df = _contrast(a1, b1, a2, b2, differences)
    diff = d - (factor if differences else math.log(factor))
    if v == 0.0:
        return _degenerate(diff, alternative)
    t = diff / math.sqrt(v)
    return float(stats.t.cdf(t, df) if alternative == "less" else stats.t.sf(t, df))


def contrast_interval(a1, b1, a2, b2, alpha: float, differences: bool = False) -> tuple[float, float]:
    """The factors (margins, with ``differences``) neither one-sided :func:`contrast_test` at ``alpha``
    rejects: the 1 - 2 alpha interval of the ratio of ratios ``(mean_a1/mean_b1) / (mean_a2/mean_b2)``,
    or of the difference of differences."""
    d, v, df = _contrast(a1, b1, a2, b2, differences)
    half = float(stats.t.ppf(1.0 - alpha, df)) * math.sqrt(v)
    return (d - half, d + half) if differences else (math.exp(d - half), math.exp(d + half))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values in the input's order (scipy has Benjamini-Hochberg only)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(p.size)
    adjusted[order] = np.maximum.accumulate(np.minimum(1.0, (p.size - np.arange(p.size)) * p[order]))
    return adjusted.tolist()


def seeds_for_power(delta: float, sd: float, alpha: float, power: float = POWER) -> int | None:
    """Seeds per arm for a one-sided z-test at ``alpha`` to detect ``delta`` with ``power``; ``sd``:
    one seed's contribution to the difference (``sqrt(sd_a**2 + c**2 sd_b**2)``); None for delta 0."""
    if not math.isfinite(delta) or not math.isfinite(sd) or delta == 0.0:
        return None
    if sd == 0.0:
        return 2
    z = stats.norm.ppf(1.0 - alpha) + stats.norm.ppf(power)
    return max(2, math.ceil((z * sd / abs(delta)) ** 2))


def format_p(p: float | None, floor: float | None = None, name: str = "p") -> str:
    """``p = 0.0123``, or ``p < 0.001`` at a resampling floor (``floor``: 1 / (resamples + 1))."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return f"{name} = n/a"
    if floor is not None and p <= floor * (1.0 + 1e-9):
        return f"{name} < {floor:.1g}"
    return f"{name} = {p:.3g}"


def log_slopes(matrix: np.ndarray, rounds: Sequence[int]) -> np.ndarray:
    """Per row (seed): the slope of ``log R_t`` on ``log t`` at ``rounds`` (below 1: sublinear); nan
    for a row with a non-positive value."""
    data = np.asarray(matrix, dtype=float)
    t = np.log(np.asarray(rounds, dtype=float))
    if data.ndim != 2 or data.shape[1] != t.size or t.size < 2:
        raise ValueError(f"need a (seeds, {t.size}) matrix with at least 2 rounds, got {data.shape}")
    out = np.full(data.shape[0], np.nan)
    for i, row in enumerate(data):
        if np.all(row > 0.0):
            out[i] = stats.linregress(t, np.log(row)).slope
    return out


def ratio(mean_a: float, mean_b: float) -> float:
    """``mean_a / mean_b`` (inf when b = 0 < a, nan when both are 0)."""
    if mean_b == 0.0:
        return math.nan if mean_a == 0.0 else math.copysign(math.inf, mean_a)
    return mean_a / mean_b


def describe(sample: Samples) -> dict[str, float | int]:
    """n, mean and sample standard deviation (0 for one value)."""
    x = values(sample)
    if x.size == 0:
        return {"n": 0, "mean": math.nan, "std": math.nan}
    return {"n": int(x.size), "mean": float(x.mean()), "std": float(x.std(ddof=1)) if x.size > 1 else 0.0}
