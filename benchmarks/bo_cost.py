"""Cost of the BO baseline (GPyOpt) per round and per run, against the observations, and against VHCT.

Usage: python benchmarks/bo_cost.py [--observations 50 100 200 400 500] [--restarts 5 1] [--window 10]
       [--objective garland] [--objective-params '{}'] [--seed 0] [--vhct-repeats 5]

For each number of GP-fit restarts (``optimize_restarts``; GPyOpt's default is 5), runs one BO on the
objective (default Garland, f(x) = x(1-x)(4 - sqrt|sin 60x|) on [0, 1]; a real-data task with
``--objective landmine --objective-params '{"data_path": "data/landmine/LandmineData.mat"}'``) with
the paper's low noise Uniform(-0.05, 0.05) up to the largest number of observations, timing every
round (ask + objective + tell), BLAS at one thread (``vhct.optimizers.bo.BLAS_THREADS``). For each
requested n it prints the mean wall and CPU seconds of the ``window`` rounds that bring the data to n
observations (the cost of one round at about n observations), BO's total CPU seconds for n rounds
(the cost of a run of horizon n), VHCT's (rho = 0.75) wall time for a run of horizon n on the same
objective and noise (median of ``--vhct-repeats`` runs), and the ratio of the wall times. CPU time
(the process's) is the figure to quote on a shared machine; the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

import numpy as np

from vhct.objectives import make_objective
from vhct.objectives.base import Objective
from vhct.objectives.noise import LOW_NOISE, UniformNoise
from vhct.optimizers.base import Optimizer
from vhct.optimizers.bo import load_gpyopt
from vhct.optimizers.registry import make_optimizer

OBJECTIVE = "garland"
VHCT_PARAMS = {"rho": 0.75}
DEFAULT_OBSERVATIONS = [50, 100, 200, 400, 500]
#: GP-fit restarts compared: GPyOpt's default, and the warm-started single fit
DEFAULT_RESTARTS = [5, 1]
DEFAULT_WINDOW = 10
DEFAULT_VHCT_REPEATS = 5


def round_seconds(
    make: Callable[[int], Optimizer],
    f: Objective,
    horizon: int,
    seed: int,
    report_at: frozenset[int] = frozenset(),
) -> tuple[np.ndarray, np.ndarray]:
    """Wall and CPU seconds of each of ``horizon`` rounds (ask, evaluate ``f`` with noise, tell), with
    progress on stderr after the rounds in ``report_at``. CPU time (the process's) is less sensitive
    to load."""
    noise = UniformNoise(LOW_NOISE, np.random.default_rng([seed, 1]))
    opt = make(horizon)
    wall, cpu = np.empty(horizon), np.empty(horizon)
    for t in range(horizon):
        tick, cpu_tick = time.perf_counter(), time.process_time()
        x = opt.ask()
        value = f(x, seed=(seed, t + 1)) if f.stochastic else f(x)
        opt.tell(x, value + noise.sample())
        wall[t], cpu[t] = time.perf_counter() - tick, time.process_time() - cpu_tick
        if t + 1 in report_at:
            total, cpu_total = wall[: t + 1].sum(), cpu[: t + 1].sum()
            print(f"  {t + 1} rounds: {total:.1f} s wall, {cpu_total:.1f} s CPU", file=sys.stderr, flush=True)
    return wall, cpu


def vhct_seconds(f: Objective, horizon: int, seed: int, repeats: int) -> float:
    """Median wall seconds of ``repeats`` VHCT runs of ``horizon`` rounds."""

    def make(h: int) -> Optimizer:
        return make_optimizer("VHCT", domain=f.domain, horizon=h, seed=seed, **VHCT_PARAMS)

    return float(np.median([round_seconds(make, f, horizon, seed)[0].sum() for _ in range(repeats)]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--observations", type=int, nargs="+", default=DEFAULT_OBSERVATIONS)
    parser.add_argument("--restarts", type=int, nargs="+", default=DEFAULT_RESTARTS, help="GP-fit restarts")
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW, help="rounds averaged per row")
    parser.add_argument("--objective", default=OBJECTIVE, help="objective name (vhct.objectives)")
    parser.add_argument("--objective-params", default="{}", help="the objective's parameters, as JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--vhct-repeats", type=int, default=DEFAULT_VHCT_REPEATS, help="VHCT runs per n (median; it takes ms)"
    )
    args = parser.parse_args()
    checkpoints = sorted(set(args.observations))
    if checkpoints[0] < 1:
        parser.error(f"--observations must be >= 1, got {args.observations}")
    if min(args.restarts) < 1:
        parser.error(f"--restarts must be >= 1, got {args.restarts}")
    if args.window < 1:
        parser.error(f"--window must be >= 1, got {args.window}")
    if args.vhct_repeats < 1:
        parser.error(f"--vhct-repeats must be >= 1, got {args.vhct_repeats}")
    try:
        f = make_objective(args.objective, **json.loads(args.objective_params))
    except (KeyError, TypeError, ValueError) as exc:
        parser.error(f"--objective/--objective-params: {exc}")
    load_gpyopt()  # keep the one-off import out of the first timed BO round

    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    timed = {}
    for restarts in args.restarts:
        print(f"BO, optimize_restarts={restarts}:", file=sys.stderr, flush=True)
        timed[restarts] = round_seconds(
            lambda n, r=restarts: make_optimizer(
                "BO", domain=f.domain, horizon=n, seed=args.seed, optimize_restarts=r
            ),
            f,
            checkpoints[-1],
            args.seed,
            report_at=frozenset(checkpoints),
        )
    vhct = {n: vhct_seconds(f, n, args.seed, args.vhct_repeats) for n in checkpoints}
    print(f"load average after:  {os.getloadavg()[0]:.2f}\n")

    header = (
        f"{'restarts':>8} {'observations':>12} {'BO s/round':>10} {'BO cpu/round':>12} {'BO run cpu s':>12}"
        f" {'BO run s':>9} {'VHCT run s':>10} {'BO/VHCT':>8}"
    )
    vhct_label = f"VHCT (rho={VHCT_PARAMS['rho']})"
    print(f"BO (GPyOpt) vs {vhct_label} on {args.objective} ({f.dim}-d), noise U(-{LOW_NOISE}, {LOW_NOISE})")
    print(f"BO s/round, cpu/round: mean wall, CPU seconds of the {args.window} rounds up to n observations")
    print("BO run cpu s, run s: CPU, wall seconds of all n rounds (one run of horizon n)")
    print(header)
    print("-" * len(header))
    for restarts, (bo, bo_cpu) in timed.items():
        for n in checkpoints:
            window = slice(max(0, n - args.window), n)
            per_round, cpu_per_round, total = bo[window].mean(), bo_cpu[window].mean(), bo[:n].sum()
            print(
                f"{restarts:>8} {n:>12} {per_round:>10.3f} {cpu_per_round:>12.3f} {bo_cpu[:n].sum():>12.1f}"
                f" {total:>9.1f} {vhct[n]:>10.4f} {total / vhct[n]:>8.0f}"
            )


if __name__ == "__main__":
    main()
