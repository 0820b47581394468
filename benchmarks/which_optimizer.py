"""Which optimizer for which problem: this library's optimizers through ``vhct.minimize`` beside
Optuna's TPE, scipy's differential evolution and dual annealing, and random search, at equal budgets.

    python benchmarks/which_optimizer.py [--seeds 5] [--jobs 2] [--noise 1.0] [--problems camel svc hartmann6]
        [--methods ROW ...]   # rows by their labels in the table, e.g. "VHCT rho 0.9" "TPE (Optuna)"

Three problems of the kind a user brings (docs/library.md, "Which optimizer for which problem",
quotes the printed table):

- noisy six-hump camel: 2-D on [-3, 3] x [-2, 2], ``camel(x) + Uniform(-noise, noise)``, 300
  evaluations; the score is the simple regret ``camel(pick) - camel*`` of the method's pick on the
  noiseless function. The pick is each method's own answer: the tree methods' ``recommendation``
  (from a node's statistics, robust to noise), the best observed point for the others (what TPE,
  random search and scipy's optimizers return).
- SVC on scikit-learn's digits: ``log10 C`` in [-2, 4] and ``log10 gamma`` in [-5, 0] of an RBF SVC
  trained on 500 images, 60 evaluations; the score is the validation error (on 500 other images) of
  the best point evaluated. Deterministic.
- Hartmann-6: 6-D on [0, 1]^6, 500 evaluations; the simple regret of the best point evaluated.
  Deterministic.

Every method gets the same budget of calls of the objective: the library's through
``vhct.minimize``, on the noisy problem with ``budget`` rounds (each round a call), on the
deterministic ones with ``deterministic=True, max_nfev=budget`` (repeated points free); scipy's and
random search's through a wrapper that stops them at the budget. A cell is mean +- sd over the
seeds; ``[k calls]`` marks a method that stopped short of its budget (mean calls), as the tree
methods do at small ``rho`` on deterministic functions. "scaled" rows map the values to [0, 1] with
the problem's known range before the optimizer sees them.

BO (GPyOpt) and Optuna's GP sampler are left out: their per-evaluation cost (seconds at these
budgets) would take this script past a few minutes.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import Pool

import numpy as np

#: default half-width of the camel's uniform noise
NOISE = 1.0
#: seeds of a run's noise stream are this plus the run's seed (kept apart from the optimizers' seeds)
NOISE_SEED = 10_000
CAMEL_MIN = -1.0316284534898774
#: the camel's range on its box: minimum, and the maximum at the corners (+-3, +-2)
CAMEL_RANGE = (CAMEL_MIN, 162.9)
HARTMANN6_MIN = -3.322368011415515
HARTMANN6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
HARTMANN6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)
HARTMANN6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
#: images the SVC trains on, and the images (the next ones) its validation error is measured on
SVC_TRAIN, SVC_VALIDATION = 500, 500
#: the permutation of the digits that splits them (fixed: the problem is the same for every run)
SVC_SPLIT_SEED = 0


def camel(x: np.ndarray) -> float:
    """Six-hump camel; minimum -1.0316 at (0.0898, -0.7126) and (-0.0898, 0.7126)."""
    a, b = float(x[0]), float(x[1])
    return (4 - 2.1 * a**2 + a**4 / 3) * a**2 + a * b + (-4 + 4 * b**2) * b**2


def hartmann6(x: np.ndarray) -> float:
    """Hartmann-6 on [0, 1]^6; minimum -3.32237."""
    return float(-np.sum(HARTMANN6_ALPHA * np.exp(-np.sum(HARTMANN6_A * (x - HARTMANN6_P) ** 2, axis=1))))


class DigitsSVC:
    """Validation error of an RBF SVC on the digits at ``(log10 C, log10 gamma)``.

    The squared distances are computed once and the kernel passed precomputed, the same SVC as
    ``SVC(C, gamma=gamma)`` at a fraction of the cost.
    """

    def __init__(self):
        from sklearn.datasets import load_digits

        features, labels = load_digits(return_X_y=True)
        order = np.random.default_rng(SVC_SPLIT_SEED).permutation(len(labels))
        train, valid = order[:SVC_TRAIN], order[SVC_TRAIN : SVC_TRAIN + SVC_VALIDATION]
        features = features / 16.0
        self.train_d2 = _squared_distances(features[train], features[train])
        self.valid_d2 = _squared_distances(features[valid], features[train])
        self.train_y, self.valid_y = labels[train], labels[valid]

    def __call__(self, x: np.ndarray) -> float:
        from sklearn.svm import SVC

        c, gamma = 10.0 ** float(x[0]), 10.0 ** float(x[1])
        model = SVC(C=c, kernel="precomputed").fit(np.exp(-gamma * self.train_d2), self.train_y)
        return float(np.mean(model.predict(np.exp(-gamma * self.valid_d2)) != self.valid_y))


def _squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum((a**2).sum(1)[:, None] + (b**2).sum(1)[None, :] - 2 * a @ b.T, 0.0)


@dataclass(frozen=True)
class Problem:
    """One problem: its box, budget of calls, the objective of a seed's run, and the score of a pick."""

    label: str
    box: list[list[float]]
    budget: int
    noisy: bool
    value_range: tuple[float, float]  # known range of the values, for the "scaled" rows


