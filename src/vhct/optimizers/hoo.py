"""T-HOO: HOO (Bubeck et al. 2011) truncated at a depth set by the horizon."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from .base import SeedLike, check_choice, check_horizon, check_open_unit, check_positive, warn_past_horizon
from .partition import SplitPolicy
from .tree import TreeSearch

Truncation = Literal["authors", "strict"]
#: how deep the tree may grow, given ``H = truncation_depth(n, nu, rho)``: ``"authors"`` splits a
#: pulled leaf while its depth is ``<= H`` (leaves reach ``H + 1``), as the authors' library PyXAB
#: 0.3.0 does; ``"strict"`` splits while its depth is ``< H`` (leaves reach ``H``)
TRUNCATIONS: tuple[str, ...] = ("authors", "strict")


def truncation_depth(horizon: int, nu: float, rho: float) -> int:
    """Depth ``H`` at which ``nu rho^H`` reaches ``1/sqrt(n)``: ``ceil((log n / 2 + log nu) / log(1/rho))``.

    Truncating there loses nothing in the regret bound (Bubeck et al. 2011, Sec. 4.2);
    at least 1 so that the root's children exist.
    """
    depth = math.ceil((0.5 * math.log(horizon) + math.log(nu)) / math.log(1.0 / rho))
    return max(1, depth)


class TruncatedHOO(TreeSearch):
    """T-HOO with ``U = mean + sqrt(2 log n / T) + nu rho^h``.

    Every round descends by B to a leaf, pulls its centre and credits the reward to every
    node on the path (HOO's means average over the subtree); the pulled leaf is split
    unless it lies at the deepest allowed depth ``max_depth``. ``n`` is the horizon.

    ``truncation`` (see :data:`TRUNCATIONS`) sets ``max_depth`` from ``H = truncation_depth``:
    ``H + 1`` for ``"authors"`` (default; the paper gives no depth, so we take the one its
    experiments ran with), ``H`` for ``"strict"``.
    """

    name = "T-HOO"

    def __init__(
        self,
        domain,
        horizon: int,
        rho: float = 0.5,
        nu: float = 1.0,
        split: SplitPolicy = "random",
        truncation: Truncation = "authors",
        seed: SeedLike = None,
    ):
        super().__init__(domain, split=split, seed=seed)
        self.horizon = check_horizon("horizon", horizon)
        self.truncation = check_choice("truncation", truncation, TRUNCATIONS)
        self.rho = check_open_unit("rho", rho)
        self.nu = check_positive("nu", nu)
        #: ``H``, the depth at which ``nu rho^H`` reaches ``1/sqrt(n)``
        self.truncation_depth = truncation_depth(self.horizon, self.nu, self.rho)
        #: the deepest a node may lie: pulled leaves above it are split
        self.max_depth = self.truncation_depth + (1 if truncation == "authors" else 0)
        self._two_log_n = 2.0 * math.log(max(self.horizon, 2))
        self._expand(0)

    def _ask(self) -> np.ndarray:
        warn_past_horizon(self, self.horizon, "its bonus and truncation depth assume n = horizon")
        left = self.partition.left
        node = 0
        path = [0]
        while left[node] >= 0:
            node = self._best_child(node)
            path.append(node)
        self._path = path
        return self.partition.centre(node)

    def _tell(self, reward: float) -> None:
        depth, count, mean, upper = self.partition.depth, self.count, self.mean, self.upper_bound
        for node in self._path:
            n = count[node] + 1
            count[node] = n
            mean[node] += (reward - mean[node]) / n
            upper[node] = mean[node] + math.sqrt(self._two_log_n / n) + self.nu * self.rho ** depth[node]
        leaf = self._path[-1]
        if depth[leaf] < self.max_depth:
            self._expand(leaf)
        self._backup(self._path)
        self._last_pulled = leaf

    def recommend(self) -> np.ndarray:
        """Centre of the end of the most-pulled path (descend to the child pulled more often).

        A lower confidence bound would favour shallow nodes here, since HOO's means
        average over whole subtrees.
        """
        left, count = self.partition.left, self.count
        node = 0
        while left[node] >= 0 and count[left[node]] + count[left[node] + 1] > 0:
            child = left[node]
            node = child if count[child] >= count[child + 1] else child + 1
        return self.partition.centre(node).copy()
