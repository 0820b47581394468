"""Optional dependencies: which extra of ``pip install vhct[...]`` brings each, and a clear error.

``pip install vhct`` needs numpy (the optimizers) and SciPy (the exact optima of two synthetic
objectives). The rest
comes in extras: ``bo`` (the GPyOpt baseline), ``real-data`` (Landmine and MNIST objectives),
``pipeline`` (the Snakemake pipeline and its reporting), ``optuna`` (today's baselines through
Optuna, and VHCT as an Optuna sampler), ``all`` (everything). A module that
needs an extra calls :func:`require` first, so a missing package is reported with the command
that installs it, not as an ImportError from deep inside.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

#: the extras a user can install, and what each is for
EXTRAS = {
    "bo": "the Bayesian-optimization baseline (GPyOpt, GPy)",
    "real-data": "the real-data objectives (scikit-learn, SciPy, torch, torchvision)",
    "pipeline": "the pipeline and its reporting (Snakemake, pandas, matplotlib, SciPy, ...)",
    "optuna": "the Optuna baselines and sampler (optuna, cmaes; the GP sampler also needs real-data's torch)",
    "all": "everything above",
}


class MissingExtraError(ImportError):
    """A part of vhct was used whose optional dependencies are not installed."""


def missing_modules(modules: Sequence[str]) -> list[str]:
    """The top-level packages among ``modules`` that cannot be imported here (not imported)."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require(modules: Sequence[str], extra: str, user: str) -> None:
    """Raise :class:`MissingExtraError` naming ``extra`` if any of ``modules`` is not installed."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    missing = missing_modules(modules)
    if missing:
        raise MissingExtraError(
            f"{user} needs {', '.join(missing)}, not installed; install the {extra!r} extra: "
            f"pip install 'vhct[{extra}]' (or 'vhct[all]')"
        )
