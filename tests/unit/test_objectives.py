"""Objectives: every registered one against the registry's contract (evaluates in its domain, its
optimum declared as it is); the synthetic ones' maxima against dense grids, ranges, landmarks,
vectorization; registry errors; what the pipeline reads of an optimum (``exact_optimum``)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import optimize
from support import garland, run_job_of, run_spec, write_landmine_mat, write_mnist_dir

from vhct.extras import MissingExtraError
from vhct.objectives import OBJECTIVES, Objective, make_objective, objective_names
from vhct.objectives import synthetic as syn
from vhct.objectives.rescaled import Rescaled

GRID_1D = 1_000_001
GRID_2D = 777  # deliberately not the library's own search grid
TOP_LOCAL_MAXIMA = 6
#: the objectives registered lazily (real data: scikit-learn, torch), read without importing them
LAZY = [name for name in objective_names() if OBJECTIVES.target(name) is not None]
#: every synthetic objective of the registry
SYNTHETIC_CLASSES = [
    cls
    for name in objective_names()
    if name not in LAZY and issubclass(cls := OBJECTIVES[name], syn.SyntheticObjective)
]
ONE_D = [cls for cls in SYNTHETIC_CLASSES if cls().dim == 1]
#: each synthetic objective as registered, and Rastrigin (10-D by default) in 1 and 2 dimensions
SYNTHETIC = [cls() for cls in SYNTHETIC_CLASSES] + [syn.Rastrigin(1), syn.Rastrigin(2)]


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


def test_the_optimizer_tests_garland_is_this_garland() -> None:
    """tests/support.py's ``garland`` (the optimizers' tests' function, any dimension) is Garland in
    1-D, value for value, and the product of its coordinates' values beyond."""
    f = syn.Garland()
    assert all(garland([t]) == f(np.array([t])) for t in np.linspace(0.0, 1.0, 1001))
    assert garland([0.3, 0.7]) == f([0.3]) * f([0.7])


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
    assert not objective.stochastic
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


def test_the_papers_objectives_are_registered() -> None:
    paper = {
        "garland",
        "doublesine",
        "ackley",
        "counterexample",
        "himmelblau",
        "rastrigin",
        "difficult",
        "landmine",
        "mnist",
    }
    assert paper <= set(objective_names()) and list(OBJECTIVES) == objective_names()
    # Rescaled: a f + b of another synthetic objective (the rescaling remark), by default Garland's identity
    assert set(ONE_D) == {syn.Garland, syn.DoubleSine, syn.CounterExample, syn.DifficultFunction, Rescaled}
    assert make_objective("rastrigin", dim=3).dim == 3


def fixture_params(name: str, folder) -> dict:
    """Constructor parameters of a registered objective for a test: the real-data ones read small
    fixture files of their data's format (tests/support.py); the others need none."""
    if name == "landmine":
        return {"data_path": str(write_landmine_mat(folder / "LandmineData.mat"))}
    if name == "mnist":
        data = write_mnist_dir(folder / "mnist", n_train=120, n_test=150)
        return {"data_dir": str(data), "mode": "test-split", "n_train": 80, "n_valid": 60, "epochs": 1}
    return {}


