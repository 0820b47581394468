"""Regret curves (kinds regret and average_regret) and the regret-and-cost figure (regret_cost).

Every algorithm keeps its colour and line style (``vhct.reporting.styles``); settings of the same
algorithm within one figure (a rho sweep) are told apart by markers, and a setting has one legend
label across the panels, giving its seeds (from its aggregate) and where it stops early; the
legend's title says what the lines and bands are (``figure_kinds.BAND_NOTE``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from vhct.durations import duration
from vhct.pipeline.figure_kinds import BAND_NOTE
from vhct.pipeline.layout import CURVE_TABLE, TIMING_TABLE
from vhct.pipeline.specs import ExperimentInfo, FigureSpec
from vhct.reporting.plots.common import (
    BAND_ALPHA,
    COST_AXIS_ROOM,
    LEGEND_COLUMNS,
    LINE_WIDTH,
    MARKS_PER_CURVE,
    PANEL_SIZE,
    STOP_MARKER,
    VARIANT_MARKERS,
    experiment_caption,
    panel_figure,
    panel_title,
    plt,
    shared_legend,
    short_title,
)
from vhct.reporting.plots.drawers import DRAWERS
from vhct.reporting.styles import style

#: the curve aggregates a figure reads: experiment -> setting -> ``regret.csv`` of that setting
#: (``vhct.pipeline.aggregate.curve_table``), its ``timing.csv`` beside it
Curves = Mapping[str, Mapping[str, Path | str]]


def read_curves(curves: Curves, name: str = CURVE_TABLE) -> dict[str, pd.DataFrame]:
    """Each experiment's table of the settings drawn: their ``name`` aggregates (the curve, or the
    ``timing.csv`` beside it) one after the other."""
    return {
        experiment: pd.concat(
            [pd.read_csv(Path(path).with_name(name)) for path in by_setting.values()], ignore_index=True
        )
        for experiment, by_setting in curves.items()
    }


def variant_markers(algorithm_of: Mapping[str, str]) -> dict[str, str | None]:
    """Marker per setting: none when its algorithm has one setting in the figure, else one per variant."""
    by_algorithm: dict[str, list[str]] = {}
    for setting, algorithm in algorithm_of.items():
        by_algorithm.setdefault(algorithm, []).append(setting)
    markers: dict[str, str | None] = {}
    for settings in by_algorithm.values():
        for k, setting in enumerate(settings):
            markers[setting] = VARIANT_MARKERS[k % len(VARIANT_MARKERS)] if len(settings) > 1 else None
    return markers


def figure_markers(figure: FigureSpec) -> dict[str, str | None]:
    """:func:`variant_markers` of every setting a figure draws: a setting's marker in every panel."""
    used = {}
    for panel in figure.panels:
        info = figure.experiment(panel).settings
        for setting in figure.panel_settings(panel):
            used[setting] = info[setting].algorithm
    return variant_markers(used)


def curve_seeds(exp: ExperimentInfo, table: pd.DataFrame, settings: Sequence[str]) -> dict[str, int]:
    """Each setting's number of seeds, read from its curve aggregate (column ``n_seeds``, one value
    per setting): what the drawn curve averages, whatever the config asked for."""
    seeds = {}
    for setting in settings:
        values = table.loc[table["setting"] == setting, "n_seeds"].unique() if "n_seeds" in table else []
        if len(values) != 1:
            got = [int(v) for v in values]
            where = f"aggregate of experiment {exp.name!r}: setting {setting!r}"
            raise ValueError(f"{where} needs one n_seeds value, got {got}")
        seeds[setting] = int(values[0])
    return seeds


