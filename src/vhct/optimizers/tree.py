"""Tree search over a hierarchical partition, and the OSC engine (the paper's complete VHCT).

Per-node statistics live in flat Python lists indexed by node id (cheaper than numpy
for the scalar work of one round). A round touches only the traversal path: descend by
the larger B-value, pull one node, update its running mean and variance (Welford: no
reward lists), then recompute U of that node and B back up the path. The log term of
the confidence schedule changes only when ``t+`` doubles; the thresholds, and every U and B
at the rounds :data:`REFRESHES` prescribes, are then recomputed for the whole tree, which
costs O(tree size) a logarithmic number of times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from .base import Optimizer, SeedLike, check_choice, is_number, reward_overflow, reward_range_message
from .partition import BoxPartition, SplitPolicy
from .resolution import Resolution, make_resolution
from .uncertainty import MAX_LOG_TERM, Bernstein, ConfidenceSchedule, Hoeffding, Uncertainty

INF = math.inf

Refresh = Literal["paper", "current"]
#: when OSC recomputes every node's U (and B) with the current log term ``L = log(1/delta~(t+))``:
#: ``"paper"``: at the start of each round ``t = t+`` (``t+ = 2^ceil(log2 t)``: the powers of two),
#: the complete VHCT's "if t = t+" (App.), as the authors' library runs it; in between, a node's U
#: is recomputed only when it is pulled. ``"current"``: whenever ``L`` changes (the first round
#: after each power of two), so every U always uses the current ``L``. Thresholds tau always use
#: the current ``L`` (the paper defines ``tau_{h,i}(t)`` at round ``t``).
REFRESHES: tuple[str, ...] = ("paper", "current")

#: relative slack on the bound ``b^2/4`` of a node's variance before :class:`RewardRangeWarning`:
#: rewards within a range of width ``b`` never exceed it (Popoviciu), up to rounding
VARIANCE_BOUND_SLACK = 1e-9


class TreeSearch(Optimizer):
    """Node storage, expansion and B-value backup shared by the hierarchical optimizers.

    Invariant after every round: ``B = U`` at a leaf and ``B = min(U, max(B_left, B_right))``
    at an internal node, so ``B <= U`` everywhere.
    """

    def __init__(self, domain, split: SplitPolicy = "random", seed: SeedLike = None):
        super().__init__(domain, seed)
        self.partition = BoxPartition(self.domain, split=split, seed=self.rng)
        #: number of pulls T of each node
        self.count: list[int] = [0]
        #: running mean of each node's rewards
        self.mean: list[float] = [0.0]
        #: upper bound U of each node (+inf until pulled)
        self.upper_bound: list[float] = [INF]
        #: tighter bound B of each node
        self.b_value: list[float] = [INF]
        self._path: list[int] = []
        self._last_pulled: int | None = None
        #: ``max(SE, OE)`` of the node selected in the current round, at its selection (before its pull)
        self._selected_bound: float | None = None
        self._last_bound: float | None = None

    # -- tree structure -------------------------------------------------------------
    def _expand(self, node: int, again: bool = False) -> None:
        """Split a leaf (``again``: or an internal node, dropping its subtree); the new children
        start unvisited with U = B = +inf."""
        self.partition.split(node, again)
        self.count += [0, 0]
        self.mean += [0.0, 0.0]
        self.upper_bound += [INF, INF]
        self.b_value += [INF, INF]

    def _backup(self, path: list[int]) -> None:
        """Recompute B from the end of ``path`` back to the root."""
        left, upper, b = self.partition.left, self.upper_bound, self.b_value
        for node in reversed(path):
            child = left[node]
            if child < 0:
                b[node] = upper[node]
            else:
                bl, br = b[child], b[child + 1]
                best = bl if bl >= br else br
                u = upper[node]
                b[node] = u if u <= best else best

    def _backup_all(self) -> None:
        """Recompute B of every node; children always have larger ids than their parent."""
        left, upper, b = self.partition.left, self.upper_bound, self.b_value
        for node in range(len(b) - 1, -1, -1):
            child = left[node]
            if child < 0:
                b[node] = upper[node]
            else:
                best = max(b[child], b[child + 1])
                b[node] = min(upper[node], best)

    def _best_child(self, node: int) -> int:
        """Child with the larger B (the left one on ties)."""
        child = self.partition.left[node]
        return child if self.b_value[child] >= self.b_value[child + 1] else child + 1

    # -- reporting ------------------------------------------------------------------
    @property
    def pulled_depth(self) -> int | None:
        return None if self._last_pulled is None else self.partition.depth[self._last_pulled]

    @property
    def selection_bound(self) -> float | None:
        """``max(SE_{h_t,i_t}(T, t), OE_{h_t})`` of the node pulled in the last round, as it was when the
        round selected it (before the pull: ``+inf`` for a node never pulled); None before any round or
        for a tree search without the two quantities. The paper's selection guarantee (Sec. 4.3, App.
        lemma "upper bound of simple regret") is ``f* - f(x_{h_t,i_t}) <= 3 max(SE, OE)``."""
        return self._last_bound

    @property
    def tree_depth(self) -> int:
        """Maximum depth of the tree built so far."""
        return max(self.partition.depth)

    @property
    def size(self) -> int:
        """Number of nodes in the tree."""
        return len(self.count)


class OSC(TreeSearch):
    """The optimum-statistical collaboration engine (Algorithm 1; complete VHCT in the appendix).

    Pluggable resolution descriptor ``OE_h`` (``resolution(h)``) and uncertainty quantifier
    ``SE`` (an :class:`~vhct.optimizers.uncertainty.Uncertainty`). From the root, move to the child
    with the larger B while the node is internal and ``T >= tau``; pull that node; update
    its statistics, ``U = mean + OE_h + SE`` and B back up the path; expand a leaf once
    ``T >= tau``. The root is never pulled (the paper sets ``T_{0,1} = tau_0 = 1``) and the
    tree starts with the root's two children.

    ``reexpand``: also expand a pulled internal node once ``T >= tau`` (the traversal stops at one
    when tau has grown past its count), replacing its children by fresh leaves and dropping its
    subtree, as the authors' library PyXAB 0.3.0 does (docs/upstream/reexpansion.md); off by
    default, the paper's algorithm.
    """

    name = "OSC"

    def __init__(
        self,
        domain,
        resolution: Resolution,
        uncertainty: Uncertainty,
        schedule: ConfidenceSchedule,
        split: SplitPolicy = "random",
        seed: SeedLike = None,
        name: str | None = None,
        refresh: Refresh = "paper",
        reexpand: bool = False,
    ):
        super().__init__(domain, split=split, seed=seed)
        if not isinstance(reexpand, bool):
            raise ValueError(f"reexpand must be true or false, got {reexpand!r}")
        self.reexpand = reexpand
        if not callable(resolution):
            raise ValueError(f"resolution must be callable depth -> float, got {resolution!r}")
        self.refresh = check_choice("refresh", refresh, REFRESHES)
        self.resolution = resolution
        self.uncertainty = uncertainty
        self.schedule = schedule
        if name is not None:
            self.name = name
        self._m2: list[float] = [0.0]
        #: threshold tau of each node (``math.inf`` when no pull count reaches it)
        self._tau: list[int | float] = [0]  # the root always passes
        self._oe: list[float] = []
        self._log_term = schedule.log_term(1)
        self._check_scale()
        b = getattr(uncertainty, "b", None)
        #: largest node variance rewards within the declared width ``b`` allow (no check without a ``b``)
        self._variance_bound = b * b / 4.0 * (1.0 + VARIANCE_BOUND_SLACK) if is_number(b) else math.inf
        self._expand(0)

    def _check_scale(self) -> None:
        """Reject parameters for which ``U = mean + OE_0 + SE`` overflows whatever the rewards."""
        oe, se = self.oe(0), self.uncertainty(1, 0.0, MAX_LOG_TERM)
        if not math.isfinite(oe + se):
            raise ValueError(
                f"{self.name}: the resolution OE_0 = {oe!r} (nu for nu rho^h) plus the uncertainty "
                f"SE = {se!r} overflow the upper bound U; lower nu, c or b"
            )

    # -- per-node quantities ----------------------------------------------------------
    def oe(self, depth: int) -> float:
        """``OE_h``, cached per depth; must lie in [0, inf).

        0 is what a positive descriptor gives once it underflows (``nu rho^h`` near depth 1075 for
        ``rho = 0.5``, reachable when a tiny ``nu`` makes the log term 0): SE then never reaches
        it while the log term is positive, so tau is infinite and the node is not split.
        """
        while len(self._oe) <= depth:
            h = len(self._oe)
            value = float(self.resolution(h))
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"resolution({h}) must be a finite number >= 0, got {value!r}")
            self._oe.append(value)
        return self._oe[depth]

    def variance(self, node: int) -> float:
        """Running (population) variance of the node's rewards; 0 before two pulls."""
        n = self.count[node]
        return self._m2[node] / n if n > 0 else 0.0

    def se(self, node: int) -> float:
        """``SE_{h,i}(T, t)`` at the current round."""
        return self.uncertainty(self.count[node], self.variance(node), self._log_term)

    def _threshold(self, node: int) -> int:
        h = self.partition.depth[node]
        return self.uncertainty.threshold(self.oe(h), self.variance(node), self._log_term)

    def _refresh_node(self, node: int) -> None:
        n = self.count[node]
        if n > 0:
            h = self.partition.depth[node]
            self.upper_bound[node] = self.mean[node] + self.oe(h) + self.se(node)
        if node != 0:
            self._tau[node] = self._threshold(node)

    def _expand(self, node: int, again: bool = False) -> None:
        super()._expand(node, again or self.reexpand)
        self._m2 += [0.0, 0.0]
        self._tau += [0, 0]
        k = len(self.count)
        self._tau[k - 2] = self._threshold(k - 2)
        self._tau[k - 1] = self._threshold(k - 1)

    def _update_log_term(self, t: int) -> None:
        """Bring the log term to round ``t``: every tau when it changes, every U and B as ``refresh`` says."""
        log_term = self.schedule.log_term(t)
        changed = log_term != self._log_term
        self._log_term = log_term
        if self.refresh == "paper":
            if t == self.schedule.t_plus(t):
                self._refresh_all()
            elif changed:
                for node in range(1, len(self.count)):
                    self._tau[node] = self._threshold(node)
        elif changed:
            self._refresh_all()

    def _refresh_all(self) -> None:
        """U and tau of every node with the current log term, then every B."""
        for node in range(len(self.count)):
            self._refresh_node(node)
        self._backup_all()

    def _descend(self) -> list[int]:
        left, count, tau = self.partition.left, self.count, self._tau
        b = self.b_value
        node = 0
        path = [0]
        while True:
            child = left[node]
            if child < 0 or count[node] < tau[node]:
                return path
            node = child if b[child] >= b[child + 1] else child + 1
            path.append(node)

    # -- ask / tell -----------------------------------------------------------------
    def _ask(self) -> np.ndarray:
        self._update_log_term(self.t + 1)
        self._path = self._descend()
        node = self._path[-1]
        # O(1): the selected node's SE with its count before the pull, and its depth's cached OE
        se, oe = self.se(node), self.oe(self.partition.depth[node])
        self._selected_bound = se if se >= oe else oe
        return self.partition.centre(node)

    def _tell(self, reward: float) -> None:
        node = self._path[-1]  # never the root
        n = self.count[node] + 1
        diff = reward - self.mean[node]
        mean = self.mean[node] + diff / n
        m2 = self._m2[node] + diff * (reward - mean)
        # everything that can fail comes before the first change: a rejected reward changes nothing
        h = self.partition.depth[node]
        self._check_update(reward, node, n, mean, m2)
        variance, oe = m2 / n, self.oe(h)
        upper = mean + oe + self.uncertainty(n, variance, self._log_term)
        tau = self.uncertainty.threshold(oe, variance, self._log_term)
        expand = (self.reexpand or self.partition.left[node] < 0) and n >= tau
        if expand:
            self.oe(h + 1)  # a bad resolution raises here, not half-way through the expansion
        self.count[node] = n
        self.mean[node] = mean
        self._m2[node] = m2
        self.upper_bound[node] = upper
        self._tau[node] = tau
        if expand:
            self._expand(node)
        self._backup(self._path)
        self._last_pulled = node
        self._last_bound = self._selected_bound
        if variance > self._variance_bound:
            self._flag_reward_range(reward_range_message(self.name, self.uncertainty.b, variance))

    def _check_update(self, reward: float, node: int, n: int, mean: float, m2: float) -> None:
        """Raise if the node's new statistics overflow, or its U would at any reachable log term.

        Rewards within ``REWARD_LIMIT`` and the validated quantifiers cannot overflow; this guards
        quantifiers of the user's own.
        """
        h = self.partition.depth[node]
        where = f"at node (h={h}, i={self.partition.index[node]})"
        if not (math.isfinite(mean) and math.isfinite(m2)):
            raise reward_overflow(self.name, reward, f"the mean or variance would overflow {where}")
        if not math.isfinite(mean + self.oe(h) + self.uncertainty(n, m2 / n, MAX_LOG_TERM)):
            reason = f"U = mean + OE + SE would overflow {where} (SE from {self.uncertainty!r})"
            raise reward_overflow(self.name, reward, reason)

    def recommend(self) -> np.ndarray:
        """Centre of the pulled node with the highest lower confidence bound ``mean - SE``.

        Each OSC node is always evaluated at the same point, so its mean estimates
        ``f`` there; before any pull, the centre of the domain.
        """
        best, best_lcb = 0, -INF
        for node, n in enumerate(self.count):
            if n > 0:
                lcb = self.mean[node] - self.se(node)
                if lcb > best_lcb:
                    best, best_lcb = node, lcb
        return self.partition.centre(best).copy()

    def traversal_report(self) -> list[dict[str, Any]]:
        """For the path the next ``ask`` takes: per level, T, tau, OE_h, SE, U and B (the paper's Fig. 2)."""
        self._update_log_term(self.t + 1)
        rows = []
        for node in self._descend():
            h = self.partition.depth[node]
            rows.append(
                {
                    "depth": h,
                    "index": self.partition.index[node],
                    "T": self.count[node],
                    "tau": self._tau[node],
                    "resolution": self.oe(h),
                    "uncertainty": self.se(node),
                    "upper_bound": self.upper_bound[node],
                    "b_value": self.b_value[node],
                }
            )
        return rows


