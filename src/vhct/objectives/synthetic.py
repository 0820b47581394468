"""The paper's synthetic objectives, rescaled into [-1, 1], with their exact maxima.

The paper's appendix says "we have re-scaled all the objectives to be bounded by [-1, 1]". Objectives that
already lie in [-1, 1] on their domain are left as they are; the others are divided by the magnitude of
their exact extreme on the domain, so their range is exactly [-1, 0].

Each class has a scalar ``__call__`` written with :mod:`math` (it runs once per optimizer round, where
numpy's per-call overhead dominates) and a vectorized ``values`` for (m, d) arrays (plots, grid tests).
Where the maximum or the rescaling constant has no closed form it is found once by a documented numerical
search (dense grid, then bounded ``scipy.optimize`` refinement) and cached; no rounded constant is used.
"""

from __future__ import annotations

import functools
import math
from abc import abstractmethod
from collections.abc import Callable, Sequence

import numpy as np

from vhct.objectives.base import DOMAIN_TOLERANCE, Objective
from vhct.optimizers.base import as_domain

#: points on the domain closer than this (relative to its width) are clipped onto it instead of rejected,
#: so that rounding in an optimizer's arithmetic does not abort a run

#: numerical extreme search: grid points per dimension, for 1-D and 2-D searches
SEARCH_GRID_POINTS_1D = 20_001
SEARCH_GRID_POINTS_2D = 1_001
#: numerical extreme search: how many of the best grid points are refined
SEARCH_STARTS = 8
#: numerical extreme search: L-BFGS-B projected-gradient tolerance and iteration cap
SEARCH_GTOL = 1e-13
SEARCH_MAXITER = 500

GARLAND_FREQUENCY = 60.0
GARLAND_ENVELOPE = 4.0

DOUBLESINE_RHO1 = 0.3
DOUBLESINE_RHO2 = 0.8
DOUBLESINE_TMAX = 0.5

ACKLEY_A = 20.0
ACKLEY_B = 0.2
ACKLEY_C = 2.0 * math.pi
ACKLEY_HALF_WIDTH = 5.0

COUNTEREXAMPLE_UPPER = math.exp(-1.0)

HIMMELBLAU_HALF_WIDTH = 5.0
HIMMELBLAU_SCALE = 890.0
HIMMELBLAU_MAXIMIZER = (3.0, 2.0)

RASTRIGIN_A = 10.0
RASTRIGIN_HALF_WIDTH = 1.0
RASTRIGIN_DEFAULT_DIM = 10

DIFFICULT_CENTER = 0.5
DIFFICULT_THRESHOLD = 0.5


def minimize_on_box(
    fun: Callable[[np.ndarray], np.ndarray], box: np.ndarray, points_per_dim: int
) -> tuple[np.ndarray, float]:
    """Global minimum of a vectorized ``fun`` ((m, d) -> (m,)) on ``box``.

    A dense grid locates the basins; bounded L-BFGS-B then refines the ``SEARCH_STARTS`` best grid points
    inside their grid cell. Valid when ``fun`` is smooth near its minimizer and varies slowly on the grid
    scale, which each caller states for its function.
    """
    from scipy import optimize  # local: keeps `import vhct.objectives` light

    box = np.asarray(box, dtype=float)
    axes = [np.linspace(lo, hi, points_per_dim) for lo, hi in box]
    grid = np.stack([m.ravel() for m in np.meshgrid(*axes, indexing="ij")], axis=1)
    grid_values = fun(grid)
    step = (box[:, 1] - box[:, 0]) / (points_per_dim - 1)
    best_x, best_value = grid[int(np.argmin(grid_values))], float(np.min(grid_values))
    for i in np.argsort(grid_values)[:SEARCH_STARTS]:
        cell = np.stack([np.maximum(grid[i] - step, box[:, 0]), np.minimum(grid[i] + step, box[:, 1])], 1)
        result = optimize.minimize(
            lambda p: float(fun(p[None, :])[0]),
            grid[i],
            method="L-BFGS-B",
            bounds=cell,
            options={"ftol": 0.0, "gtol": SEARCH_GTOL, "maxiter": SEARCH_MAXITER},
        )
        if result.fun < best_value:
            best_x, best_value = np.asarray(result.x, dtype=float), float(result.fun)
    return best_x, best_value


