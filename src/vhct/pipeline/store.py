"""The run store: every run the pipeline makes, found by what it is, whichever config asked for it.

A run job runs a batch of runs alike but for their seeds (one setting's seeds of one experiment, cut
into chunks of its ``runs_per_job``) and writes them as one file,
``results/runs/<objective>/<algorithm>-<key>/seeds<first>-<last>.npz``. ``key`` hashes everything
that shapes the numbers except the seed: the spec's fields (``records.SPEC_FIELDS``), the run code's
source hash, the package versions and the data files' checksums (a :class:`RunJob`, the run family's
job spec). A config asking for a batch another config made (a ``base:`` config and its child, two
output folders) finds its file and runs nothing; a change of any of these names another file, which
Snakemake makes because it is missing, whatever ``.snakemake/`` holds. No request file is written.

The file is numpy's own archive (``.npz``, read by ``np.load``; its members bzip2-compressed,
:data:`COMPRESSION`) and holds, per run and round, only what a reader reads:
``value`` (f(x)), ``depth``, ``guarantee`` (``vhct.pipeline.run.GUARANTEE_CODES``) and the round's
and the optimizer's wall times in integer nanoseconds (the clock's own unit), each as a (runs x
rounds) array, and the runs' records (:class:`BatchRecord`) as JSON. The reader derives ``t``,
``regret`` and ``cumulative_regret`` with the run's own arithmetic (``vhct.pipeline.run``), so
every number read is the number the run computed. The points and the noisy rewards are not kept
(nothing reads them; a run is replayed from its seed where a figure needs them).

One writer (:func:`write_batch`, called by ``vhct.pipeline.jobs``) and one reader
(:func:`read_batch`, called by ``vhct.pipeline.tables``, which checks each run against what is
asked now).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vhct.pipeline.files import atomic_paths
from vhct.pipeline.records import (
    SPEC_FIELDS,
    DataChecksums,
    RunRecord,
    RunSpec,
    Sha256,
    describe,
    made_difference,
)

#: the store's folder, shared by every config (``results/runs``; ``runs`` is no config's ``output``)
STORE = "results/runs"
#: a batch file's suffix
BATCH_SUFFIX = ".npz"
#: hex digits of the key in a batch's folder name
KEY_DIGITS = 12
#: hex digits of the seed list's hash in the name of a batch of seeds that are not consecutive
SEEDS_DIGITS = 8
#: version of the batch file's layout, the only one read
BATCH_FORMAT = 1
#: the arrays a batch file holds (runs x rounds) and their types
STORED_COLUMNS: dict[str, str] = {
    "value": "f8",
    "depth": "f8",
    "guarantee": "i1",
    "step_nanoseconds": "i8",
    "optimizer_nanoseconds": "i8",
}
#: the name of the records' JSON in the archive
RECORDS = "records"
#: the archive's compression: bzip2 holds the noisy low bits of the wall times and of f(x) in about a
#: third less than numpy's deflate (``np.savez_compressed``) at some 60 ms of CPU per raw MB, and
#: ``np.load`` reads it as any ``.npz`` (measured: ``benchmarks/store_size.py``)
COMPRESSION = zipfile.ZIP_BZIP2
#: characters of an algorithm's name kept in a folder name (others become ``_``)
UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]")
#: the spec's fields that make a run what it is, but the seed
IDENTITY_FIELDS = tuple(f for f in SPEC_FIELDS if f != "seed")


class StoreError(ValueError):
    """A batch file that cannot be read as one; the message names the file."""


class RunJob(BaseModel):
    """What one run job is asked (the run family's job spec): runs alike but for their seeds, the run
    code's source hash, the package versions and the data files' checksums. Built by the config's
    planning (``Config.run_job``), passed to the job by its rule, and what every reader of the
    batch compares the stored records with."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    runs: list[RunSpec] = Field(min_length=1)
    source: Sha256
    versions: dict[str, str | None]
    data: DataChecksums

    @model_validator(mode="after")
    def _alike(self) -> RunJob:
        first = identity(self.runs[0])
        for spec in self.runs[1:]:
            if identity(spec) != first:
                raise ValueError(
                    f"the runs of one job differ in more than their seed: {first} vs {identity(spec)}"
                )
        seeds = [spec.seed for spec in self.runs]
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"a seed twice among {seeds}")
        return self

    @property
    def seeds(self) -> list[int]:
        return [spec.seed for spec in self.runs]

    @functools.cached_property
    def key(self) -> str:
        """The hash of what the runs are, but their seeds (the name of their folder in the store)."""
        content = {
            "run": identity(self.runs[0]),
            "source": self.source,
            "versions": self.versions,
            "data": self.data,
        }
        text = json.dumps(content, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:KEY_DIGITS]

    def path(self, store: str = STORE) -> str:
        """The batch file's path: ``<store>/<objective>/<algorithm>-<key>/seeds<first>-<last>.npz``."""
        spec = self.runs[0]
        folder = f"{UNSAFE.sub('_', spec.objective)}/{UNSAFE.sub('_', spec.algorithm)}-{self.key}"
        return f"{store}/{folder}/{seeds_name(self.seeds)}{BATCH_SUFFIX}"


