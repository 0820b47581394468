"""Optuna's per-trial overhead with VHCTSampler, and the seconds per round of the Optuna baselines.

Usage: python benchmarks/optuna_overhead.py [--horizons 100 500] [--seed 0] [--algorithms ...]

One thread (BLAS, OpenMP and torch limited to one before anything is imported). The objective is
a 2-D Garland product, f(x, y) = g(x) g(y) with g the paper's Garland function on [0, 1]
(noise-free: the evaluation costs microseconds, so the times are the optimizers' own).

1. VHCT (rho = 0.75) at the largest horizon: its own ask/tell loop against the same rounds run as
   an Optuna study with ``VHCTSampler`` (in-memory storage), in milliseconds per round; the
   difference is what Optuna adds per trial.
2. Every Optuna baseline (Random, TPE, CMA-ES, GP-Optuna) and VHCT/HCT through their ask/tell
   loop, milliseconds per round averaged over a run of each horizon (ask + evaluate + tell).

Each algorithm first runs a few warm-up rounds (imports, first-call costs) outside the timing.
Prints measured numbers only; the load average is printed since the machine may be shared.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from vhct.objectives import make_objective  # noqa: E402
from vhct.optimizers.registry import make_optimizer  # noqa: E402

DEFAULT_HORIZONS = [100, 500]
BASELINES = ["Random", "TPE", "CMA-ES", "GP-Optuna"]
TREE = {"VHCT": {"rho": 0.75}, "HCT": {"rho": 0.75}}
DOMAIN = [[0.0, 1.0], [0.0, 1.0]]
#: untimed rounds before each algorithm's measurements (imports such as cmaes' and torch's)
WARM_UP = 5


def garland_product():
    g = make_objective("garland")
    return lambda x: float(g(np.array([x[0]])) * g(np.array([x[1]])))


def loop_ms_per_round(name: str, horizon: int, seed: int, f) -> float:
    opt = make_optimizer(name, DOMAIN, horizon, seed=seed, **TREE.get(name, {}))
    start = time.perf_counter()
    for _ in range(horizon):
        x = opt.ask()
        opt.tell(x, f(x))
    return (time.perf_counter() - start) / horizon * 1e3


def sampler_ms_per_trial(horizon: int, seed: int, f) -> float:
    import optuna

    from vhct.integrations.optuna import VHCTSampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = {n: optuna.distributions.FloatDistribution(0.0, 1.0) for n in ("x0", "x1")}
    sampler = VHCTSampler("VHCT", seed=seed, search_space=space, **TREE["VHCT"])
    study = optuna.create_study(direction="maximize", sampler=sampler)
    start = time.perf_counter()
    study.optimize(lambda t: f([t.suggest_float("x0", 0.0, 1.0), t.suggest_float("x1", 0.0, 1.0)]), horizon)
    return (time.perf_counter() - start) / horizon * 1e3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--horizons", nargs="+", type=int, default=DEFAULT_HORIZONS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--algorithms", nargs="+", default=[*TREE, *BASELINES])
    args = parser.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    f = garland_product()
    print(f"load average {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}, one thread")
    n = max(args.horizons)
    loop_ms_per_round("VHCT", WARM_UP, args.seed, f)
    sampler_ms_per_trial(WARM_UP, args.seed, f)
    own = loop_ms_per_round("VHCT", n, args.seed, f)
    through = sampler_ms_per_trial(n, args.seed, f)
    print(f"\nVHCT, {n} rounds: own ask/tell {own:.3f} ms/round; as Optuna sampler {through:.3f} ms/trial;")
    print(f"Optuna's overhead {through - own:.3f} ms per trial ({through / own:.1f}x)")
    print(f"\nms per round (ask + evaluate + tell), averaged over a run of each horizon; seed {args.seed}")
    print(f"{'algorithm':<10}" + "".join(f"{h:>12}" for h in args.horizons))
    for name in args.algorithms:
        loop_ms_per_round(name, WARM_UP, args.seed, f)
        cells = [loop_ms_per_round(name, h, args.seed, f) for h in args.horizons]
        print(f"{name:<10}" + "".join(f"{c:>12.3f}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
