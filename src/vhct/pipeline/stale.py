"""Existing runs against the current config: which spec each run must have, and the check made
when the rules are read, so a changed config is never served old runs.

Split from ``vhct.pipeline.tables`` (which reads and checks one run's files without the config)
because it reads the config, which itself reads the tables' layout.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from pathlib import Path

from vhct.pipeline.config import Config
from vhct.pipeline.records import RunSpec, spec_difference
from vhct.pipeline.tables import (
    TABLE_SUFFIX,
    RunTableError,
    StaleRunError,
    read_sidecar,
    seed_of,
    sidecar_path,
    version_problem,
)


def expected_specs(
    config: Config, experiment: str, run_paths: Mapping[str, Sequence[Path | str]]
) -> dict[str, RunSpec]:
    """Table path -> what the config asks of that run (``Config.run_spec``), for ``tables.read_runs``."""
    out = {}
    for setting, paths in run_paths.items():
        for path in paths:
            seed = seed_of(path)
            if seed is None:
                raise ValueError(f"run table {path}: no seed in its name (seed<k>{TABLE_SUFFIX})")
            out[str(path)] = config.run_spec(experiment, setting, seed)
    return out


#: where Snakemake's file persistence backend (its default) keeps one record per output file
SNAKEMAKE_METADATA = Path(".snakemake") / "metadata"


def snakemake_recorded(path: Path | str, metadata: Path = SNAKEMAKE_METADATA) -> bool:
    """Whether Snakemake holds its record of the output ``path`` (params, code, inputs): then its own
    rerun triggers rerun a run whose parameters changed, and the stale check leaves it to them.

    The record's name is the urlsafe base64 of the path, cut into parts of at most NAME_MAX - 1
    characters (nested folders), as ``snakemake.persistence.file`` names it.
    """
    name = base64.urlsafe_b64encode(str(path).encode()).decode()
    limit = 254
    return metadata.joinpath(*(name[i : i + limit] for i in range(0, len(name), limit))).is_file()


def check_current_runs(config: Config, table_pattern: str) -> None:
    """When the rules are read, before any job: every existing run must be current, the one ``config``
    asks for and made with the installed package versions.

    Snakemake reruns a run whose parameters changed only while its record in ``.snakemake/``
    exists; with that folder moved or deleted (a copied workdir, a fresh checkout of results), a
    changed config would be served the old runs, and no consumer job would run to notice. Each
    run's sidecar records its spec and package versions: a run whose spec or versions differ fails
    here (:class:`StaleRunError` naming each, its first differing field or package and the command
    that deletes them, so the next snakemake run redoes them and everything downstream; Snakemake
    itself never reruns a run for another install). ``table_pattern`` is the rules' run
    table path (``{experiment}``, ``{setting}``, ``{seed}``). Only files are read (a dry run
    changes nothing); a run whose table or sidecar is missing reruns anyway, an unreadable
    sidecar is left to the consumers, which fail naming it, and a changed run that Snakemake holds
    a record of (:func:`snakemake_recorded`) is left to Snakemake, whose parameter trigger reruns
    it (the aggregation and the audit check it again).
    """
    stale: dict[str, str] = {}
    for experiment, setting, seed in config.run_jobs():
        table = table_pattern.format(experiment=experiment, setting=setting, seed=seed)
        if not (Path(table).exists() and sidecar_path(table).exists()):
            continue
        try:
            record = read_sidecar(table)
        except RunTableError:
            continue
        found = spec_difference(record, config.run_spec(experiment, setting, seed))
        if found and snakemake_recorded(table):
            continue  # Snakemake's parameter trigger reruns it, with the installed versions
        found = found or version_problem(record)
        if found:
            stale[table] = found
    if stale:
        raise StaleRunError(stale, before_jobs=True)
