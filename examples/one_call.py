"""The README's one-call example, word for word (tests/unit/test_examples.py checks and runs it).

Needs only the core install (``pip install vhct``); CI runs it in such an environment too.
"""

import numpy as np
import vhct

def loss(x):                   # your black box; minimized
    return float(np.sum((x - 0.3) ** 2))

result = vhct.minimize(loss, [[0.0, 1.0], [-1.0, 1.0]], budget=500, seed=0, deterministic=True)
print(result.x, result.fun, result.nit, result.nfev, f"{result.wall_seconds:.2f} s")
# nit: rounds; nfev: calls of loss (deterministic=True never evaluates a point twice)
# result.points, result.values: every round; result.recommendation: VHCT's own pick
