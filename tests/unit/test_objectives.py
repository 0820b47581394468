"""Synthetic objectives: maxima against dense grids, ranges, landmarks, vectorization, registry errors."""

from __future__ import annotations

import importlib.util
import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import optimize

from vhct.objectives import OBJECTIVES, Objective, make_objective, objective_names
from vhct.objectives import synthetic as syn

GRID_1D = 1_000_001
GRID_2D = 777  # deliberately not the library's own search grid
TOP_LOCAL_MAXIMA = 6
ONE_D = [syn.Garland, syn.DoubleSine, syn.CounterExample, syn.DifficultFunction]
SYNTHETIC = [
    syn.Garland(),
    syn.DoubleSine(),
    syn.Ackley(),
    syn.CounterExample(),
    syn.Himmelblau(),
    syn.Rastrigin(1),
    syn.Rastrigin(2),
    syn.Rastrigin(10),
    syn.DifficultFunction(),
]


def grid_1d(objective: Objective, n: int = GRID_1D) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = objective.domain[0]
    x = np.linspace(lo, hi, n)
    return x, objective.values(x[:, None])


def refined_local_maxima(objective: Objective) -> list[tuple[float, float]]:
    """The best grid local maxima of a 1-D objective, each refined by golden-section search in its cell."""
    x, v = grid_1d(objective)
    is_peak = np.ones_like(v, dtype=bool)
    is_peak[1:] &= v[1:] >= v[:-1]
    is_peak[:-1] &= v[:-1] >= v[1:]
    peaks = np.flatnonzero(is_peak)
    peaks = peaks[np.argsort(v[peaks])[::-1][:TOP_LOCAL_MAXIMA]]
    found = []
    for i in peaks:
        best = (float(x[i]), float(v[i]))
        if 0 < i < len(x) - 1:  # golden section: robust on cusps, where parabolic steps stall
            res = optimize.minimize_scalar(
                lambda t: -objective(np.array([t])),
                bracket=(x[i - 1], x[i], x[i + 1]),
                method="golden",
                tol=1e-15,
            )
            best = max(best, (float(res.x), -float(res.fun)), key=lambda p: p[1])
        found.append(best)
    return sorted(found, key=lambda p: p[1], reverse=True)


@pytest.mark.parametrize("cls", ONE_D, ids=lambda c: c.name)
def test_1d_maximum_matches_dense_grid(cls: type) -> None:
    objective = cls()
    _, v = grid_1d(objective)
    assert v.max() <= objective.f_star + 1e-12
    assert v.min() >= -1.0 and v.max() <= 1.0
    x_best, v_best = refined_local_maxima(objective)[0]
    assert x_best == pytest.approx(objective.maximizer[0], abs=1e-9)
    assert v_best <= objective.f_star + 1e-12
    # Garland's maximum is a square-root cusp: one ulp from it already costs ~1e-8 in value
    assert v_best >= objective.f_star - 1e-7


@pytest.mark.parametrize(
    "cls", [syn.DoubleSine, syn.CounterExample, syn.DifficultFunction], ids=lambda c: c.name
)
def test_maximizer_attains_f_star_exactly(cls: type) -> None:
    objective = cls()
    assert objective(objective.maximizer) == pytest.approx(objective.f_star, abs=1e-12)


def test_garland_landmarks() -> None:
    garland = syn.Garland()
    # the maximum is the cusp pi/6 on the envelope 4x(1-x), not 1 as PyXAB assumes
    assert garland.maximizer[0] == pytest.approx(math.pi / 6, abs=1e-15)
    assert garland.f_star == pytest.approx(0.99777, abs=1e-5)
    assert garland.f_star < 1.0
    # at the float nearest pi/6 the square-root cusp costs ~2e-8 (documented), never more
    assert 0.0 <= garland.f_star - garland(garland.maximizer) < 5e-8
    maxima = refined_local_maxima(garland)
    cusp_values = {k: 4 * (k * math.pi / 60) * (1 - k * math.pi / 60) for k in (9, 10, 11)}
    assert maxima[0][0] == pytest.approx(10 * math.pi / 60, abs=1e-6)
    assert maxima[1][0] == pytest.approx(9 * math.pi / 60, abs=1e-6)
    gap = maxima[0][1] - maxima[1][1]
    assert gap == pytest.approx(cusp_values[10] - cusp_values[9], abs=1e-6)
    assert 1.0e-3 < gap < 1.2e-3
    right = max(v for x, v in maxima if abs(x - 11 * math.pi / 60) < 1e-6)
    assert garland.f_star - right == pytest.approx(cusp_values[10] - cusp_values[11], abs=1e-6)


