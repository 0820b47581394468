"""Today's standard optimizers as baselines: Optuna's samplers behind the shared ask/tell interface.

One adapter, :class:`OptunaBaseline`, drives an Optuna study through its own ask-and-tell
interface (``study.ask()`` / ``study.tell()``): nothing of a sampler is re-implemented here. Each
baseline is a subclass naming its sampler: random search (``RandomSampler``), Optuna's default
TPE (``TPESampler``), CMA-ES (``CmaEsSampler``, needs the ``cmaes`` package) and Optuna's Gaussian
process sampler (``GPSampler``, needs torch and SciPy). The study maximizes the reward over the
box, one float parameter ``x0, x1, ...`` per dimension.

Seeding: the sampler's integer seed is drawn from the optimizer's own generator (the run's), so
the same run seed gives the same points. ``recommend()`` is the evaluated point with the best
reward (what ``study.best_trial`` reports), kept as a running best. An optimizer pickles mid-run
(the study lives in Optuna's in-memory storage) and continues with the same points.

Extras: ``optuna`` (Optuna and cmaes); the GP sampler also needs torch, which the ``real-data``
extra brings (``all`` has both).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from vhct.extras import require
from vhct.optimizers.base import Optimizer, SeedLike, check_horizon

#: what the ``optuna`` extra installs (cmaes: the CMA-ES sampler's engine)
OPTUNA_MODULES = ("optuna",)
#: exclusive upper bound of the sampler seeds drawn from the run's generator
SAMPLER_SEED_BOUND = 2**31
#: Optuna's own defaults, repeated so that a config can set them (and the docs can name them)
DEFAULT_STARTUP_TRIALS = 10
#: torch threads during the GP sampler's calls. Its matrices are small: with torch's default (one
#: thread per core) two GP runs side by side on a 2-core machine took 89 s for 300 trials each,
#: against 28 s single-threaded. A fixed count also keeps a seed's points independent of the
#: machine's cores (as ``vhct.optimizers.bo.BLAS_THREADS`` does for GPyOpt).
GP_TORCH_THREADS = 1


@contextlib.contextmanager
def quiet_optuna() -> Iterator[None]:
    """Silence Optuna's INFO messages (one per study created) for the duration, then restore."""
    logger = logging.getLogger("optuna")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def torch_threads(limit: int) -> Iterator[None]:
    """Run with torch's intra-op thread count set to ``limit``, then restore the caller's."""
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(limit)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def check_flag(name: str, value: bool) -> bool:
    """Require a bool (a config's ``true``/``false``), naming the parameter otherwise."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return value


def parameter_names(dim: int) -> list[str]:
    """Names of the study's parameters, one per dimension of the box."""
    return [f"x{i}" for i in range(dim)]


class OptunaBaseline(Optimizer):
    """An Optuna sampler as a maximizer over a box, driven by ``study.ask()`` / ``study.tell()``.

    Subclasses set :attr:`name` and build their sampler in :meth:`make_sampler`.
    """

    #: modules the sampler needs beyond Optuna, and the extra that brings them
    needs: tuple[tuple[str, ...], str] = ((), "optuna")

    def __init__(self, domain: Sequence[Sequence[float]] | np.ndarray, seed: SeedLike = None):
        require(OPTUNA_MODULES, "optuna", f"the {self.name} baseline (vhct.optimizers.optuna_baselines)")
        modules, extra = self.needs
        require(modules, extra, f"the {self.name} baseline (vhct.optimizers.optuna_baselines)")
        super().__init__(domain, seed)
        import optuna

        self._distributions = {
            name: optuna.distributions.FloatDistribution(float(lo), float(hi))
            for name, (lo, hi) in zip(parameter_names(self.dim), self.domain, strict=True)
        }
        sampler = self.make_sampler(int(self.rng.integers(SAMPLER_SEED_BOUND)))
        with quiet_optuna():
            self.study = optuna.create_study(direction="maximize", sampler=sampler)
        self._trial: Any = None
        self._best_point = self.domain.mean(axis=1)
        self._best_reward = -np.inf

    def make_sampler(self, seed: int) -> Any:
        """The Optuna sampler, seeded with ``seed``."""
        raise NotImplementedError

    def sampler_call(self) -> contextlib.AbstractContextManager[None]:
        """Context of every call into the study (the sampler's work happens there); none by default."""
        return contextlib.nullcontext()

    def _ask(self) -> np.ndarray:
        with self.sampler_call():
            self._trial = self.study.ask(self._distributions)
        params = self._trial.params
        return np.array([params[name] for name in self._distributions], dtype=float)

    def _tell(self, reward: float) -> None:
        trial, self._trial = self._trial, None
        with self.sampler_call():
            self.study.tell(trial, reward)
        if reward > self._best_reward:
            self._best_reward = reward
            self._best_point = np.array([trial.params[name] for name in self._distributions])

    def recommend(self) -> np.ndarray:
        """The evaluated point with the best reward so far; the box centre before any."""
        return self._best_point.copy()


