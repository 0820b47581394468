"""Bayesian optimization baseline (``BO``): GPyOpt's defaults, driven point by point through ask/tell.

The paper runs BO with GPyOpt and "the default choices" for prior and acquisition: a GP with
GPyOpt's default Matern-5/2 kernel (hyperparameters by maximum likelihood, 5 restarts),
expected improvement, and L-BFGS from random anchor points as acquisition optimizer.
GPyOpt minimizes, so rewards are negated on the way in.

Departures from GPyOpt's defaults are named parameters whose defaults are GPyOpt's; the only one
is ``optimize_restarts``, the restarts of the GP hyperparameter fit each round (GPyOpt 1.2.6:
``optimize_restarts=5`` in ``util/arguments_manager.py``). One GPyOpt model lives through the whole
run, so every round's fit starts from the previous round's hyperparameters (``GPModel.updateModel``
calls ``set_XY`` and keeps them); GPy's ``optimize_restarts`` runs the first restart from there and
the others from random draws, and with 1 GPyOpt calls ``optimize`` once, warm-started. The fit is
most of a round's cost, so 1 restart costs about a third of 5 (``benchmarks/bo_cost.py``).

Seeding. GPyOpt and GPy draw from numpy's *global* legacy RNG (random restarts of the
hyperparameter fit, anchor points of the acquisition optimizer). Every call into GPyOpt is
therefore wrapped by :func:`_gpyopt_call`, which sets the global state from a seed drawn
from the optimizer's own generator and restores the caller's global state afterwards. The
same seed thus gives the same points, and code outside the call sees no change. The swap is
process-wide, so one ``BayesianOptimization`` must not be stepped concurrently with other
users of the global RNG in other threads.

Silenced, because harmless: (1) the global ``warnings.filterwarnings("ignore")`` that importing
GPyOpt installs and the ``warnings.formatwarning`` that importing GPy replaces are undone, so
the rest of the project keeps its warnings; (2) during GPyOpt calls, numpy floating-point
overflow/underflow/invalid warnings are ignored: paramz's ``Logexp`` transform evaluates
``log(expm1(f))`` on both branches of ``np.where`` and overflows for large parameters whose
result is discarded, and GPy's likelihood search steps through extreme hyperparameters that
L-BFGS then rejects; (3) anything GPy/GPyOpt print to stdout during a call (restart messages).

Speed. During GPyOpt calls BLAS is limited to one thread (:data:`BLAS_THREADS`), see there.

Quirks of GPyOpt 1.2.6 with numpy 2 / scipy >= 1.15: ``f=None`` with ``X``, ``Y`` given and
``suggest_next_locations()`` works as is (``run_optimization``, which catches the removed
``np.linalg.linalg``, is never called); L-BFGS-B now reports its ``task`` as ``str``, so GPyOpt's
check for ``b"ABNORMAL_TERMINATION_IN_LNSRCH"`` never fires and it keeps scipy's last iterate
instead of the anchor point, which is why every suggestion is checked for finiteness and clipped.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import os
import warnings
from collections.abc import Iterator, Sequence
from types import ModuleType

import numpy as np

from vhct.extras import require
from vhct.optimizers.base import Optimizer, SeedLike, check_choice, check_horizon

#: initial design size (uniform points in the box) before the GP is used; the config sets it
DEFAULT_N_INIT = 5
#: GPyOpt's default acquisition (expected improvement)
DEFAULT_ACQUISITION = "EI"
#: acquisitions that work with GPyOpt's default (non-MCMC) GP model
ACQUISITIONS = ("EI", "MPI", "LCB")
#: GPyOpt needs at least this many observations to fit its GP
MIN_N_INIT = 1
#: n x n float64 matrices GPy's exact GP holds for n observations at the least: the kernel matrix,
#: its Cholesky factor and the Woodbury inverse (the fit's gradient adds more); the bound of n_init
GP_MATRICES = 3
#: bytes of one float64 (the initial design and the GP's matrices)
FLOAT_BYTES = 8
#: GPyOpt's default number of restarts of the GP hyperparameter fit per round
DEFAULT_OPTIMIZE_RESTARTS = 5
#: the fit needs at least one start (the previous round's hyperparameters)
MIN_OPTIMIZE_RESTARTS = 1
#: BLAS threads during GPyOpt calls. GP matrices here are small; with OpenBLAS's default threads on a
#: shared 2-core machine one BO round took 4.0 s of CPU against 0.4 s single-threaded (spin-waiting).
#: A fixed count also keeps the points of a seed independent of the machine's cores (the BLAS
#: summation order changes with the thread count, and GPyOpt's optimizers amplify the last bits).
BLAS_THREADS = 1
#: what the ``bo`` extra installs
BO_MODULES = ("GPyOpt", "GPy", "threadpoolctl")
#: exclusive upper bound of the per-call seeds for numpy's legacy global RNG
_LEGACY_SEED_BOUND = 2**32


def _blas_threads(limit: int):
    """Context limiting BLAS to ``limit`` threads (threadpoolctl, part of the ``bo`` extra)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=limit, user_api="blas")


