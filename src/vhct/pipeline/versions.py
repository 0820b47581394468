"""The versions of the packages that shape a run's numbers, as recorded in sidecars and provenance.

TPE's, CMA-ES's and the GP sampler's points, GPy's fits, scikit-learn's SVM and torch's training
all change with package versions, so "same config and seed, same numbers" holds only with the
same versions: every run's sidecar and the provenance record carry them, and ``ship`` refuses a
run whose files disagree.
"""

from __future__ import annotations

import platform
from importlib import metadata

#: distributions whose versions change the numbers (objectives, optimizers, aggregation, workflow)
SHAPING_PACKAGES = (
    "numpy",
    "scipy",
    "torch",
    "torchvision",
    "scikit-learn",
    "GPy",
    "GPyOpt",
    "optuna",
    "cmaes",
    "pandas",
    "snakemake",
    "vhct",
)


def package_versions(packages: tuple[str, ...] = SHAPING_PACKAGES) -> dict[str, str | None]:
    """``{distribution: installed version}`` for ``packages`` (None when not installed), and Python's."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions
