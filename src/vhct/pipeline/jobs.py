"""The work behind the pipeline's data and run rules: fetch and verify a data file, run.

Snakemake scripts (``workflow/scripts``) are one call into this module (aggregation: into
``vhct.pipeline.aggregate``; figures and the audit: into ``vhct.reporting``; each under this
module's ``job_logging``), so every job runs in
its own process and can also be called from Python. Every output is written atomically
(temporary file in the target directory, then rename): a failed or interrupted job leaves
no partial output behind.
"""

from __future__ import annotations

import gzip
import json
import logging
import platform
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from vhct.pipeline.files import atomic_paths, sha256_bytes
from vhct.pipeline.records import RunRequest, RunSpec

logger = logging.getLogger("vhct.pipeline.jobs")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: third-party loggers that are verbose at INFO (font subsetting when saving PDFs)
QUIET_LOGGERS = ("fontTools", "matplotlib", "PIL")
#: gzip header timestamp of run tables (fixed, so equal tables give equal bytes)
GZIP_MTIME = 0
#: gzip level of run tables: 1 is ten times faster than 9 and 15% larger
GZIP_LEVEL = 1


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


def run_job(
    spec: RunSpec,
    table_path: Path | str,
    meta_path: Path | str,
    data_stamps: Sequence[Path | str] = (),
    data: Mapping[str, Mapping[str, str]] | None = None,
) -> None:
    """Run one (experiment, setting, seed) and write its per-round table and JSON sidecar.

    The sidecar is the run record (``vhct.pipeline.records.RunRecord``, this is its one writer):
    the spec (``spec`` itself, embedded), rounds, wall time, Python and host, what made the run (the
    package versions, the hash of the run code this process runs, ``data``: the checksums of the
    data files it read, as its request gives them), the sha256 of the table written, the exact
    optimum ``f_star`` (None where unknown) and the regret reference, and the run's metadata.

    The data files of ``data_stamps`` (verification stamps) are checked first: a file that is
    not the one last found equal to its stamp is hashed again, and one of other content fails
    naming the file.
    """
    from vhct.pipeline.data import check_stamp
    from vhct.pipeline.records import FORMAT, RunRecord, regret_reference_of
    from vhct.pipeline.run import experiment_columns
    from vhct.pipeline.versions import run_source

    for stamp in data_stamps:
        check_stamp(stamp)

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
    text = table_bytes(table)
    record = RunRecord(
        format=FORMAT,
        run=spec,
        seed=spec.seed,
        rounds=len(table["t"]),
        wall_seconds=wall,
        python=platform.python_version(),
        host=platform.node(),
        versions=meta["versions"],
        source=run_source(spec.algorithm),
        data={path: dict(sums) for path, sums in (data or {}).items()},
        table_sha256=sha256_bytes(text),
        f_star=meta["f_star"],
        regret_reference=regret_reference_of(meta["f_star"]),
        metadata=meta,
    )
    with atomic_paths(table_path, meta_path) as (tmp_table, tmp_meta):
        tmp_table.write_bytes(text)
        tmp_meta.write_text(record.to_json(), encoding="utf-8")
    final = meta["final_cumulative_regret"]
    logger.info("done %s/%s/seed%d: R_n = %.6g after %d rounds in %.2f s", *tag, final, len(table["t"]), wall)


def table_csv(table: Any) -> bytes:
    """The run table (a DataFrame or a mapping of column arrays) as CSV bytes, header first.

    Numbers are formatted by orjson (its shortest round-trip form, in C: a 5000-round table in a
    few milliseconds, where Python's ``repr`` takes some 50), so every value reads back exactly;
    the text is pandas' ``to_csv(index=False)`` except for the exponent form (orjson writes
    ``1e-7`` and ``0.00001`` where pandas writes ``1e-07`` and ``1e-05``). A missing value (NaN)
    is an empty field, as pandas writes it; an infinite one ``inf`` or ``-inf``, as pandas reads it.
    Other columns are written with ``str``.
    """
    import orjson

    names = list(table)  # a DataFrame's columns, a mapping's keys
    columns = []
    for name in names:
        values = np.asarray(table[name])
        if values.dtype.kind not in "fiu":
            columns.append([str(v).encode() for v in values.tolist()])
            continue
        array = orjson.dumps(np.ascontiguousarray(values), option=orjson.OPT_SERIALIZE_NUMPY)
        texts = array[1:-1].split(b",")
        if values.dtype.kind == "f":
            for i in np.flatnonzero(~np.isfinite(values)):  # orjson's null: NaN empty, inf as pandas reads it
                texts[i] = b"" if np.isnan(values[i]) else (b"inf" if values[i] > 0 else b"-inf")
        columns.append(texts if len(values) else [])
    lines = [",".join(map(str, names)).encode(), *map(b",".join, zip(*columns, strict=True))]
    return b"\n".join(lines) + b"\n"


def table_bytes(table: Any) -> bytes:
    """A run table's file content: gzip-compressed CSV at level 1 (pandas' gzip stream, at level 9,
    took longer than a short run itself), its header time fixed (equal tables, equal bytes)."""
    return gzip.compress(table_csv(table), compresslevel=GZIP_LEVEL, mtime=GZIP_MTIME)


def write_table(table: Any, path: Path | str) -> None:
    """Write a run table's file (:func:`table_bytes`)."""
    Path(path).write_bytes(table_bytes(table))


def run_batch_job(
    specs: Sequence[RunSpec],
    table_paths: Sequence[Path | str],
    meta_paths: Sequence[Path | str],
    data_stamps: Sequence[Path | str] = (),
    data: Mapping[str, Mapping[str, str]] | None = None,
) -> None:
    """Run several seeds one after the other in this process, each into its own table and sidecar.

    Each seed's files are written (atomically) as soon as it finishes, and each run draws only
    from its own seeded generators, so a seed gives the same table in a batch as alone. ``data``:
    the checksums of the data files the batch's experiment reads (every record names them).
    """
    if not len(specs) == len(table_paths) == len(meta_paths):
        raise ValueError(
            f"{len(specs)} run specs for {len(table_paths)} tables and {len(meta_paths)} sidecars"
        )
    for i, (spec, table_path, meta_path) in enumerate(zip(specs, table_paths, meta_paths, strict=True), 1):
        run_job(spec, table_path, meta_path, data_stamps if i == 1 else (), data)
        if len(specs) > 1:
            logger.info("batch progress: %d of %d seeds done", i, len(specs))


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
        else:  # each run's request: its spec file, written when the rules were read
            requests = [RunRequest.model_validate_json(Path(p).read_bytes()) for p in smk.input.requests]
            if len({json.dumps(r.data, sort_keys=True) for r in requests}) > 1:
                raise ValueError(f"the runs of one batch read different data files: {smk.input.requests}")
            specs = [request.run for request in requests]
            data = requests[0].data if requests else {}
            run_batch_job(specs, smk.output.tables, smk.output.metas, smk.input.verified, data)
