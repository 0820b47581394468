"""``vhct.minimize(..., max_nfev=N)``: a budget of calls of ``f`` (scipy's name), honoured exactly with
``deterministic=True``, where the tree methods' repeated points are free."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import vhct
from vhct.api import STATUS_DONE
from vhct.api.loop import ROUNDS_PER_EVALUATION

BRANIN = [[-5.0, 10.0], [0.0, 15.0]]


def branin(x: np.ndarray) -> float:
    """Branin on [-5, 10] x [0, 15]; minimum 0.397887."""
    a, b, c, r, s, t = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return float(a * (x[1] - b * x[0] ** 2 + c * x[0] - r) ** 2 + s * (1 - t) * math.cos(x[0]) + s)


class Calls:
    """``branin``, counting its calls and the distinct points it was called at."""

    def __init__(self):
        self.calls, self.points = 0, set()

    def __call__(self, x: np.ndarray) -> float:
        self.calls += 1
        self.points.add(x.tobytes())
        return branin(x)


#: settings whose first 40 distinct points come with repeats on Branin (T-HOO at a horizon of 1000
#: asks no point twice before its 40th)
REPEATING = [("VHCT", {"rho": 0.75}), ("HCT", {"rho": 0.9}), ("POO", {}), ("PCT", {})]


@pytest.mark.parametrize(("name", "params"), REPEATING)
def test_max_nfev_is_honoured_exactly_with_deterministic(name, params):
    f = Calls()
    result = vhct.minimize(f, BRANIN, 1000, algorithm=name, seed=0, deterministic=True, max_nfev=40, **params)
    assert f.calls == len(f.points) == result.nfev == result.distinct_points == 40
    assert result.nit > 40  # the optimizer came back to evaluated points: those rounds were free
    assert result.success and result.status == STATUS_DONE
    assert result.message == f"used max_nfev=40 calls of f in {result.nit} rounds"
    # the same run as without the limit, cut where the 40th distinct point was evaluated
    full = vhct.minimize(branin, BRANIN, 1000, algorithm=name, seed=0, **params)
    assert np.array_equal(result.points, full.points[: result.nit])
    assert np.array_equal(result.values, full.values[: result.nit])


def test_without_deterministic_every_round_is_a_call():
    f = Calls()
    result = vhct.minimize(f, BRANIN, seed=0, max_nfev=60, rho=0.9)
    assert f.calls == result.nfev == result.nit == 60 and len(f.points) < 60
    assert result.message == "used max_nfev=60 calls of f in 60 rounds"


def test_budget_and_max_nfev_both_bind_whichever_first():
    by_rounds = vhct.maximize(lambda x: -branin(x), BRANIN, 30, seed=0, deterministic=True, max_nfev=1000)
    assert by_rounds.nit == 30 and by_rounds.nfev < 30
    assert (
        by_rounds.message
        == f"used the budget of 30 rounds after {by_rounds.nfev} of max_nfev=1000 calls of f"
    )
    by_calls = vhct.maximize(lambda x: -branin(x), BRANIN, 10_000, seed=0, deterministic=True, max_nfev=15)
    assert by_calls.nfev == 15 and 15 < by_calls.nit < 10_000


def test_a_run_that_stops_proposing_new_points_ends_at_the_round_limit_and_says_so():
    # rho = 0.5 on Branin: the tree keeps pulling its few nodes and asks fewer than 50 new points
    result = vhct.minimize(branin, BRANIN, seed=0, deterministic=True, max_nfev=50, rho=0.5)
    assert result.nit == ROUNDS_PER_EVALUATION * 50 and result.nfev < 50 and result.success
    assert result.message.startswith(f"stopped after {result.nit} rounds ({ROUNDS_PER_EVALUATION} per call")
    assert f"only {result.nfev} calls of f" in result.message and "raise rho" in result.message


def test_a_budget_given_replaces_the_default_round_limit():
    rounds = ROUNDS_PER_EVALUATION * 30 + 500  # more than the default limit of max_nfev=30
    result = vhct.minimize(branin, BRANIN, rounds, seed=0, deterministic=True, max_nfev=30, rho=0.5)
    assert result.nit == rounds and result.nfev < 30
    assert (
        result.message == f"used the budget of {rounds} rounds after {result.nfev} of max_nfev=30 calls of f"
    )


def test_the_callback_sees_the_calls_so_far():
    seen = []
    vhct.minimize(
        branin, BRANIN, seed=0, deterministic=True, max_nfev=10, callback=lambda r: seen.append(r.nfev)
    )
    assert seen[-1] == 10 and seen == sorted(seen) and len(seen) > 10


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10", np.float64(5.0)])
def test_invalid_max_nfev_is_refused(bad):
    with pytest.raises(ValueError, match=rf"^max_nfev must be an integer >= 1, got {re.escape(repr(bad))}$"):
        vhct.minimize(branin, BRANIN, seed=0, deterministic=True, max_nfev=bad)


def test_neither_budget_nor_max_nfev_is_refused():
    with pytest.raises(ValueError, match=r"vhct.maximize: give budget \(rounds\) or max_nfev \(calls of f\)"):
        vhct.maximize(branin, BRANIN)


def test_numpy_integers_are_accepted():
    result = vhct.minimize(branin, BRANIN, np.int64(500), seed=0, deterministic=True, max_nfev=np.int32(12))
    assert result.nfev == 12