@pytest.mark.parametrize("name", objective_names())
def test_every_registered_objective_evaluates_in_its_domain_and_declares_its_optimum(name, tmp_path):
    """The objectives registry's contract, entry by entry: built by name, an Objective of that name;
    finite values in [-1, 1] on its box (corners and inside), a point outside refused; ``f_star``
    and ``maximizer`` given exactly when ``exact_optimum`` says so, the maximizer attaining f*, no
    value above it, and the regret measured against it (else against 1); and the pipeline reads
    the same declaration from the registry without building it."""
    from vhct.pipeline.records import known_optimum

    try:
        f = make_objective(name, **fixture_params(name, tmp_path))
    except MissingExtraError as exc:
        pytest.skip(str(exc))
    assert type(f) is OBJECTIVES[name] and isinstance(f, Objective) and f.name == name
    lo, hi = f.domain[:, 0], f.domain[:, 1]
    assert f.domain.shape == (f.dim, 2) and np.all(lo < hi)
    inside = lo + np.random.default_rng(0).random((3, f.dim)) * (hi - lo)
    values = [f(x, seed=(0, k)) for k, x in enumerate([lo, hi, *inside])]
    assert all(isinstance(v, float) and -1.0 <= v <= 1.0 for v in values), values
    with pytest.raises(ValueError, match="outside the domain"):
        f(hi + (hi - lo), seed=(0, 9))
    assert f.exact_optimum == (f.f_star is not None) == (f.maximizer is not None)
    if f.exact_optimum:
        assert max(values) <= f.f_star + 1e-12
        assert f(f.maximizer) == pytest.approx(f.f_star, abs=1e-7)  # Garland's cusp: ~2e-8 off
        assert f.regret_reference == f.f_star
    else:
        assert f.regret_reference == 1.0
    assert known_optimum(name) is f.exact_optimum


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


@pytest.mark.parametrize("name", LAZY)
def test_real_data_entries_resolve(name: str) -> None:
    module = OBJECTIVES.target(name).partition(":")[0]
    assert importlib.util.find_spec(module) is not None, f"{module} is missing: the registry names it"
    cls = OBJECTIVES[name]
    assert issubclass(cls, Objective) and cls.name == name and not cls.exact_optimum


def test_the_registry_takes_only_objective_classes_of_their_own_name() -> None:
    with pytest.raises(ValueError, match="'garland2': .* is not an Objective class named 'garland2'"):
        OBJECTIVES.register("garland2", syn.Garland)
    with pytest.raises(ValueError, match="is not an Objective class"):
        OBJECTIVES.register("number", int)
    with pytest.raises(ValueError, match="objective 'garland' is already registered"):
        OBJECTIVES.register(syn.Garland)
    assert "garland2" not in OBJECTIVES and "number" not in OBJECTIVES


# -- what the pipeline reads of an optimum: the class's declaration, not its place in the class tree --


class Paraboloid(Objective):
    """Synthetic-like but no SyntheticObjective: -(x - 0.3)^2 on [0, 1], its maximum 0 at 0.3 known
    exactly and declared so."""

    name = "paraboloid"
    exact_optimum = True

    def __init__(self) -> None:
        super().__init__([[0.0, 1.0]])

    def __call__(self, x, seed=None) -> float:
        return -float((self.check_point(x)[0] - 0.3) ** 2)

    @property
    def f_star(self) -> float:
        return 0.0

    @property
    def maximizer(self) -> np.ndarray:
        return np.array([0.3])


class Undeclared(Objective):
    """The same function with no optimum declared (as a real-data task: unknown)."""

    name = "undeclared"

    def __init__(self) -> None:
        super().__init__([[0.0, 1.0]])

    def __call__(self, x, seed=None) -> float:
        return -float((self.check_point(x)[0] - 0.3) ** 2)


@pytest.mark.parametrize(("cls", "reference"), [(Paraboloid, "f_star"), (Undeclared, "best_observed")])
def test_a_run_record_follows_the_objectives_declared_optimum(cls, reference, tmp_path):
    """The run job records the exact optimum of an objective that declares one (any class), and a
    record of it without f* is refused; one that declares none is measured against the best observed."""
    from pydantic import ValidationError

    from vhct.pipeline.jobs import run_job
    from vhct.pipeline.records import RunRecord, known_optimum
    from vhct.pipeline.store import read_batch

    OBJECTIVES.register(cls)
    try:
        assert known_optimum(cls.name) is cls.exact_optimum
        spec = run_spec("VHCT", cls.name, 5, 0, noise=0.0)
        batch = tmp_path / "seeds0-0.npz"
        run_job(run_job_of(spec), batch)
        (record,) = read_batch(batch).record.runs
        assert record.regret_reference == reference and record.f_star == cls().f_star
        data = record.model_dump(mode="json")
        data.update(f_star=None, regret_reference="best_observed")
        data["metadata"]["f_star"] = None
        if cls.exact_optimum:
            with pytest.raises(
                ValidationError, match=r"f_star is missing, but .* 'paraboloid' has an exact one"
            ):
                RunRecord.model_validate_json(json.dumps(data))
        else:
            assert RunRecord.model_validate_json(json.dumps(data)).regret_reference == "best_observed"
    finally:
        OBJECTIVES.unregister(cls.name)
    assert not known_optimum(cls.name)  # an objective no longer registered: none known


