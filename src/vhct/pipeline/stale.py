"""What each job is asked now, written as spec files the jobs take as input, and the check made when
the rules are read, so a result is current or it is rerun.

When the rules are read (main process only), every run, aggregate, figure and the audit gets a
small JSON spec file under ``results/.specs/`` of what it is asked: a run its
:class:`~vhct.pipeline.records.RunRequest` (the config's spec, the hash of the installed run code,
the package versions, the data files' checksums), the other jobs their params and the source hash
of their own code (``vhct.pipeline.versions.source_hash``: every module the job imports). A spec
file is rewritten only when its content changes (``vhct.pipeline.files.write_if_changed``) and is
an input of its job, so Snakemake's modification-time check, which no ``--rerun-triggers`` turns
off and which needs nothing of ``.snakemake/``, reruns exactly the jobs whose spec changed and
everything downstream: a changed parameter, an edit of the code that shapes the numbers, an
updated install, a dropped seed or setting (the aggregate's, the figures' and the audit's specs
list the runs they read).

Behind it, every reader of runs compares each run's record with what is asked now
(``vhct.pipeline.tables.read_runs``), and :func:`check_current_runs` refuses, before any job, an
existing run whose record differs from its request while its spec file is not newer than its
outputs (Snakemake would not rerun it: a record edited by hand, outputs touched or copied after
the spec changed).

Split from ``vhct.pipeline.tables`` (which reads and checks one run's files without the config)
because it reads the config, which itself reads the tables' layout.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vhct.pipeline.config import Config
from vhct.pipeline.files import write_if_changed
from vhct.pipeline.records import DataChecksums, RunRequest, request_difference
from vhct.pipeline.specs import SettingInfo
from vhct.pipeline.tables import (
    TABLE_SUFFIX,
    RunTableError,
    StaleRunError,
    read_sidecar,
    seed_of,
    sidecar_path,
)
from vhct.pipeline.versions import package_versions, run_source, source_hash

#: the folder of the spec files, in the config's results folder (results/.specs/ for the default
#: config, results/<name>/.specs/ for config/<name>.yaml): each config's specs its own
SPEC_DIR = ".specs"
#: the checksum keys of a data file's declaration that fix its content
CHECKSUM_KEYS = ("sha256", "content_sha256", "md5")


def data_checksums(config: Config, experiment: str) -> DataChecksums:
    """Path -> declared checksums of each data file the experiment's objective reads: what its
    verification stamp checked the file against, so the run's record names the data it read."""
    out = {}
    for path in config.data_files(experiment):
        declared = config.data_spec(path)
        out[path] = {key: declared[key] for key in CHECKSUM_KEYS if declared.get(key)}
    return out


def run_request(config: Config, experiment: str, setting: str, seed: int) -> RunRequest:
    """What is asked of one run now: the config's spec, the installed run code and package
    versions, and the checksums of its data files. Built without validating again what is already
    valid (the config's spec, the installed versions, a hex digest): thousands are built when the
    rules are read."""
    spec = config.run_spec(experiment, setting, seed)
    return RunRequest.model_construct(
        run=spec,
        source=run_source(spec.algorithm),
        versions=package_versions(),
        data=data_checksums(config, experiment),
    )


def expected_specs(
    config: Config, experiment: str, run_paths: Mapping[str, Sequence[Path | str]]
) -> dict[str, RunRequest]:
    """Table path -> what is asked of that run now (:func:`run_request`), for ``tables.read_runs``."""
    out = {}
    for setting, paths in run_paths.items():
        for path in paths:
            seed = seed_of(path)
            if seed is None:
                raise ValueError(f"run table {path}: no seed in its name (seed<k>{TABLE_SUFFIX})")
            out[str(path)] = run_request(config, experiment, setting, seed)
    return out


def aggregate_spec(info: Mapping[str, SettingInfo], run_paths: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The spec file's content of an aggregate job (plain data): the settings it aggregates (``info``)
    and their run tables, the source hash of the aggregation code and the package versions. One
    builder for both aggregate jobs: an experiment's (every setting) and one setting's (``info`` and
    ``run_paths`` of that setting alone)."""
    return {
        "info": {setting: i.model_dump(mode="json") for setting, i in info.items()},
        "run_paths": {setting: list(paths) for setting, paths in run_paths.items()},
        "source": {"aggregate": source_hash("aggregate")},
        "versions": package_versions(),
    }


def write_spec(path: Path | str, content: Mapping[str, Any]) -> bool:
    """Write the spec file of a job (compact JSON of plain data), only when its content changed;
    whether it wrote."""
    return write_if_changed(path, json.dumps(content) + "\n")


def _outputs_mtime(table: str) -> int:
    """The oldest modification time of a run's outputs (table and sidecar), as Snakemake compares."""
    return min(os.stat(table).st_mtime_ns, os.stat(sidecar_path(table)).st_mtime_ns)


def check_current_runs(config: Config, table_pattern: str, request_pattern: str) -> int:
    """When the rules are read, before any job: write every run's spec file (its :func:`run_request`,
    rewritten only when it changed) and require every existing run to be current or to be rerun.

    ``table_pattern`` and ``request_pattern`` are the rules' paths of a run's table and spec file
    (``{experiment}``, ``{setting}``, ``{seed}``). A run whose record differs from its request is
    rerun by Snakemake when its spec file is newer than its outputs (the spec changed since the
    run); otherwise nothing would rerun it, and it fails here (:class:`StaleRunError`: one line per
    run naming it, what differs and the command that fixes it). A run whose table or sidecar is
    missing reruns anyway; an unreadable sidecar is left to the consumers, which fail naming it.
    Only spec files are written (a dry run writes no output). Returns how many spec files were written.
    """
    stale: dict[str, str] = {}
    written = 0
    for experiment, setting, seed in config.run_jobs():
        names = {"experiment": experiment, "setting": setting, "seed": seed}
        request = run_request(config, experiment, setting, seed)
        spec = request_pattern.format(**names)
        written += write_if_changed(spec, request.to_json())
        table = table_pattern.format(**names)
        if not (os.path.exists(table) and os.path.exists(sidecar_path(table))):
            continue
        try:
            record = read_sidecar(table)
        except RunTableError:
            continue
        found = request_difference(record, request)
        if found and os.stat(spec).st_mtime_ns <= _outputs_mtime(table):
            stale[table] = found
    if stale:
        raise StaleRunError(stale, before_jobs=True)
    return written