def _osc(
    name: str,
    uncertainty: Uncertainty,
    domain,
    rho: float,
    nu: float,
    delta: float,
    resolution: Resolution | Mapping[str, Any] | None,
    split: SplitPolicy,
    refresh: Refresh,
    reexpand: bool,
    seed: SeedLike,
) -> OSC:
    schedule = ConfidenceSchedule.for_smoothness(delta=delta, nu=nu, rho=rho)
    return OSC(
        domain,
        resolution=make_resolution(resolution, nu=nu, rho=rho),
        uncertainty=uncertainty,
        schedule=schedule,
        split=split,
        seed=seed,
        name=name,
        refresh=refresh,
        reexpand=reexpand,
    )


def VHCT(
    domain,
    rho: float = 0.5,
    nu: float = 1.0,
    c: float = 0.1,
    delta: float = 0.01,
    b: float = 1.0,
    resolution: Resolution | Mapping[str, Any] | None = None,
    split: SplitPolicy = "random",
    variance_floor: float | None = None,
    refresh: Refresh = "paper",
    reexpand: bool = False,
    seed: SeedLike = None,
) -> OSC:
    """VHCT: OSC with ``OE_h = nu rho^h`` (or ``resolution``) and the Bernstein quantifier
    (``reexpand``: internal nodes expanded again, as the authors' library does; :class:`OSC`)."""
    extra = {} if variance_floor is None else {"variance_floor": variance_floor}
    quantifier = Bernstein(c=c, b=b, **extra)
    return _osc("VHCT", quantifier, domain, rho, nu, delta, resolution, split, refresh, reexpand, seed)


def HCT(
    domain,
    rho: float = 0.5,
    nu: float = 1.0,
    c: float = 0.1,
    delta: float = 0.01,
    b: float = 1.0,
    resolution: Resolution | Mapping[str, Any] | None = None,
    split: SplitPolicy = "random",
    refresh: Refresh = "paper",
    reexpand: bool = False,
    seed: SeedLike = None,
) -> OSC:
    """HCT (Azar et al. 2014): OSC with ``OE_h = nu rho^h`` and the Hoeffding quantifier
    (``reexpand``: as for :func:`VHCT`)."""
    quantifier = Hoeffding(c=c, b=b)
    return _osc("HCT", quantifier, domain, rho, nu, delta, resolution, split, refresh, reexpand, seed)