def test_doublesine_range_and_ends() -> None:
    ds = syn.DoubleSine()
    _, v = grid_1d(ds)
    assert v.min() >= -1.0 and v.max() <= 0.0
    assert ds(np.array([0.0])) == -1.0 and ds(np.array([1.0])) == -1.0
    assert np.all(v[np.abs(np.linspace(0, 1, GRID_1D) - 0.5) > 1e-9] < 0.0)


def test_counterexample_is_monotone_from_one_to_zero() -> None:
    ce = syn.CounterExample()
    x, v = grid_1d(ce)
    assert ce(np.array([0.0])) == 1.0
    assert ce(np.array([math.exp(-1.0)])) == pytest.approx(0.0, abs=1e-12)
    assert np.all(np.diff(v) < 0.0)
    assert v.min() >= -1e-12 and v.max() == 1.0


def test_difficult_function_bands() -> None:
    df = syn.DifficultFunction()
    x, v = grid_1d(df)
    y = np.abs(x - 0.5)
    assert v.min() >= -math.sqrt(0.5) - 1e-12 and v.max() <= 0.0
    on_sqrt = np.isclose(v, -np.sqrt(y), rtol=0, atol=1e-15)
    on_square = np.isclose(v, -(y**2), rtol=0, atol=1e-15)
    assert np.all(on_sqrt | on_square)
    assert on_sqrt.sum() > 1000 and on_square.sum() > 1000


def refine_2d(objective: Objective, start: np.ndarray, sign: float) -> tuple[np.ndarray, float]:
    """Nelder-Mead on sign * f, clipped to the domain, from ``start``."""
    lo, hi = objective.domain[:, 0], objective.domain[:, 1]
    res = optimize.minimize(
        lambda p: sign * objective(np.clip(p, lo, hi)),
        start,
        method="Nelder-Mead",
        options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 5000},
    )
    x = np.clip(res.x, lo, hi)
    return x, objective(x)


def grid_2d(objective: Objective) -> tuple[np.ndarray, np.ndarray]:
    axes = [np.linspace(lo, hi, GRID_2D) for lo, hi in objective.domain]
    pts = np.stack([m.ravel() for m in np.meshgrid(*axes, indexing="ij")], axis=1)
    return pts, objective.values(pts)


@pytest.mark.parametrize(
    "objective", [syn.Ackley(), syn.Himmelblau(), syn.Rastrigin(2)], ids=lambda o: o.name
)
def test_2d_extremes_match_grid_plus_refinement(objective: Objective) -> None:
    pts, v = grid_2d(objective)
    assert v.max() <= objective.f_star + 1e-12
    assert v.min() >= -1.0 - 1e-12
    best = [refine_2d(objective, pts[i], -1.0) for i in np.argsort(v)[::-1][:4]]
    assert max(b[1] for b in best) == pytest.approx(objective.f_star, abs=1e-9)
    assert objective(objective.maximizer) == pytest.approx(objective.f_star, abs=1e-12)
    # rescaling is by the exact extreme: the refined minimum is -1
    worst = [refine_2d(objective, pts[i], 1.0) for i in np.argsort(v)[:4]]
    assert min(w[1] for w in worst) == pytest.approx(-1.0, abs=1e-9)


def test_ackley_maximizer_is_origin() -> None:
    ackley = syn.Ackley()
    pts, v = grid_2d(ackley)
    assert np.linalg.norm(pts[np.argmax(v)]) < 2 * 10 / (GRID_2D - 1)
    assert ackley(np.zeros(2)) == 0.0


def test_himmelblau_has_four_maxima_and_corner_minimum() -> None:
    him = syn.Himmelblau()
    pts, v = grid_2d(him)
    found = set()
    for i in np.argsort(v)[::-1][:200]:
        x, value = refine_2d(him, pts[i], -1.0)
        assert value == pytest.approx(0.0, abs=1e-12)
        found.add(tuple(np.round(x, 6)))
    assert len(found) == 4
    assert (3.0, 2.0) in found
    assert him(np.array([5.0, 5.0])) == -1.0


def rastrigin_term_slope(t: float) -> float:
    """Derivative of 10 cos(2 pi t) - t^2 - 10; its root near 1/2 is the coordinate minimizer."""
    return -2 * math.pi * 10 * math.sin(2 * math.pi * t) - 2 * t


