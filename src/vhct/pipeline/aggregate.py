"""Aggregate the per-round tables of one experiment, or of one setting, across seeds.

Four tables: ``regret`` (mean and standard deviation of the cumulative regret at every round,
per setting), ``final`` (the last round of each setting) and ``timing`` (wall times: the whole
round's and the optimizer's own) of an experiment; and ``curve``, one setting's ``regret``
without the columns that need the experiment's other settings (what a figure reads, so that a
figure waits only for the settings it draws). The first
two depend only on the run results, never on wall time, and are written with a fixed float
format so that two complete runs of the pipeline give byte-identical files.

Regret is read from the run tables: against ``f*``, or against 1 when ``f*`` is unknown (the
real-data objectives, as the authors' library PyXAB does; the paper gives no value). Since a score
of 1 may be out of reach, both tables also give the regret against the best value observed in any
run of the experiment (``best_observed``): ``mean_vs_best`` per round and ``final_vs_best_*`` at the end.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vhct.pipeline.records import RunRecord
from vhct.pipeline.specs import SettingInfo
from vhct.pipeline.store import RunJob
from vhct.pipeline.tables import read_runs

logger = logging.getLogger("vhct.pipeline.aggregate")

#: float format of the written tables (fixed, so equal numbers give equal bytes)
FLOAT_FORMAT = "%.12g"
#: columns of a run table (``vhct.pipeline.tables.run_table_columns``) the aggregates read
AGGREGATED_COLUMNS = ["t", "value", "regret", "cumulative_regret", "step_seconds", "optimizer_seconds"]
CURVE_COLUMNS = ["setting", "algorithm", "t", "n_seeds", "mean", "std"]
REGRET_COLUMNS = [*CURVE_COLUMNS, "mean_vs_best"]
FINAL_COLUMNS = [
    "setting",
    "algorithm",
    "label",
    "horizon",
    "n_seeds",
    "final_mean",
    "final_std",
    "average_mean",
    "average_std",
    "best_value_mean",
    "best_value_std",
    "best_observed",
    "final_vs_best_mean",
    "final_vs_best_std",
]
TIMING_COLUMNS = [
    "setting",
    "algorithm",
    "seed",
    "rounds",
    "wall_seconds",
    "step_seconds_sum",
    "step_seconds_mean",
    "optimizer_seconds_sum",
    "optimizer_seconds_mean",
]


def std_across(values: np.ndarray) -> np.ndarray:
    """Sample standard deviation across seeds (axis 0); 0 for a single seed."""
    if values.shape[0] < 2:
        return np.zeros(values.shape[1])
    return values.std(axis=0, ddof=1)


def _stack(tables: Sequence[pd.DataFrame], column: str, setting: str) -> np.ndarray:
    lengths = {len(t) for t in tables}
    if len(lengths) != 1:
        raise ValueError(f"runs of setting {setting!r} have different lengths {sorted(lengths)}")
    return np.vstack([t[column].to_numpy(dtype=float) for t in tables])


def best_observed(runs: Mapping[str, Sequence[pd.DataFrame]]) -> float:
    """The best value ``f(x)`` any run of the experiment evaluated (every setting and seed).

    With :func:`cumulative_regret_vs`, the one definition of "regret against the best observed",
    read by these tables and by the audit (``vhct.reporting.audit.checks.rebase``).
    """
    values = [t["value"].max() for tables in runs.values() for t in tables]
    if not values:
        raise ValueError("best_observed needs at least one run")
    return float(max(values))


def cumulative_regret_vs(tables: Sequence[pd.DataFrame], reference: float, setting: str) -> np.ndarray:
    """Cumulative regret ``sum_s (reference - f(x_s))`` of each run (rows) at every round (columns)."""
    return np.cumsum(reference - _stack(tables, "value", setting), axis=1)


def curve_table(runs: Mapping[str, Sequence[pd.DataFrame]], info: Mapping[str, SettingInfo]) -> pd.DataFrame:
    """Mean and std of the cumulative regret at every round, one block of rows per setting."""
    blocks = []
    for setting, tables in runs.items():
        if not tables:
            raise ValueError(f"setting {setting!r} has no runs")
        values = _stack(tables, "cumulative_regret", setting)
        blocks.append(
            pd.DataFrame(
                {
                    "setting": setting,
                    "algorithm": info[setting].algorithm,
                    "t": tables[0]["t"].to_numpy(dtype=int),
                    "n_seeds": len(tables),
                    "mean": values.mean(axis=0),
                    "std": std_across(values),
                }
            )
        )
    return pd.concat(blocks, ignore_index=True)[CURVE_COLUMNS]


def regret_table(runs: Mapping[str, Sequence[pd.DataFrame]], info: Mapping[str, SettingInfo]) -> pd.DataFrame:
    """:func:`curve_table` of every setting, and ``mean_vs_best``: the mean cumulative regret against
    the experiment's best observed value (its std across seeds equals ``std``: the two regrets
    differ by ``t`` times a constant)."""
    table = curve_table(runs, info)
    best = best_observed(runs)
    vs_best = [cumulative_regret_vs(tables, best, setting).mean(axis=0) for setting, tables in runs.items()]
    return table.assign(mean_vs_best=np.concatenate(vs_best))[REGRET_COLUMNS]


def final_table(runs: Mapping[str, Sequence[pd.DataFrame]], info: Mapping[str, SettingInfo]) -> pd.DataFrame:
    """One row per setting: final cumulative and average regret, best value found (mean, std), and
    the final cumulative regret against the experiment's best observed value."""
    rows = []
    best_all = best_observed(runs)
    for setting, tables in runs.items():
        final = np.array([t["cumulative_regret"].iloc[-1] for t in tables], dtype=float)
        final_vs_best = cumulative_regret_vs(tables, best_all, setting)[:, -1]
        horizon = len(tables[0])
        best = np.array([t["value"].max() for t in tables], dtype=float)
        rows.append(
            {
                "setting": setting,
                "algorithm": info[setting].algorithm,
                "label": info[setting].label,
                "horizon": horizon,
                "n_seeds": len(tables),
                "final_mean": final.mean(),
                "final_std": std_across(final[:, None])[0],
                "average_mean": final.mean() / horizon,
                "average_std": std_across(final[:, None] / horizon)[0],
                "best_value_mean": best.mean(),
                "best_value_std": std_across(best[:, None])[0],
                "best_observed": best_all,
                "final_vs_best_mean": final_vs_best.mean(),
                "final_vs_best_std": std_across(final_vs_best[:, None])[0],
            }
        )
    return pd.DataFrame(rows, columns=FINAL_COLUMNS)


