"""Binary hierarchical partition of a box (the paper's Sec. 2, "Hierarchical partitioning").

Node ``(h, i)`` has children ``(h+1, 2i-1)`` and ``(h+1, 2i)``; every cell is split in
half along one dimension, and a node is evaluated at its cell's centre. Cells are stored
compactly: one row of a growing ``(capacity, d)`` array for the lower corners and one for
the upper corners, indexed by node id (the root is id 0, children are created in pairs
with consecutive ids).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .base import SeedLike, as_domain, as_generator, check_choice

SplitPolicy = Literal["random", "longest"]
SPLIT_POLICIES: tuple[str, ...] = ("random", "longest")
_INITIAL_CAPACITY = 256
#: bounds beyond which ``lo + hi`` (or ``hi - lo``) could overflow
_HALF_MAX = np.finfo(float).max / 2.0


def midpoint(lo, hi):
    """``0.5 * (lo + hi)``, or ``0.5 * lo + 0.5 * hi`` where the sum overflows (bounds near the float max).

    Halving is exact away from subnormals, so the two agree bit for bit whenever the sum is
    finite; the first is kept there, so ordinary domains give the points they always gave.
    """
    with np.errstate(over="ignore"):
        mid = 0.5 * (lo + hi)
    if np.all(np.isfinite(mid)):
        return mid
    return 0.5 * lo + 0.5 * hi


class BoxPartition:
    """Cells of a binary partition of ``domain``, created on demand by :meth:`split`.

    ``split="random"`` draws the split dimension uniformly from the owner's generator
    (what the paper's experiments used); ``split="longest"`` halves the longest side,
    lowest index on ties (deterministic).
    """

    def __init__(self, domain, split: SplitPolicy = "random", seed: SeedLike = None):
        check_choice("split", split, SPLIT_POLICIES)
        self.domain = as_domain(domain)
        self.dim = self.domain.shape[0]
        self.split_policy = split
        self.rng = as_generator(seed)
        #: whether a cell's ``lo + hi`` or ``hi - lo`` can overflow (a bound beyond half the float maximum)
        self._wide = bool(np.any(np.abs(self.domain) > _HALF_MAX))
        self._lo = np.empty((_INITIAL_CAPACITY, self.dim))
        self._hi = np.empty((_INITIAL_CAPACITY, self.dim))
        self._lo[0] = self.domain[:, 0]
        self._hi[0] = self.domain[:, 1]
        #: depth h of each node
        self.depth: list[int] = [0]
        #: index i of each node within its depth (1-based, as in the paper)
        self.index: list[int] = [1]
        #: id of the left child (-1 for a leaf); the right child is ``left + 1``
        self.left: list[int] = [-1]
        #: id of the parent (-1 for the root)
        self.parent: list[int] = [-1]

    def __len__(self) -> int:
        return len(self.depth)

    def lower(self, node: int) -> np.ndarray:
        """Lower corner of a node's cell (a view)."""
        return self._lo[node]

    def upper(self, node: int) -> np.ndarray:
        """Upper corner of a node's cell (a view)."""
        return self._hi[node]

    def centre(self, node: int) -> np.ndarray:
        """The point at which a node is evaluated (finite also for bounds near the float maximum)."""
        if self._wide:
            return midpoint(self._lo[node], self._hi[node])
        return 0.5 * (self._lo[node] + self._hi[node])

    def is_leaf(self, node: int) -> bool:
        return self.left[node] < 0

    def _split_dimension(self, node: int) -> int:
        if self.dim == 1:
            return 0
        if self.split_policy == "random":
            return int(self.rng.integers(self.dim))
        if self._wide:  # half-widths: the same order, without overflow
            return int(np.argmax(0.5 * self._hi[node] - 0.5 * self._lo[node]))
        return int(np.argmax(self._hi[node] - self._lo[node]))

    def split(self, node: int, again: bool = False) -> tuple[int, int]:
        """Create the two children of a leaf and return their ids (left, right). ``again``: the node
        may be internal; its fresh children replace the old ones, whose subtree leaves the tree (it stays
        in the arrays, unreachable from the root), as the authors' library's re-expansion does."""
        if self.left[node] >= 0 and not again:
            raise ValueError(f"node {node} is already split")
        k = len(self.depth)
        if k + 2 > self._lo.shape[0]:
            grow = self._lo.shape[0]
            self._lo = np.concatenate([self._lo, np.empty((grow, self.dim))])
            self._hi = np.concatenate([self._hi, np.empty((grow, self.dim))])
        axis = self._split_dimension(node)
        lo, hi = self._lo[node], self._hi[node]
        mid = midpoint(lo[axis], hi[axis]) if self._wide else 0.5 * (lo[axis] + hi[axis])
        self._lo[k] = lo
        self._hi[k] = hi
        self._hi[k, axis] = mid
        self._lo[k + 1] = lo
        self._hi[k + 1] = hi
        self._lo[k + 1, axis] = mid
        h, i = self.depth[node] + 1, self.index[node]
        self.depth += [h, h]
        self.index += [2 * i - 1, 2 * i]
        self.left += [-1, -1]
        self.parent += [node, node]
        self.left[node] = k
        return k, k + 1