def test_rastrigin_scale_is_the_exact_coordinate_extreme() -> None:
    root = optimize.brentq(rastrigin_term_slope, 0.45, 0.55, xtol=1e-15)
    extreme = 10 * math.cos(2 * math.pi * root) - root**2 - 10
    r1 = syn.Rastrigin(1)
    assert r1.scale == pytest.approx(-extreme, abs=1e-9)
    assert r1(np.array([root])) == pytest.approx(-1.0, abs=1e-12)
    assert r1(np.array([-root])) == pytest.approx(-1.0, abs=1e-12)
    x, v = grid_1d(r1)
    assert v.max() <= 0.0 and v.min() >= -1.0 - 1e-12
    assert abs(x[np.argmax(v)]) < 1e-5
    assert v.min() == pytest.approx(-1.0, abs=1e-8)


def test_rastrigin_10d() -> None:
    r10 = syn.Rastrigin(10)
    root = optimize.brentq(rastrigin_term_slope, 0.45, 0.55, xtol=1e-15)
    assert r10(np.zeros(10)) == 0.0 and r10.f_star == 0.0
    assert np.array_equal(r10.maximizer, np.zeros(10))
    assert r10(np.full(10, root)) == pytest.approx(-1.0, abs=1e-12)
    pts = np.random.default_rng(1).uniform(-1, 1, size=(100_000, 10))
    v = r10.values(pts)
    assert np.all(v < r10.f_star) and np.all(v >= -1.0)


@pytest.mark.parametrize("objective", SYNTHETIC, ids=lambda o: f"{o.name}{o.dim}")
def test_values_agree_with_call_and_boundary_works(objective: Objective) -> None:
    lo, hi = objective.domain[:, 0], objective.domain[:, 1]
    rng = np.random.default_rng(7)
    pts = lo + rng.random((300, objective.dim)) * (hi - lo)
    corners = np.array(list(itertools.product(*objective.domain)))[:64]
    pts = np.vstack([pts, corners, objective.maximizer[None, :]])
    vec = objective.values(pts)
    scalar = np.array([objective(p) for p in pts])
    assert vec.shape == (len(pts),)
    np.testing.assert_allclose(vec, scalar, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(scalar)) and np.all(np.abs(scalar) <= 1.0)
    assert all(isinstance(objective(p), float) for p in corners)


def test_bad_points_are_rejected() -> None:
    g, h = syn.Garland(), syn.Himmelblau()
    with pytest.raises(ValueError, match="x"):
        g(np.array([0.2, 0.3]))
    with pytest.raises(ValueError, match=r"x\[0\]"):
        g(np.array([1.5]))
    with pytest.raises(ValueError, match=r"x\[1\]"):
        h(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="shape"):
        g(np.array([[0.5]]))
    with pytest.raises(ValueError, match="X"):
        h.values(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="X"):
        h.values(np.full((2, 2), 6.0))
    # rounding noise on the boundary is clipped onto it, not rejected
    assert g(np.array([1.0 + 1e-15])) == g(np.array([1.0]))
    assert g([0.25]) == g(np.array([0.25]))


def test_registry_names_and_classes() -> None:
    expected = {
        "garland", "doublesine", "ackley", "counterexample", "himmelblau",
        "rastrigin", "difficult", "landmine", "mnist",
    }  # fmt: skip
    assert set(objective_names()) == expected == set(OBJECTIVES)
    for name in expected - {"landmine", "mnist"}:
        obj = make_objective(name)
        assert isinstance(obj, Objective) and obj.name == name and not obj.stochastic
    assert make_objective("rastrigin", dim=3).dim == 3


def test_registry_errors_name_the_bad_key() -> None:
    with pytest.raises(ValueError, match="nope") as err:
        make_objective("nope")
    assert "garland" in str(err.value) and "mnist" in str(err.value)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="dim"):
            make_objective("rastrigin", dim=bad)
    with pytest.raises(ValueError, match="foo"):
        make_objective("garland", foo=1)
    with pytest.raises(ValueError, match="rho1"):
        make_objective("doublesine", rho1=1.5)


def test_import_is_light() -> None:
    code = "import sys, vhct.objectives; print(sorted({'torch', 'sklearn', 'scipy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["landmine", "mnist"])
def test_real_data_entries_resolve(name: str) -> None:
    module = f"vhct.objectives.{name}"
    assert importlib.util.find_spec(module) is not None, f"{module} is missing: the registry names it"
    cls = OBJECTIVES[name]
    assert issubclass(cls, Objective) and cls.name == name
