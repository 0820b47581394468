"""The work behind the pipeline's data and run rules: fetch and verify a data file, run.

Snakemake scripts (``workflow/scripts``) are one call into this module (aggregation: into
``vhct.pipeline.aggregate``; figures and the audit: into ``vhct.reporting``; each under this
module's ``job_logging``), so every job runs in
its own process and can also be called from Python. Every output is written atomically
(temporary file in the target directory, then rename): a failed or interrupted job leaves
no partial output behind.
"""

from __future__ import annotations

import logging
import platform
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from vhct.pipeline.records import RunRecord, RunSpec
from vhct.pipeline.store import RunJob

logger = logging.getLogger("vhct.pipeline.jobs")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: third-party loggers that are verbose at INFO (font subsetting when saving PDFs)
QUIET_LOGGERS = ("fontTools", "matplotlib", "PIL")


def setup_logging(log_path: Path | str | None) -> None:
    """Send this process's log records to ``log_path`` (or stderr when None)."""
    console = logging.StreamHandler()
    handlers: list[logging.Handler] = [console]
    if log_path is not None:
        console.setLevel(logging.WARNING)  # the log file has everything; the console only problems
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, handlers=handlers, force=True)
    for chatty in QUIET_LOGGERS:
        logging.getLogger(chatty).setLevel(logging.WARNING)


def run_record(spec: RunSpec, job: RunJob) -> tuple[dict[str, np.ndarray], RunRecord]:
    """Run one seed of ``job`` (its ``spec``) and return its table and record.

    The record (``vhct.pipeline.records.RunRecord``, this is its one writer) holds the spec, rounds,
    wall time, Python and host, what made the run (the package versions, the hash of the run code
    this process runs, the checksums of the data files it read, as the job gives them), what its
    regret is measured from, and the run's metadata.
    """
    from vhct.pipeline.records import regret_reference_of
    from vhct.pipeline.run import experiment_columns
    from vhct.pipeline.versions import run_source

    tag = (spec.experiment, spec.setting, spec.seed)
    logger.info(
        "run %s/%s/seed%d: %s on %s, horizon %d, noise %g",
        *tag,
        spec.algorithm,
        spec.objective,
        spec.horizon,
        spec.noise,
    )
    start = time.perf_counter()
    table, meta = experiment_columns(spec)
    wall = time.perf_counter() - start
    record = RunRecord(
        run=spec,
        seed=spec.seed,
        rounds=len(table["t"]),
        wall_seconds=wall,
        python=platform.python_version(),
        host=platform.node(),
        versions=meta["versions"],
        source=run_source(spec.algorithm),
        data={path: dict(sums) for path, sums in job.data.items()},
        f_star=meta["f_star"],
        regret_from=meta["regret_reference"],
        regret_reference=regret_reference_of(meta["f_star"]),
        metadata=meta,
    )
    final = meta["final_cumulative_regret"]
    logger.info("done %s/%s/seed%d: R_n = %.6g after %d rounds in %.2f s", *tag, final, len(table["t"]), wall)
    return table, record


def run_job(job: RunJob, path: Path | str, data_stamps: Sequence[Path | str] = ()) -> None:
    """Run every seed of ``job`` one after the other in this process and write them as one batch
    file of the run store (``vhct.pipeline.store``), atomically, when the last is done.

    The data files of ``data_stamps`` (verification stamps) are checked first: a file that is not
    the one last found equal to its stamp is hashed again, and one of other content fails naming
    the file. Each run draws only from its own seeded generators, so a seed gives the same numbers
    in a batch as alone.
    """
    from vhct.pipeline.data import check_stamp
    from vhct.pipeline.store import write_batch

    for stamp in data_stamps:
        check_stamp(stamp)
    tables, records = [], []
    for i, spec in enumerate(job.runs, 1):
        table, record = run_record(spec, job)
        tables.append(table)
        records.append(record)
        if len(job.runs) > 1:
            logger.info("batch progress: %d of %d seeds done", i, len(job.runs))
    write_batch(path, tables, records)


def data_job(
    spec: Mapping[str, Any],
    data_dir: Path | str,
    mirror: str | None,
    data_path: Path | str,
    stamp_path: Path | str | None = None,
) -> None:
    """Fetch and verify one declared data file into ``data_dir`` (atomic, see ``vhct.pipeline.data``).

    A present file is verified and, when corrupted, fetched again. With ``stamp_path``, the
    verification stamp is written after (the record that run jobs check the file against).
    """
    from vhct.pipeline.data import fetch_file, write_stamp

    got = fetch_file(dict(spec), Path(data_dir), mirror=Path(mirror) if mirror else None)
    if Path(got).resolve() != Path(data_path).resolve():
        raise ValueError(f"data file spec path {spec['path']!r} does not match the rule's file {data_path}")
    if stamp_path is not None:
        write_stamp(stamp_path, data_path, spec)
    logger.info("data file ready and verified: %s", got)


TASKS = ("data", "verify", "run")


@contextmanager
def job_logging(task: str, log_path: Path | str | None):
    """Log to the rule's log file; a failure is logged with its traceback before it propagates."""
    setup_logging(log_path)
    try:
        yield
    except Exception:
        logger.exception("%s job failed", task)
        raise


def from_snakemake(task: str, smk: Any) -> None:
    """Entry point of the Snakemake scripts: log to the rule's log file and run one task."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    with job_logging(task, smk.log[0] if len(smk.log) else None):
        if task in ("data", "verify"):
            data_path = str(smk.output[0] if task == "data" else smk.input[0])
            data_dir = data_path[: -len(smk.params.spec["path"])] or "."
            stamp = smk.output[0] if task == "verify" else None
            data_job(smk.params.spec, data_dir, smk.params.mirror, data_path, stamp)
        else:  # the run family's job spec, from the rule (Config.run_job)
            run_job(RunJob.model_validate(smk.params.job), smk.output[0], smk.input.verified)