PROBLEMS = {
    "camel": Problem("noisy camel, 300 calls (regret)", [[-3.0, 3.0], [-2.0, 2.0]], 300, True, CAMEL_RANGE),
    "svc": Problem("SVC digits, 60 calls (val. error)", [[-2.0, 4.0], [-5.0, 0.0]], 60, False, (0.0, 1.0)),
    "hartmann6": Problem(
        "Hartmann-6, 500 calls (regret)", [[0.0, 1.0]] * 6, 500, False, (HARTMANN6_MIN, 0.0)
    ),
}

#: the rows of the table: label -> (library algorithm or scipy's function, its parameters, scaled)
METHODS: dict[str, tuple[str, dict, bool]] = {
    "VHCT defaults (rho 0.5)": ("VHCT", {}, False),
    "VHCT rho 0.75": ("VHCT", {"rho": 0.75}, False),
    "VHCT rho 0.9": ("VHCT", {"rho": 0.9}, False),
    "VHCT rho 0.75, scaled": ("VHCT", {"rho": 0.75}, True),
    "VHCT rho 0.9, scaled": ("VHCT", {"rho": 0.9}, True),
    "HCT rho 0.75": ("HCT", {"rho": 0.75}, False),
    "HCT rho 0.9": ("HCT", {"rho": 0.9}, False),
    "T-HOO defaults": ("T-HOO", {}, False),
    "POO defaults": ("POO", {}, False),
    "PCT defaults": ("PCT", {}, False),
    "CMA-ES (Optuna)": ("CMA-ES", {}, False),
    "TPE (Optuna)": ("TPE", {}, False),
    "random search (Optuna)": ("Random", {}, False),
    "differential_evolution (scipy)": ("differential_evolution", {}, False),
    "dual_annealing (scipy)": ("dual_annealing", {}, False),
}
SCIPY = ("differential_evolution", "dual_annealing")

_SVC: DigitsSVC | None = None  # one per worker process: the distances are computed once


def objective(name: str, seed: int, noise: float) -> tuple[Callable[[np.ndarray], float], Callable]:
    """The function a run of ``seed`` minimizes, and the noiseless score of a pick."""
    global _SVC
    if name == "camel":
        rng = np.random.default_rng(NOISE_SEED + seed)
        return (lambda x: camel(x) + rng.uniform(-noise, noise)), (lambda x: camel(x) - CAMEL_MIN)
    if name == "hartmann6":
        return hartmann6, (lambda x: hartmann6(x) - HARTMANN6_MIN)
    if _SVC is None:
        _SVC = DigitsSVC()
    return _SVC, _SVC


class _Spent(Exception):
    """The budget of calls is used: ends a scipy optimizer that has no exact limit of its own."""