def available_memory() -> int | None:
    """Bytes of memory this machine can still give (Linux ``MemAvailable``, else the free physical
    pages); None when the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def n_init_bytes(n_init: int, dim: int) -> int:
    """Bytes BO needs for ``n_init`` initial points in ``dim`` dimensions: the design, drawn up front,
    and the GP fitted on them after it (:data:`GP_MATRICES` n_init x n_init matrices)."""
    return FLOAT_BYTES * (n_init * dim + GP_MATRICES * n_init * n_init)


def max_n_init(dim: int, memory: int) -> int:
    """The largest ``n_init`` whose :func:`n_init_bytes` fit in ``memory`` bytes."""
    a, b, c = GP_MATRICES, dim, -memory / FLOAT_BYTES  # a n^2 + b n + c <= 0
    n = int((-b + math.sqrt(b * b - 4 * a * c)) / (2 * a))
    while n > 0 and n_init_bytes(n, dim) > memory:
        n -= 1
    return n


def check_n_init(n_init: int, dim: int, memory: int | None = None) -> int:
    """Require an ``n_init`` whose design and GP fit this machine's available memory (``memory``
    bytes; by default :func:`available_memory`), before anything is allocated: a ValueError naming
    the bytes needed and the largest ``n_init`` that fits. Beyond it, BO could never fit its GP."""
    n_init = check_horizon("n_init", n_init, MIN_N_INIT)
    memory = available_memory() if memory is None else memory
    need = n_init_bytes(n_init, dim)
    if memory is not None and need > memory:
        raise ValueError(
            f"n_init must be at most {max_n_init(dim, memory):,} on this machine, got {n_init:,}: "
            f"{n_init:,} initial points in {dim} dimensions and the GP fitted on them "
            f"({GP_MATRICES} n_init x n_init matrices) need {need / 2**30:,.3g} GiB, more than the "
            f"{memory / 2**30:,.3g} GiB of memory available"
        )
    return n_init


@functools.cache
def load_gpyopt() -> ModuleType:
    """Import GPyOpt once (cached; it takes seconds), undoing the global warning settings that
    GPy and GPyOpt change on import. BO calls it lazily; timing code may call it up front."""
    require(BO_MODULES, "bo", "the BO baseline (vhct.optimizers.bo)")
    format_warning = warnings.formatwarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pkg_resources / numpy deprecations raised while importing
        import GPyOpt
    warnings.formatwarning = format_warning
    return GPyOpt


@contextlib.contextmanager
def _gpyopt_call(rng: np.random.Generator) -> Iterator[None]:
    """Run a GPyOpt call: numpy's global RNG seeded from ``rng`` (the caller's state restored after),
    harmless numeric warnings and stdout silenced, BLAS limited to :data:`BLAS_THREADS` threads."""
    # GPyOpt/GPy read the legacy global RNG; swapping its state (and restoring it) is the point here.
    saved = np.random.get_state()  # noqa: NPY002
    legacy = np.random.RandomState(int(rng.integers(_LEGACY_SEED_BOUND)))
    np.random.set_state(legacy.get_state())  # noqa: NPY002
    try:
        with (
            np.errstate(over="ignore", under="ignore", invalid="ignore"),
            contextlib.redirect_stdout(io.StringIO()),
            _blas_threads(BLAS_THREADS),
        ):
            yield
    finally:
        np.random.set_state(saved)  # noqa: NPY002


class BayesianOptimization(Optimizer):
    """GP-based Bayesian optimization (GPyOpt defaults), maximizing, one point per round.

    Args:
        domain: box ``[[lo, hi], ...]``.
        seed: seed or generator; it draws the initial design and seeds every GPyOpt call.
        n_init: number of initial points drawn uniformly in the box from the optimizer's own
            generator (GPyOpt's own random design would use the global RNG) before the GP is used;
            the design and the GP fitted on it must fit the machine's available memory
            (:func:`check_n_init`: about 8 (n_init d + 3 n_init^2) bytes, n_init up to some 30,000
            per 20 GiB), checked before anything is allocated.
        acquisition: GPyOpt acquisition, one of :data:`ACQUISITIONS` (default ``"EI"``, GPyOpt's).
        exact_feval: tell the GP that rewards are noise-free (GPyOpt's default, False, fits a noise
            variance; the paper's objectives are noisy).
        optimize_restarts: restarts of the GP hyperparameter fit each round (default 5, GPyOpt's);
            the first starts from the previous round's hyperparameters, the others at random.

    ``recommend()`` returns the evaluated point with the best observed reward, as GPyOpt itself
    reports (``x_opt``). The GP posterior mean is not used: on smooth, low-noise data GPyOpt's default
    GP drives the kernel variance up (1e4-1e7) with the noise at its 1e-9 floor, GPy's Cholesky then
    adds jitter proportional to that variance, and the posterior mean at the data becomes a poor
    ranking (measured: it picked points with regret 1-2 where the best observed had 1e-3).
    """

    name = "BO"

    def __init__(
        self,
        domain: Sequence[Sequence[float]] | np.ndarray,
        seed: SeedLike = None,
        n_init: int = DEFAULT_N_INIT,
        acquisition: str = DEFAULT_ACQUISITION,
        exact_feval: bool = False,
        optimize_restarts: int = DEFAULT_OPTIMIZE_RESTARTS,
    ):
        super().__init__(domain, seed)
        n_init = check_n_init(n_init, self.dim)  # before the design is allocated
        optimize_restarts = check_horizon("optimize_restarts", optimize_restarts, MIN_OPTIMIZE_RESTARTS)
        check_choice("acquisition", acquisition, ACQUISITIONS)
        if not isinstance(exact_feval, bool | np.bool_):
            raise ValueError(f"exact_feval must be a bool, got {exact_feval!r}")
        require(BO_MODULES, "bo", "the BO baseline (vhct.optimizers.bo)")  # after the checks: the
        # config's pre-check checks the parameters where the extra is not installed
        self.n_init = int(n_init)
        self.acquisition = acquisition
        self.exact_feval = bool(exact_feval)
        self.optimize_restarts = int(optimize_restarts)
        lo, hi = self.domain[:, 0], self.domain[:, 1]
        self._init_design = self.rng.uniform(lo, hi, size=(self.n_init, self.dim))
        self._X = np.empty((0, self.dim))
        self._rewards = np.empty(0)
        self._bo = None  # GPyOpt's BayesianOptimization, created once n_init rewards are in
        self._asked = np.empty(self.dim)  # the point of the current round (``_tell`` has no argument)

    def _gpyopt_domain(self) -> list[dict]:
        return [
            {"name": f"x{i}", "type": "continuous", "domain": (float(lo), float(hi))}
            for i, (lo, hi) in enumerate(self.domain)
        ]

    def _neg_rewards(self) -> np.ndarray:
        """Rewards as GPyOpt's minimization targets, a column."""
        return -self._rewards[:, None]

    def _ask(self) -> np.ndarray:
        self._asked = self._next_point()
        return self._asked.copy()

    def _next_point(self) -> np.ndarray:
        """Initial design for the first ``n_init`` rounds, then GPyOpt's suggestion."""
        if self.t < self.n_init:
            return self._init_design[self.t].copy()
        # import outside the call: GPy's BLAS libraries must be loaded before the thread limit is applied
        gpyopt = load_gpyopt()
        with _gpyopt_call(self.rng):
            if self._bo is None:
                self._bo = gpyopt.methods.BayesianOptimization(
                    f=None,
                    domain=self._gpyopt_domain(),
                    X=self._X.copy(),
                    Y=self._neg_rewards(),
                    acquisition_type=self.acquisition,
                    exact_feval=self.exact_feval,
                    optimize_restarts=self.optimize_restarts,
                )
            else:
                self._bo.X = self._X.copy()
                self._bo.Y = self._neg_rewards()
            suggestion = np.asarray(self._bo.suggest_next_locations(), dtype=float)
        return self._inside(suggestion)

    def _inside(self, suggestion: np.ndarray) -> np.ndarray:
        """Check GPyOpt's (1, d) suggestion and clip it into the box (L-BFGS-B may overshoot by rounding)."""
        if suggestion.shape != (1, self.dim) or not np.all(np.isfinite(suggestion)):
            raise RuntimeError(f"GPyOpt suggested {suggestion!r}, not one finite {self.dim}-d point")
        return np.clip(suggestion[0], self.domain[:, 0], self.domain[:, 1])

    def _tell(self, reward: float) -> None:
        self._X = np.vstack([self._X, self._asked])
        self._rewards = np.append(self._rewards, reward)

    def recommend(self) -> np.ndarray:
        """Evaluated point with the best observed reward (see the class docstring); the box centre if none."""
        if len(self._rewards) == 0:
            return self.domain.mean(axis=1)
        return self._X[int(np.argmax(self._rewards))].copy()
