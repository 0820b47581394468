"""Tests of the GPyOpt-based BO baseline: domain, seeding, maximization sign, protocol, arguments.

GPyOpt refits its GP (5 restarts) at every round, so runs here are short.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from support import drive

from vhct.optimizers import bo
from vhct.optimizers.bo import BayesianOptimization

BOX_1D = np.array([[-2.0, 3.0]])
BOX_2D = np.array([[-1.0, 3.0], [10.0, 10.5]])
PEAK_1D = np.array([0.3])
NOISE_SD = 0.01
REPRO_ROUNDS = 15
SIGN_SEEDS = range(5)
SIGN_MIN_WINS = 4


def concave(peak: np.ndarray) -> Callable[[np.ndarray], float]:
    """-||x - peak||^2: maximum 0 at ``peak``."""
    return lambda x: -float(np.sum((np.asarray(x) - peak) ** 2))


def run(
    opt: BayesianOptimization,
    f: Callable[[np.ndarray], float],
    rounds: int,
    noise_seed: int,
    between: Callable[[], None] | None = None,
    noise_sd: float = NOISE_SD,
) -> np.ndarray:
    """Ask/tell ``rounds`` times with N(0, noise_sd^2) reward noise; return the asked points.
    ``between``: called at each round between the optimizer's ask and tell (the caller's own code)."""
    noise = np.random.default_rng(noise_seed)

    def reward(x: np.ndarray) -> float:
        value = f(x) + noise_sd * noise.standard_normal()
        if between is not None:
            between()
        return value

    return drive(opt, reward, rounds)


@pytest.fixture(scope="module")
def seed0_points() -> np.ndarray:
    """Points of a 1-D run with seed 0 (shared by the domain and seeding tests)."""
    return run(BayesianOptimization(BOX_1D, seed=0), concave(PEAK_1D), REPRO_ROUNDS, noise_seed=0)


def test_points_inside_1d_box(seed0_points):
    assert seed0_points.shape == (REPRO_ROUNDS, 1)
    assert np.all(seed0_points >= BOX_1D[:, 0]) and np.all(seed0_points <= BOX_1D[:, 1])


def test_points_inside_2d_non_unit_box_with_other_options():
    opt = BayesianOptimization(BOX_2D, seed=3, n_init=2, acquisition="LCB", exact_feval=True)
    points = run(opt, concave(np.array([2.5, 10.4])), rounds=5, noise_seed=3)
    assert points.shape == (5, 2)
    assert np.all(points >= BOX_2D[:, 0]) and np.all(points <= BOX_2D[:, 1])
    rec = opt.recommend()
    assert any(np.array_equal(rec, p) for p in points)


def test_same_seed_same_points_and_global_rng_untouched(seed0_points):
    """Same seed, same points, even when the caller draws from numpy's global RNG between its calls;
    and the global RNG ends exactly where the caller's own draws alone would have left it."""
    global_rng_draws = 3

    def use_global_rng() -> None:
        np.random.standard_normal(global_rng_draws)  # noqa: NPY002  (a caller using the legacy global RNG)

    replay = np.random.RandomState()
    replay.set_state(np.random.get_state())  # noqa: NPY002
    again = run(BayesianOptimization(BOX_1D, seed=0), concave(PEAK_1D), REPRO_ROUNDS, 0, use_global_rng)
    np.testing.assert_array_equal(again, seed0_points)
    for _ in range(REPRO_ROUNDS):
        replay.standard_normal(global_rng_draws)
    expected, actual = replay.get_state(), np.random.get_state()  # noqa: NPY002
    np.testing.assert_array_equal(actual[1], expected[1])
    assert actual[2:] == expected[2:]


def test_different_seed_different_points(seed0_points):
    other = run(BayesianOptimization(BOX_1D, seed=1), concave(PEAK_1D), REPRO_ROUNDS, noise_seed=0)
    assert not np.allclose(other, seed0_points)


@pytest.mark.parametrize(
    ("box", "peak", "evals", "noise_sd"),
    [
        (BOX_1D, PEAK_1D, 10, NOISE_SD),
        (np.array([[-1.0, 3.0], [2.0, 4.0]]), np.array([0.2, 3.5]), 15, NOISE_SD),
        # 30 evaluations against 30 uniform points; noiseless, since near the peak the gaps
        # (~1e-3) are below a 0.01 noise and "best observed" would rank noise
        (np.array([[0.0, 1.0]] * 3), np.array([0.3, 0.6, 0.45]), 30, 0.0),
    ],
    ids=["1d", "2d", "3d-30-evaluations"],
)
def test_maximizes_better_than_random_search(box, peak, evals, noise_sd):
    """Right sign: BO's recommendation beats the best of as many uniform points on most seeds
    (with the sign flipped it would head for the box's corners, where the concave function is lowest)."""
    f = concave(peak)
    wins = 0
    for seed in SIGN_SEEDS:
        opt = BayesianOptimization(box, seed=seed)
        run(opt, f, evals, noise_seed=seed, noise_sd=noise_sd)
        uniform = np.random.default_rng(seed + 1000).uniform(box[:, 0], box[:, 1], (evals, len(box)))
        wins += f(opt.recommend()) > max(f(u) for u in uniform)
    assert wins >= SIGN_MIN_WINS


