"""Checks of a run's outputs before they are used: is a run table complete and consistent?

A run writes a per-round table (``seed<k>.csv.gz``) and a JSON sidecar (``seed<k>.json``, the
run record ``vhct.pipeline.records.RunRecord``, read only by :func:`read_sidecar`).
:func:`read_run` reads both and checks the table against the sidecar and the config: the run is
current (:func:`check_current`: its recorded package versions are the installed ones, and its
recorded spec is the one the config asks for now; else :class:`StaleRunError`), the table
decompresses and parses completely, has the columns asked for, one row per round
``t = 1..n``, finite values, ``n`` equals the rounds the sidecar records and the
setting's horizon in the config (``max_horizon`` included), and the sidecar's seed is the one
in the file name (``seed<k>``; which seeds a setting runs is the config's: ``max_seeds``). Any failure raises
:class:`RunTableError` naming the file and how to redo the run; :func:`read_runs` checks
every run of an experiment and names all the bad tables in one error.
Which runs the current config asks for is ``vhct.pipeline.stale``'s (it reads the config).

The version policy, one for every reader: a run made with other versions of the packages that
shape the numbers (``vhct.pipeline.versions``) than the installed ones is refused, never served
with a warning: "same config and seed, same numbers" holds only with the same versions, so a
result is used only if the code that made it is the code installed now. The check when the rules
are read (``vhct.pipeline.stale.check_current_runs``) refuses such runs before any job, since
Snakemake would not rerun them.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vhct.pipeline.records import RunRecord, RunRecordError, RunSpec, spec_difference, version_difference

if TYPE_CHECKING:
    import pandas as pd


TABLE_SUFFIX = ".csv.gz"
SIDECAR_SUFFIX = ".json"
#: the column of round numbers, which must be 1..n
ROUND_COLUMN = "t"
#: columns of a run table after the round and the point's coordinates ``x0 .. x{d-1}``
MEASURE_COLUMNS = (
    "reward",
    "value",
    "regret",
    "cumulative_regret",
    "depth",
    "step_seconds",
    "optimizer_seconds",
)
#: columns of wall times (the whole round's, the optimizer's own): the only ones that differ
#: between two runs of one seed
WALL_TIME_COLUMNS = ("step_seconds", "optimizer_seconds")
#: a run table's file name, which carries its seed
TABLE_NAME = re.compile(r"seed(\d+)" + re.escape(TABLE_SUFFIX) + "$")
#: columns that may hold NaN (the depth of a pulled node, undefined for non-tree methods)
NAN_COLUMNS = frozenset({"depth"})


def run_table_columns(dim: int) -> list[str]:
    """The columns of a run table of a ``dim``-dimensional objective, in their order in the file."""
    return [ROUND_COLUMN, *(f"x{j}" for j in range(dim)), *MEASURE_COLUMNS]


class RunTableError(ValueError):
    """Run tables or their sidecars are unreadable, incomplete or inconsistent with the config.

    ``problems`` maps each bad table to what is wrong with it; the message names them all
    and how to redo them.
    """

    def __init__(self, problems: Mapping[str, str]):
        self.problems = dict(problems)
        paths = list(self.problems)
        if len(paths) == 1:
            head = f"run table {paths[0]}: {self.problems[paths[0]]}. The run is incomplete or damaged: "
            remedy = "delete it (the next snakemake run redoes it), or rerun it"
        else:
            lines = "".join(f"\n  - {path}: {problem}" for path, problem in self.problems.items())
            head = f"{len(paths)} run tables are incomplete or damaged:{lines}\n"
            remedy = "Delete them (the next snakemake run redoes them), or rerun them"
        super().__init__(f"{head}{remedy} with `snakemake --forcerun {' '.join(paths)}`")


class StaleRunError(RunTableError):
    """Runs whose record says they were made for another config than the current one.

    ``before_jobs``: found when the rules are read (``vhct.pipeline.stale.check_current_runs``), where
    ``--forcerun`` cannot help (the check runs before it): the remedy is deleting them.
    """

    def __init__(self, problems: Mapping[str, str], before_jobs: bool = False):
        self.problems = dict(problems)
        lines = "".join(f"\n  - {path}: {problem}" for path, problem in self.problems.items())
        files = " ".join(f"{p} {sidecar_path(p)}" for p in self.problems)
        forcerun = f", or rerun them with `snakemake --forcerun {' '.join(self.problems)}`"
        ValueError.__init__(
            self,
            f"{len(self.problems)} run(s) were made for another config than this one, or with other "
            f"package versions (a changed parameter whose record in .snakemake/ is gone, runs copied "
            f"from elsewhere, an updated install):{lines}\n"
            "Delete them, and snakemake (its default target) redoes them and everything downstream: "
            f"`rm {files}`{'' if before_jobs else forcerun}",
        )


def sidecar_path(table_path: Path | str) -> Path:
    """The JSON sidecar of a run table: ``seed<k>.csv.gz`` -> ``seed<k>.json``."""
    return Path(str(table_path).removesuffix(TABLE_SUFFIX) + SIDECAR_SUFFIX)


def _error(table_path: Path | str, problem: str) -> RunTableError:
    return RunTableError({str(table_path): problem})


def read_sidecar(table_path: Path | str) -> RunRecord:
    """The run record (``vhct.pipeline.records.RunRecord``) of a run table's JSON sidecar, validated."""
    path = sidecar_path(table_path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise _error(table_path, f"its sidecar {path} cannot be read ({exc})") from exc
    try:
        return RunRecord.from_json(text)
    except RunRecordError as exc:
        raise _error(table_path, f"its sidecar {path} is not a valid run record ({exc})") from exc


def version_problem(record: RunRecord) -> str | None:
    """"versions: <the first package that differs>" when the run of ``record`` was made with other
    package versions than the installed ones (``vhct.pipeline.versions``), else None."""
    from vhct.pipeline.versions import package_versions

    found = version_difference(record, package_versions())
    return f"versions: {found}" if found else None


def check_current(table_path: Path | str, record: RunRecord, expected: RunSpec | None = None) -> None:
    """Require the run of ``record`` to be current: made with the installed package versions and,
    given ``expected`` (the config's ``run_spec``), the run it asks for; :class:`StaleRunError`
    naming the file and the first field or package that differs."""
    found = (spec_difference(record, expected) if expected is not None else None) or version_problem(record)
    if found:
        raise StaleRunError({str(table_path): found})


def read_run(
    table_path: Path | str,
    columns: Sequence[str],
    horizon: int | None = None,
    expected: RunSpec | None = None,
) -> tuple[pd.DataFrame, RunRecord]:
    """Read the ``columns`` of a run table and its record; check them against the config.

    The run must be current (:func:`check_current`, :class:`StaleRunError` otherwise): made with the
    installed package versions, and with ``expected`` (the config's spec of the run,
    ``Config.run_spec``) given, the run the config asks for (the first field that differs is named).
    ``horizon`` is the config's rounds of the run (default: ``expected``'s, else the record's).
    Raises :class:`RunTableError` naming the file unless the table parses completely, has the
    columns, rows ``t = 1..horizon`` with finite values (NaN only in ``NAN_COLUMNS``), and its
    sidecar is a valid run record of ``horizon`` rounds and the seed of the file name.
    """
    record = read_sidecar(table_path)
    check_current(table_path, record, expected)
    if expected is not None:
        horizon = expected.horizon if horizon is None else horizon
    horizon = record.rounds if horizon is None else int(horizon)
    wanted = set(columns) | {ROUND_COLUMN}
    import pandas as pd  # here, not at import: a run job writes its table without pandas

    try:
        table = pd.read_csv(table_path, usecols=lambda c: c in wanted)
    except (OSError, EOFError, zlib.error, ValueError) as exc:  # ValueError: pandas' parser errors
        raise _error(table_path, f"cannot be read ({type(exc).__name__}: {exc})") from exc
    missing = sorted(wanted - set(table.columns))
    if missing:
        older = (
            " (written before these columns existed: the run must be redone)"
            if set(missing) <= set(MEASURE_COLUMNS)
            else ""
        )
        raise _error(table_path, f"lacks the columns {missing}{older}")
    named = seed_of(table_path)
    if named is not None and record.seed != named:
        raise _error(table_path, f"its sidecar records seed {record.seed}, the file name seed {named}")
    if record.rounds != horizon:
        raise _error(table_path, f"its sidecar records {record.rounds} rounds, the config {horizon}")
    if len(table) != horizon:
        raise _error(table_path, f"{len(table)} rows, but the config and the sidecar say {horizon} rounds")
    if not np.array_equal(table[ROUND_COLUMN].to_numpy(), np.arange(1, horizon + 1)):
        raise _error(table_path, f"column '{ROUND_COLUMN}' is not 1..{horizon}")
    checked = [c for c in wanted if c not in NAN_COLUMNS]
    try:
        values = table[checked].to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise _error(table_path, f"non-numeric values ({exc})") from exc
    bad = [c for c, ok in zip(checked, np.isfinite(values).all(axis=0), strict=True) if not ok]
    if bad:
        raise _error(table_path, f"non-finite values in the columns {sorted(bad)}")
    return table[list(columns)], record


def read_runs(
    run_paths: Mapping[str, Sequence[Path | str]],
    columns: Sequence[str],
    horizons: Mapping[str, int] | None = None,
    specs: Mapping[str, RunSpec] | None = None,
) -> tuple[dict[str, list[pd.DataFrame]], dict[str, list[RunRecord]]]:
    """:func:`read_run` on every run, by setting; one error names every bad table.

    ``specs`` (table path -> the config's run spec, ``vhct.pipeline.stale.expected_specs``) checks
    that every run is the config's; with or without them, a run made with other package versions
    than the installed ones is refused (:class:`StaleRunError` naming it and the first package).
    """
    runs: dict[str, list[pd.DataFrame]] = {}
    records: dict[str, list[RunRecord]] = {}
    problems: dict[str, str] = {}
    stale = True
    for setting, paths in run_paths.items():
        runs[setting], records[setting] = [], []
        for path in paths:
            horizon = None if horizons is None else int(horizons[setting])
            expected = None if specs is None else specs[str(path)]
            try:
                table, record = read_run(path, columns, horizon, expected)
            except RunTableError as exc:
                problems.update(exc.problems)
                stale = stale and isinstance(exc, StaleRunError)
                continue
            runs[setting].append(table)
            records[setting].append(record)
    if problems:
        raise (StaleRunError if stale else RunTableError)(problems)
    return runs, records


def seed_of(table_path: Path | str) -> int | None:
    """The seed in a run table's file name (``seed<k>.csv.gz``), or None for another name."""
    named = TABLE_NAME.search(Path(table_path).name)
    return None if named is None else int(named.group(1))

