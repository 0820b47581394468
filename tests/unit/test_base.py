"""Argument checks shared by every optimizer (vhct.optimizers.base): seeds and rewards name the
argument, for every registered algorithm."""

from __future__ import annotations

import numpy as np
import pytest
from support import drive, quick_optimizer

from vhct.optimizers.base import as_generator, check_reward
from vhct.optimizers.registry import algorithm_names, make_optimizer, needs_horizon


@pytest.mark.parametrize("name", algorithm_names())
@pytest.mark.parametrize(
    ("seed", "message"),
    [
        (-1, "seed must be a non-negative integer, got -1"),
        (np.int64(-3), "seed must be a non-negative integer"),
        (True, "seed must be an int, a SeedSequence or a numpy Generator, got True"),
        (1.5, "seed must be an int"),
        ("7", "seed must be an int"),
    ],
)
def test_bad_seeds_are_rejected_naming_seed(name, seed, message):
    with pytest.raises(ValueError, match=message):
        quick_optimizer(name, [[0.0, 1.0]], 50, seed=seed)


@pytest.mark.parametrize(
    "seed",
    [0, 7, np.int64(7), np.uint32(7), np.random.SeedSequence(7), None],
)
def test_integer_like_seeds_and_seed_sequences_are_accepted(seed):
    rng = as_generator(seed)
    assert isinstance(rng, np.random.Generator)
    if isinstance(seed, int | np.integer):
        assert rng.random() == np.random.default_rng(int(seed)).random()


@pytest.mark.parametrize("name", algorithm_names())
def test_a_generator_is_used_as_given(name):
    rng = np.random.default_rng(3)
    assert as_generator(rng) is rng
    opt = quick_optimizer(name, [[0.0, 1.0]], 50, seed=rng)
    assert opt.rng is rng


NON_NUMBERS = ["0.5", b"1", True, np.bool_(False), None, [0.5], np.array([0.5])]


@pytest.mark.parametrize("bad", NON_NUMBERS)
def test_non_numeric_rewards_are_rejected_naming_reward(bad):
    with pytest.raises(ValueError, match="reward must be a real number"):
        check_reward(bad)


@pytest.mark.parametrize("name", algorithm_names())
def test_every_optimizer_refuses_a_non_numeric_reward_and_keeps_the_point_pending(name):
    opt = quick_optimizer(name, [[0.0, 1.0]], 50, seed=0)
    x = opt.ask()
    for bad in NON_NUMBERS:
        with pytest.raises(ValueError, match="reward must be a real number"):
            opt.tell(x, bad)
    assert opt.t == 0 and np.array_equal(opt.ask(), x)  # the pending point waits for a valid reward
    opt.tell(x, 0.5)
    assert opt.t == 1


@pytest.mark.parametrize("good", [1, 0.25, np.float32(0.25), np.int64(2), np.array(0.75)])
def test_numeric_rewards_are_accepted(good):
    assert check_reward(good) == float(good)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), np.float64("-inf")])
def test_non_finite_rewards_are_rejected(bad):
    with pytest.raises(ValueError, match="reward must be finite"):
        check_reward(bad)


#: every numeric parameter of every optimizer built here, with a valid value of it
NUMERIC_PARAMETERS = [
    ("VHCT", "rho", 0.5),
    ("VHCT", "nu", 2),
    ("VHCT", "c", 0.1),
    ("VHCT", "delta", 0.01),
    ("VHCT", "b", 1),
    ("VHCT", "variance_floor", 0.001),
    ("HCT", "rho", 0.5),
    ("HCT", "nu", 2),
    ("HCT", "c", 0.1),
    ("HCT", "delta", 0.01),
    ("HCT", "b", 1),
    ("T-HOO", "rho", 0.5),
    ("T-HOO", "nu", 2),
    ("POO", "rho_max", 0.9),
    ("POO", "nu_max", 2),
    ("PCT", "rho_max", 0.9),
    ("PCT", "nu_max", 2),
    ("PCT", "first_epoch", 64),
]


def sine(x: np.ndarray) -> float:
    return float(np.sin(5 * x[0]))


def build(name, param, value):
    return make_optimizer(name, [[0.0, 1.0]], 50, seed=0, **{param: value})


@pytest.mark.parametrize(("name", "param", "value"), NUMERIC_PARAMETERS)
def test_a_bool_is_never_a_number(name, param, value):
    for flag in (True, np.bool_(True)):
        with pytest.raises(ValueError, match=f"{param} must be"):
            build(name, param, flag)


@pytest.mark.parametrize(("name", "param", "value"), NUMERIC_PARAMETERS)
def test_numpy_numbers_are_numbers_and_give_the_same_run(name, param, value):
    as_numpy = np.int64(value) if isinstance(value, int) else np.float64(value)
    plain, numpy = build(name, param, value), build(name, param, as_numpy)
    np.testing.assert_array_equal(drive(numpy, sine, 30), drive(plain, sine, 30))


@pytest.mark.parametrize(("name", "param", "value"), [p for p in NUMERIC_PARAMETERS if p[1] != "first_epoch"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.5"])
def test_nan_infinity_and_strings_are_rejected_naming_the_parameter(name, param, value, bad):
    with pytest.raises(ValueError, match=f"{param} must be"):
        build(name, param, bad)


@pytest.mark.parametrize("name", [name for name in algorithm_names() if needs_horizon(name)])
@pytest.mark.parametrize("horizon", [True, np.bool_(True), 5.0])
def test_integer_parameters_take_integers_not_bools_or_floats(name, horizon):
    with pytest.raises(ValueError, match="horizon must be an integer"):
        make_optimizer(name, [[0.0, 1.0]], horizon)
    assert make_optimizer(name, [[0.0, 1.0]], np.int64(50)).horizon == 50
