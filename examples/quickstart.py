"""The README's library example: VHCT on a noisy two-dimensional black box.

Needs only the core install (``pip install vhct``, numpy alone); CI runs it in such an
environment. Run: ``python examples/quickstart.py``.
"""

import numpy as np

from vhct import VHCT, make_optimizer


def f(x):  # your black box; maximized
    return -np.sum((x - 0.3) ** 2)


opt = VHCT(domain=[[0.0, 1.0], [-1.0, 1.0]], rho=0.75, seed=0)
rng = np.random.default_rng(1)
for _ in range(2000):
    x = opt.ask()
    opt.tell(x, f(x) + rng.uniform(-0.05, 0.05))
print("VHCT recommends", opt.recommend())

# every algorithm by its name, as in the configs
hct = make_optimizer("HCT", [[0, 1]], horizon=2000, seed=0, rho=0.75)
print("built", type(hct).__name__, "by name")
