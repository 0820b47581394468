"""Rounds per second of every optimizer on noisy Garland, against the authors' library PyXAB.

Usage: python benchmarks/speed.py [--rounds 1000 10000 100000] [--pyxab-rounds 1000 10000] [--no-pyxab]

Prints one table: for each algorithm and horizon, total seconds, rounds per second,
microseconds per round, the final tree depth, and that time per round divided by the
depth (flat when the cost per round grows no faster than the depth). PyXAB 0.3.0 is installed
from the package registry into a throwaway virtual environment (``pyxab_env.py``) and run on
the same objective and noise in the same invocation; when that fails the PyXAB rows are skipped
with a message. The objective evaluation is included in every timing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
from pyxab_env import pyxab_python

from vhct.objectives import make_objective
from vhct.optimizers.registry import make_optimizer

ALGORITHMS = {"VHCT": {"rho": 0.75}, "HCT": {"rho": 0.75}, "T-HOO": {"rho": 0.25}, "POO": {}, "PCT": {}}
NOISE = 0.05

# Runs inside the throwaway venv: drives PyXAB's own classes through their pull/receive_reward API.
PYXAB_DRIVER = textwrap.dedent(
    """
    import json, math, sys, time
    import numpy as np
    from PyXAB.algos.VHCT import VHCT
    from PyXAB.algos.HCT import HCT
    from PyXAB.algos.HOO import T_HOO
    from PyXAB.algos.POO import POO
    from PyXAB.algos.PCT import PCT

    def garland(x):
        x = x[0]
        return x * (1 - x) * (4 - math.sqrt(abs(math.sin(60 * x))))

    name, n = sys.argv[1], int(sys.argv[2])
    domain = [[0.0, 1.0]]
    make = {
        "VHCT": lambda: VHCT(nu=1, rho=0.75, domain=domain),
        "HCT": lambda: HCT(nu=1, rho=0.75, domain=domain),
        "T-HOO": lambda: T_HOO(nu=1, rho=0.25, rounds=n, domain=domain),
        "POO": lambda: POO(numax=1, rhomax=0.9, rounds=n, domain=domain, algo=T_HOO),
        "PCT": lambda: PCT(numax=1, rhomax=0.9, rounds=n, domain=domain),
    }
    algo = make[name]()
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for t in range(1, n + 1):
        point = algo.pull(t)
        algo.receive_reward(t, garland(point) + rng.uniform(-0.05, 0.05))
    print(json.dumps({"seconds": time.perf_counter() - start}))
    """
)


def time_ours(name: str, rounds: int) -> dict:
    f = make_objective("garland")
    rng = np.random.default_rng(0)
    opt = make_optimizer(name, f.domain, rounds, seed=0, **ALGORITHMS[name])
    start = time.perf_counter()
    for _ in range(rounds):
        x = opt.ask()
        opt.tell(x, f(x) + rng.uniform(-NOISE, NOISE))
    seconds = time.perf_counter() - start
    depth = getattr(opt, "tree_depth", None)
    return {"seconds": seconds, "depth": depth}


def time_pyxab(python: Path, driver: Path, name: str, rounds: int) -> dict | None:
    result = subprocess.run([str(python), str(driver), name, str(rounds)], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"PyXAB {name} n={rounds} failed: {result.stderr.strip()[-400:]}", file=sys.stderr)
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--pyxab-rounds", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--no-pyxab", action="store_true")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=list(ALGORITHMS))
    args = parser.parse_args()

    rows = []
    for name in args.algorithms:
        for n in args.rounds:
            r = time_ours(name, n)
            rows.append(("vhct", name, n, r["seconds"], r["depth"]))
            print(f"  measured vhct {name} n={n}: {r['seconds']:.2f} s", file=sys.stderr, flush=True)

    if not args.no_pyxab:
        with tempfile.TemporaryDirectory() as tmp:
            python = pyxab_python(Path(tmp))
            if python is not None:
                driver = Path(tmp) / "driver.py"
                driver.write_text(PYXAB_DRIVER)
                for name in args.algorithms:
                    for n in args.pyxab_rounds:
                        r = time_pyxab(python, driver, name, n)
                        if r is not None:
                            rows.append(("PyXAB", name, n, r["seconds"], None))
                            print(f"  measured PyXAB {name} n={n}: {r['seconds']:.2f} s", file=sys.stderr)

    print(
        f"{'library':8} {'algorithm':9} {'rounds':>7} {'seconds':>9} {'rounds/s':>10} "
        f"{'us/round':>9} {'depth':>5} {'us/round/depth':>14}"
    )
    for lib, name, n, seconds, depth in rows:
        per_round = 1e6 * seconds / n
        per_depth = f"{per_round / depth:14.2f}" if depth else f"{'':>14}"
        print(
            f"{lib:8} {name:9} {n:7d} {seconds:9.3f} {n / seconds:10.0f} {per_round:9.1f} "
            f"{depth if depth else '':>5} {per_depth}"
        )
    ours = {(name, n): s for lib, name, n, s, _ in rows if lib == "vhct"}
    for lib, name, n, seconds, _ in rows:
        if lib == "PyXAB" and (name, n) in ours:
            print(f"speed-up over PyXAB: {name} n={n}: {seconds / ours[(name, n)]:.0f}x")


if __name__ == "__main__":
    main()
