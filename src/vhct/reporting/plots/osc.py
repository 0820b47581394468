"""The OSC illustration (kind osc, the paper's Fig. 2): a VHCT/HCT run replayed to a chosen round,
its traversal path with OE_h and SE_h per level."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vhct.pipeline.records import RunSpec
from vhct.pipeline.specs import FigureSpec
from vhct.reporting.plots.common import FONT_SIZE, PANEL_SIZE, noise_text, plt
from vhct.reporting.plots.drawers import DRAWERS
from vhct.reporting.styles import style

#: marker areas of a node on the path and of the node pulled
NODE_SIZE, PULLED_SIZE = 30, 60
#: characters per line of the sentence under the path saying why the descent stops where it does
STOP_TEXT_WIDTH = 52


def osc_report(run: RunSpec, round_: int) -> list[dict[str, Any]]:
    """Replay the first ``round_ - 1`` rounds of the run (``vhct.pipeline.run.seeded_run``) and return
    the traversal report of round ``round_``."""
    from vhct.pipeline.run import run as run_rounds
    from vhct.pipeline.run import seeded_run

    objective, optimizer, noise = seeded_run(run)
    if round_ > 1:
        run_rounds(optimizer, objective, round_ - 1, noise, run.seed)
    return optimizer.traversal_report()


@DRAWERS.register("osc")
def osc_figure(figure: FigureSpec, reports: Sequence[Sequence[Mapping[str, Any]]] | None = None):
    """The traversal path at a chosen round with OE_h and SE_h per level (paper's Fig. 2), and a line
    under the path saying which node stops the descent and why (:func:`stop_text`)."""
    panels = figure.panels
    runs = []
    for panel in panels:
        if panel.run is None or panel.round is None:
            raise ValueError(f"figure {figure.name}: an osc panel lacks its run specification or round")
        runs.append((panel.run, panel.round))
    if reports is None:
        reports = [osc_report(run, round_) for run, round_ in runs]
    size = (2 * PANEL_SIZE[0] + 1, (PANEL_SIZE[1] + 0.9) * len(panels))
    fig, axes = plt.subplots(len(panels), 2, figsize=size, layout="constrained", squeeze=False)
    for (ax_tree, ax_err), panel, (run, round_), report in zip(axes, panels, runs, reports, strict=True):
        draw_osc_path(ax_tree, report, round_)
        draw_osc_errors(ax_err, report)
        ax_tree.set_title(panel.title or f"{run.setting} on {run.objective}, traversal at t = {round_}")
        ax_err.set_title(f"{noise_text(run.noise)}, seed {run.seed}")
    if figure.title:
        fig.suptitle(figure.title)
    return fig


def stop_kind(row: Mapping[str, Any]) -> str:
    """Why the descent stops at the path's last node: ``"oe<=se"`` (pulled before, its finite SE_h
    still at least OE_h: the paper's Fig. 2), ``"unpulled"`` (never pulled, SE_h infinite) or
    ``"leaf"`` (a leaf whose SE_h fell below OE_h since its last pull: it splits when next pulled)."""
    se = row["uncertainty"]
    if row["T"] == 0 or se is None or not math.isfinite(se):
        return "unpulled"
    return "oe<=se" if row["resolution"] <= se else "leaf"


def stop_text(report: Sequence[Mapping[str, Any]], round_: int) -> str:
    """One plain sentence on the node the descent stops at, at round ``round_``: the case the paper's
    Fig. 2 shows (OE <= SE) or, said as such, what the run shows instead."""
    row = report[-1]
    node = f"node (h={row['depth']}, i={row['index']})"
    oe, se, kind = row["resolution"], row["uncertainty"], stop_kind(row)
    if kind == "oe<=se":
        times = "once" if row["T"] == 1 else f"{row['T']} times"
        return (
            f"red: the descent stops at {node}, pulled {times} before, because OE={oe:.3g} <= "
            f"SE={se:.3g} (T={row['T']} < tau={row['tau']}); it is pulled again"
        )
    if kind == "unpulled":
        return (
            f"red: at t = {round_} the descent ends at {node}, never pulled (T=0, SE infinite): "
            "not the paper's case of a pulled node with OE <= SE; another round shows that"
        )
    return (
        f"red: at t = {round_} the descent ends at the leaf {node} with SE={se:.3g} < OE={oe:.3g} "
        "(not yet split: it splits at this pull); not the paper's case OE <= SE"
    )


def _finite(values: Sequence[float]) -> np.ndarray:
    return np.array([v if v is not None and math.isfinite(v) else np.nan for v in values], dtype=float)


def draw_osc_path(ax, report: Sequence[Mapping[str, Any]], round_: int) -> None:
    """Path from the root to the node pulled: a node per level at its cell's centre, OE/SE annotated,
    the node pulled in red and :func:`stop_text` under the axes."""
    depth = np.array([r["depth"] for r in report], dtype=float)
    centre = np.array([(r["index"] - 0.5) / 2.0 ** r["depth"] for r in report], dtype=float)  # 1-based i
    ax.plot(centre, -depth, color="grey", linewidth=1, zorder=1)
    for k, r in enumerate(report):
        pulled = k == len(report) - 1
        colour = style("VHCT" if pulled else "HCT")[0]
        ax.scatter(centre[k], -depth[k], s=PULLED_SIZE if pulled else NODE_SIZE, color=colour, zorder=2)
        if r["depth"] == 0:
            text = "root: always passed (the paper sets T = tau := 1)"
        else:
            se = r["uncertainty"]
            se_text = "inf" if se is None or not math.isfinite(se) else f"{se:.3g}"
            text = f"OE={r['resolution']:.3g}, SE={se_text}, T={r['T']}, tau={r['tau']}"
        at = (centre[k], -depth[k])
        ax.annotate(text, at, xytext=(6, -2), textcoords="offset points", fontsize=FONT_SIZE - 2)
    ax.set_xlim(-0.05, 1.9)
    ax.set_xticks([0.0, 0.5, 1.0])
    why = textwrap.fill(stop_text(report, round_), STOP_TEXT_WIDTH)
    ax.set_xlabel(f"position (i - 1/2) / 2^h of node (h, i)\n{why}")
    ax.set_ylabel("depth h")
    ax.set_yticks(-depth, [str(int(h)) for h in depth])


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
        label = "$SE_h = \\infty$ (never pulled)"
        tops = np.full(infinite.sum(), top)
        ax.scatter(depth[infinite], tops, marker="^", color=style("VHCT")[0], label=label)
    ax.axvline(depth[-1], color="grey", linestyle=":", linewidth=1, label="depth of the node pulled")
    ax.set_yscale("log")
    ax.set_xlabel("depth h on the path")
    ax.set_ylabel("error term")
    ax.set_xticks(depth)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, loc="best")