class SyntheticObjective(Objective):
    """Deterministic objective with a known maximum; shared input checks and the ``values`` entry point."""

    exact_optimum = True

    def __init__(self, domain: Sequence[Sequence[float]] | np.ndarray):
        super().__init__(as_domain(domain))
        self._lo: list[float] = self.domain[:, 0].tolist()
        self._hi: list[float] = self.domain[:, 1].tolist()
        self._tol: list[float] = (DOMAIN_TOLERANCE * (self.domain[:, 1] - self.domain[:, 0])).tolist()

    def _point(self, x: np.ndarray | Sequence[float]) -> list[float]:
        """``x`` as a list of floats inside the domain; ValueError naming ``x`` otherwise."""
        if isinstance(x, np.ndarray):
            if x.ndim != 1:
                raise ValueError(f"x must have shape ({self.dim},), got shape {x.shape}")
            p = x.tolist()
        else:
            try:
                p = [float(v) for v in x]
            except (TypeError, ValueError) as exc:
                raise ValueError(f"x must be a sequence of {self.dim} numbers, got {x!r}") from exc
        if len(p) != self.dim:
            raise ValueError(f"x must have {self.dim} coordinates for {self.name}, got {len(p)}")
        for i, (v, lo, hi) in enumerate(zip(p, self._lo, self._hi, strict=True)):
            if not lo <= v <= hi:
                if not lo - self._tol[i] <= v <= hi + self._tol[i]:  # also rejects NaN
                    raise ValueError(f"x[{i}] = {v!r} lies outside the domain [{lo}, {hi}] of {self.name}")
                p[i] = min(max(v, lo), hi)
        return p

    def _points(self, X: np.ndarray) -> np.ndarray:
        """``X`` as a float (m, d) array inside the domain; ValueError naming ``X`` otherwise."""
        pts = np.asarray(X, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != self.dim:
            raise ValueError(f"X must have shape (m, {self.dim}) for {self.name}, got shape {pts.shape}")
        lo, hi = self.domain[:, 0], self.domain[:, 1]
        slack = DOMAIN_TOLERANCE * (hi - lo)
        outside = ~((pts >= lo - slack) & (pts <= hi + slack))  # NaN counts as outside
        if outside.any():
            row, col = np.argwhere(outside)[0]
            raise ValueError(f"X[{row}, {col}] = {pts[row, col]!r} lies outside the domain of {self.name}")
        return np.clip(pts, lo, hi)

    def values(self, X: np.ndarray) -> np.ndarray:
        """Objective values at the rows of ``X`` (shape (m, d)), as a float array of shape (m,)."""
        return self._values(self._points(X))

    @abstractmethod
    def _values(self, X: np.ndarray) -> np.ndarray:
        """Vectorized values at validated rows."""


class Garland(SyntheticObjective):
    """Garland, f(x) = x (1 - x) (4 - sqrt(|sin(60 x)|)) on [0, 1] (Azar et al. 2014; Shang et al. 2019).

    Already in [0, 1] on the domain, so not rescaled. f <= 4 x (1 - x) with equality exactly where
    sin(60 x) = 0, and each such point is a cusp (a local maximum), so the global maximum is at the zero
    k pi / 60 nearest 1/2: x* = pi / 6, f* = 4 x* (1 - x*) ~ 0.9977724 (PyXAB uses 1). Because of the
    square-root cusp, the rounding error of pi / 6 (~6e-17) makes the computed f(x*) ~2e-8 below f*.
    """

    name = "garland"

    def __init__(self) -> None:
        super().__init__([[0.0, 1.0]])
        half_period = math.pi / GARLAND_FREQUENCY
        nearest = [math.floor(0.5 / half_period), math.ceil(0.5 / half_period)]
        x_star = max((k * half_period for k in nearest), key=lambda t: t * (1.0 - t))
        self._x_star = x_star
        self._f_star = GARLAND_ENVELOPE * x_star * (1.0 - x_star)

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        (t,) = self._point(x)
        return t * (1.0 - t) * (GARLAND_ENVELOPE - math.sqrt(abs(math.sin(GARLAND_FREQUENCY * t))))

    def _values(self, X: np.ndarray) -> np.ndarray:
        t = X[:, 0]
        return t * (1.0 - t) * (GARLAND_ENVELOPE - np.sqrt(np.abs(np.sin(GARLAND_FREQUENCY * t))))

    @property
    def f_star(self) -> float:
        return self._f_star

    @property
    def maximizer(self) -> np.ndarray:
        return np.array([self._x_star])


class DoubleSine(SyntheticObjective):
    """DoubleSine of Grill et al. 2015 (POO), on [0, 1].

    u = 2 |x - tmax|, tmax = 1/2; f = 0 at u = 0, else
    f = mysin2(log2(u) / 2) (u^e2 - u^e1) - u^e2, with e_i = -log2(rho_i), mysin2(z) = (sin(2 pi z) + 1) / 2.
    f is a convex combination of -u^e1 and -u^e2, so it lies in [-1, 0] (f = -1 at x = 0 and 1) for any
    rho_i in (0, 1): not rescaled. Maximum 0 at x = tmax only. tmax is fixed at 1/2 because any other
    value makes u exceed 1 and f leave [-1, 1] on [0, 1].
    """

    name = "doublesine"

    def __init__(self, rho1: float = DOUBLESINE_RHO1, rho2: float = DOUBLESINE_RHO2) -> None:
        super().__init__([[0.0, 1.0]])
        for key, rho in (("rho1", rho1), ("rho2", rho2)):
            if isinstance(rho, bool) or not isinstance(rho, int | float | np.floating) or not 0.0 < rho < 1.0:
                raise ValueError(f"{key} must lie in (0, 1), got {rho!r}")
        self.rho1, self.rho2 = float(rho1), float(rho2)
        self._e1, self._e2 = -math.log2(self.rho1), -math.log2(self.rho2)

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        (t,) = self._point(x)
        u = 2.0 * abs(t - DOUBLESINE_TMAX)
        if u == 0.0:
            return 0.0
        a, b = u**self._e2, u**self._e1
        return (math.sin(math.pi * math.log2(u)) + 1.0) / 2.0 * (a - b) - a

    def _values(self, X: np.ndarray) -> np.ndarray:
        u = 2.0 * np.abs(X[:, 0] - DOUBLESINE_TMAX)
        safe = np.where(u > 0.0, u, 1.0)
        a, b = safe**self._e2, safe**self._e1
        return np.where(u > 0.0, (np.sin(np.pi * np.log2(safe)) + 1.0) / 2.0 * (a - b) - a, 0.0)

    @property
    def f_star(self) -> float:
        return 0.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.array([DOUBLESINE_TMAX])


def _ackley_raw(X: np.ndarray) -> np.ndarray:
    """Negated Ackley on rows of X (shape (m, 2)); exactly 0 at the origin."""
    radius = np.sqrt(0.5 * (X[:, 0] ** 2 + X[:, 1] ** 2))
    ripple = 0.5 * (np.cos(ACKLEY_C * X[:, 0]) + np.cos(ACKLEY_C * X[:, 1]))
    return (ACKLEY_A * np.exp(-ACKLEY_B * radius) - ACKLEY_A) + (np.exp(ripple) - math.e)


@functools.cache
def ackley_minimum() -> tuple[np.ndarray, float]:
    """Minimizer and minimum of the negated Ackley function on [-5, 5]^2, by numerical search.

    Grid step 0.01 against a ripple period of 1, and the function is smooth away from the origin, where
    its maximum lies; result ~ -14.3026675 at (+-4.5975, +-4.5975) (four symmetric points).
    """
    box = np.array([[-ACKLEY_HALF_WIDTH, ACKLEY_HALF_WIDTH]] * 2)
    return minimize_on_box(_ackley_raw, box, SEARCH_GRID_POINTS_2D)


class Ackley(SyntheticObjective):
    """Ackley, negated for maximization, on [-5, 5]^2, rescaled into [-1, 0].

    g(x, y) = 20 exp(-0.2 sqrt((x^2 + y^2) / 2)) + exp((cos 2 pi x + cos 2 pi y) / 2) - e - 20
    (the formula the paper's appendix prints under the name DoubleSine). The domain [-5, 5]^2 is the one
    listed on the test-function page the paper cites (Wikipedia, "Test functions for optimization").
    f = g / |min g|, with min g ~ -14.3026675 found by :func:`ackley_minimum`, so the range is exactly
    [-1, 0]. Maximum 0 at the origin only.
    """

    name = "ackley"

    def __init__(self) -> None:
        super().__init__([[-ACKLEY_HALF_WIDTH, ACKLEY_HALF_WIDTH]] * 2)
        self.scale = -ackley_minimum()[1]

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        x1, x2 = self._point(x)
        radius = math.sqrt(0.5 * (x1 * x1 + x2 * x2))
        ripple = 0.5 * (math.cos(ACKLEY_C * x1) + math.cos(ACKLEY_C * x2))
        raw = (ACKLEY_A * math.exp(-ACKLEY_B * radius) - ACKLEY_A) + (math.exp(ripple) - math.e)
        return raw / self.scale

    def _values(self, X: np.ndarray) -> np.ndarray:
        return _ackley_raw(X) / self.scale

    @property
    def f_star(self) -> float:
        return 0.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.zeros(2)


class CounterExample(SyntheticObjective):
    """The paper's counter-example g(x) = 1 + 1 / ln(x) on [0, 1/e] (Section 3, Fig. 1b).

    g decreases from 1 (as x -> 0) to 0 (at x = 1/e), so it lies in [0, 1]: not rescaled. We set
    g(0) = 1, its continuous extension; the paper's text sets g(0) = 0, which would leave the supremum 1
    unattained (no maximizer, and regret against 1 never reaches 0). f* = 1 at x = 0.
    """

    name = "counterexample"

    def __init__(self) -> None:
        super().__init__([[0.0, COUNTEREXAMPLE_UPPER]])

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        (t,) = self._point(x)
        return 1.0 if t == 0.0 else 1.0 + 1.0 / math.log(t)

    def _values(self, X: np.ndarray) -> np.ndarray:
        t = X[:, 0]
        positive = t > 0.0
        return np.where(positive, 1.0 + 1.0 / np.log(np.where(positive, t, COUNTEREXAMPLE_UPPER)), 1.0)

    @property
    def f_star(self) -> float:
        return 1.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.zeros(1)


class Himmelblau(SyntheticObjective):
    """Himmelblau, negated, on [-5, 5]^2, divided by 890 (the paper's normalisation).

    f(x, y) = -((x^2 + y - 11)^2 + (x + y^2 - 7)^2) / 890. On the domain the negated function reaches its
    minimum -890 at the corner (5, 5), so the range is exactly [-1, 0]. Four global maxima of 0; the one
    given is (3, 2), exact. The domain is the paper's, chosen to contain all four.
    """

    name = "himmelblau"

    def __init__(self) -> None:
        super().__init__([[-HIMMELBLAU_HALF_WIDTH, HIMMELBLAU_HALF_WIDTH]] * 2)

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        x1, x2 = self._point(x)
        a, b = x1 * x1 + x2 - 11.0, x1 + x2 * x2 - 7.0
        return -(a * a + b * b) / HIMMELBLAU_SCALE

    def _values(self, X: np.ndarray) -> np.ndarray:
        a = X[:, 0] ** 2 + X[:, 1] - 11.0
        b = X[:, 0] + X[:, 1] ** 2 - 7.0
        return -(a * a + b * b) / HIMMELBLAU_SCALE

    @property
    def f_star(self) -> float:
        return 0.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.array(HIMMELBLAU_MAXIMIZER)


def _rastrigin_term(X: np.ndarray) -> np.ndarray:
    """Per-coordinate negated Rastrigin term A cos(2 pi x) - A - x^2 (0 at x = 0)."""
    return (RASTRIGIN_A * np.cos(2.0 * math.pi * X) - RASTRIGIN_A) - X * X


@functools.cache
def rastrigin_coordinate_minimum() -> tuple[float, float]:
    """Minimizer and minimum of A cos(2 pi x) - A - x^2 on [-1, 1], by numerical search.

    Smooth, period-1 ripple against a grid step of 1e-4; result ~ -20.2512729910 at |x| ~ 0.5025460366
    (slightly beyond 1/2, where the -x^2 term still decreases).
    """
    x, value = minimize_on_box(
        lambda X: _rastrigin_term(X[:, 0]),
        np.array([[-RASTRIGIN_HALF_WIDTH, RASTRIGIN_HALF_WIDTH]]),
        SEARCH_GRID_POINTS_1D,
    )
    return float(x[0]), value


class Rastrigin(SyntheticObjective):
    """Rastrigin, negated and normalized, on [-1, 1]^d for any d >= 1 (the paper uses d = 1, 2, 10).

    f(x) = (sum_i [A cos(2 pi x_i) - x_i^2] - A d) / (d M), A = 10, where M ~ 20.2512729910 is the exact
    magnitude of the per-coordinate minimum on [-1, 1] (:func:`rastrigin_coordinate_minimum`), so the
    range is exactly [-1, 0]. Maximum 0 at the origin only. ``dim`` defaults to 10, the appendix's
    Rastrigin experiment.
    """

    name = "rastrigin"

    def __init__(self, dim: int = RASTRIGIN_DEFAULT_DIM) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
            raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
        super().__init__([[-RASTRIGIN_HALF_WIDTH, RASTRIGIN_HALF_WIDTH]] * int(dim))
        self.scale = -self.dim * rastrigin_coordinate_minimum()[1]

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        total = 0.0
        for v in self._point(x):
            total += (RASTRIGIN_A * math.cos(2.0 * math.pi * v) - RASTRIGIN_A) - v * v
        return total / self.scale

    def _values(self, X: np.ndarray) -> np.ndarray:
        return _rastrigin_term(X).sum(axis=1) / self.scale

    @property
    def f_star(self) -> float:
        return 0.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.zeros(self.dim)


class DifficultFunction(SyntheticObjective):
    """The "difficult function" of Grill et al. 2015 (the paper's Fig. 1a), on [0, 1].

    y = |x - 1/2|; f = 0 at y = 0, else f = s(ln y) (sqrt(y) - y^2) - sqrt(y), with s(z) = 0 if
    z - floor(z) < 1/2 else 1: f alternates between -sqrt(y) and -y^2 on bands of ln y. This is the
    authors' (PyXAB) form, which drew the paper's figure; Grill et al.'s own code uses log2 and the
    complementary s. Range within [-sqrt(1/2), 0], so not rescaled. Maximum 0 at x = 1/2 only.
    """

    name = "difficult"

    def __init__(self) -> None:
        super().__init__([[0.0, 1.0]])

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        (t,) = self._point(x)
        y = abs(t - DIFFICULT_CENTER)
        if y == 0.0:
            return 0.0
        z = math.log(y)
        return -y * y if z - math.floor(z) >= DIFFICULT_THRESHOLD else -math.sqrt(y)

    def _values(self, X: np.ndarray) -> np.ndarray:
        y = np.abs(X[:, 0] - DIFFICULT_CENTER)
        z = np.log(np.where(y > 0.0, y, 1.0))
        upper = z - np.floor(z) >= DIFFICULT_THRESHOLD
        return np.where(y > 0.0, np.where(upper, -y * y, -np.sqrt(y)), 0.0)

    @property
    def f_star(self) -> float:
        return 0.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.array([DIFFICULT_CENTER])