class RandomSearch(OptunaBaseline):
    """Random search: points drawn uniformly in the box (``optuna.samplers.RandomSampler``)."""

    name = "Random"

    def make_sampler(self, seed: int) -> Any:
        import optuna

        return optuna.samplers.RandomSampler(seed=seed)


class TPE(OptunaBaseline):
    """Optuna's default sampler, the tree-structured Parzen estimator (``TPESampler``).

    Args:
        n_startup_trials: random points before TPE is used (Optuna's default 10).
        multivariate: model the dimensions jointly (Optuna's default False).
    """

    name = "TPE"

    def __init__(
        self,
        domain: Sequence[Sequence[float]] | np.ndarray,
        seed: SeedLike = None,
        n_startup_trials: int = DEFAULT_STARTUP_TRIALS,
        multivariate: bool = False,
    ):
        self.n_startup_trials = check_horizon("n_startup_trials", n_startup_trials, 0)
        self.multivariate = check_flag("multivariate", multivariate)
        super().__init__(domain, seed)

    def make_sampler(self, seed: int) -> Any:
        import optuna

        return optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=self.n_startup_trials, multivariate=self.multivariate
        )


class CMAES(OptunaBaseline):
    """CMA-ES (``CmaEsSampler``, engine from the ``cmaes`` package).

    Args:
        sigma0: initial step size; None is Optuna's default (a sixth of the box's smallest side).
        n_startup_trials: random points before CMA-ES starts (Optuna's default 0).
    """

    name = "CMA-ES"
    needs = (("cmaes",), "optuna")

    def __init__(
        self,
        domain: Sequence[Sequence[float]] | np.ndarray,
        seed: SeedLike = None,
        sigma0: float | None = None,
        n_startup_trials: int = 0,
    ):
        if sigma0 is not None and not (isinstance(sigma0, int | float) and sigma0 > 0):
            raise ValueError(f"sigma0 must be a number > 0 or None, got {sigma0!r}")
        self.sigma0 = None if sigma0 is None else float(sigma0)
        self.n_startup_trials = check_horizon("n_startup_trials", n_startup_trials, 0)
        super().__init__(domain, seed)

    def make_sampler(self, seed: int) -> Any:
        import optuna

        return optuna.samplers.CmaEsSampler(
            seed=seed,
            sigma0=self.sigma0,
            n_startup_trials=self.n_startup_trials,
            warn_independent_sampling=False,
        )


class GPOptuna(OptunaBaseline):
    """Optuna's Gaussian-process Bayesian optimization (``GPSampler``; needs torch and SciPy).

    Args:
        n_startup_trials: random points before the GP is used (Optuna's default 10).
        deterministic_objective: tell the GP the rewards are noise-free (default False: the
            paper's rewards are noisy).
    """

    name = "GP-Optuna"
    needs = (("torch", "scipy", "threadpoolctl"), "real-data")

    def __init__(
        self,
        domain: Sequence[Sequence[float]] | np.ndarray,
        seed: SeedLike = None,
        n_startup_trials: int = DEFAULT_STARTUP_TRIALS,
        deterministic_objective: bool = False,
    ):
        self.n_startup_trials = check_horizon("n_startup_trials", n_startup_trials, 0)
        self.deterministic_objective = check_flag("deterministic_objective", deterministic_objective)
        super().__init__(domain, seed)

    @contextlib.contextmanager
    def sampler_call(self) -> Iterator[None]:
        """torch, BLAS and OpenMP limited to :data:`GP_TORCH_THREADS` threads during the call (the
        GP's fit mixes torch and SciPy), the caller's settings restored after."""
        from threadpoolctl import threadpool_limits

        with torch_threads(GP_TORCH_THREADS), threadpool_limits(limits=GP_TORCH_THREADS):
            yield

    def make_sampler(self, seed: int) -> Any:
        import optuna

        return optuna.samplers.GPSampler(
            seed=seed,
            n_startup_trials=self.n_startup_trials,
            deterministic_objective=self.deterministic_objective,
        )
