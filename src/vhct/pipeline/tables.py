"""Checks of a run's outputs before they are used: is a run table complete and consistent?

A run writes a per-round table (``seed<k>.csv.gz``) and a JSON sidecar (``seed<k>.json``, the
run record ``vhct.pipeline.records.RunRecord``, read only by :func:`read_sidecar`).
:func:`read_run` reads both and checks the table against the sidecar and the config: the run is
current (:func:`check_current`: its recorded run code's source hash and package versions are the
installed ones, and its recorded spec and data checksums are the ones asked for now, a
``RunRequest``; else :class:`StaleRunError`), the table's bytes have the sha256 its record holds
(a table copied from another seed or edited by hand is refused), it decompresses and parses
completely, has the columns asked for, one row per round
``t = 1..n``, finite values, ``n`` equals the rounds the sidecar records and the
setting's horizon in the config (``max_horizon`` included), and the sidecar's seed is the one
in the file name (``seed<k>``; which seeds a setting runs is the config's: ``max_seeds``). Any failure raises
:class:`RunTableError` naming the file and how to redo the run; :func:`read_runs` checks
every run of an experiment and names all the bad tables in one error.
Which runs the current config asks for is ``vhct.pipeline.stale``'s (it reads the config).

The version policy, one for every reader: a run made with other versions of the packages that
shape the numbers, or by another source of this package's run code (``vhct.pipeline.versions``),
than the installed ones is refused, never served with a warning: "same config and seed, same
numbers" holds only with the same code, so a result is used only if the code that made it is the
code installed now. When the rules are read, such a run's spec file changes and Snakemake reruns
it (``vhct.pipeline.stale``).
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vhct.pipeline.files import sha256_bytes
from vhct.pipeline.records import RunRecord, RunRecordError, RunRequest, made_difference, request_difference

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
    "selection_bound",
    "step_seconds",
    "optimizer_seconds",
)
#: columns of wall times (the whole round's, the optimizer's own): the only ones that differ
#: between two runs of one seed
WALL_TIME_COLUMNS = ("step_seconds", "optimizer_seconds")
#: a run table's file name, which carries its seed
TABLE_NAME = re.compile(r"seed(\d+)" + re.escape(TABLE_SUFFIX) + "$")
#: columns that may hold NaN or inf (the depth of a pulled node, undefined for non-tree methods; the
#: selected node's ``max(SE, OE)``, infinite for a node never pulled, undefined for non-OSC methods)
NAN_COLUMNS = frozenset({"depth", "selection_bound"})


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
    """Runs whose record says they were made for another config, by other code or package versions,
    or from other data than what is asked now.

    ``before_jobs``: found when the rules are read (``vhct.pipeline.stale.check_current_runs``), where
    ``--forcerun`` cannot help (the check runs before it): the remedy is deleting them. One line per
    stale run, naming it, what differs and the command that fixes it.
    """

    def __init__(self, problems: Mapping[str, str], before_jobs: bool = False):
        self.problems = dict(problems)
        lines = "".join(
            f"\n  - {path}: {problem}; fix: `rm {path} {sidecar_path(path)}`"
            + ("" if before_jobs else f" or `snakemake --forcerun {path}`")
            for path, problem in self.problems.items()
        )
        ValueError.__init__(
            self,
            f"{len(self.problems)} run(s) are not what is asked now (another config, run code, package "
            "versions or data; delete each and the next snakemake run redoes it and everything "
            f"downstream):{lines}",
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


def check_current(table_path: Path | str, record: RunRecord, expected: RunRequest | None = None) -> None:
    """Require the run of ``record`` to be current: given ``expected`` (what is asked now,
    ``vhct.pipeline.stale.run_request``), that run, else made by the installed run code and package
    versions; :class:`StaleRunError` naming the file and the first thing that differs."""
    found = request_difference(record, expected) if expected is not None else made_problem(record)
    if found:
        raise StaleRunError({str(table_path): found})


def read_run(
    table_path: Path | str,
    columns: Sequence[str],
    horizon: int | None = None,
    expected: RunRequest | None = None,
) -> tuple[pd.DataFrame, RunRecord]:
    """Read the ``columns`` of a run table and its record; check them against the config.

    The run must be current (:func:`check_current`, :class:`StaleRunError` otherwise): made by the
    installed run code and package versions, and with ``expected`` (what is asked of the run now,
    ``vhct.pipeline.stale.run_request``) given, the run asked for (the first thing that differs is
    named). ``horizon`` is the config's rounds of the run (default: ``expected``'s, else the record's).
    Raises :class:`RunTableError` naming the file unless the table's bytes have the sha256 its
    record holds (not copied from another run, not edited), it parses completely, has the
    columns, rows ``t = 1..horizon`` with finite values (NaN only in ``NAN_COLUMNS``), and its
    sidecar is a valid run record of ``horizon`` rounds and the seed of the file name.
    """
    record = read_sidecar(table_path)
    check_current(table_path, record, expected)
    if expected is not None:
        horizon = expected.run.horizon if horizon is None else horizon
    horizon = record.rounds if horizon is None else int(horizon)
    wanted = set(columns) | {ROUND_COLUMN}
    import pandas as pd  # here, not at import: a run job writes its table without pandas

    try:
        data = Path(table_path).read_bytes()
    except OSError as exc:
        raise _error(table_path, f"cannot be read ({exc})") from exc
    digest = sha256_bytes(data)
    if digest != record.table_sha256:
        raise _error(
            table_path,
            f"its bytes (sha256 {digest[:12]}...) are not the table its run wrote (its sidecar records "
            f"{record.table_sha256[:12]}...): copied from another run or edited",
        )
    try:
        table = pd.read_csv(io.BytesIO(data), compression="gzip", usecols=lambda c: c in wanted)
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
    specs: Mapping[str, RunRequest] | None = None,
) -> tuple[dict[str, list[pd.DataFrame]], dict[str, list[RunRecord]]]:
    """:func:`read_run` on every run, by setting; one error names every bad table.

    ``specs`` (table path -> what is asked of that run now, ``vhct.pipeline.stale.expected_specs``)
    checks that every run is the one asked for; with or without them, a run made by other run code
    or package versions than the installed ones is refused (:class:`StaleRunError` naming it and
    what differs).
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
