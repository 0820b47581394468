"""Argument checks shared by every optimizer (vhct.optimizers.base): seeds and rewards name the argument."""

from __future__ import annotations

import numpy as np
import pytest

from vhct.optimizers.base import as_generator, check_reward
from vhct.optimizers.registry import make_optimizer

#: one tree method and the methods with their own construction path
ALGORITHMS = ("VHCT", "T-HOO", "POO")


@pytest.mark.parametrize("name", ALGORITHMS)
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
        make_optimizer(name, [[0.0, 1.0]], 50, seed=seed)


@pytest.mark.parametrize(
    "seed",
    [0, 7, np.int64(7), np.uint32(7), np.random.SeedSequence(7), None],
)
def test_integer_like_seeds_and_seed_sequences_are_accepted(seed):
    rng = as_generator(seed)
    assert isinstance(rng, np.random.Generator)
    if isinstance(seed, int | np.integer):
        assert rng.random() == np.random.default_rng(int(seed)).random()


def test_a_generator_is_used_as_given():
    rng = np.random.default_rng(3)
    assert as_generator(rng) is rng
    opt = make_optimizer("VHCT", [[0.0, 1.0]], 50, seed=rng)
    assert opt.rng is rng


@pytest.mark.parametrize("bad", ["0.5", b"1", True, np.bool_(False), None, [0.5], np.array([0.5])])
def test_non_numeric_rewards_are_rejected_naming_reward(bad):
    with pytest.raises(ValueError, match="reward must be a real number"):
        check_reward(bad)
    opt = make_optimizer("VHCT", [[0.0, 1.0]], 50, seed=0)
    x = opt.ask()
    with pytest.raises(ValueError, match="reward must be a real number"):
        opt.tell(x, bad)
    opt.tell(x, 0.5)  # the pending point is still waiting for a valid reward
    assert opt.t == 1


@pytest.mark.parametrize("good", [1, 0.25, np.float32(0.25), np.int64(2), np.array(0.75)])
def test_numeric_rewards_are_accepted(good):
    assert check_reward(good) == float(good)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), np.float64("-inf")])
def test_non_finite_rewards_are_rejected(bad):
    with pytest.raises(ValueError, match="reward must be finite"):
        check_reward(bad)
