"""The README's library example, word for word (tests/unit/test_extras.py checks that they agree).

Needs only the core install (``pip install vhct``); CI runs it in such an environment:
``python examples/quickstart.py``.
"""

import numpy as np
from vhct import VHCT, make_optimizer

def f(x):                      # your black box; maximized
    return -np.sum((x - 0.3) ** 2)

opt = VHCT(domain=[[0.0, 1.0], [-1.0, 1.0]], rho=0.75, seed=0)
rng = np.random.default_rng(1)
for t in range(2000):
    x = opt.ask()
    opt.tell(x, f(x) + rng.uniform(-0.05, 0.05))
print(opt.recommend())

# every algorithm by its name, as in the configs
hct = make_optimizer("HCT", [[0, 1]], horizon=2000, seed=0, rho=0.75)