def draw_regret_panel(
    ax,
    exp: ExperimentInfo,
    table: pd.DataFrame,
    settings: Sequence[str],
    average: bool,
    title: str | None,
    markers: Mapping[str, str | None] | None = None,
    labels: Mapping[str, str] | None = None,
) -> None:
    """Mean curve with a +-1 std band per setting, R_t or R_t/t; ``markers`` and ``labels``: the
    figure's (one per setting across its panels), by default this panel's alone."""
    info = exp.settings
    if markers is None:
        markers = variant_markers({s: info[s].algorithm for s in settings})
    if labels is None:
        labels = legend_labels([exp], [settings], [curve_seeds(exp, table, settings)])
    for setting in settings:
        rows = table[table["setting"] == setting]
        if rows.empty:
            raise ValueError(f"aggregate of experiment {exp.name!r} has no rows for setting {setting!r}")
        colour, line = style(info[setting].algorithm)
        t = rows["t"].to_numpy(dtype=float)
        mean, std = rows["mean"].to_numpy(dtype=float), rows["std"].to_numpy(dtype=float)
        if average:
            mean, std = mean / t, std / t
        every = max(1, len(t) // MARKS_PER_CURVE)
        ax.plot(
            t,
            mean,
            color=colour,
            linestyle=line,
            linewidth=LINE_WIDTH,
            label=labels[setting],
            marker=markers[setting],
            markevery=every,
            markersize=4,
        )
        if info[setting].horizon < exp.horizon:  # make a short curve visible on a long axis
            ax.plot(t[-1], mean[-1], marker=STOP_MARKER, color=colour, markersize=7, linestyle="none")
        ax.fill_between(t, mean - std, mean + std, color=colour, alpha=BAND_ALPHA, linewidth=0)
    ax.set_xlabel("round t")
    ax.set_ylabel("average regret $R_t/t$" if average else "cumulative regret $R_t$")
    ax.set_xlim(1, exp.horizon)
    heading = title or exp.title
    # a title giving the noise's range (a noise sweep's panel) is not followed by it again
    said = f"(-{exp.noise:g}, {exp.noise:g})" in heading
    ax.set_title(panel_title(f"{heading}\n{experiment_caption(exp, noise=not said)}"))
    ax.grid(alpha=0.3)


def legend_labels(
    exps: Sequence[ExperimentInfo], settings: Sequence[Sequence[str]], seeds: Sequence[Mapping[str, int]]
) -> dict[str, str]:
    """One legend label per setting over panels of several experiments (``settings[i]`` from
    ``exps[i]``, ``seeds[i]`` their curves' numbers of seeds, :func:`curve_seeds`), giving its seeds
    and where it stops early: plainly when that holds in every panel ("stops at t=200; 20 seeds"),
    else naming the panels ("20 seeds on Garland; 100 seeds on Rastrigin")."""
    labels: dict[str, str] = {}
    notes: dict[tuple[str, int], list[tuple[str, str]]] = {}  # (setting, note) -> (text or "", panel)
    for exp, chosen, n_seeds_of in zip(exps, settings, seeds, strict=True):
        for setting in chosen:
            info = exp.settings[setting]
            labels[setting] = info.label
            n_seeds = n_seeds_of[setting]
            stop = f"stops at t={info.horizon}" if info.horizon < exp.horizon else ""
            count = f"{n_seeds} seed{'s' * (n_seeds != 1)}"
            for which, text in enumerate((stop, count)):
                notes.setdefault((setting, which), []).append((text, short_title(exp)))
    parts: dict[str, list[str]] = {setting: [] for setting in labels}
    for (setting, _), pairs in notes.items():
        texts = dict.fromkeys(text for text, _ in pairs)
        for text in filter(None, texts):  # said plainly when the same in every panel
            where = ", ".join(name for t, name in pairs if t == text)
            parts[setting].append(f"{text} on {where}" if len(texts) > 1 else text)
    return {setting: labels[setting] + (f" ({'; '.join(p)})" if p else "") for setting, p in parts.items()}


def figure_labels(
    figure: FigureSpec, tables: Mapping[str, pd.DataFrame], seeds_in_legend: bool = True
) -> dict[str, str]:
    """:func:`legend_labels` of a figure's panels, their seeds read from the curve ``tables``
    (experiment -> its settings' aggregates, :func:`read_curves`); without ``seeds_in_legend``, each
    setting's name alone."""
    exps = [figure.experiment(panel) for panel in figure.panels]
    chosen = [figure.panel_settings(panel) for panel in figure.panels]
    if not seeds_in_legend:
        return {
            s: exp.settings[s].label for exp, settings in zip(exps, chosen, strict=True) for s in settings
        }
    seeds = [
        curve_seeds(exp, tables[panel.experiment], settings)
        for exp, panel, settings in zip(exps, figure.panels, chosen, strict=True)
    ]
    return legend_labels(exps, chosen, seeds)


@DRAWERS.register("regret")
@DRAWERS.register("average_regret")
def regret_figure(figure: FigureSpec, curves: Curves, seeds_in_legend: bool = True):
    """Figure of cumulative (kind regret) or average (kind average_regret) regret curves;
    ``seeds_in_legend`` False: the legend names the settings alone (a caption gives their seeds)."""
    fig, axes = panel_figure(len(figure.panels), figure.columns)
    tables = read_curves(curves)
    markers = figure_markers(figure)  # the same marker for a setting in every panel
    labels = figure_labels(figure, tables, seeds_in_legend)  # and the same legend label
    average = figure.kind == "average_regret"
    for ax, panel in zip(axes, figure.panels, strict=True):
        exp, settings = figure.experiment(panel), figure.panel_settings(panel)
        draw_regret_panel(ax, exp, tables[panel.experiment], settings, average, panel.title, markers, labels)
    shared_legend(fig, axes, max(LEGEND_COLUMNS, len(axes) + 1), title=BAND_NOTE)
    if figure.title:
        fig.suptitle(figure.title)
    return fig


def draw_cost_panel(ax, exp: ExperimentInfo, timing: pd.DataFrame, settings: Sequence[str]) -> None:
    """Seconds per round (ask + evaluate + tell) of each setting: mean over seeds, a bar with the
    seeds' range, on a log axis (the baselines' costs span orders of magnitude)."""
    info = exp.settings
    longest = 0.0
    for row, setting in enumerate(settings):
        per_seed = timing.loc[timing["setting"] == setting, "step_seconds_mean"].to_numpy(dtype=float)
        if per_seed.size == 0:
            raise ValueError(f"timing of experiment {exp.name!r} has no rows for setting {setting!r}")
        colour, _ = style(info[setting].algorithm)
        mean = float(per_seed.mean())
        ax.barh(row, mean, color=colour, alpha=0.85)
        ax.plot([per_seed.min(), per_seed.max()], [row, row], color="black", linewidth=1)
        right = max(mean, float(per_seed.max()))
        ax.annotate(duration(mean), (right, row), xytext=(4, 0), textcoords="offset points", va="center")
        longest = max(longest, right)
    ax.set_yticks(range(len(settings)), [info[s].label for s in settings])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(right=longest * COST_AXIS_ROOM)
    ax.set_xlabel("seconds per round (ask + evaluate + tell)")
    ax.set_title(f"{short_title(exp)}: cost per round\nmean over seeds, black line: range across seeds")
    ax.grid(alpha=0.3, axis="x")


@DRAWERS.register("regret_cost")
def regret_cost_figure(figure: FigureSpec, curves: Curves, seeds_in_legend: bool = True):
    """Kind ``regret_cost`` ("beyond the paper"): per experiment, its regret curves beside each
    setting's seconds per round (``seeds_in_legend``: as :func:`regret_figure`)."""
    n = len(figure.panels)
    fig = plt.figure(figsize=(PANEL_SIZE[0] * 2.4, PANEL_SIZE[1] * n + 0.5), layout="constrained")
    axes = fig.subplots(n, 2, squeeze=False)
    markers = figure_markers(figure)
    regrets, timings = read_curves(curves), read_curves(curves, TIMING_TABLE)
    labels = figure_labels(figure, regrets, seeds_in_legend)
    for (regret_ax, cost_ax), panel in zip(axes, figure.panels, strict=True):
        exp, settings = figure.experiment(panel), figure.panel_settings(panel)
        regret = regrets[panel.experiment]
        draw_regret_panel(regret_ax, exp, regret, settings, False, panel.title, markers, labels)
        draw_cost_panel(cost_ax, exp, timings[panel.experiment], settings)
    shared_legend(fig, [row[0] for row in axes], LEGEND_COLUMNS, title=BAND_NOTE)
    if figure.title:
        fig.suptitle(figure.title)
    return fig
