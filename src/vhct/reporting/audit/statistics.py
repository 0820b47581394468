"""The one table of the per-seed statistics a claim compares (:data:`STATISTICS`): a row per name
(the claims file's ``statistic``) saying which columns of a run table it reads, how it is read at a
round, and how a sentence names it. The claims model takes its names from here
(``claims_model.Statistic``), the runs their reading (``runs.statistic``) and the columns they read
(``runs.AUDITED_COLUMNS``), the renderer its words (``view.direction_sentence``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vhct.pipeline.tables import GUARANTEE_CODES
from vhct.registry import Registry


class Rows:
    """A run's rows 1..t as its table's columns (arrays, not copied; ``column``: name -> the whole
    column): ``rows[column]``, ``len(rows)``. A statistic is read many times per run (claims, margins,
    sensitivity rows, checkpoints): arrays avoid slicing the table each time."""

    def __init__(self, column: Callable[[str], np.ndarray], t: int) -> None:
        self._column, self._t = column, t

    def __getitem__(self, column: str) -> np.ndarray:
        return self._column(column)[: self._t]

    def __len__(self) -> int:
        return self._t


#: reads a statistic from a run's rows 1..t (``head``, t >= 1), the run's f* (None where unknown) and
#: the scale of the normalized regret (None where none is computed)
Reader = Callable[[Rows, float | None, float | None], float]


@dataclass(frozen=True)
class Statistic:
    """One statistic a claim may compare.

    Args:
        name: its name in the claims file, the audit's records and its messages.
        columns: the run table's columns it reads.
        read: its value at round t from the run's rows 1..t (:data:`Reader`); nan where undefined.
        said: how a plain sentence names it ("mean final <said>").
        regret: it is a regret, rebased onto the best value observed where f* is unknown.
    """

    name: str
    columns: tuple[str, ...]
    read: Reader
    said: str
    regret: bool = False


def guarantee_share(head: Rows, f_star: float | None, finite_only: bool = False) -> float:
    """The share of the rounds of ``head`` where the selection guarantee holds (its ``guarantee``
    column, ``vhct.pipeline.tables.GUARANTEE_CODES``), over the rounds whose selected node had a finite SE
    when ``finite_only``; nan where f* is unknown, the method records no ``max(SE, OE)``, or no round
    is left."""
    codes = np.asarray(head["guarantee"])
    if f_star is None or np.all(codes == GUARANTEE_CODES["none"]):
        return math.nan
    holds = (codes == GUARANTEE_CODES["holds"]) | (codes == GUARANTEE_CODES["infinite"])
    if finite_only:
        holds = holds[(codes == GUARANTEE_CODES["holds"]) | (codes == GUARANTEE_CODES["fails"])]
    return float(holds.mean()) if holds.size else math.nan


def _regret(head: Rows) -> float:
    """The cumulative regret R_t at the last round of ``head``."""
    return float(head["cumulative_regret"][-1])


def _mean(head: Rows, column: str) -> float:
    """The mean of a column over ``head``, as pandas takes it (NaN skipped)."""
    return float(pd.Series(head[column]).mean())


def _max_depth(head: Rows) -> float:
    depth = np.asarray(head["depth"], dtype=float)
    return math.nan if np.all(np.isnan(depth)) else float(np.nanmax(depth))


#: every statistic a claim may compare, in the order of the claims schema's enum
STATISTICS: Registry[Statistic] = Registry("statistic")
for _row in (
    Statistic("cumulative_regret", ("cumulative_regret",), lambda h, f, s: _regret(h), "regret", True),
    Statistic(
        "average_regret", ("cumulative_regret",), lambda h, f, s: _regret(h) / len(h), "average regret", True
    ),
    # R_t / (t * scale), 1 for random search
    Statistic(
        "normalized_regret",
        ("cumulative_regret",),
        lambda h, f, s: _regret(h) / (len(h) * s) if s else math.nan,
        "normalized regret",
        True,
    ),
    Statistic("max_depth", ("depth",), lambda h, f, s: _max_depth(h), "max depth"),
    # the mean over rounds 1..t of the whole round (ask + evaluate + tell)
    Statistic(
        "seconds_per_round",
        ("step_seconds",),
        lambda h, f, s: _mean(h, "step_seconds"),
        "seconds per round",
    ),
    # the mean over rounds 1..t of the optimizer's own part (ask + tell)
    Statistic(
        "optimizer_seconds_per_round",
        ("optimizer_seconds",),
        lambda h, f, s: _mean(h, "optimizer_seconds"),
        "optimizer seconds per round",
    ),
    # over every round (a node never pulled has SE = inf, where the guarantee holds trivially)
    Statistic(
        "guarantee_share",
        ("guarantee",),
        lambda h, f, s: guarantee_share(h, f),
        "share of rounds keeping the selection guarantee",
    ),
    # over the rounds whose selected node had a finite SE
    Statistic(
        "guarantee_share_finite",
        ("guarantee",),
        lambda h, f, s: guarantee_share(h, f, finite_only=True),
        "share of rounds keeping the selection guarantee (of those with a finite SE)",
    ),
):
    STATISTICS.register(_row)


def statistic_names() -> tuple[str, ...]:
    """Every statistic's name, in the table's order."""
    return tuple(STATISTICS)


def said(name: str) -> str:
    """How a plain sentence names the statistic ``name``."""
    return STATISTICS.lookup(name).said
