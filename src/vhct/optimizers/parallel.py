"""Parallel optimization over a grid of smoothness parameters: POO (over T-HOO) and PCT (GPO over HCT).

Both run instances of a base algorithm with ``nu = nu_max`` and ``rho`` from :func:`rho_grid`,
and trust the one whose evaluations earned the highest average reward.

* :class:`POO` (Grill, Valko & Munos 2015, Algorithm 1) is anytime by construction.
* :class:`GPO` (Shang, Kaufmann & Valko 2019, Algorithm 1) splits a known budget into phases,
  one per grid value, and cross-validates a candidate point of each phase.
* :class:`PCT` is GPO over HCT. The paper (Sec. 5) compares *anytime* algorithms and counts PCT
  among them, so by default (``schedule="anytime"``) PCT restarts GPO in doubling epochs of
  budget ``first_epoch * 2**k``: the standard way to make a fixed-budget algorithm anytime, at
  a constant-factor cost in regret (each restart forgets the earlier epochs).
  ``schedule="fixed_budget"`` runs one GPO with the run's horizon as budget, as the authors'
  library PyXAB 0.3.0 does.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Literal

import numpy as np

from .base import (
    Optimizer,
    SeedLike,
    check_choice,
    check_horizon,
    check_open_unit,
    check_positive,
    warn_past_horizon,
)
from .hoo import TruncatedHOO, Truncation
from .partition import SplitPolicy, midpoint
from .tree import HCT

#: first epoch budget of PCT's anytime (doubling) schedule
PCT_FIRST_EPOCH = 64

Schedule = Literal["anytime", "fixed_budget"]
#: how PCT schedules GPO: restarted in doubling epochs, or once with the run's horizon as budget
PCT_SCHEDULES: tuple[str, ...] = ("anytime", "fixed_budget")

Candidate = Literal["last_point", "recommendation"]
#: what a GPO phase cross-validates: the last point its base algorithm pulled (the authors'
#: library), or the base algorithm's recommendation
GPO_CANDIDATES: tuple[str, ...] = ("last_point", "recommendation")


def rho_grid(n_instances: int, rho_max: float) -> list[float]:
    """``rho_i = rho_max ** (2N / (2i + 1))`` for ``i = 1..N`` (increasing in ``i``).

    The index range of Grill, Valko & Munos (2015), "Black-box optimization of noisy functions
    with unknown smoothness", Algorithm 1 (POO), and Shang, Kaufmann & Valko (2019), "General
    parallel optimization without a metric", Algorithm 1 (GPO), as their pseudo-code prints it
    and as the authors' library's GPO runs it. Consequence: the largest value,
    ``rho_max ** (2N / (2N + 1))``, lies slightly above ``rho_max``. (Grill's original code, as
    kept in Shang's ``bbox`` repository, builds the nested grid ``rho_max ** (N / k)``,
    ``k = 1..N``, instead; on POO the two give the same regret, see docs/library.md.)
    """
    return [rho_max ** (2.0 * n_instances / (2 * i + 1)) for i in range(1, n_instances + 1)]


def max_dimension(rho_max: float) -> float:
    """``Dmax = ln K / ln(1/rho_max)`` for the binary partition (K = 2)."""
    return math.log(2.0) / math.log(1.0 / rho_max)


class _Instance:
    """One base optimizer with the running average of the rewards it earned."""

    def __init__(self, rho: float, optimizer: Optimizer, catch_up: int = 0, batch: int | None = None):
        self.rho = rho
        self.optimizer = optimizer
        #: evaluations prescribed to catch up when it joined (POO), and the doubling it joined in
        self.catch_up = catch_up
        self.batch = batch
        self.pulls = 0
        self.mean_reward = 0.0

    def record(self, reward: float) -> None:
        self.pulls += 1
        self.mean_reward += (reward - self.mean_reward) / self.pulls


class _Portfolio(Optimizer):
    """Shared checks and child-seed handling for the parallel wrappers."""

    def __init__(self, domain, rho_max: float, nu_max: float, split: SplitPolicy, seed: SeedLike):
        super().__init__(domain, seed)
        self.rho_max = check_open_unit("rho_max", rho_max)
        self.nu_max = check_positive("nu_max", nu_max)
        self.split = split
        self.dmax = max_dimension(self.rho_max)

    def _child_seed(self) -> np.random.Generator:
        """An independent generator for a new base instance, drawn from ours."""
        return np.random.default_rng(self.rng.integers(2**63))

    def _centre(self) -> np.ndarray:
        """The domain's centre: the recommendation before any evaluation."""
        return midpoint(self.domain[:, 0], self.domain[:, 1])


