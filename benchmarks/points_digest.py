"""SHA-256 of the points (and every 100th recommendation) of 2000-round runs of VHCT, HCT, T-HOO, POO, PCT.

A before/after check that a change leaves ordinary runs byte-identical: run it against two
source trees and compare the printed digests, e.g.

    git archive <old-commit> src | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src python benchmarks/points_digest.py > before.txt
    PYTHONPATH=src python benchmarks/points_digest.py > after.txt && diff before.txt after.txt
"""

import hashlib

import numpy as np

from vhct.optimizers.hoo import TruncatedHOO
from vhct.optimizers.parallel import PCT, POO
from vhct.optimizers.tree import HCT, VHCT


def garland(x):
    x = np.asarray(x, float)
    return float(np.prod(4 * x * (1 - x) * (0.75 + 0.25 * (1 - np.sqrt(np.abs(np.sin(60 * x)))))))


N = 2000
cases = []
for dim in (1, 2):
    dom = [[0.0, 1.0]] * dim
    for seed in (0, 1, 2):
        cases += [
            (f"VHCT-{dim}-{seed}", lambda s=seed, d=dom: VHCT(d, rho=0.75, seed=s)),
            (
                f"VHCT-cur-{dim}-{seed}",
                lambda s=seed, d=dom: VHCT(d, rho=0.5, refresh="current", split="longest", seed=s),
            ),
            (f"HCT-{dim}-{seed}", lambda s=seed, d=dom: HCT(d, rho=0.5, seed=s)),
            (f"THOO-{dim}-{seed}", lambda s=seed, d=dom: TruncatedHOO(d, N, rho=0.25, seed=s)),
            (f"POO-{dim}-{seed}", lambda s=seed, d=dom: POO(d, N, seed=s)),
            (f"PCT-{dim}-{seed}", lambda s=seed, d=dom: PCT(d, horizon=N, seed=s)),
            (
                f"PCTfb-{dim}-{seed}",
                lambda s=seed, d=dom: PCT(
                    d, horizon=N, schedule="fixed_budget", candidate="recommendation", seed=s
                ),
            ),
        ]
cases.append(("VHCT-shifted", lambda: VHCT([[-3.0, 7.5]], rho=0.5, seed=5)))
total = hashlib.sha256()
for name, make in cases:
    opt = make()
    rng = np.random.default_rng(123)
    h = hashlib.sha256()
    for t in range(N):
        x = opt.ask()
        y = garland((x - opt.domain[:, 0]) / (opt.domain[:, 1] - opt.domain[:, 0])) + rng.uniform(-0.05, 0.05)
        opt.tell(x, y)
        h.update(x.tobytes())
        if t % 100 == 99:
            h.update(np.asarray(opt.recommend()).tobytes())
    total.update(h.digest())
    print(name, h.hexdigest()[:16])
print("TOTAL", total.hexdigest())
