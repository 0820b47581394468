"""One call to optimize a function: ``vhct.maximize(f, domain, budget)`` and ``vhct.minimize(...)``.

Runs the ask/tell loop of any registered algorithm and returns a :class:`Result` with every
point and value, as ``scipy.optimize`` or ``skopt.gp_minimize`` do. ``minimize`` maximizes
``-f`` and reports values of ``f`` itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .optimizers.base import SeedLike, as_domain, check_horizon, check_reward
from .optimizers.registry import make_optimizer


@dataclass(frozen=True)
class Result:
    """What one optimization run found.

    Attributes:
        x: the evaluated point with the best value (highest for ``maximize``, lowest for ``minimize``).
        fun: its value ``f(x)``.
        recommendation: the algorithm's own recommendation at the end (for the tree methods a
            node's centre chosen from its statistics, robust to noise; may differ from ``x``).
        points: every evaluated point, shape ``(budget, d)``, in evaluation order.
        values: ``f`` at each of them, shape ``(budget,)``.
        evaluations: the number of evaluations of ``f`` (the budget).
        wall_seconds: wall time of the whole run, evaluations included.
        algorithm: the algorithm's name.
    """

    x: np.ndarray
    fun: float
    recommendation: np.ndarray
    points: np.ndarray
    values: np.ndarray
    evaluations: int
    wall_seconds: float
    algorithm: str


def _run(
    f: Callable[[np.ndarray], float],
    domain: Sequence[Sequence[float]] | np.ndarray,
    budget: int,
    algorithm: str,
    seed: SeedLike,
    sign: float,
    params: dict[str, Any],
) -> Result:
    if not callable(f):
        raise ValueError(f"f must be callable, got {f!r}")
    box = as_domain(domain)
    budget = check_horizon("budget", budget)
    start = time.perf_counter()
    opt = make_optimizer(algorithm, box, budget, seed=seed, **params)
    points = np.empty((budget, box.shape[0]))
    values = np.empty(budget)
    for t in range(budget):
        x = opt.ask()
        value = f(x.copy())
        try:
            values[t] = check_reward(value)
        except ValueError as exc:
            raise ValueError(f"f returned {value!r} at {x.tolist()} (evaluation {t + 1}): {exc}") from None
        points[t] = x
        opt.tell(x, sign * values[t])
    best = int(np.argmax(sign * values))
    return Result(
        x=points[best].copy(),
        fun=float(values[best]),
        recommendation=opt.recommend(),
        points=points,
        values=values,
        evaluations=budget,
        wall_seconds=time.perf_counter() - start,
        algorithm=algorithm,
    )


def maximize(
    f: Callable[[np.ndarray], float],
    domain: Sequence[Sequence[float]] | np.ndarray,
    budget: int,
    algorithm: str = "VHCT",
    seed: SeedLike = None,
    **params: Any,
) -> Result:
    """Maximize ``f`` over the box ``domain`` (``[[lo, hi], ...]``) with ``budget`` evaluations.

    ``algorithm`` is any registered name (``vhct.algorithm_names()``), ``params`` its parameters
    (as in the configs), ``seed`` an int or a numpy Generator (the same seed gives the same run).
    ``f`` takes a point (a float array of shape (d,)) and returns a finite real number.
    """
    return _run(f, domain, budget, algorithm, seed, 1.0, params)


def minimize(
    f: Callable[[np.ndarray], float],
    domain: Sequence[Sequence[float]] | np.ndarray,
    budget: int,
    algorithm: str = "VHCT",
    seed: SeedLike = None,
    **params: Any,
) -> Result:
    """Minimize ``f``: :func:`maximize` of ``-f``, with ``fun`` and ``values`` those of ``f``."""
    return _run(f, domain, budget, algorithm, seed, -1.0, params)
