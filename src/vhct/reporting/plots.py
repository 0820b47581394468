"""Draw the paper's figures from aggregate tables, objectives and a live VHCT run.

One palette, ``vhct.reporting.styles``: every algorithm keeps its colour and line style in every
figure, and no two algorithms share a colour; settings of the same algorithm
within one panel (a rho sweep) are told apart by markers. Figures are saved as PDF and PNG,
atomically.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vhct.extras import require
from vhct.pipeline.figure_kinds import figure_kind

require(("matplotlib",), "pipeline", "the figures (vhct.reporting.plots)")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from vhct.reporting.styles import style  # noqa: E402  (re-exported: plots.style is the figures' palette)

log = logging.getLogger("vhct.reporting.plots")
#: room right of the longest bar of a cost panel, for its label (a factor: the axis is logarithmic)
COST_AXIS_ROOM = 30
#: markers telling apart settings of one algorithm inside a panel
VARIANT_MARKERS = ["o", "s", "^", "D", "v"]
#: marker at the last point of a curve that stops before the horizon (e.g. BO)
STOP_MARKER = "X"
#: minimum number of columns of the legend under a figure
LEGEND_COLUMNS = 3
#: inches added to a one-panel figure for its legend on the right
SIDE_LEGEND_WIDTH = 2.2
#: markers per curve
MARKS_PER_CURVE = 8
BAND_ALPHA = 0.18
LINE_WIDTH = 1.6
FONT_SIZE = 9
PANEL_SIZE = (3.6, 2.9)
PNG_DPI = 160
#: points per axis of objective plots (1-D curves and 2-D surfaces)
GRID_1D = 2000
GRID_2D = 160
#: shrink 3-D axes so their labels stay inside the panel
SURFACE_ZOOM = 0.85
SURFACE_LABEL_PAD = 10
RC = {
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE + 1,
    "axes.labelsize": FONT_SIZE,
    "legend.fontsize": FONT_SIZE - 1,
    "xtick.labelsize": FONT_SIZE - 1,
    "ytick.labelsize": FONT_SIZE - 1,
    "figure.titlesize": FONT_SIZE + 2,
    "pdf.fonttype": 42,
    "svg.hashsalt": "vhct",
}


def noise_text(noise: float) -> str:
    """Caption text of the reward noise."""
    return "noise-free" if noise == 0 else f"noise U(-{noise:g}, {noise:g})"


def data_mode(exp: Mapping[str, Any]) -> str | None:
    """The data mode of a real-data objective (e.g. MNIST official or test-split), else None."""
    params = exp.get("objective_params") or {}
    if "mode" in params:
        return str(params["mode"])
    from vhct.objectives import OBJECTIVES

    declared = inspect.signature(OBJECTIVES[exp["objective"]]).parameters.get("mode")
    if declared is None or declared.default is inspect.Parameter.empty:
        return None
    return str(declared.default)


def experiment_caption(exp: Mapping[str, Any]) -> str:
    """The settings line under a panel title: noise, seeds, horizon and (real data) the data mode."""
    parts = [noise_text(exp["noise"]), f"{len(exp['seeds'])} seeds", f"n = {exp['horizon']}"]
    mode = data_mode(exp)
    if mode is not None:
        parts.append(f"data: {mode}")
    return ", ".join(parts)


def _grid(n_panels: int, columns: int | None) -> tuple[int, int]:
    cols = min(n_panels, columns or n_panels)
    return math.ceil(n_panels / cols), cols


def _figure(n_panels: int, columns: int | None, projection: str | None = None):
    rows, cols = _grid(n_panels, columns)
    fig = plt.figure(figsize=(PANEL_SIZE[0] * cols, PANEL_SIZE[1] * rows + 0.5), layout="constrained")
    axes = [fig.add_subplot(rows, cols, i + 1, projection=projection) for i in range(n_panels)]
    return fig, axes


def save(fig, pdf_path: Path | str, png_path: Path | str) -> None:
    """Save a figure as PDF and PNG atomically, then close it."""
    from vhct.pipeline.files import atomic_paths

    with atomic_paths(pdf_path, png_path) as (tmp_pdf, tmp_png):
        fig.savefig(tmp_pdf, format="pdf", metadata={"CreationDate": None, "Creator": "vhct"})
        fig.savefig(tmp_png, format="png", dpi=PNG_DPI, metadata={"Software": "vhct"})
    plt.close(fig)


# ----------------------------------------------------------------------------- regret curves


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


def draw_regret_panel(
    ax,
    exp: Mapping[str, Any],
    table: pd.DataFrame,
    settings: Sequence[str],
    average: bool,
    title: str | None,
    markers: Mapping[str, str | None] | None = None,
    labels: Mapping[str, str] | None = None,
) -> None:
    """Mean curve with a +-1 std band per setting; R_t or R_t/t. ``labels``: the legend's, one per
    setting for the whole figure (:func:`legend_labels`); by default this panel's alone."""
    info = exp["settings"]
    if markers is None:
        markers = variant_markers({s: info[s]["algorithm"] for s in settings})
    if labels is None:
        labels = legend_labels([exp], [settings])
    for setting in settings:
        rows = table[table["setting"] == setting]
        if rows.empty:
            raise ValueError(f"aggregate of experiment {exp['name']!r} has no rows for setting {setting!r}")
        algo = info[setting]["algorithm"]
        colour, line = style(algo)
        t = rows["t"].to_numpy(dtype=float)
        mean, std = rows["mean"].to_numpy(dtype=float), rows["std"].to_numpy(dtype=float)
        if average:
            mean, std = mean / t, std / t
        label = labels[setting]
        stopped = info[setting]["horizon"] < exp["horizon"]
        marker = markers[setting]
        ax.plot(
            t,
            mean,
            color=colour,
            linestyle=line,
            linewidth=LINE_WIDTH,
            label=label,
            marker=marker,
            markevery=max(1, len(t) // MARKS_PER_CURVE),
            markersize=4,
        )
        if stopped:  # make a short curve visible on a long axis
            ax.plot(t[-1], mean[-1], marker=STOP_MARKER, color=colour, markersize=7, linestyle="none")
        ax.fill_between(t, mean - std, mean + std, color=colour, alpha=BAND_ALPHA, linewidth=0)
    ax.set_xlabel("round t")
    ax.set_ylabel("average regret $R_t/t$" if average else "cumulative regret $R_t$")
    ax.set_xlim(1, exp["horizon"])
    ax.set_title(f"{title or exp['title']}\n{experiment_caption(exp)}")
    ax.grid(alpha=0.3)


def short_title(exp: Mapping[str, Any]) -> str:
    """An experiment's title up to its first colon ("Landmine" of "Landmine: SVM (C, ...)")."""
    return exp["title"].split(":")[0]


def legend_labels(exps: Sequence[Mapping[str, Any]], settings: Sequence[Sequence[str]]) -> dict[str, str]:
    """One legend label per setting for panels of several experiments (``settings[i]`` drawn from
    ``exps[i]``): its label, with where it stops early and runs fewer seeds. A note that holds in
    every panel is given plainly ("stops at t=200"); one that differs names its panels ("stops at
    t=500 on Garland"), so that a setting appears once in a shared legend."""
    notes: dict[str, dict[str, list[tuple[str, str]]]] = {}
    labels: dict[str, str] = {}
    for exp, chosen in zip(exps, settings, strict=True):
        for setting in chosen:
            info = exp["settings"][setting]
            labels[setting] = info["label"]
            mine = notes.setdefault(setting, {"stop": [], "seeds": []})
            n_seeds = len(info.get("seeds", exp["seeds"]))
            stop = f"stops at t={info['horizon']}" if info["horizon"] < exp["horizon"] else ""
            few = f"{n_seeds} seed{'s' * (n_seeds != 1)}" if n_seeds < len(exp["seeds"]) else ""
            mine["stop"].append((stop, short_title(exp)))
            mine["seeds"].append((few, short_title(exp)))
    out = {}
    for setting, kinds in notes.items():
        parts = []
        for pairs in kinds.values():
            texts = {text for text, _ in pairs}
            if texts == {""}:
                continue
            if len(texts) == 1:
                parts.append(texts.pop())
                continue
            for text in dict.fromkeys(t for t, _ in pairs if t):
                where = ", ".join(name for t, name in pairs if t == text)
                parts.append(f"{text} on {where}")
        out[setting] = labels[setting] + (f" ({'; '.join(parts)})" if parts else "")
    return out


def figure_labels(figure: Mapping[str, Any]) -> dict[str, str]:
    """:func:`legend_labels` of a figure's panels."""
    exps = [figure["experiments"][panel["experiment"]] for panel in figure["panels"]]
    chosen = [
        panel.get("settings") or list(exp["settings"])
        for panel, exp in zip(figure["panels"], exps, strict=True)
    ]
    return legend_labels(exps, chosen)


def shared_legend(fig, axes, columns: int) -> None:
    """One legend under the panels, with every label once (panels share settings and styles)."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    handles, labels = list(entries.values()), list(entries)
    if len(axes) == 1:  # a single panel is too narrow for a legend underneath
        width, height = fig.get_size_inches()
        fig.set_size_inches(width + SIDE_LEGEND_WIDTH, height)
        fig.legend(handles, labels, loc="outside right upper", frameon=False)
    else:
        fig.legend(handles, labels, loc="outside lower center", ncols=columns, frameon=False)


def regret_figure(figure: Mapping[str, Any], regret_paths: Mapping[str, str]):
    """Figure of cumulative (kind regret) or average (kind average_regret) regret curves."""
    fig, axes = _figure(len(figure["panels"]), figure.get("columns"))
    tables = {name: pd.read_csv(path) for name, path in regret_paths.items()}
    used = {}
    for panel in figure["panels"]:
        info = figure["experiments"][panel["experiment"]]["settings"]
        for setting in panel.get("settings") or list(info):
            used[setting] = info[setting]["algorithm"]
    markers = variant_markers(used)  # the same marker for a setting in every panel
    labels = figure_labels(figure)  # and the same legend label
    for ax, panel in zip(axes, figure["panels"], strict=True):
        exp = figure["experiments"][panel["experiment"]]
        settings = panel.get("settings") or list(exp["settings"])
        draw_regret_panel(
            ax,
            exp,
            tables[panel["experiment"]],
            settings,
            figure["kind"] == "average_regret",
            panel.get("title"),
            markers,
            labels,
        )
    shared_legend(fig, axes, max(LEGEND_COLUMNS, len(axes) + 1))
    if figure.get("title"):
        fig.suptitle(figure["title"])
    return fig


def timing_path(regret_path: Path | str) -> Path:
    """The timing table beside a regret aggregate (both are outputs of one aggregate job)."""
    return Path(regret_path).with_name("timing.csv")


def seconds_text(seconds: float) -> str:
    """A duration for a label: milliseconds below one second, else seconds."""
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def draw_cost_panel(ax, exp: Mapping[str, Any], timing: pd.DataFrame, settings: Sequence[str]) -> None:
    """Seconds per round (ask + evaluate + tell) of each setting: mean over seeds, a bar with the
    seeds' range, on a log axis (the baselines' costs span orders of magnitude)."""
    info = exp["settings"]
    longest = 0.0
    for row, setting in enumerate(settings):
        per_seed = timing.loc[timing["setting"] == setting, "step_seconds_mean"].to_numpy(dtype=float)
        if per_seed.size == 0:
            raise ValueError(f"timing of experiment {exp['name']!r} has no rows for setting {setting!r}")
        colour, _ = style(info[setting]["algorithm"])
        mean = float(per_seed.mean())
        ax.barh(row, mean, color=colour, alpha=0.85)
        ax.plot([per_seed.min(), per_seed.max()], [row, row], color="black", linewidth=1)
        right = max(mean, float(per_seed.max()))
        ax.annotate(seconds_text(mean), (right, row), xytext=(4, 0), textcoords="offset points", va="center")
        longest = max(longest, right)
    ax.set_yticks(range(len(settings)), [info[s]["label"] for s in settings])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(right=longest * COST_AXIS_ROOM)
    ax.set_xlabel("seconds per round (ask + evaluate + tell)")
    ax.set_title(f"{short_title(exp)}: cost per round\nmean over seeds, black line: range across seeds")
    ax.grid(alpha=0.3, axis="x")


def regret_cost_figure(figure: Mapping[str, Any], regret_paths: Mapping[str, str]):
    """Figure of kind ``regret_cost`` ("beyond the paper"): per panel (an experiment), the cumulative
    regret curves on the left and each setting's seconds per round on the right."""
    n = len(figure["panels"])
    fig = plt.figure(figsize=(PANEL_SIZE[0] * 2.4, PANEL_SIZE[1] * n + 0.5), layout="constrained")
    axes = fig.subplots(n, 2, squeeze=False)
    used = {}
    for panel in figure["panels"]:
        info = figure["experiments"][panel["experiment"]]["settings"]
        for setting in panel.get("settings") or list(info):
            used[setting] = info[setting]["algorithm"]
    markers = variant_markers(used)
    labels = figure_labels(figure)
    for (regret_ax, cost_ax), panel in zip(axes, figure["panels"], strict=True):
        exp = figure["experiments"][panel["experiment"]]
        settings = panel.get("settings") or list(exp["settings"])
        regret_path = regret_paths[panel["experiment"]]
        regret = pd.read_csv(regret_path)
        draw_regret_panel(regret_ax, exp, regret, settings, False, panel.get("title"), markers, labels)
        draw_cost_panel(cost_ax, exp, pd.read_csv(timing_path(regret_path)), settings)
    shared_legend(fig, [row[0] for row in axes], LEGEND_COLUMNS)
    if figure.get("title"):
        fig.suptitle(figure["title"])
    return fig


