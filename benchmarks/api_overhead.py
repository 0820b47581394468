"""Time per round and peak traced memory of ``vhct.minimize`` with a trivial function.

Usage: python benchmarks/api_overhead.py [budget ...]   (default 20000 200000)

For each budget and algorithm (VHCT, T-HOO): the best of 3 runs' microseconds per round (the
optimizer's step plus the one-call loop: history, checks) and the peak memory ``tracemalloc``
traces in one run (numpy's arrays included). Run before and after a change to the loop.
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np

import vhct


def f(x: np.ndarray) -> float:
    return float(x @ x)


def main() -> None:
    budgets = [int(b) for b in sys.argv[1:]] or [20_000, 200_000]
    for budget in budgets:
        for algorithm in ("VHCT", "T-HOO"):
            times = []
            for rep in range(3):
                start = time.perf_counter()
                vhct.minimize(f, [[-1, 1]] * 3, budget, algorithm=algorithm, seed=rep)
                times.append(time.perf_counter() - start)
            tracemalloc.start()
            vhct.minimize(f, [[-1, 1]] * 3, budget, algorithm=algorithm, seed=0)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(
                f"{algorithm:6s} budget {budget:>7d}: {min(times) / budget * 1e6:6.2f} us/round (best of 3), "
                f"peak traced {peak / 2**20:6.2f} MiB"
            )


if __name__ == "__main__":
    main()
