"""What every figure shares: matplotlib set up headless, the sizes and fonts, captions, the grid
of panels, the legend under them, and the one atomic writer of a figure's PDF and PNG."""

from __future__ import annotations

import inspect
import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vhct.extras import require
from vhct.pipeline.specs import ExperimentInfo

require(("matplotlib",), "pipeline", "the figures (vhct.reporting.plots)")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

#: room right of the longest bar of a cost panel, for its label (a factor: the axis is logarithmic)
COST_AXIS_ROOM = 30
#: markers telling apart settings of one algorithm inside a panel
VARIANT_MARKERS = ["o", "s", "^", "D", "v"]
#: marker at the last point of a curve that stops before the horizon (e.g. BO)
STOP_MARKER = "X"
#: minimum number of columns of the legend under a figure
LEGEND_COLUMNS = 3
#: inches of a line of the legend (its font and the space between entries): a one-panel figure
#: grows by its legend's lines
LEGEND_LINE_HEIGHT = 0.19
#: width of one character of the legend's font and of an entry's line sample with its padding, in
#: inches: a legend under the panels wraps its labels to fit the figure's width
LEGEND_CHAR_WIDTH, LEGEND_HANDLE_WIDTH = 0.062, 0.75
#: characters per line of a panel's title and of its caption's data line (a panel's width at the
#: title's font)
TITLE_WIDTH = 38
#: fewest characters per line of a wrapped legend label (below it, fewer columns)
LEGEND_MIN_CHARS = 28
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


def data_mode(exp: ExperimentInfo) -> str | None:
    """The data mode of a real-data objective (e.g. MNIST official or test-split), else None."""
    if "mode" in exp.objective_params:
        return str(exp.objective_params["mode"])
    from vhct.objectives import OBJECTIVES

    declared = inspect.signature(OBJECTIVES[exp.objective]).parameters.get("mode")
    if declared is None or declared.default is inspect.Parameter.empty:
        return None
    return str(declared.default)


def experiment_caption(exp: ExperimentInfo, noise: bool = True) -> str:
    """The settings line under a panel title: noise (unless ``noise`` is False: a title that names
    it already), horizon and (real data) the data mode, in the objective's own words where it has
    them (MNIST: which images, how many of the official). No seed count: settings of one experiment
    may run different seeds, so each curve's legend label gives its own (``regret.legend_labels``)."""
    parts = [noise_text(exp.noise)] * noise + [f"n = {exp.horizon}"]
    mode = data_mode(exp)
    if mode is not None:
        from vhct.objectives import OBJECTIVES

        describe = getattr(OBJECTIVES[exp.objective], "data_text", None)
        data = describe(exp.objective_params) if describe is not None else mode
        # on lines of its own, as wide as a panel: MNIST's is as long as the rest
        return ", ".join(parts) + "\n" + textwrap.fill(f"data: {data}", TITLE_WIDTH)
    return ", ".join(parts)


def panel_title(text: str) -> str:
    """A panel's title with each line wrapped to TITLE_WIDTH characters, so that it stays within the
    width of its panel (and of a one-panel figure)."""
    return "\n".join(textwrap.fill(line, TITLE_WIDTH) for line in text.split("\n"))


def short_title(exp: ExperimentInfo) -> str:
    """An experiment's title up to its first colon ("Landmine" of "Landmine: SVM (C, ...)")."""
    return exp.title.split(":")[0]


def panel_figure(n_panels: int, columns: int | None, projections: Sequence[str | None] | None = None):
    """A figure of ``n_panels`` panels of PANEL_SIZE, at most ``columns`` a row (default: one row), and
    their axes (``projections``: each panel's, e.g. "3d")."""
    cols = min(n_panels, columns or n_panels)
    rows = math.ceil(n_panels / cols)
    fig = plt.figure(figsize=(PANEL_SIZE[0] * cols, PANEL_SIZE[1] * rows + 0.5), layout="constrained")
    projections = projections or [None] * n_panels
    axes = [fig.add_subplot(rows, cols, i + 1, projection=projections[i]) for i in range(n_panels)]
    return fig, axes


def shared_legend(fig, axes, columns: int, title: str | None = None) -> None:
    """One legend under the panels, with every label once (panels share settings and styles), its
    labels and ``title`` (e.g. what the bands are) wrapped to the figure's width. Under, not beside:
    a panel's title may be wider than its panel, and a legend beside it would overlap it. A single
    panel's figure grows by the legend's height, so that the panel keeps its own."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    handles, labels = list(entries.values()), list(entries)

    def wrap(columns: int) -> int:  # characters per line of a label in that many columns
        return int((fig.get_size_inches()[0] / columns - LEGEND_HANDLE_WIDTH) / LEGEND_CHAR_WIDTH)

    while columns > 1 and wrap(columns) < LEGEND_MIN_CHARS:
        columns -= 1
    wrapped = [textwrap.fill(label, max(wrap(columns), LEGEND_MIN_CHARS)) for label in labels]
    title = title and textwrap.fill(title, wrap(1) + int(LEGEND_HANDLE_WIDTH / LEGEND_CHAR_WIDTH))
    if len(axes) == 1:
        rows = [wrapped[k : k + columns] for k in range(0, len(wrapped), columns)]
        lines = sum(max(label.count("\n") + 1 for label in row) for row in rows)
        lines += (title or "").count("\n") + 1
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height + lines * LEGEND_LINE_HEIGHT)
    fig.legend(handles, wrapped, loc="outside lower center", ncols=columns, frameon=False, title=title)


def save(fig, pdf_path: Path | str, png_path: Path | str) -> None:
    """Save a figure as PDF and PNG atomically, then close it."""
    from vhct.pipeline.files import atomic_paths

    with atomic_paths(pdf_path, png_path) as (tmp_pdf, tmp_png):
        fig.savefig(tmp_pdf, format="pdf", metadata={"CreationDate": None, "Creator": "vhct"})
        fig.savefig(tmp_png, format="png", dpi=PNG_DPI, metadata={"Software": "vhct"})
    plt.close(fig)
