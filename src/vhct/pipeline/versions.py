"""What made a result: the versions of the packages and the hash of this package's source that shape
its numbers, as recorded in run sidecars, in the spec files of the rules and in provenance.

TPE's, CMA-ES's and the GP sampler's points, GPy's fits, scikit-learn's SVM and torch's training
all change with package versions, so "same config and seed, same numbers" holds only with the
same versions: every run's sidecar and the provenance record carry them, every reader of runs
refuses a run made with other versions than the installed ones (``vhct.pipeline.tables``), and
``ship`` refuses a run whose files disagree.

A package version does not change when this package's own code does (``vhct 0.1.0`` before and
after an edit of an objective), so each result also records :func:`source_hash` of the modules
that shape it (:data:`SOURCES`, by layer): a run whose record names another hash of the run code
than the installed one is rerun or refused as one of other versions is.
"""

from __future__ import annotations

import functools
import hashlib
import platform
from importlib import metadata
from pathlib import Path

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


#: the package's root folder, whose files :func:`source_hash` reads (by path: nothing is imported)
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
#: the files of the package (files or folders, relative to its root) that shape each layer's
#: outputs. A run's numbers: the optimizers, the objectives, their registries and optional imports,
#: the run loop and the run job (which writes the table's text). An aggregate's: the aggregation
#: and the run reader. A figure's: the plots, their styles and the captions. The audit's: its
#: checks, statistics, rendering and templates. The public API (``vhct.api``) is not a run's: the
#: pipeline's runs do not go through it. Each later layer also reruns when the outputs it reads
#: change, so it lists only its own code.
SOURCES: dict[str, tuple[str, ...]] = {
    "run": ("optimizers", "objectives", "registry.py", "extras.py", "pipeline/run.py", "pipeline/jobs.py"),
    "aggregate": ("pipeline/aggregate.py", "pipeline/tables.py", "pipeline/records.py"),
    "figure": ("reporting/plots", "reporting/styles.py", "reporting/captions.py"),
    "audit": ("reporting/audit", "reporting/render.py", "reporting/stats.py", "reporting/templates"),
}
#: the files of a source folder that count (code and templates; not caches)
SOURCE_SUFFIXES = (".py", ".j2")


@functools.cache
def source_hash(layer: str) -> str:
    """The sha256 of the package source that shapes the outputs of ``layer`` (a key of :data:`SOURCES`):
    every file's path (relative to the package) and bytes, in sorted order. Computed once per process
    (a run job, the rules' parsing), which is also the code that process runs."""
    if layer not in SOURCES:
        raise ValueError(f"no source layer {layer!r}: one of {', '.join(SOURCES)}")
    files: set[Path] = set()
    for name in SOURCES[layer]:
        path = PACKAGE_ROOT / name
        if path.is_dir():
            files.update(p for p in path.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file())
        elif path.is_file():
            files.add(path)
        else:
            raise FileNotFoundError(f"source of layer {layer!r} not found: {path}")
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(PACKAGE_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def run_source(name: str) -> str:
    """The source hash a run of the algorithm ``name`` records and is checked against: :func:`source_hash` of
    the run code, and for an algorithm whose code lies outside the package (a plugin, or a class
    registered in code from elsewhere) the bytes of those files too
    (``vhct.optimizers.registry.algorithm_sources``), so an edit of a plugin reruns its runs."""
    from vhct.optimizers.registry import algorithm, algorithm_sources

    if algorithm(name).target.startswith((".", "vhct.")):
        return source_hash("run")
    digest = hashlib.sha256(source_hash("run").encode())
    for path in algorithm_sources(name):
        if not path.is_relative_to(PACKAGE_ROOT):
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