class POO(_Portfolio):
    """POO (Grill, Valko & Munos 2015, Algorithm 1) over T-HOO instances; anytime.

    ``n`` counts evaluations, ``N`` instances; the set starts as one instance with
    ``rho_max``, ``n = 0``, ``N = 1``. Before each pass: while
    ``N <= Dmax/2 * ln(n / ln n)``, ``N`` new instances with the ``rho_i`` of
    ``rho_grid(N)`` join, each first catching up with ``n/N`` evaluations, then ``n`` and
    ``N`` double (so the set always holds ``N`` instances: 1, 2, 4, ...). A pass gives every
    instance one evaluation and adds ``N`` to ``n``. The condition is undefined for
    ``n < 2`` (``ln n <= 0``); no doubling happens there. Nor once ``n >= horizon``: the
    new instances' evaluations would all come after the horizon; this bounds the instances
    by ``2 * horizon`` when ``rho_max`` is close to 1 (``Dmax`` huge), where the condition
    would otherwise keep doubling without end.

    No rounding is needed: ``n/N`` is always an integer, the evaluations every instance has
    had at the start of a pass (a pass adds 1 to it, a doubling leaves it unchanged and
    brings the new instances to it), so ``n`` equals the evaluations accounted exactly.
    Evaluations are queued and served one per ``ask``: O(depth) per round, plus O(N) per
    pass or doubling (O(1) amortized). ``truncation`` is passed on to every T-HOO.
    """

    name = "POO"

    def __init__(
        self,
        domain,
        horizon: int,
        rho_max: float = 0.9,
        nu_max: float = 1.0,
        split: SplitPolicy = "random",
        truncation: Truncation = "authors",
        seed: SeedLike = None,
    ):
        super().__init__(domain, rho_max, nu_max, split, seed)
        self.horizon = check_horizon("horizon", horizon)
        self.truncation = truncation
        self.instances: list[_Instance] = [self._new_instance(self.rho_max, 0, None)]
        #: ``(n, N)`` before each doubling, in order
        self.doublings: list[tuple[int, int]] = []
        self._n = 0
        self._N = 1
        self._queue: deque[list[int]] = deque()  # [instance index, evaluations left]
        self._depth: int | None = None

    @property
    def n(self) -> int:
        """Grill's ``n``: the evaluations accounted so far (served or queued)."""
        return self._n

    @property
    def N(self) -> int:  # noqa: N802 - the paper's name
        """Grill's ``N``: the number of instances."""
        return self._N

    @property
    def queued(self) -> int:
        """Evaluations accounted in ``n`` but not served yet."""
        return sum(left for _, left in self._queue)

    def _new_instance(self, rho: float, catch_up: int, batch: int | None) -> _Instance:
        hoo = TruncatedHOO(
            self.domain,
            self.horizon,
            rho=rho,
            nu=self.nu_max,
            split=self.split,
            truncation=self.truncation,
            seed=self._child_seed(),
        )
        return _Instance(rho, self.adopt(hoo), catch_up, batch)

    def needs_more_instances(self, n: int, n_instances: int) -> bool:
        """Grill's doubling condition ``N <= Dmax/2 * ln(n / ln n)`` (false for n < 2)."""
        return n >= 2 and n_instances <= 0.5 * self.dmax * math.log(n / math.log(n))

    def _plan(self) -> None:
        """Queue the next evaluations: new instances with their catch-up, then one pass."""
        while self._n < self.horizon and self.needs_more_instances(self._n, self._N):
            catch_up = self._n // self._N  # exact: see the class docstring
            batch = len(self.doublings)
            self.doublings.append((self._n, self._N))
            for rho in rho_grid(self._N, self.rho_max):
                self.instances.append(self._new_instance(rho, catch_up, batch))
                if catch_up:
                    self._queue.append([len(self.instances) - 1, catch_up])
            self._n *= 2
            self._N *= 2
        self._queue.extend([index, 1] for index in range(self._N))
        self._n += self._N

    def _ask(self) -> np.ndarray:
        warn_past_horizon(self, self.horizon, "it adds no instances and its T-HOOs assume n = horizon")
        if not self._queue:
            self._plan()
        return self.instances[self._queue[0][0]].optimizer.ask()

    def _tell(self, reward: float) -> None:
        entry = self._queue[0]
        instance = self.instances[entry[0]]
        instance.optimizer.tell(instance.optimizer.ask(), reward)  # atomic: raises before any change
        instance.record(reward)
        self._depth = instance.optimizer.pulled_depth
        entry[1] -= 1
        if entry[1] == 0:
            self._queue.popleft()

    @property
    def pulled_depth(self) -> int | None:
        return self._depth

    def best_instance(self) -> _Instance:
        pulled = [inst for inst in self.instances if inst.pulls > 0] or self.instances
        return max(pulled, key=lambda inst: inst.mean_reward)

    def recommend(self) -> np.ndarray:
        """The recommendation of the instance with the highest average reward."""
        return self.best_instance().optimizer.recommend()


