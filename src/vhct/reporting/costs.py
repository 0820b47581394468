"""Run costs from the shipped timing aggregates, and what the paper's full scale would cost.

Every run of the pipeline is single-threaded and timed by its own job (``timing.csv``: per run its
wall seconds, and per round the seconds of ask + evaluate + tell, ``step_seconds``, of which the
optimizer's own part is ``optimizer_seconds``). The full-scale estimate multiplies, per experiment
and setting of ``config/paper.yaml``, its seeds and rounds by the measured mean seconds per round of
that setting; where the paper runs more rounds than were measured, or a different objective, the
row says so (a Gaussian process's cost per round grows with the rounds: that estimate is a lower
bound). A setting not measured may be costed at another's (``stand_ins``: a sensitivity variant at its
default's, which the quick start runs without the variant), and the row names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from vhct.pipeline.config import ConfigError, load
from vhct.pipeline.specs import ExperimentInfo


@dataclass(frozen=True)
class AlgorithmCost:
    """One algorithm's runs on one experiment (all its settings): how many, their total and mean
    seconds, the optimizer's own share, and the mean seconds per round."""

    experiment: str
    algorithm: str
    settings: int
    runs: int
    run_seconds: float
    mean_run_seconds: float
    optimizer_seconds: float
    seconds_per_round: float


@dataclass(frozen=True)
class FullScaleRow:
    """One setting of one experiment at the paper's full scale: its seeds and rounds there, the
    measured seconds per round (None: not measured) and rounds measured, and the estimate
    (``stand_in``: the setting whose seconds per round it was costed at, when not its own)."""

    experiment: str
    setting: str
    seeds: int
    rounds: int
    measured_rounds: int | None
    seconds_per_round: float | None
    seconds: float | None
    extrapolated: bool
    objective_differs: bool
    stand_in: str | None = None


@dataclass(frozen=True)
class FullScale:
    """The estimate of ``config/paper.yaml``'s cost: its rows, the total over the measured ones, and
    the rows not measured."""

    config: str
    rows: list[FullScaleRow]
    total_seconds: float
    unmeasured: list[str]
    extrapolated: list[str]
    objective_differs: list[str]
    stood_in: list[str] = field(default_factory=list)

    def by_experiment(self) -> list[dict[str, object]]:
        """Per experiment: its settings (measured of all), the estimate over the measured ones, and
        whether some row runs more rounds than measured or the objective differs."""
        out: dict[str, dict[str, object]] = {}
        for r in self.rows:
            e = out.setdefault(
                r.experiment,
                {
                    "experiment": r.experiment,
                    "settings": 0,
                    "measured": 0,
                    "seconds": 0.0,
                    "rounds": set(),
                    "seeds": set(),
                    "extrapolated": False,
                    "objective_differs": r.objective_differs,
                },
            )
            e["settings"] += 1
            e["rounds"].add(r.rounds)
            e["seeds"].add(r.seeds)
            if r.seconds is not None:
                e["measured"] += 1
                e["seconds"] += r.seconds
            e["extrapolated"] = e["extrapolated"] or r.extrapolated
        return list(out.values())


def algorithm_costs(timings: Mapping[str, pd.DataFrame]) -> list[AlgorithmCost]:
    """Per experiment and algorithm: runs, total and mean run seconds, optimizer seconds, per-round mean."""
    out = []
    for experiment, table in timings.items():
        for algorithm, rows in table.groupby("algorithm", sort=False):
            out.append(
                AlgorithmCost(
                    experiment=experiment,
                    algorithm=str(algorithm),
                    settings=rows["setting"].nunique(),
                    runs=len(rows),
                    run_seconds=float(rows["wall_seconds"].sum()),
                    mean_run_seconds=float(rows["wall_seconds"].mean()),
                    optimizer_seconds=float(rows["optimizer_seconds_sum"].sum()),
                    seconds_per_round=float(rows["step_seconds_sum"].sum() / rows["rounds"].sum()),
                )
            )
    return out


def experiment_seconds(timings: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    """The run seconds of each experiment (the sum over its runs)."""
    return {name: float(table["wall_seconds"].sum()) for name, table in timings.items()}


def full_scale(
    paper_config: Path,
    timings: Mapping[str, pd.DataFrame],
    measured: Mapping[str, ExperimentInfo],
    stand_ins: Mapping[str, str] | None = None,
) -> FullScale:
    """The cost of every run of ``paper_config`` from the measured seconds per round of the same
    experiment and setting (``measured``: the run's experiments, to tell a different objective); a
    setting not measured there at that of its stand-in (``stand_ins``: setting -> stand-in), if measured."""
    stand_ins = stand_ins or {}
    try:
        cfg, _ = load([paper_config])
    except ConfigError as exc:
        raise ValueError(f"{paper_config}: {exc}") from exc
    rows = []
    for experiment in cfg.experiments:
        info = cfg.experiment_info(experiment)
        table = timings.get(experiment)
        run = measured.get(experiment)
        differs = run is not None and run.objective_params != info.objective_params
        for setting, s in info.settings.items():
            per_seed, stand_in = _timed(table, setting), None
            if per_seed is None and setting in stand_ins:
                stand_in = stand_ins[setting]
                per_seed = _timed(table, stand_in)
            if per_seed is None:
                rows.append(
                    FullScaleRow(
                        experiment, setting, len(s.seeds), s.horizon, None, None, None, False, differs
                    )
                )
                continue
            per_round = float(per_seed["step_seconds_sum"].sum() / per_seed["rounds"].sum())
            done = int(per_seed["rounds"].max())
            rows.append(
                FullScaleRow(
                    experiment,
                    setting,
                    len(s.seeds),
                    s.horizon,
                    done,
                    per_round,
                    per_round * s.horizon * len(s.seeds),
                    s.horizon > done,
                    differs,
                    None if per_seed is None else stand_in,
                )
            )
    total = sum(r.seconds for r in rows if r.seconds is not None)
    name = lambda r: f"{r.setting} on {r.experiment}"  # noqa: E731
    return FullScale(
        config=str(paper_config),
        rows=rows,
        total_seconds=total,
        unmeasured=[name(r) for r in rows if r.seconds is None],
        extrapolated=[name(r) for r in rows if r.extrapolated],
        objective_differs=sorted({r.experiment for r in rows if r.objective_differs}),
        stood_in=[f"{name(r)} at {r.stand_in}'s" for r in rows if r.stand_in is not None],
    )


def _timed(table: pd.DataFrame | None, setting: str) -> pd.DataFrame | None:
    """The timing rows of ``setting`` (None when it was not timed)."""
    rows = table[table["setting"] == setting] if table is not None else None
    return None if rows is None or rows.empty else rows