def test_an_objective_registered_lazily_cannot_declare_an_exact_optimum() -> None:
    """The pipeline reads the declaration without importing a lazy entry, so a lazy entry may not make it."""
    from vhct.pipeline.records import known_optimum

    OBJECTIVES.register("paraboloid", f"{__name__}:Paraboloid")
    try:
        assert OBJECTIVES.target("paraboloid") and not known_optimum("paraboloid")
        with pytest.raises(
            ValueError, match="'paraboloid' declares an exact optimum but is registered lazily"
        ):
            OBJECTIVES["paraboloid"]
    finally:
        OBJECTIVES.unregister("paraboloid")


def test_random_search_regret_is_f_star_minus_the_mean_over_the_domain():
    """The normalized regret's scale against a dense-grid mean of Garland over [0, 1] (seeded: the
    same every time); None where f* is unknown."""
    f = make_objective("garland")
    grid = np.linspace(0.0, 1.0, 20001)
    mean = float(np.mean([f(np.array([x])) for x in grid]))
    scale = f.random_search_regret()
    assert scale == pytest.approx(f.f_star - mean, abs=1e-3)
    assert f.random_search_regret() == scale

    class Unknown(type(f)):
        f_star = None

    assert Unknown().random_search_regret() is None


@pytest.mark.parametrize(
    ("name", "params", "scale", "offset"),
    [("garland", {}, 2.0, -1.0), ("himmelblau", {}, 890.0, 0.0), ("rastrigin", {"dim": 2}, 0.25, 3.0)],
)
def test_rescaled_is_a_times_the_values_plus_b(name, params, scale, offset) -> None:
    """The rescaling remark's objective: a f + b at every point (scalar and vectorized), its maximum
    a f* + b at f's maximizer, the domain f's."""
    f = make_objective(name, **params)
    g = make_objective("rescaled", objective=name, objective_params=params, scale=scale, offset=offset)
    X = np.random.default_rng(0).uniform(f.domain[:, 0], f.domain[:, 1], (200, f.dim))
    assert np.allclose(g.values(X), scale * f.values(X) + offset, rtol=1e-12, atol=1e-12)
    assert all(g(x) == pytest.approx(scale * f(x) + offset, rel=1e-12, abs=1e-12) for x in X[:20])
    assert g.f_star == pytest.approx(scale * f.f_star + offset) and np.array_equal(g.maximizer, f.maximizer)
    assert g(g.maximizer) == pytest.approx(g.f_star, abs=1e-6 * scale)
    assert np.array_equal(g.domain, f.domain) and g.exact_optimum
    assert g.random_search_regret() == pytest.approx(scale * f.random_search_regret(), rel=1e-9)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"scale": 0.0}, "scale must be positive"),
        ({"scale": -1.0}, "scale must be positive"),
        ({"offset": math.inf}, "offset must be a finite number"),
        ({"scale": "2"}, "scale must be a finite"),
        ({"objective": "nope"}, "objective must name an objective"),
        ({"objective": "rescaled"}, "objective must name an objective"),
        ({"objective": "landmine"}, "has no exact optimum"),
        ({"objective": "rastrigin", "objective_params": {"dim": 0}}, "dim must be an integer"),
    ],
)
def test_rescaled_refuses_what_it_cannot_rescale(params, message) -> None:
    with pytest.raises(ValueError, match=message):
        make_objective("rescaled", **params)
