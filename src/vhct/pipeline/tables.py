"""Checks of a run's outputs before they are used: is a run table complete and consistent?

A run writes a per-round table (``seed<k>.csv.gz``) and a JSON sidecar (``seed<k>.json``).
:func:`read_run` reads both and checks the table against the sidecar and the config: it
decompresses and parses completely, has the columns asked for, one row per round
``t = 1..n``, finite values, ``n`` equals the rounds the sidecar records and the
setting's horizon in the config (``max_horizon`` included), and the sidecar's seed is the one
in the file name (``seed<k>``; which seeds a setting runs is the config's: ``max_seeds``). Any failure raises
:class:`RunTableError` naming the file and how to redo the run; :func:`read_runs` checks
every run of an experiment and names all the bad tables in one error.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

TABLE_SUFFIX = ".csv.gz"
SIDECAR_SUFFIX = ".json"
#: the column of round numbers, which must be 1..n
ROUND_COLUMN = "t"
#: columns of a run table after the round and the point's coordinates ``x0 .. x{d-1}``
MEASURE_COLUMNS = ("reward", "value", "regret", "cumulative_regret", "depth", "step_seconds")
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


def sidecar_path(table_path: Path | str) -> Path:
    """The JSON sidecar of a run table: ``seed<k>.csv.gz`` -> ``seed<k>.json``."""
    return Path(str(table_path).removesuffix(TABLE_SUFFIX) + SIDECAR_SUFFIX)


def _error(table_path: Path | str, problem: str) -> RunTableError:
    return RunTableError({str(table_path): problem})


def read_sidecar(table_path: Path | str) -> dict[str, Any]:
    """The JSON sidecar of a run table, which must record the run's ``rounds`` and ``seed``."""
    path = sidecar_path(table_path)
    try:
        sidecar = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _error(table_path, f"its sidecar {path} cannot be read ({exc})") from exc
    if not isinstance(sidecar, dict) or not {"rounds", "seed"} <= set(sidecar):
        raise _error(table_path, f"its sidecar {path} lacks the keys 'rounds' and 'seed'")
    return sidecar


def read_run(table_path: Path | str, columns: Sequence[str], horizon: int) -> tuple[pd.DataFrame, dict]:
    """Read the ``columns`` of a run table and its sidecar; check them against ``horizon`` (config).

    Raises :class:`RunTableError` naming the file unless the table parses completely, has the
    columns, rows ``t = 1..horizon`` with finite values (NaN only in ``NAN_COLUMNS``), and its
    sidecar records ``horizon`` rounds and the seed of the file name.
    """
    sidecar = read_sidecar(table_path)
    wanted = set(columns) | {ROUND_COLUMN}
    import pandas as pd  # here, not at import: a run job writes its table without pandas

    try:
        table = pd.read_csv(table_path, usecols=lambda c: c in wanted)
    except (OSError, EOFError, zlib.error, ValueError) as exc:  # ValueError: pandas' parser errors
        raise _error(table_path, f"cannot be read ({type(exc).__name__}: {exc})") from exc
    missing = sorted(wanted - set(table.columns))
    if missing:
        raise _error(table_path, f"lacks the columns {missing}")
    named = TABLE_NAME.search(Path(table_path).name)
    if named is not None and int(sidecar["seed"]) != int(named.group(1)):
        recorded, named_seed = sidecar["seed"], named.group(1)
        raise _error(table_path, f"its sidecar records seed {recorded}, the file name seed {named_seed}")
    if int(sidecar["rounds"]) != horizon:
        raise _error(table_path, f"its sidecar records {sidecar['rounds']} rounds, the config {horizon}")
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
    return table[list(columns)], sidecar


def read_runs(
    run_paths: Mapping[str, Sequence[Path | str]], columns: Sequence[str], horizons: Mapping[str, int]
) -> tuple[dict[str, list[pd.DataFrame]], dict[str, list[dict]]]:
    """:func:`read_run` on every run, by setting; one :class:`RunTableError` names every bad table."""
    runs: dict[str, list[pd.DataFrame]] = {}
    metas: dict[str, list[dict]] = {}
    problems: dict[str, str] = {}
    for setting, paths in run_paths.items():
        runs[setting], metas[setting] = [], []
        for path in paths:
            try:
                table, sidecar = read_run(path, columns, int(horizons[setting]))
            except RunTableError as exc:
                problems.update(exc.problems)
                continue
            runs[setting].append(table)
            metas[setting].append(sidecar)
    if problems:
        raise RunTableError(problems)
    return runs, metas