# ----------------------------------------------------------------------------- objectives


def objective_values(objective, points: np.ndarray) -> np.ndarray:
    """f at each row of ``points`` (vectorized ``values`` when the objective has it)."""
    if hasattr(objective, "values"):
        return np.asarray(objective.values(points), dtype=float)
    return np.array([objective(p) for p in points], dtype=float)


def function_figure(figure: Mapping[str, Any]):
    """1-D objectives as curves, 2-D objectives as surfaces."""
    from vhct.objectives import make_objective

    objectives = [
        make_objective(p["objective"], **(p.get("objective_params") or {})) for p in figure["panels"]
    ]
    dims = {obj.dim for obj in objectives}
    if not dims <= {1, 2}:
        raise ValueError(
            f"figure {figure['name']}: function panels must be 1-D or 2-D objectives, got {dims}"
        )
    rows, cols = _grid(len(objectives), figure.get("columns"))
    fig = plt.figure(figsize=(PANEL_SIZE[0] * cols, PANEL_SIZE[1] * rows + 0.5), layout="constrained")
    for i, (obj, panel) in enumerate(zip(objectives, figure["panels"], strict=True)):
        (lo, hi) = obj.domain[0]
        title = panel.get("title") or panel["objective"]
        if obj.dim == 1:
            ax = fig.add_subplot(rows, cols, i + 1)
            x = np.linspace(lo, hi, GRID_1D)
            ax.plot(x, objective_values(obj, x[:, None]), color="black", linewidth=LINE_WIDTH)
            if obj.maximizer is not None:
                ax.axvline(
                    float(np.ravel(obj.maximizer)[0]),
                    color=style("VHCT")[0],
                    linestyle=":",
                    label="maximizer",
                )
                ax.legend(frameon=False, loc="best")
            ax.set_xlabel("x")
            ax.set_ylabel("f(x)")
            ax.grid(alpha=0.3)
        else:
            ax = fig.add_subplot(rows, cols, i + 1, projection="3d")
            (lo2, hi2) = obj.domain[1]
            gx, gy = np.meshgrid(np.linspace(lo, hi, GRID_2D), np.linspace(lo2, hi2, GRID_2D))
            z = objective_values(obj, np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
            ax.plot_surface(gx, gy, z, cmap="viridis", linewidth=0, antialiased=True, rcount=80, ccount=80)
            ax.set_xlabel("$x_1$")
            ax.set_ylabel("$x_2$")
            ax.set_zlabel("f(x)", labelpad=SURFACE_LABEL_PAD)
            ax.set_box_aspect(None, zoom=SURFACE_ZOOM)
        ax.set_title(title)
    if figure.get("title"):
        fig.suptitle(figure["title"])
    return fig


# ----------------------------------------------------------------------------- OSC illustration


def osc_report(run: Mapping[str, Any], round_: int) -> list[dict[str, Any]]:
    """Replay the first ``round_ - 1`` rounds of the run (``vhct.pipeline.run.seeded_run``) and return
    the traversal report of round ``round_``."""
    from vhct.pipeline.run import run as run_rounds
    from vhct.pipeline.run import seeded_run

    objective, optimizer, noise = seeded_run(run)
    if round_ > 1:
        run_rounds(optimizer, objective, round_ - 1, noise, int(run["seed"]))
    return optimizer.traversal_report()


def osc_figure(figure: Mapping[str, Any], reports: Sequence[Sequence[Mapping[str, Any]]] | None = None):
    """The traversal path at a chosen round with OE_h and SE_h per level (paper's Fig. 2)."""
    panels = figure["panels"]
    if reports is None:
        reports = [osc_report(p["run"], int(p["round"])) for p in panels]
    fig, axes = plt.subplots(
        len(panels),
        2,
        figsize=(2 * PANEL_SIZE[0] + 1, (PANEL_SIZE[1] + 0.6) * len(panels)),
        layout="constrained",
        squeeze=False,
    )
    for (ax_tree, ax_err), panel, report in zip(axes, panels, reports, strict=True):
        draw_osc_path(ax_tree, report)
        draw_osc_errors(ax_err, report)
        run = panel["run"]
        ax_tree.set_title(
            panel.get("title") or f"{run['setting']} on {run['objective']}, traversal at t = {panel['round']}"
        )
        ax_err.set_title(f"{noise_text(run['noise'])}, seed {run['seed']}")
    if figure.get("title"):
        fig.suptitle(figure["title"])
    return fig


def _finite(values: Sequence[float]) -> np.ndarray:
    return np.array([v if v is not None and math.isfinite(v) else np.nan for v in values], dtype=float)


def draw_osc_path(ax, report: Sequence[Mapping[str, Any]]) -> None:
    """Path from the root to the node pulled: a node per level at its cell's centre, OE/SE annotated."""
    depth = np.array([r["depth"] for r in report], dtype=float)
    centre = np.array([(r["index"] - 0.5) / 2.0 ** r["depth"] for r in report], dtype=float)  # 1-based i
    ax.plot(centre, -depth, color="grey", linewidth=1, zorder=1)
    pulled = len(report) - 1
    for k, r in enumerate(report):
        colour = style("VHCT")[0] if k == pulled else style("HCT")[0]
        ax.scatter(centre[k], -depth[k], s=60 if k == pulled else 30, color=colour, zorder=2)
        if r["depth"] == 0:
            text = "root: always passed (the paper sets T = tau := 1)"
        else:
            se = r["uncertainty"]
            se_text = "inf" if se is None or not math.isfinite(se) else f"{se:.3g}"
            text = f"OE={r['resolution']:.3g}, SE={se_text}, T={r['T']}, tau={r['tau']}"
        ax.annotate(
            text,
            (centre[k], -depth[k]),
            xytext=(6, -2),
            textcoords="offset points",
            fontsize=FONT_SIZE - 2,
        )
    ax.set_xlim(-0.05, 1.9)
    ax.set_xticks([0.0, 0.5, 1.0])
    ax.set_xlabel(
        "position (i - 1/2) / 2^h of node (h, i)\n"
        "red: the node pulled, the first on the path with T < tau (SE$_h$ > OE$_h$)"
    )
    ax.set_ylabel("depth h")
    ax.set_yticks(-depth)
    ax.set_yticklabels([str(int(h)) for h in depth])


def draw_osc_errors(ax, report: Sequence[Mapping[str, Any]]) -> None:
    """OE_h (resolution) and SE_h (uncertainty) along the path, log scale; infinite SE drawn at the top."""
    report = [r for r in report if r["depth"] > 0]  # the root is never pulled: no SE to show
    depth = np.array([r["depth"] for r in report], dtype=float)
    oe = _finite([r["resolution"] for r in report])
    se = _finite([r["uncertainty"] for r in report])
    ax.plot(depth, oe, color="black", marker="o", label="$OE_h$ (resolution)")
    ax.plot(depth, se, color=style("VHCT")[0], marker="s", linestyle="--", label="$SE_h$ (uncertainty)")
    finite = np.concatenate([oe[np.isfinite(oe)], se[np.isfinite(se)]])
    top = float(finite.max()) * 3 if finite.size else 1.0
    infinite = np.isnan(se)
    if infinite.any():
        ax.scatter(
            depth[infinite],
            np.full(infinite.sum(), top),
            marker="^",
            color=style("VHCT")[0],
            label="$SE_h = \\infty$ (never pulled)",
        )
    ax.axvline(depth[-1], color="grey", linestyle=":", linewidth=1, label="depth of the node pulled")
    ax.set_yscale("log")
    ax.set_xlabel("depth h on the path")
    ax.set_ylabel("error term")
    ax.set_xticks(depth)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, loc="best")