class Budgeted:
    """``f`` allowed ``budget`` calls, keeping the best observed point (what scipy's optimizers return)."""

    def __init__(self, f: Callable[[np.ndarray], float], budget: int):
        self.f, self.budget, self.calls = f, budget, 0
        self.best_x: np.ndarray | None = None
        self.best = math.inf

    def __call__(self, x: np.ndarray) -> float:
        if self.calls >= self.budget:
            raise _Spent
        self.calls += 1
        value = self.f(x)
        if value < self.best:
            self.best, self.best_x = value, np.array(x, dtype=float)
        return value


def run(job: tuple[str, str, int, float]) -> tuple[str, str, int, float, int, float]:
    """One run: (problem, method, seed, score of the pick, calls of the objective, seconds)."""
    import scipy.optimize

    import vhct

    problem_name, method, seed, noise = job
    problem = PROBLEMS[problem_name]
    algorithm, params, scaled = METHODS[method]
    f, score = objective(problem_name, seed, noise)
    if scaled:
        lo, hi = problem.value_range
        unscaled = f
        f = lambda x: (unscaled(x) - lo) / (hi - lo)  # noqa: E731
    start = time.perf_counter()
    if algorithm in SCIPY:
        budgeted = Budgeted(f, problem.budget)
        try:
            if algorithm == "differential_evolution":
                scipy.optimize.differential_evolution(budgeted, problem.box, maxiter=10**6, rng=seed)
            else:
                scipy.optimize.dual_annealing(budgeted, problem.box, maxfun=problem.budget, rng=seed)
        except _Spent:
            pass
        pick, calls = budgeted.best_x, budgeted.calls
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # RewardRangeWarning of unscaled values: the table shows it
            if problem.noisy:
                result = vhct.minimize(f, problem.box, problem.budget, algorithm, seed, **params)
                pick = result.recommendation
            else:
                result = vhct.minimize(
                    f,
                    problem.box,
                    algorithm=algorithm,
                    seed=seed,
                    deterministic=True,
                    max_nfev=problem.budget,
                    **params,
                )
                pick = result.x
        calls = result.nfev
    return problem_name, method, seed, score(pick), calls, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--noise", type=float, default=NOISE, help="half-width of the camel's uniform noise")
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=list(PROBLEMS))
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS), metavar="ROW")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread per worker: --jobs sets the cores used
    jobs = [(p, m, s, args.noise) for p in args.problems for m in args.methods for s in range(args.seeds)]
    start = time.perf_counter()
    with Pool(args.jobs) as pool:
        rows = list(pool.imap_unordered(run, jobs))
    scores: dict[tuple[str, str], list[float]] = {}
    calls: dict[tuple[str, str], list[int]] = {}
    seconds: dict[str, float] = {}
    for problem_name, method, _, score, n, s in rows:
        scores.setdefault((problem_name, method), []).append(score)
        calls.setdefault((problem_name, method), []).append(n)
        seconds[method] = seconds.get(method, 0.0) + s
    print(
        f"seeds 0-{args.seeds - 1}, mean +- sd; camel noise Uniform(-{args.noise:g}, {args.noise:g}); "
        f"[k calls]: stopped short of the budget ({time.perf_counter() - start:.0f} s with {args.jobs} jobs)"
    )
    header = [PROBLEMS[p].label for p in args.problems]
    print("| method | " + " | ".join(header) + " | s per run (shared machine) |")
    print("|---|" + "---|" * len(header) + "---|")
    for method in args.methods:
        cells = []
        for p in args.problems:
            values, used = np.array(scores[p, method]), np.mean(calls[p, method])
            sd = f" ± {values.std(ddof=1):.3f}" if len(values) > 1 else ""
            cell = f"{values.mean():.3f}{sd}"
            if used < PROBLEMS[p].budget:
                cell += f" [{used:.0f} calls]"
            cells.append(cell)
        per_run = seconds[method] / (len(args.problems) * args.seeds)
        print(f"| {method} | " + " | ".join(cells) + f" | {per_run:.2g} |")


if __name__ == "__main__":
    main()
