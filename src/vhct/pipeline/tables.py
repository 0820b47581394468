"""A run's table, and the checks of stored runs before they are used.

A run makes a per-round table (:func:`run_table_columns`, ``vhct.pipeline.run.run_columns``); the
run store keeps what its readers read (``vhct.pipeline.store``). :func:`read_runs` reads a
setting's batch files back as per-run tables of :data:`READ_COLUMNS` with their records, and
checks them: each batch file is whole and unedited (``store.read_batch``), each run is current
(made by the installed run code and package versions, and, given what is asked now, a
``store.RunJob``, the run asked for: its spec, seed and data; else :class:`StaleRunError`), its rounds
are the setting's horizon in the config (``max_horizon`` included) and its values are finite. Any
failure raises :class:`RunTableError` naming every bad batch file and how to redo it.

The version policy, one for every reader: a run made with other versions of the packages that
shape the numbers, or by another source of this package's run code (``vhct.pipeline.versions``),
than the installed ones is refused, never served with a warning: "same config and seed, same
numbers" holds only with the same code, so a result is used only if the code that made it is the
code installed now. Such a run is not found when the rules are read: the batch file of what is
asked now has another name (``store.RunJob.key``), which Snakemake makes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vhct.pipeline.records import RunRecord, request_difference
from vhct.pipeline.store import RunJob, StoreError, made_problem, read_batch

if TYPE_CHECKING:
    import pandas as pd


#: the column of round numbers, 1..n
ROUND_COLUMN = "t"
#: columns of a run table after the round and the point's coordinates ``x0 .. x{d-1}``
MEASURE_COLUMNS = (
    "reward",
    "value",
    "regret",
    "cumulative_regret",
    "depth",
    "selection_bound",
    "guarantee",
    "step_seconds",
    "optimizer_seconds",
)
#: the columns of a stored run (:func:`read_runs`): what the run store keeps, and what it derives
READ_COLUMNS = (
    ROUND_COLUMN,
    "value",
    "regret",
    "cumulative_regret",
    "depth",
    "guarantee",
    "step_seconds",
    "optimizer_seconds",
)
#: the run table's ``guarantee`` column, per round: the selected node had no ``max(SE, OE)`` (a method
#: that records none), a finite one and the guarantee fails (or f* is unknown), a finite one and it
#: holds, an infinite one (a node never pulled: it holds whatever the gap)
GUARANTEE_CODES = {"none": 0, "fails": 1, "holds": 2, "infinite": 3}
#: columns of wall times (the whole round's, the optimizer's own): the only ones that differ
#: between two runs of one seed
WALL_TIME_COLUMNS = ("step_seconds", "optimizer_seconds")
#: columns that may hold NaN (the depth of a pulled node, undefined for non-tree methods)
NAN_COLUMNS = frozenset({"depth"})


def run_table_columns(dim: int) -> list[str]:
    """The columns of a run's table (``vhct.pipeline.run.run_columns``) of a ``dim``-dimensional
    objective, in their order."""
    return [ROUND_COLUMN, *(f"x{j}" for j in range(dim)), *MEASURE_COLUMNS]


def regret_columns(regret_from: float, values: np.ndarray) -> dict[str, np.ndarray]:
    """A run's ``regret`` (``regret_from - f(x)`` per round) and ``cumulative_regret`` from its values:
    the one computation of both, by the run (``vhct.pipeline.run``) and by the reader of stored
    runs, so the two agree to the bit."""
    regret = regret_from - values
    return {"regret": regret, "cumulative_regret": np.cumsum(regret)}


class RunTableError(ValueError):
    """Stored runs that are unreadable, incomplete or inconsistent with the config.

    ``problems`` maps each bad batch file to what is wrong with it; the message names them all
    and how to redo them: the next snakemake run makes a missing file, one that exists is deleted first.
    """

    def __init__(self, problems: Mapping[str, str]):
        self.problems = dict(problems)
        lines = "".join(f"\n  - {path}: {problem}" for path, problem in self.problems.items())
        present = [path for path in self.problems if Path(path).exists()]
        remedy = "The next snakemake run makes them"
        if present:
            remedy = f"{remedy} once these are deleted: `rm {' '.join(present)}`"
        super().__init__(
            f"{len(self.problems)} batch file(s) of runs are damaged or not what is asked:{lines}\n{remedy}"
        )


class StaleRunError(RunTableError):
    """Runs whose record says they were made for another config, by other code or package versions,
    or from other data than what is asked now."""


def _difference(record: RunRecord, job: RunJob | None) -> str | None:
    """The first thing where a stored run differs from what is asked (``job``), else from the
    installed code and versions."""
    if job is None:
        return made_problem(record)
    spec = {s.seed: s for s in job.runs}.get(record.seed)
    if spec is None:
        return f"it holds seed {record.seed}, the job asks for seeds {job.seeds}"
    found = request_difference(record, spec, job.source, job.versions, job.data)
    return None if found is None else f"seed {record.seed}: {found}"


def _tables(path: str, job: RunJob | None, horizon: int | None) -> tuple[list[pd.DataFrame], list[RunRecord]]:
    """The runs of one batch file as tables of :data:`READ_COLUMNS`, checked (:func:`read_runs`)."""
    import pandas as pd  # here, not at import: a run job writes its file without pandas

    batch = read_batch(path)
    records = batch.record.runs
    if job is not None and [r.seed for r in records] != job.seeds:
        raise StaleRunError(
            {path: f"it holds seeds {[r.seed for r in records]}, the job asks for {job.seeds}"}
        )
    for record in records:
        found = _difference(record, job)
        if found:
            raise StaleRunError({path: found})
    tables = []
    for row, record in enumerate(records):
        rounds = (
            horizon if horizon is not None else (job.runs[0].horizon if job is not None else record.rounds)
        )
        if record.rounds != rounds:
            raise RunTableError(
                {path: f"seed {record.seed}: {record.rounds} rounds recorded, the config {rounds}"}
            )
        columns = {name: array[row] for name, array in batch.columns.items()}
        if len(columns["value"]) != rounds:
            raise RunTableError(
                {path: f"seed {record.seed}: {len(columns['value'])} rounds stored, {rounds} recorded"}
            )
        if not np.isfinite(columns["value"]).all():
            raise RunTableError({path: f"seed {record.seed}: non-finite values"})
        tables.append(
            pd.DataFrame(
                {
                    ROUND_COLUMN: np.arange(1, rounds + 1),
                    "value": columns["value"],
                    **regret_columns(record.regret_from, columns["value"]),
                    "depth": columns["depth"],
                    "guarantee": columns["guarantee"],
                    "step_seconds": columns["step_nanoseconds"] / 1e9,
                    "optimizer_seconds": columns["optimizer_nanoseconds"] / 1e9,
                },
                columns=list(READ_COLUMNS),
            )
        )
    return tables, list(records)


def read_runs(
    run_paths: Mapping[str, Sequence[Path | str]],
    columns: Sequence[str] = READ_COLUMNS,
    horizons: Mapping[str, int] | None = None,
    jobs: Mapping[str, RunJob] | None = None,
) -> tuple[dict[str, list[pd.DataFrame]], dict[str, list[RunRecord]]]:
    """The runs of every setting's batch files (``run_paths``: setting -> batch files), as tables of
    ``columns`` (of :data:`READ_COLUMNS`), with their records, checked; one error names every bad file.

    ``jobs`` (batch file -> what is asked of it now, ``Config.run_job``) checks that every run is the
    one asked for; with or without them, a run made by other run code or package versions than the
    installed ones is refused (:class:`StaleRunError` naming it and what differs). ``horizons``:
    setting -> its rounds in the config (default: the job's, else the record's).
    """
    unknown = sorted(set(columns) - set(READ_COLUMNS))
    if unknown:
        raise ValueError(f"stored runs have no column(s) {unknown} (they have {', '.join(READ_COLUMNS)})")
    runs: dict[str, list[pd.DataFrame]] = {}
    records: dict[str, list[RunRecord]] = {}
    problems: dict[str, str] = {}
    stale = True
    for setting, paths in run_paths.items():
        runs[setting], records[setting] = [], []
        for path in map(str, paths):
            horizon = None if horizons is None else int(horizons[setting])
            try:
                tables, found = _tables(path, None if jobs is None else jobs[path], horizon)
            except StoreError as exc:
                problems[path], stale = str(exc).removeprefix(f"batch file {path}: "), False
                continue
            except RunTableError as exc:
                problems.update(exc.problems)
                stale = stale and isinstance(exc, StaleRunError)
                continue
            runs[setting] += [t[list(columns)] for t in tables]
            records[setting] += found
    if problems:
        raise (StaleRunError if stale else RunTableError)(problems)
    return runs, records
