"""Objective plots (kind function): 1-D objectives as curves, 2-D objectives as surfaces."""

from __future__ import annotations

import numpy as np

from vhct.pipeline.specs import FigureSpec
from vhct.reporting.plots.common import (
    GRID_1D,
    GRID_2D,
    LINE_WIDTH,
    SURFACE_LABEL_PAD,
    SURFACE_ZOOM,
    panel_figure,
)
from vhct.reporting.plots.drawers import DRAWERS
from vhct.reporting.styles import style


def objective_values(objective, points: np.ndarray) -> np.ndarray:
    """f at each row of ``points`` (vectorized ``values`` when the objective has it)."""
    if hasattr(objective, "values"):
        return np.asarray(objective.values(points), dtype=float)
    return np.array([objective(p) for p in points], dtype=float)


@DRAWERS.register("function")
def function_figure(figure: FigureSpec):
    """1-D objectives as curves, 2-D objectives as surfaces."""
    from vhct.objectives import make_objective

    objectives = [make_objective(p.objective, **p.objective_params) for p in figure.panels]
    dims = {obj.dim for obj in objectives}
    if not dims <= {1, 2}:
        raise ValueError(f"figure {figure.name}: function panels must be 1-D or 2-D objectives, got {dims}")
    projections = ["3d" if obj.dim == 2 else None for obj in objectives]
    fig, axes = panel_figure(len(objectives), figure.columns, projections)
    for ax, obj, panel in zip(axes, objectives, figure.panels, strict=True):
        (lo, hi) = obj.domain[0]
        if obj.dim == 1:
            x = np.linspace(lo, hi, GRID_1D)
            ax.plot(x, objective_values(obj, x[:, None]), color="black", linewidth=LINE_WIDTH)
            if obj.maximizer is not None:
                at = float(np.ravel(obj.maximizer)[0])
                ax.axvline(at, color=style("VHCT")[0], linestyle=":", label="maximizer")
                ax.legend(frameon=False, loc="best")
            ax.set_xlabel("x")
            ax.set_ylabel("f(x)")
            ax.grid(alpha=0.3)
        else:
            (lo2, hi2) = obj.domain[1]
            gx, gy = np.meshgrid(np.linspace(lo, hi, GRID_2D), np.linspace(lo2, hi2, GRID_2D))
            z = objective_values(obj, np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
            ax.plot_surface(gx, gy, z, cmap="viridis", linewidth=0, antialiased=True, rcount=80, ccount=80)
            ax.set_xlabel("$x_1$")
            ax.set_ylabel("$x_2$")
            ax.set_zlabel("f(x)", labelpad=SURFACE_LABEL_PAD)
            ax.set_box_aspect(None, zoom=SURFACE_ZOOM)
        ax.set_title(panel.title or panel.objective)
    if figure.title:
        fig.suptitle(figure.title)
    return fig
