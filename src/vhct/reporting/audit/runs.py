"""The runs a claim reads (through the pipeline's one reader), cross-checked against the aggregates,
rebased where f* is unknown, and the per-seed statistics the checks compare."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from vhct.pipeline.aggregate import best_observed, cumulative_regret_vs
from vhct.pipeline.config import Config
from vhct.pipeline.tables import read_runs as read_setting_runs
from vhct.reporting.audit.statistics import STATISTICS, Rows

#: the statistics whose per-seed values are shares of rounds where the paper's selection guarantee
#: holds (the share_at_least kind's)
GUARANTEE_STATISTICS = ("guarantee_share", "guarantee_share_finite")
#: statistics that are regrets (rebased onto the best value observed where f* is unknown)
REGRET_STATISTICS = tuple(s.name for s in STATISTICS.values() if s.regret)
#: columns of a run table (``vhct.pipeline.tables.run_table_columns``) the audit reads: the round, the
#: value (for the regret against the best value observed, where f* is unknown) and every statistic's
AUDITED_COLUMNS = tuple(dict.fromkeys(("t", "value", *(c for s in STATISTICS.values() for c in s.columns))))
#: relative tolerance of the cross-check of per-seed finals against the aggregate table
AGGREGATE_RTOL = 1e-8


@dataclass(frozen=True)
class Run:
    """One run (one seed) of one setting: its table (``AUDITED_COLUMNS``) and its record's ``f_star``,
    the maximum its regret is against (None for real data, whose regret is against 1: :func:`rebase`)."""

    seed: int
    table: pd.DataFrame
    f_star: float | None

    @cached_property
    def horizon(self) -> int:
        return len(self.table)

    @cached_property
    def _arrays(self) -> dict[str, np.ndarray]:
        return {}

    def column(self, name: str) -> np.ndarray:
        """A column of the table as an array, taken once (the statistics read it many times)."""
        if name not in self._arrays:
            self._arrays[name] = self.table[name].to_numpy()
        return self._arrays[name]


#: experiment -> setting -> runs
Runs = Mapping[str, Mapping[str, Sequence[Run]]]


def read_runs(
    run_paths: Mapping[str, Mapping[str, Sequence[Path | str]]], config: Config
) -> dict[str, dict[str, list[Run]]]:
    """The runs of each experiment's batch files (experiment -> setting -> files), with their records'
    seed and f*, read by ``vhct.pipeline.tables.read_runs``: a run other than the one the config asks
    for (``Config.batch_jobs``) fails, naming its file and the field."""
    runs: dict[str, dict[str, list[Run]]] = {}
    for experiment, by_setting in run_paths.items():
        jobs = config.batch_jobs(experiment)
        tables, records = read_setting_runs(by_setting, AUDITED_COLUMNS, jobs=jobs)
        runs[experiment] = {
            s: [Run(r.seed, t, r.f_star) for t, r in zip(tables[s], records[s], strict=True)]
            for s in by_setting
        }
    return runs


def check_aggregates(runs: Runs, final_paths: Mapping[str, Path | str]) -> None:
    """Require the per-seed final regrets to average to the aggregate table's ``final_mean``."""
    for experiment, path in final_paths.items():
        final = pd.read_csv(path).set_index("setting")
        for setting, setting_runs in runs.get(experiment, {}).items():
            if setting not in final.index:
                raise ValueError(f"aggregate {path} has no row for setting {setting!r}")
            ours = float(np.mean([r.table["cumulative_regret"].iloc[-1] for r in setting_runs]))
            theirs = float(final.loc[setting, "final_mean"])
            if not math.isclose(ours, theirs, rel_tol=AGGREGATE_RTOL, abs_tol=AGGREGATE_RTOL):
                raise ValueError(
                    f"aggregate {path}, setting {setting!r}: final_mean {theirs!r} but the runs give {ours!r}"
                )


def rebase(exp_runs: Mapping[str, Sequence[Run]]) -> tuple[dict[str, list[Run]], str]:
    """Regret against the best value observed in any run where f* is unknown (real data), and a note
    saying so; runs with an exact f* unchanged. Regret against 1 (the authors' library's; the paper
    gives no value) halves relative effects; the aggregates' ``*_vs_best`` columns share the
    definition (``aggregate.best_observed``)."""
    all_runs = [r for runs in exp_runs.values() for r in runs]
    known = {r.f_star is not None for r in all_runs}
    if len(known) > 1:
        raise ValueError("the runs of one experiment disagree on whether f* is known")
    if not all_runs or known == {True}:
        return {s: list(v) for s, v in exp_runs.items()}, ""
    best = best_observed({s: [r.table for r in runs] for s, runs in exp_runs.items()})
    out: dict[str, list[Run]] = {setting: [] for setting in exp_runs}
    for setting, runs in exp_runs.items():
        for r in runs:
            regret = cumulative_regret_vs([r.table], best, setting)[0]
            out[setting].append(Run(r.seed, r.table.assign(cumulative_regret=regret), r.f_star))
    return out, f"regret against the best value observed in any run, {best:.4g} (not 1)"


def statistic(run: Run, name: str, at_round: int, scale: float | None = None) -> float:
    """The named statistic (a row of :data:`vhct.reporting.audit.statistics.STATISTICS`) of one run at
    round ``at_round`` (1-based); nan if undefined for the run. ``scale``: the normalized regret's."""
    if not 1 <= at_round <= run.horizon:
        raise ValueError(f"round {at_round} is outside the run's rounds 1..{run.horizon}")
    return STATISTICS.lookup(name).read(Rows(run.column, at_round), run.f_star, scale)


def samples(runs: Sequence[Run], name: str, at_round: int, scale: float | None = None) -> dict[int, float]:
    """Seed -> statistic at ``at_round``."""
    return {run.seed: statistic(run, name, at_round, scale) for run in runs}


def mean_statistic(runs: Sequence[Run], name: str, at_round: int) -> float:
    """The statistic at ``at_round``, averaged over seeds."""
    return float(np.mean(list(samples(runs, name, at_round).values())))


def horizon(runs: Sequence[Run]) -> int:
    """Rounds every run of a setting has."""
    return min(run.horizon for run in runs)
