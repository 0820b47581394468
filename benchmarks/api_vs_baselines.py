"""VHCT through ``vhct.minimize`` against Optuna's TPE and random search at equal budgets, on Branin.

Usage: python benchmarks/api_vs_baselines.py [--budget 200] [--seeds 5] [--noise 1.0]

Part 1, noisy Branin: each run minimizes ``branin(x) + Uniform(-noise, noise)`` (the noise from the
run's own generator) with ``budget`` evaluations; the score is the simple regret of the run's pick,
``branin(pick) - 0.397887`` on the noiseless function, where the pick is ``result.recommendation``
(VHCT's own, from a node's statistics; for TPE and random search the best observed point). Also
shown: the regret of the best observed point (``result.x``), which noise flatters. Settings: VHCT's
defaults (rho 0.5), rho 0.75 (the paper's choice) and 0.9, each also with values scaled to about
[0, 1] as docs/library.md advises (divided by 310, Branin's range on its box; b = 1 then covers the
scaled noise), POO (which searches over rho itself) on the scaled values, TPE, random search.
Prints mean +- standard deviation over the seeds, and in how many runs VHCT warned that the values
spread more than its ``b`` assumes (``RewardRangeWarning``: the values need scaling).

Part 2, noiseless Branin with ``deterministic=True``: the calls of the function (``nfev``) in
``budget`` rounds per algorithm, the saving of memoization.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

import vhct
from vhct.optimizers.base import RewardRangeWarning

BRANIN = [[-5.0, 10.0], [0.0, 15.0]]
BRANIN_MIN = 0.397887357729739
#: Branin's range on its box is [0.3979, 308.13]: dividing by this maps the values into about [0, 1]
SCALE = 310.0


def branin(x: np.ndarray) -> float:
    a, b, c, r, s, t = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return float(a * (x[1] - b * x[0] ** 2 + c * x[0] - r) ** 2 + s * (1 - t) * math.cos(x[0]) + s)


SETTINGS: dict[str, tuple[str, dict, float]] = {
    "VHCT (defaults)": ("VHCT", {}, 1.0),
    "VHCT rho=0.75": ("VHCT", {"rho": 0.75}, 1.0),
    "VHCT rho=0.9": ("VHCT", {"rho": 0.9}, 1.0),
    "VHCT scaled": ("VHCT", {}, 1.0 / SCALE),
    "VHCT rho=0.75, scaled": ("VHCT", {"rho": 0.75}, 1.0 / SCALE),
    "VHCT rho=0.9, scaled": ("VHCT", {"rho": 0.9}, 1.0 / SCALE),
    "POO, scaled": ("POO", {}, 1.0 / SCALE),
    "TPE (Optuna)": ("TPE", {}, 1.0),
    "Random search": ("Random", {}, 1.0),
}


def noisy_run(algorithm: str, params: dict, scale: float, budget: int, seed: int, noise: float):
    rng = np.random.default_rng(10_000 + seed)

    def f(x: np.ndarray) -> float:
        return scale * (branin(x) + rng.uniform(-noise, noise))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RewardRangeWarning)
        result = vhct.minimize(f, BRANIN, budget, algorithm=algorithm, seed=seed, **params)
    warned = any(issubclass(w.category, RewardRangeWarning) for w in caught)
    return branin(result.recommendation) - BRANIN_MIN, branin(result.x) - BRANIN_MIN, warned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--noise", type=float, default=1.0, help="half-width of the uniform noise")
    args = parser.parse_args()
    print(
        f"Noisy Branin, noise Uniform(-{args.noise}, {args.noise}), {args.budget} evaluations, "
        f"seeds 0-{args.seeds - 1}: regret of the pick (mean +- sd) and of the best observed point"
    )
    for label, (algorithm, params, scale) in SETTINGS.items():
        runs = np.array(
            [noisy_run(algorithm, params, scale, args.budget, s, args.noise) for s in range(args.seeds)]
        )
        pick, observed, warned = runs[:, 0], runs[:, 1], int(runs[:, 2].sum())
        print(
            f"  {label:22s} pick {pick.mean():.3f} +- {pick.std(ddof=1):.3f}   "
            f"best observed {observed.mean():.3f} +- {observed.std(ddof=1):.3f}   "
            f"RewardRangeWarning in {warned} of {args.seeds} runs"
        )
    print(f"Noiseless Branin, deterministic=True, {args.budget} rounds: calls of f (nfev) over the seeds")
    for algorithm in ("VHCT", "HCT", "T-HOO", "POO", "PCT", "TPE", "Random"):
        calls = [
            vhct.minimize(branin, BRANIN, args.budget, algorithm=algorithm, seed=s, deterministic=True).nfev
            for s in range(args.seeds)
        ]
        print(f"  {algorithm:8s} {np.mean(calls):6.1f} calls (min {min(calls)}, max {max(calls)})")


if __name__ == "__main__":
    main()
