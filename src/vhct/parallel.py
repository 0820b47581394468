"""Parallel optimization over a grid of smoothness parameters: POO (over T-HOO) and PCT (GPO over HCT).

Both run several instances of a base algorithm with ``nu = nu_max`` and
``rho_i = rho_max ** (2N / (2i + 1))``, ``i = 0..N-1``, and keep the one whose pulls earned the
highest average reward (Grill et al. 2015; Shang et al. 2019). Both are made *anytime*
(no horizon needed to schedule them), as the paper's comparison requires:

* POO is anytime by construction (Grill et al. 2015, Algorithm 1): instances are
  evaluated round-robin, and whenever ``N <= Dmax/2 * ln(n / ln n)`` the number of
  instances doubles; each new instance first catches up with ``n/N`` evaluations.
* GPO is not (it splits a known budget into phases), so PCT uses the doubling trick:
  epochs of budget ``n0 * 2**k`` (``n0 = 64``), each a fresh GPO run over HCT. This is the
  standard way to make a fixed-budget algorithm anytime at a constant-factor cost in
  regret; restarting forgets earlier epochs, which is the price of not knowing ``n``.

The horizon is only passed on to T-HOO, whose truncation depth depends on it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

import numpy as np

from .base import Optimizer, SeedLike, check_open_unit, check_positive
from .hoo import TruncatedHOO
from .partition import SplitPolicy
from .tree import HCT

#: first epoch budget of PCT's doubling schedule
PCT_FIRST_EPOCH = 64


def rho_grid(n_instances: int, rho_max: float) -> list[float]:
    """``rho_i = rho_max ** (2N / (2i + 1))`` for ``i = 0..N-1`` (all <= rho_max)."""
    return [rho_max ** (2.0 * n_instances / (2 * i + 1)) for i in range(n_instances)]


def max_dimension(rho_max: float) -> float:
    """``Dmax = ln K / ln(1/rho_max)`` for the binary partition (K = 2)."""
    return math.log(2.0) / math.log(1.0 / rho_max)


class _Instance:
    """One base optimizer with the running average of the rewards it earned."""

    def __init__(self, rho: float, optimizer: Optimizer):
        self.rho = rho
        self.optimizer = optimizer
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


class POO(_Portfolio):
    """POO (Grill et al. 2015) over T-HOO instances; anytime (see module docstring)."""

    name = "POO"

    def __init__(
        self,
        domain,
        horizon: int,
        rho_max: float = 0.9,
        nu_max: float = 1.0,
        split: SplitPolicy = "random",
        seed: SeedLike = None,
    ):
        super().__init__(domain, rho_max, nu_max, split, seed)
        if not isinstance(horizon, int | np.integer) or horizon < 1:
            raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
        self.horizon = int(horizon)
        self.instances: list[_Instance] = [self._new_instance(self.rho_max)]
        self._n = 0  # Grill's n: evaluations accounted so far
        self._N = 1  # Grill's N: the current grid size
        self._queue: deque[int] = deque()
        self._current: int | None = None

    def _new_instance(self, rho: float) -> _Instance:
        hoo = TruncatedHOO(
            self.domain, self.horizon, rho=rho, nu=self.nu_max, split=self.split, seed=self._child_seed()
        )
        return _Instance(rho, hoo)

    def _needs_more_instances(self) -> bool:
        n = self._n
        return n >= 3 and 0.5 * self.dmax * math.log(n / math.log(n)) >= self._N

    def _plan(self) -> None:
        """Queue the next evaluations: new instances with their catch-up pulls, then one round-robin pass."""
        while self._needs_more_instances():
            catch_up = max(1, math.ceil(self._n / self._N))
            self._N *= 2
            for rho in rho_grid(self._N, self.rho_max):
                self.instances.append(self._new_instance(rho))
                self._queue.extend([len(self.instances) - 1] * catch_up)
            self._n *= 2
        self._queue.extend(range(len(self.instances)))
        self._n += len(self.instances)

    def _ask(self) -> np.ndarray:
        if not self._queue:
            self._plan()
        self._current = self._queue.popleft()
        return self.instances[self._current].optimizer.ask()

    def _tell(self, reward: float) -> None:
        instance = self.instances[self._current]
        instance.optimizer.tell(instance.optimizer.ask(), reward)
        instance.record(reward)
        self._depth = instance.optimizer.pulled_depth

    @property
    def pulled_depth(self) -> int | None:
        return getattr(self, "_depth", None)

    def best_instance(self) -> _Instance:
        pulled = [inst for inst in self.instances if inst.pulls > 0] or self.instances
        return max(pulled, key=lambda inst: inst.mean_reward)

    def recommend(self) -> np.ndarray:
        """The recommendation of the instance with the highest average reward."""
        return self.best_instance().optimizer.recommend()


class GPO(_Portfolio):
    """GPO (Shang et al. 2019) for a fixed budget: phases of a base algorithm, each cross-validated.

    With ``N = max(1, ceil(Dmax/2 * ln((n/2) / ln(n/2))))`` phases of length
    ``floor(n / 2N)``: phase ``i`` runs the base algorithm with ``rho_i`` and then evaluates
    that run's recommendation as many times; the remaining budget exploits the
    recommendation with the best cross-validated average.
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
        seed: SeedLike = None,
    ):
        super().__init__(domain, rho_max, nu_max, split, seed)
        if not isinstance(budget, int | np.integer) or budget < 2:
            raise ValueError(f"budget must be an integer >= 2, got {budget!r}")
        self.budget = int(budget)
        self.base = base
        half = self.budget / 2.0
        ratio = half / math.log(half) if half > math.e else 1.0
        self.n_phases = max(1, math.ceil(0.5 * self.dmax * math.log(ratio))) if ratio > 1 else 1
        self.phase_length = max(1, self.budget // (2 * self.n_phases))
        self.rhos = rho_grid(self.n_phases, self.rho_max)
        self.candidates: list[tuple[np.ndarray, _Instance]] = []
        self._phase = 0
        self._step = 0  # position within the current phase
        self._optimizer: Optimizer | None = None
        self._depth: int | None = None

    def _exploit(self) -> np.ndarray:
        return max(self.candidates, key=lambda c: c[1].mean_reward)[0]

    def _ask(self) -> np.ndarray:
        if self._phase >= self.n_phases:
            return self._exploit()
        if self._step == 0:
            rho = self.rhos[self._phase]
            self._optimizer = self.base(
                self.domain, rho=rho, nu=self.nu_max, split=self.split, seed=self._child_seed()
            )
        if self._step < self.phase_length:
            return self._optimizer.ask()
        if self._step == self.phase_length:
            self.candidates.append(
                (self._optimizer.recommend(), _Instance(self.rhos[self._phase], self._optimizer))
            )
        return self.candidates[-1][0]

    def _tell(self, reward: float) -> None:
        self._depth = None
        if self._phase >= self.n_phases:
            return
        if self._step < self.phase_length:
            self._optimizer.tell(self._optimizer.ask(), reward)
            self._depth = self._optimizer.pulled_depth
        else:
            self.candidates[-1][1].record(reward)
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
        return self.domain.mean(axis=1)


class PCT(_Portfolio):
    """PCT = GPO over HCT (Shang et al. 2019), made anytime by doubling epochs (see module docstring)."""

    name = "PCT"

    def __init__(
        self,
        domain,
        rho_max: float = 0.9,
        nu_max: float = 1.0,
        split: SplitPolicy = "random",
        first_epoch: int = PCT_FIRST_EPOCH,
        seed: SeedLike = None,
    ):
        super().__init__(domain, rho_max, nu_max, split, seed)
        if not isinstance(first_epoch, int | np.integer) or first_epoch < 2:
            raise ValueError(f"first_epoch must be an integer >= 2, got {first_epoch!r}")
        self.first_epoch = int(first_epoch)
        self._epoch_budget = self.first_epoch
        self._left_in_epoch = 0
        self._gpo: GPO | None = None
        self._previous: GPO | None = None

    def _ask(self) -> np.ndarray:
        if self._left_in_epoch == 0:
            if self._gpo is not None:
                self._previous = self._gpo
                self._epoch_budget *= 2
            self._gpo = GPO(
                self.domain,
                self._epoch_budget,
                base=HCT,
                rho_max=self.rho_max,
                nu_max=self.nu_max,
                split=self.split,
                seed=self._child_seed(),
            )
            self._left_in_epoch = self._epoch_budget
        return self._gpo.ask()

    def _tell(self, reward: float) -> None:
        self._gpo.tell(self._gpo.ask(), reward)
        self._left_in_epoch -= 1

    @property
    def pulled_depth(self) -> int | None:
        return None if self._gpo is None else self._gpo.pulled_depth

    def recommend(self) -> np.ndarray:
        """The current epoch's recommendation once it has a candidate, else the previous epoch's."""
        if self._gpo is not None and (self._gpo.candidates or self._previous is None):
            return self._gpo.recommend()
        if self._previous is not None:
            return self._previous.recommend()
        return self.domain.mean(axis=1)