def timing_table(
    runs: Mapping[str, Sequence[pd.DataFrame]],
    records: Mapping[str, Sequence[RunRecord]],
    info: Mapping[str, SettingInfo],
) -> pd.DataFrame:
    """Wall time per run (from its record) and the sum/mean of the per-round times: the whole round
    (``step_seconds``: ask + evaluate + tell) and the optimizer's own part (``optimizer_seconds``:
    ask + tell, without the objective's evaluation)."""
    rows = []
    for setting, tables in runs.items():
        for table, record in zip(tables, records[setting], strict=True):
            steps = table["step_seconds"].to_numpy(dtype=float)
            own = table["optimizer_seconds"].to_numpy(dtype=float)
            rows.append(
                {
                    "setting": setting,
                    "algorithm": info[setting].algorithm,
                    "seed": record.seed,
                    "rounds": len(table),
                    "wall_seconds": record.wall_seconds,
                    "step_seconds_sum": steps.sum(),
                    "step_seconds_mean": steps.mean(),
                    "optimizer_seconds_sum": own.sum(),
                    "optimizer_seconds_mean": own.mean(),
                }
            )
    return pd.DataFrame(rows, columns=TIMING_COLUMNS)


def write_table(table: pd.DataFrame, path: Path | str) -> None:
    """Write a CSV atomically (``vhct.pipeline.files.atomic_paths``) with the fixed float format."""
    from vhct.pipeline.files import atomic_paths

    with atomic_paths(path) as (tmp,), open(tmp, "w", encoding="utf-8", newline="") as handle:
        table.to_csv(handle, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")


#: the tables an aggregate job can write, by name
TABLES = {
    "regret": lambda runs, records, info: regret_table(runs, info),
    "final": lambda runs, records, info: final_table(runs, info),
    "timing": timing_table,
    "curve": lambda runs, records, info: curve_table(runs, info),
}


def aggregate_runs(
    run_paths: Mapping[str, Sequence[Path | str]],
    info: Mapping[str, SettingInfo],
    outputs: Mapping[str, Path | str],
    jobs: Mapping[str, RunJob] | None = None,
) -> None:
    """Read runs (the batch files of an experiment, or of one setting) and write the named tables
    (``outputs``: a name of :data:`TABLES` -> its path).

    Every run is checked first (:func:`vhct.pipeline.tables.read_runs`: whole, ``n`` rounds with ``n``
    the setting's horizon in ``info``, finite values, and, with ``jobs`` (batch file -> what is asked
    of it now), made for the current config and code) and every table is computed before any is
    written: bad runs fail naming every bad file.
    """
    unknown = sorted(set(outputs) - set(TABLES))
    if unknown:
        raise ValueError(f"unknown aggregate table(s) {unknown} (known: {', '.join(TABLES)})")
    horizons = {setting: info[setting].horizon for setting in run_paths}
    runs, records = read_runs(run_paths, AGGREGATED_COLUMNS, horizons, jobs)
    tables = {name: TABLES[name](runs, records, info) for name in outputs}
    for name, path in outputs.items():
        write_table(tables[name], path)


def aggregate_job(
    info: Mapping[str, SettingInfo],
    run_paths: Mapping[str, Sequence[str]],
    outputs: Mapping[str, Path | str],
    jobs: Mapping[str, RunJob] | None = None,
) -> None:
    """Aggregate an experiment's runs, or one setting's, into the named tables (``outputs``: name ->
    path; :data:`TABLES`).

    ``jobs``: batch file -> what is asked of it now (``Config.batch_jobs``), which every run's record
    must match.
    """
    logger.info("aggregating %d settings, %d runs", len(run_paths), sum(map(len, run_paths.values())))
    aggregate_runs(run_paths, info, outputs, jobs)
    logger.info("wrote %s", ", ".join(map(str, outputs.values())))


def from_snakemake(smk: Any) -> None:
    """Entry point of the aggregate rules' Snakemake script: log to the rule's log file and aggregate.
    Its own module's (not ``vhct.pipeline.jobs``'s), so the run job's code does not import the
    aggregation's and an edit of it does not rerun the runs (``vhct.pipeline.versions``)."""
    from vhct.pipeline.config import model
    from vhct.pipeline.jobs import job_logging
    from vhct.pipeline.stale import AggregateJob, read_spec

    with job_logging("aggregate", smk.log[0] if len(smk.log) else None):
        spec = read_spec(smk.input.spec, AggregateJob)  # what the job is asked (vhct.pipeline.stale)
        config = model(smk.config)  # the plain dict Snakemake hands the job, as the model again
        jobs = config.batch_jobs(smk.wildcards.experiment)
        aggregate_job(spec.info, spec.run_paths, dict(smk.output.items()), jobs)