class GPO(_Portfolio):
    """GPO (Shang, Kaufmann & Valko 2019, Algorithm 1) for a fixed budget ``n``.

    ``N = max(1, ceil(Dmax/2 * ln((n/2) / ln(n/2))))`` phases of length ``floor(n / 2N)``:
    phase ``i`` runs the base algorithm with ``rho_i`` of ``rho_grid(N)`` for that many
    evaluations, then evaluates the phase's candidate as many times; the rest of the
    budget, and any round after it, exploits the candidate with the best cross-validated
    average. ``candidate`` (see :data:`GPO_CANDIDATES`) is the phase's last pulled point
    (default, as in the authors' library) or the base algorithm's ``recommend()``.
    ``N`` is at most ``budget // 2`` (each phase needs two evaluations): without that cap a
    ``rho_max`` close to 1 would ask for a practically endless grid.
    """

    name = "GPO"

    def __init__(
        self,
        domain,
        budget: int,
        base: Callable[..., Optimizer] = HCT,
        rho_max: float = 0.9,
        nu_max: float = 1.0,
        split: SplitPolicy = "random",
        candidate: Candidate = "last_point",
        seed: SeedLike = None,
    ):
        super().__init__(domain, rho_max, nu_max, split, seed)
        self.budget = check_horizon("budget", budget, 2)
        self.candidate = check_choice("candidate", candidate, GPO_CANDIDATES)
        self.base = base
        half = self.budget / 2.0
        ratio = half / math.log(half) if half > math.e else 1.0
        wanted = max(1, math.ceil(0.5 * self.dmax * math.log(ratio))) if ratio > 1 else 1
        self.n_phases = min(wanted, max(1, self.budget // 2))
        self.phase_length = max(1, self.budget // (2 * self.n_phases))
        self.rhos = rho_grid(self.n_phases, self.rho_max)
        self.candidates: list[tuple[np.ndarray, _Instance]] = []
        self._phase = 0
        self._step = 0  # position within the current phase
        self._optimizer: Optimizer | None = None
        self._last_point: np.ndarray | None = None
        self._depth: int | None = None

    def _exploit(self) -> np.ndarray:
        return max(self.candidates, key=lambda c: c[1].mean_reward)[0]

    def _ask(self) -> np.ndarray:
        if self._phase >= self.n_phases:
            return self._exploit()
        if self._step == 0:
            rho = self.rhos[self._phase]
            self._optimizer = self.adopt(
                self.base(self.domain, rho=rho, nu=self.nu_max, split=self.split, seed=self._child_seed())
            )
        if self._step < self.phase_length:
            return self._optimizer.ask()
        if self._step == self.phase_length:
            point = self._last_point if self.candidate == "last_point" else self._optimizer.recommend()
            self.candidates.append((point.copy(), _Instance(self.rhos[self._phase], self._optimizer)))
        return self.candidates[-1][0]

    def _tell(self, reward: float) -> None:
        if self._phase >= self.n_phases:
            self._depth = None
            return
        if self._step < self.phase_length:
            point = self._optimizer.ask()
            self._optimizer.tell(point, reward)  # atomic: raises before anything here changes
            self._last_point = point
            self._depth = self._optimizer.pulled_depth
        else:
            self.candidates[-1][1].record(reward)
            self._depth = None
        self._step += 1
        if self._step == 2 * self.phase_length:
            self._phase += 1
            self._step = 0

    @property
    def pulled_depth(self) -> int | None:
        return self._depth

    def recommend(self) -> np.ndarray:
        """The cross-validated best candidate, or the running phase's recommendation before any."""
        if self.candidates:
            return self._exploit().copy()
        if self._optimizer is not None:
            return self._optimizer.recommend()
        return self._centre()


class PCT(_Portfolio):
    """PCT = GPO over HCT (Shang et al. 2019); ``schedule`` anytime or fixed-budget (module docstring).

    ``horizon`` is needed only by ``schedule="fixed_budget"`` (the runner passes it);
    ``first_epoch`` only by ``schedule="anytime"``. ``candidate`` is passed on to GPO.
    """

    name = "PCT"

    def __init__(
        self,
        domain,
        horizon: int | None = None,
        rho_max: float = 0.9,
        nu_max: float = 1.0,
        split: SplitPolicy = "random",
        schedule: Schedule = "anytime",
        candidate: Candidate = "last_point",
        first_epoch: int = PCT_FIRST_EPOCH,
        seed: SeedLike = None,
    ):
        super().__init__(domain, rho_max, nu_max, split, seed)
        self.schedule = check_choice("schedule", schedule, PCT_SCHEDULES)
        self.candidate = check_choice("candidate", candidate, GPO_CANDIDATES)
        self.first_epoch = check_horizon("first_epoch", first_epoch, 2)
        if schedule == "fixed_budget":
            self.horizon: int | None = check_horizon("horizon (schedule='fixed_budget')", horizon, 2)
            self._epoch_budget = self.horizon
        else:
            self.horizon = None if horizon is None else check_horizon("horizon", horizon)
            self._epoch_budget = self.first_epoch
        self._left_in_epoch = 0
        self._gpo: GPO | None = None
        self._previous: GPO | None = None

    def _new_gpo(self) -> GPO:
        return self.adopt(
            GPO(
                self.domain,
                self._epoch_budget,
                base=HCT,
                rho_max=self.rho_max,
                nu_max=self.nu_max,
                split=self.split,
                candidate=self.candidate,
                seed=self._child_seed(),
            )
        )

    def _ask(self) -> np.ndarray:
        if self.schedule == "fixed_budget":  # the anytime schedule does not use the horizon
            warn_past_horizon(self, self.horizon, "GPO only re-evaluates its best candidate (no more search)")
        if self._gpo is None:
            self._gpo = self._new_gpo()
            self._left_in_epoch = self._epoch_budget
        elif self._left_in_epoch == 0 and self.schedule == "anytime":
            self._previous = self._gpo
            self._epoch_budget *= 2
            self._gpo = self._new_gpo()
            self._left_in_epoch = self._epoch_budget
        return self._gpo.ask()

    def _tell(self, reward: float) -> None:
        self._gpo.tell(self._gpo.ask(), reward)
        self._left_in_epoch -= 1

    @property
    def gpo(self) -> GPO | None:
        """The GPO run of the current epoch (the only one with ``schedule="fixed_budget"``)."""
        return self._gpo

    @property
    def pulled_depth(self) -> int | None:
        return None if self._gpo is None else self._gpo.pulled_depth

    def recommend(self) -> np.ndarray:
        """The current epoch's recommendation once it has a candidate, else the previous epoch's."""
        if self._gpo is not None and (self._gpo.candidates or self._previous is None):
            return self._gpo.recommend()
        if self._previous is not None:
            return self._previous.recommend()
        return self._centre()
