"""The near-optimal cells per depth (kind near_optimal): for each panel's 1-D objective, N_h, the cells
of depth h of the standard partition within the paper's threshold of the maximum
(``vhct.objectives.cells.near_optimal_table``), against all 2^h cells, on a log scale."""

from __future__ import annotations

import numpy as np

from vhct.pipeline.specs import FigureSpec
from vhct.reporting.plots.common import LINE_WIDTH, panel_figure, shared_legend
from vhct.reporting.plots.drawers import DRAWERS
from vhct.reporting.styles import style

#: the legend's entries, shared by every panel
ALL_CELLS = "all 2^h cells of depth h"
NEAR_OPTIMAL = "near-optimal cells N_h(eps_h): sup of f on the cell >= f* - eps_h"


@DRAWERS.register("near_optimal")
def near_optimal_figure(figure: FigureSpec):
    """One panel per objective: N_h at the objective's paper threshold (named in the panel's subtitle,
    with the fitted growth per depth), and 2^h, against the depth h."""
    from vhct.objectives import make_objective
    from vhct.objectives.cells import near_optimal_table

    tables = [near_optimal_table(make_objective(p.objective)) for p in figure.panels]
    fig, axes = panel_figure(len(tables), figure.columns)
    for ax, table, panel in zip(axes, tables, figure.panels, strict=True):
        depths = np.asarray(table.depths)
        ax.semilogy(depths, 2.0**depths, color="grey", linestyle=":", linewidth=LINE_WIDTH, label=ALL_CELLS)
        ax.semilogy(
            depths,
            table.counts,
            color=style("VHCT")[0],
            marker="o",
            markersize=3,
            linewidth=LINE_WIDTH,
            label=NEAR_OPTIMAL,
        )
        ax.set_xlabel("depth h")
        ax.set_ylabel("cells (log scale: a line is exponential growth)")
        ax.grid(alpha=0.3)
        subtitle = f"eps_h = {table.threshold}\ngrowth per depth beyond a power of h: {table.growth:.3g}"
        ax.set_title(f"{panel.title or table.objective}\n{subtitle}", fontsize="small")
    shared_legend(fig, axes, len(axes))
    fig.suptitle(figure.title or "Near-optimal cells per depth on the standard partition (computed)")
    return fig