def test_recommend_before_any_data_is_box_centre_then_best_observed():
    opt = BayesianOptimization(BOX_2D, seed=0, n_init=3)
    np.testing.assert_allclose(opt.recommend(), BOX_2D.mean(axis=1))
    rewards = iter([1.0, 5.0, 2.0])
    points = drive(opt, lambda x: next(rewards), 3)
    np.testing.assert_array_equal(opt.recommend(), points[1])


def test_initial_design_is_uniform_from_own_generator():
    a = BayesianOptimization(BOX_2D, seed=np.random.default_rng(7), n_init=4)
    b = BayesianOptimization(BOX_2D, seed=np.random.default_rng(7), n_init=4)
    expected = np.random.default_rng(7).uniform(BOX_2D[:, 0], BOX_2D[:, 1], size=(4, 2))
    np.testing.assert_array_equal(drive(a, lambda x: 0.0, 4), expected)
    np.testing.assert_array_equal(drive(b, lambda x: 0.0, 4), expected)


def test_tell_protocol_errors_from_base_class():
    opt = BayesianOptimization(BOX_1D, seed=0)
    with pytest.raises(ValueError, match="without a pending ask"):
        opt.tell([0.0], 1.0)
    x = opt.ask()
    np.testing.assert_array_equal(opt.ask(), x)  # asking again returns the pending point
    with pytest.raises(ValueError, match="not the pending point"):
        opt.tell(x + 0.5, 1.0)
    with pytest.raises(ValueError, match="reward"):
        opt.tell(x, float("nan"))
    opt.tell(x, 1.0)
    assert opt.t == 1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_init": 0}, "n_init"),
        ({"n_init": 2.5}, "n_init"),
        ({"n_init": True}, "n_init"),
        ({"acquisition": "UCB"}, "acquisition"),
        ({"acquisition": "EI_MCMC"}, "acquisition"),
        ({"exact_feval": "yes"}, "exact_feval"),
        ({"optimize_restarts": 0}, "optimize_restarts"),
        ({"optimize_restarts": 1.0}, "optimize_restarts"),
        ({"seed": "zero"}, "seed"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        BayesianOptimization(BOX_1D, **kwargs)


def test_bad_domain_raises():
    with pytest.raises(ValueError, match="domain"):
        BayesianOptimization([[1.0, 0.0]])


def test_optimize_restarts_defaults_to_gpyopts_and_reaches_the_warm_started_model():
    """The default is GPyOpt's own; the count reaches GPyOpt's GP model, which lives through the run,
    so each round's fit starts from the previous round's hyperparameters."""
    import inspect

    from vhct.optimizers.bo import DEFAULT_OPTIMIZE_RESTARTS, load_gpyopt

    gpyopt_default = inspect.signature(load_gpyopt().models.GPModel).parameters["optimize_restarts"].default
    assert DEFAULT_OPTIMIZE_RESTARTS == gpyopt_default == BayesianOptimization(BOX_1D).optimize_restarts
    f = concave(PEAK_1D)
    for restarts in (1, 3):
        opt = BayesianOptimization(BOX_1D, seed=2, n_init=3, optimize_restarts=restarts)
        run(opt, f, rounds=4, noise_seed=2)
        gp = opt._bo.model
        assert gp.optimize_restarts == restarts
        fitted, fitted_params = gp.model, gp.model.param_array.copy()
        run(opt, f, rounds=1, noise_seed=3)
        assert opt._bo.model.model is fitted  # the same GPy model, refitted from its last parameters
        assert not np.array_equal(fitted.param_array, fitted_params)  # ... and refitted


def test_n_init_beyond_the_machines_memory_is_refused_before_the_design_is_drawn(monkeypatch):
    """The design (n_init x d) and the GP fitted on it (n_init x n_init matrices) must fit the memory
    available: 10**9 drew 7.45 GiB up front and raised a raw MemoryError; now a ValueError, first."""
    with pytest.raises(ValueError, match=r"n_init must be at most [\d,]+ on this machine, got 1,000,000,000"):
        BayesianOptimization(BOX_1D, n_init=10**9)
    memory = 10**7
    monkeypatch.setattr(bo, "available_memory", lambda: memory)
    fits = bo.max_n_init(2, memory)
    assert bo.n_init_bytes(fits, 2) <= memory < bo.n_init_bytes(fits + 1, 2)
    assert BayesianOptimization(BOX_2D, n_init=fits).n_init == fits
    with pytest.raises(ValueError, match=f"at most {fits:,} on this machine, got {fits + 1:,}"):
        BayesianOptimization(BOX_2D, n_init=fits + 1)