# ----------------------------------------------------------------------------- dispatch


def make_figure(
    figure: Mapping[str, Any], regret_paths: Mapping[str, str], pdf_path: Path | str, png_path: Path | str
) -> None:
    """Draw a declared figure (``vhct.pipeline.config.Config.figure_spec``) and save it as PDF and PNG:
    its kind's drawer, named in the figure kinds registry (``vhct.pipeline.figure_kinds``)."""
    with plt.rc_context(RC):
        draw = drawer(figure["kind"])
        fig = draw(figure, regret_paths) if figure_kind(figure["kind"]).aggregates else draw(figure)
        save(fig, pdf_path, png_path)


def drawer(kind: str) -> Callable[..., Any]:
    """The function of this module that draws figures of ``kind``, as the figure kinds registry names it."""
    return globals()[figure_kind(kind).drawer]


def figure_job(
    figure: Mapping[str, Any], regret_paths: Mapping[str, str], pdf_path: Path | str, png_path: Path | str
) -> None:
    """Draw one declared figure as PDF and PNG (the ``figure`` rule's job)."""
    log.info("figure %s (%s, %d panels)", figure["name"], figure["kind"], len(figure["panels"]))
    make_figure(figure, regret_paths, pdf_path, png_path)
    log.info("wrote %s and %s", pdf_path, png_path)
