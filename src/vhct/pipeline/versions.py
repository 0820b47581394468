"""The versions of the packages that shape a run's numbers, as recorded in sidecars and provenance.

TPE's, CMA-ES's and the GP sampler's points, GPy's fits, scikit-learn's SVM and torch's training
all change with package versions, so "same config and seed, same numbers" holds only with the
same versions: every run's sidecar and the provenance record carry them, every reader of runs
refuses a run made with other versions than the installed ones (``vhct.pipeline.tables``), and
``ship`` refuses a run whose files disagree.
"""

from __future__ import annotations

import functools
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
    return dict(_installed(tuple(packages)))


@functools.cache
def _installed(packages: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    """Looked up once per process (every run job records them; the lookups take about 15 ms, a short
    run not much more); a fresh dict per call, so a caller may change its copy."""
    versions: list[tuple[str, str | None]] = [("python", platform.python_version())]
    for name in packages:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, None))
    return tuple(versions)
