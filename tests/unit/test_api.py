"""vhct.maximize / vhct.minimize: one call, a result with every point and value."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import vhct
from vhct.optimizers.registry import make_optimizer

DOMAIN = [[0.0, 1.0], [-1.0, 1.0]]


def bowl(x: np.ndarray) -> float:
    return float((x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2)


def test_maximize_is_the_ask_tell_loop():
    result = vhct.maximize(lambda x: -bowl(x), DOMAIN, 80, seed=4, rho=0.75)
    opt = make_optimizer("VHCT", DOMAIN, 80, seed=4, rho=0.75)
    for t in range(80):
        x = opt.ask()
        assert x.tolist() == result.points[t].tolist()
        opt.tell(x, -bowl(x))
    assert result.recommendation.tolist() == opt.recommend().tolist()
    assert result.values.tolist() == [-bowl(p) for p in result.points]
    best = int(np.argmax(result.values))
    assert result.x.tolist() == result.points[best].tolist() and result.fun == result.values[best]
    assert result.evaluations == 80 and result.points.shape == (80, 2) and result.wall_seconds > 0
    assert result.algorithm == "VHCT"


def test_minimize_reports_the_function_itself():
    result = vhct.minimize(bowl, DOMAIN, 120, algorithm="HCT", seed=1)
    assert result.fun == pytest.approx(min(result.values)) and result.fun >= 0
    assert result.fun == bowl(result.x)
    assert result.fun < 0.01  # it minimizes: the bowl's minimum 0 is at (0.3, -0.2)
    again = vhct.minimize(bowl, DOMAIN, 120, algorithm="HCT", seed=1)
    assert again.points.tolist() == result.points.tolist()


def test_every_registered_algorithm_by_name():
    for name in ("T-HOO", "POO", "PCT"):  # the core ones that need the horizon get the budget
        result = vhct.maximize(lambda x: -bowl(x), DOMAIN, 40, algorithm=name, seed=0)
        assert result.points.shape == (40, 2)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="budget must be an integer >= 1"):
        vhct.maximize(bowl, DOMAIN, 0)
    with pytest.raises(ValueError, match="f must be callable"):
        vhct.maximize(3, DOMAIN, 5)
    with pytest.raises(ValueError, match="domain dimension 0 is empty"):
        vhct.maximize(bowl, [[1.0, 0.0]], 5)
    with pytest.raises(ValueError, match="unknown algorithm 'Nope'"):
        vhct.maximize(bowl, DOMAIN, 5, algorithm="Nope")
    with pytest.raises(ValueError, match=r"f returned nan at .* \(evaluation 1\)"):
        vhct.maximize(lambda x: float("nan"), DOMAIN, 5)


LIGHT = """
import sys
import vhct
r = vhct.minimize(lambda x: float((x ** 2).sum()), [[-1, 1], [-1, 1]], 50, seed=0)
assert r.evaluations == 50
print(",".join(sorted({m.split(".")[0] for m in sys.modules})))
"""


def test_import_vhct_and_the_one_call_api_stay_numpy_only():
    out = subprocess.run([sys.executable, "-c", LIGHT], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.strip().split(","))
    assert "numpy" in loaded
    assert not loaded & {"optuna", "pandas", "torch", "scipy", "matplotlib", "cmaes", "GPy"}, loaded