def identity(spec: RunSpec) -> dict[str, Any]:
    """What a run is but its seed, as plain JSON data: the spec's ``IDENTITY_FIELDS``."""
    return json.loads(spec.model_dump_json(include=set(IDENTITY_FIELDS)))


def seeds_name(seeds: Sequence[int]) -> str:
    """``seeds<first>-<last>`` for consecutive seeds, with the list's hash appended otherwise."""
    first, last = seeds[0], seeds[-1]
    name = f"seeds{first}-{last}"
    if list(seeds) != list(range(first, last + 1)):
        digest = hashlib.sha256(",".join(map(str, seeds)).encode()).hexdigest()[:SEEDS_DIGITS]
        name += f"-{digest}"
    return name


class BatchRecord(BaseModel):
    """The records of a batch file: its layout's version, the sha256 of its arrays (a file whose
    numbers were edited is refused) and each run's record, in the arrays' row order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: int
    columns_sha256: Sha256
    runs: list[RunRecord] = Field(min_length=1)

    @model_validator(mode="after")
    def _current(self) -> BatchRecord:
        if self.format != BATCH_FORMAT:
            raise ValueError(f"format {self.format}, but batch files are read in format {BATCH_FORMAT} only")
        return self


def _columns_digest(columns: Mapping[str, np.ndarray]) -> str:
    """sha256 over the stored arrays (name, type, shape and bytes, in ``STORED_COLUMNS``' order)."""
    digest = hashlib.sha256()
    for name in STORED_COLUMNS:
        array = np.ascontiguousarray(columns[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def stored_columns(tables: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays a batch file holds, from its runs' tables (``vhct.pipeline.run.run_columns``):
    wall times back to the clock's integer nanoseconds (exact: the table divides them by 1e9)."""
    out = {}
    for name, dtype in STORED_COLUMNS.items():
        if name.endswith("_nanoseconds"):
            source = name.removesuffix("_nanoseconds") + "_seconds"
            rows = [np.rint(np.asarray(t[source]) * 1e9) for t in tables]
        else:
            rows = [np.asarray(t[name]) for t in tables]
        out[name] = np.vstack(rows).astype(dtype)
    return out


def write_batch(
    path: Path | str, tables: Sequence[Mapping[str, np.ndarray]], records: Sequence[RunRecord]
) -> None:
    """Write a batch file atomically: the runs' stored columns and their records."""
    if len(tables) != len(records) or not tables:
        raise ValueError(f"{len(tables)} tables for {len(records)} records")
    columns = stored_columns(tables)
    record = BatchRecord(format=BATCH_FORMAT, columns_sha256=_columns_digest(columns), runs=list(records))
    data = archive_bytes({**columns, RECORDS: np.array(record.model_dump_json())})
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_paths(path) as (tmp,):
        tmp.write_bytes(data)


def archive_bytes(arrays: Mapping[str, np.ndarray], compression: int = COMPRESSION) -> bytes:
    """``arrays`` as an ``.npz`` archive (one ``<name>.npy`` member each) compressed by ``compression``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w") as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
    return buffer.getvalue()


class Batch(BaseModel):
    """A batch file as read: its records and its stored arrays (runs x rounds)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    record: BatchRecord
    columns: dict[str, Any]


def read_batch(path: Path | str) -> Batch:
    """Read a batch file; :class:`StoreError` naming it unless it holds valid records and every
    stored array, of their types, one row per record, and the arrays' sha256 its record holds."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            contents = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise StoreError(f"batch file {path}: cannot be read ({type(exc).__name__}: {exc})") from exc
    missing = sorted({*STORED_COLUMNS, RECORDS} - set(contents))
    if missing:
        raise StoreError(f"batch file {path}: lacks {', '.join(missing)}")
    try:
        record = BatchRecord.model_validate_json(str(contents[RECORDS]))
    except ValidationError as exc:
        raise StoreError(f"batch file {path}: its records are not valid ({describe(exc)})") from None
    columns = {name: contents[name] for name in STORED_COLUMNS}
    for name, dtype in STORED_COLUMNS.items():
        array = columns[name]
        if array.dtype != np.dtype(dtype) or array.ndim != 2 or array.shape[0] != len(record.runs):
            raise StoreError(
                f"batch file {path}: {name} is {array.dtype} of shape {array.shape}, not {dtype} with a row "
                f"per each of its {len(record.runs)} runs"
            )
    digest = _columns_digest(columns)
    if digest != record.columns_sha256:
        raise StoreError(
            f"batch file {path}: its arrays (sha256 {digest[:12]}...) are not the ones its runs wrote "
            f"({record.columns_sha256[:12]}...): edited after the run"
        )
    return Batch(record=record, columns=columns)


def made_problem(record: RunRecord) -> str | None:
    """What of the software that made the run of ``record`` differs from the installed one: the run
    code's source hash or a package version (``vhct.pipeline.versions``), or None."""
    from vhct.pipeline.versions import package_versions, run_source
    from vhct.registry import UnknownName

    try:
        source = run_source(record.run.algorithm)
    except UnknownName:
        return (
            f"its algorithm {record.run.algorithm!r} is not registered in this process (a plugin not "
            "installed here?), so the code that made it cannot be checked"
        )
    return made_difference(record, source, package_versions())


def stale_batches(store: Path | str = STORE) -> dict[Path, str]:
    """Batch file -> why no reader will serve it (made by other run code or package versions than the
    installed ones, or unreadable): what :func:`main`'s ``--prune`` deletes."""
    out = {}
    for path in sorted(Path(store).rglob(f"*{BATCH_SUFFIX}")):
        try:
            records = read_batch(path).record.runs
        except StoreError as exc:
            out[path] = str(exc)
            continue
        found = next((p for p in map(made_problem, records) if p), None)
        if found:
            out[path] = found
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m vhct.pipeline.store [--prune]``: the store's batch files, runs and size; with
    ``--prune``, delete the batch files no reader will serve any more (another version of the run code
    or of a package made them: every edit of the run code leaves its old batches behind)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--store", default=STORE, help=f"the run store's folder (default {STORE})")
    parser.add_argument("--prune", action="store_true", help="delete the batch files no reader will serve")
    args = parser.parse_args(argv)
    files = sorted(Path(args.store).rglob(f"*{BATCH_SUFFIX}"))
    size = sum(p.stat().st_size for p in files)
    print(f"{args.store}: {len(files)} batch files, {size / 1e6:.1f} MB")
    stale = stale_batches(args.store)
    freed = sum(p.stat().st_size for p in stale)
    verb = "deleted" if args.prune else "would delete (--prune)"
    print(f"{len(stale)} of them made by other run code or package versions: {verb} {freed / 1e6:.1f} MB")
    if args.prune:
        for path in stale:
            path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
