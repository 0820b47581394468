"""Cost of the BO baseline (GPyOpt) per iteration, against the number of observations, and against VHCT.

Usage: python benchmarks/bo_cost.py [--observations 25 50 100 200] [--window 10] [--seed 0] [--vhct-repeats 5]

Runs one BO on Garland (f(x) = x(1-x)(4 - sqrt|sin 60x|) on [0, 1]) with the paper's low noise
Uniform(-0.05, 0.05) up to the largest number of observations, timing every round (ask + objective
+ tell). For each requested n it prints the mean wall and CPU seconds of the ``window`` rounds that
bring the data to n observations (the cost of one iteration at about n observations), BO's total
wall time for n rounds, VHCT's (rho = 0.75) wall time for a run of horizon n on the same objective
and noise (median of ``--vhct-repeats`` runs: each takes milliseconds), and their ratio. The paper
(Experiment Details) reports BO as far more expensive than the tree methods; this measures by how
much here. The load average is printed since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np

from vhct.objectives import make_objective
from vhct.objectives.noise import LOW_NOISE, UniformNoise
from vhct.optimizers.base import Optimizer
from vhct.optimizers.bo import load_gpyopt
from vhct.optimizers.registry import make_optimizer

OBJECTIVE = "garland"
VHCT_PARAMS = {"rho": 0.75}
DEFAULT_OBSERVATIONS = [25, 50, 100, 200]
DEFAULT_WINDOW = 10
DEFAULT_VHCT_REPEATS = 5


def round_seconds(
    make: Callable[[int], Optimizer], horizon: int, seed: int, report_at: frozenset[int] = frozenset()
) -> tuple[np.ndarray, np.ndarray]:
    """Wall and CPU seconds of each of ``horizon`` rounds (ask, evaluate with noise, tell), with progress
    on stderr after the rounds in ``report_at``. CPU time (the process's) is less sensitive to load."""
    f = make_objective(OBJECTIVE)
    noise = UniformNoise(LOW_NOISE, np.random.default_rng([seed, 1]))
    opt = make(horizon)
    wall, cpu = np.empty(horizon), np.empty(horizon)
    for t in range(horizon):
        tick, cpu_tick = time.perf_counter(), time.process_time()
        x = opt.ask()
        opt.tell(x, f(x) + noise.sample())
        wall[t], cpu[t] = time.perf_counter() - tick, time.process_time() - cpu_tick
        if t + 1 in report_at:
            total, cpu_total = wall[: t + 1].sum(), cpu[: t + 1].sum()
            print(f"  {t + 1} rounds: {total:.1f} s wall, {cpu_total:.1f} s CPU", file=sys.stderr, flush=True)
    return wall, cpu


def vhct_seconds(domain: np.ndarray, horizon: int, seed: int, repeats: int) -> float:
    """Median wall seconds of ``repeats`` VHCT runs of ``horizon`` rounds."""

    def make(h: int) -> Optimizer:
        return make_optimizer("VHCT", domain=domain, horizon=h, seed=seed, **VHCT_PARAMS)

    return float(np.median([round_seconds(make, horizon, seed)[0].sum() for _ in range(repeats)]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--observations", type=int, nargs="+", default=DEFAULT_OBSERVATIONS)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW, help="rounds averaged per row")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--vhct-repeats", type=int, default=DEFAULT_VHCT_REPEATS, help="VHCT runs per n (median; it takes ms)"
    )
    args = parser.parse_args()
    checkpoints = sorted(set(args.observations))
    if checkpoints[0] < 1:
        parser.error(f"--observations must be >= 1, got {args.observations}")
    if args.window < 1:
        parser.error(f"--window must be >= 1, got {args.window}")
    if args.vhct_repeats < 1:
        parser.error(f"--vhct-repeats must be >= 1, got {args.vhct_repeats}")
    domain = make_objective(OBJECTIVE).domain
    load_gpyopt()  # keep the one-off import out of the first timed BO round

    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    bo, bo_cpu = round_seconds(
        lambda n: make_optimizer("BO", domain=domain, horizon=n, seed=args.seed),
        checkpoints[-1],
        args.seed,
        report_at=frozenset(checkpoints),
    )
    vhct = {n: vhct_seconds(domain, n, args.seed, args.vhct_repeats) for n in checkpoints}
    print(f"load average after:  {os.getloadavg()[0]:.2f}\n")

    header = (
        f"{'observations':>12} {'BO s/iter':>10} {'BO cpu/iter':>12} {'BO total s':>11}"
        f" {'VHCT total s':>13} {'BO/VHCT':>9}"
    )
    vhct_label = f"VHCT (rho={VHCT_PARAMS['rho']})"
    print(f"BO (GPyOpt defaults) vs {vhct_label} on {OBJECTIVE}, noise U(-{LOW_NOISE}, {LOW_NOISE})")
    print(f"BO s/iter, cpu/iter: mean wall, CPU seconds of the {args.window} rounds reaching n observations")
    print(header)
    print("-" * len(header))
    for n in checkpoints:
        window = slice(max(0, n - args.window), n)
        per_iter, cpu_per_iter, total = bo[window].mean(), bo_cpu[window].mean(), bo[:n].sum()
        print(
            f"{n:>12} {per_iter:>10.3f} {cpu_per_iter:>12.3f} {total:>11.2f} {vhct[n]:>13.4f}"
            f" {total / vhct[n]:>9.0f}"
        )


if __name__ == "__main__":
    main()
