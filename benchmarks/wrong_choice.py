"""Where VHCT is the wrong choice: a cheap, noisy, low-dimensional function at a small budget.

    python benchmarks/wrong_choice.py [--seeds 30] [--budget 300] [--noise 1.0] [--seed 2026]

Noisy Branin (2-D on [-5, 10] x [0, 15], ``branin(x) + Uniform(-noise, noise)``), ``budget`` calls of
the function per run. The score is the simple regret of the method's pick on the noiseless
function, ``branin(pick) - 0.397887``: the pick is ``result.recommendation`` for the library's
methods (for VHCT and HCT a node's centre chosen from its statistics; for TPE and random search
the best observed point) and the best observed point for scipy's differential evolution (what it
returns). Methods: VHCT at its defaults (rho 0.5), at rho 0.75 (the paper's) and 0.9, and at 0.9
on values divided by 310 (Branin's range on its box, so about [0, 1]: "scaled"), HCT at rho 0.75,
Optuna's TPE and random search (all through ``vhct.minimize``), and
``scipy.optimize.differential_evolution`` stopped at the budget. docs/library.md quotes the
printed table in its opening section.

Seeding: the script owns one generator (``--seed``); it draws, per repetition, the seed of the
optimizer and the seed of the noise, shared by every method of that repetition (each method's run
gets the same sequence of noise draws). A cell is the mean +- sd of the final regret over the
repetitions, and its median. One process, under a minute on one core.
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings
from collections.abc import Callable

import numpy as np
import scipy.optimize
from api_vs_baselines import BRANIN, BRANIN_MIN, SCALE, branin  # benchmarks/api_vs_baselines.py
from which_optimizer import Budgeted, _Spent  # benchmarks/which_optimizer.py

import vhct

#: the script's own generator's seed, from which every run's seeds are drawn
SEED = 2026
#: exclusive upper bound of the seeds drawn for the optimizers and the noise
SEED_BOUND = 2**31
#: the rows: label -> (library algorithm, or scipy's function, its parameters, the factor on the values)
METHODS: dict[str, tuple[str, dict, float]] = {
    "VHCT defaults (rho 0.5)": ("VHCT", {}, 1.0),
    "VHCT rho 0.75": ("VHCT", {"rho": 0.75}, 1.0),
    "VHCT rho 0.9": ("VHCT", {"rho": 0.9}, 1.0),
    "VHCT rho 0.9, scaled": ("VHCT", {"rho": 0.9}, 1.0 / SCALE),
    "HCT rho 0.75": ("HCT", {"rho": 0.75}, 1.0),
    "TPE (Optuna)": ("TPE", {}, 1.0),
    "differential_evolution (scipy)": ("differential_evolution", {}, 1.0),
    "random search (Optuna)": ("Random", {}, 1.0),
}


def noisy_branin(noise: float, seed: int, scale: float) -> Callable[[np.ndarray], float]:
    """``scale`` times Branin plus ``Uniform(-noise, noise)``, the noise from its own generator."""
    rng = np.random.default_rng(seed)
    return lambda x: scale * (branin(x) + rng.uniform(-noise, noise))


def regret(method: str, budget: int, noise: float, opt_seed: int, noise_seed: int) -> float:
    """The final regret of one run's pick on the noiseless Branin."""
    algorithm, params, scale = METHODS[method]
    f = noisy_branin(noise, noise_seed, scale)
    if algorithm == "differential_evolution":
        budgeted = Budgeted(f, budget)
        with contextlib.suppress(_Spent):  # the budget is spent: the run ends there
            scipy.optimize.differential_evolution(budgeted, BRANIN, maxiter=10**6, rng=opt_seed)
        pick = budgeted.best_x
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # RewardRangeWarning: Branin's values are not in [0, 1]
            pick = vhct.minimize(f, BRANIN, budget, algorithm, opt_seed, **params).recommendation
    return branin(pick) - BRANIN_MIN


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=30, help="repetitions per method")
    parser.add_argument("--budget", type=int, default=300, help="calls of the function per run")
    parser.add_argument("--noise", type=float, default=1.0, help="half-width of the uniform noise")
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the script's generator")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    seeds = rng.integers(SEED_BOUND, size=(args.seeds, 2))  # per repetition: optimizer, noise
    start = time.perf_counter()
    print(
        f"Noisy Branin, noise Uniform(-{args.noise:g}, {args.noise:g}), {args.budget} calls, "
        f"{args.seeds} repetitions (seeds from --seed {args.seed}): final regret of the pick"
    )
    print("| method | regret, mean ± sd | median | s per run |")
    print("|---|---|---|---|")
    for method in METHODS:
        began = time.perf_counter()
        scores = np.array([regret(method, args.budget, args.noise, int(o), int(n)) for o, n in seeds])
        per_run = (time.perf_counter() - began) / args.seeds
        print(
            f"| {method} | {scores.mean():.3f} ± {scores.std(ddof=1):.3f} | {np.median(scores):.3f} "
            f"| {per_run:.2g} |",
            flush=True,
        )
    print(f"({time.perf_counter() - start:.0f} s in all)")


if __name__ == "__main__":
    main()
