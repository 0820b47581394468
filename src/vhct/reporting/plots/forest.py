"""The audit's forest figure (:func:`audit_forest`): every comparison's estimate and interval, coloured
by verdict, over its claim kind's claimed (green) and refuting (red) regions (``spec.intervals``),
one row per comparison, a panel per claim titled by the reading's name in words (``view.Reading.name``),
on a log axis (0.5 and 2 equally far from 1; a linear one for a difference, each panel's title says
which): a reader sees whether an interval lies in the claimed region, the refuting one, outside the
claimed one or across a margin. Drawn from the typed audit alone; saved by ``plots.common.save``.
:func:`audit_forest` draws one image (the pipeline's); :func:`forest_parts` several, each at most a
given height (the article's pages).
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath

from vhct.reporting.audit.records import Audit
from vhct.reporting.audit.verdicts import READINGS_DISAGREE
from vhct.reporting.plots.common import plt, save
from vhct.reporting.styles import VERDICT_COLOURS, verdict_colour
from vhct.reporting.view import build_view

#: regions of a claim's effect, as intervals on (0, inf)
Regions = list[tuple[float, float]]
CLAIMED_SHADE, REFUTING_SHADE = "#d9f2d9", "#f7d4d4"
#: the forest's width and, in inches: a row of a comparison, a line of a panel's title, the room
#: above a title, the x-axis ticks under a panel, the legend above the panels, the axis label below
WIDTH, ROW_HEIGHT, TITLE_LINE, TITLE_PAD, TICKS, TOP, BOTTOM = 9.0, 0.2, 0.15, 0.08, 0.3, 0.45, 0.45
#: points of a panel's title; the least and the most share of the width left of the panels for the
#: rows' labels (between them, as wide as the widest label)
TITLE_SIZE, LABEL_SHARE = 8, (0.2, 0.6)
#: the width of a title's character in points per point of font (bold sans-serif on average, with
#: room): a title is wrapped to the figure's width
CHAR_WIDTH = 0.62
LABEL_SIZE, PAGE_LABEL_SIZE = 6, 7


@dataclass(frozen=True)
class ForestRow:
    """One row of the forest: a comparison's estimate, interval and verdict, its claim's regions, and
    the title of its claim's panel (the reading's name in words and its axis's scale)."""

    claim: str
    title: str
    label: str
    effect: float
    low: float | None
    high: float | None
    verdict: str
    category: str
    claimed: Regions
    refuting: Regions
    #: the effect is a difference (its kind's ``additive``): drawn on a linear scale, any sign
    additive: bool = False


def forest_rows(audit: Audit) -> list[ForestRow]:
    """One row per comparison with a finite positive estimate, claim by claim (``Audit.claims``)."""
    rows = []
    for reading in build_view(audit).readings:
        claim = reading.claim
        claimed, refuting = claim.claim.spec.intervals(claim.claim)
        additive = claim.claim.spec.additive
        scale = "linear scale" if additive else "log scale"
        for exp in claim.experiments:
            for c in exp.comparisons:
                if not (math.isfinite(c.effect) and (additive or c.effect > 0.0)):
                    continue
                rows.append(
                    ForestRow(
                        claim=claim.claim.id,
                        title=f"{reading.name} ({scale})",
                        label=f"{exp.experiment}: {c.label}",
                        effect=c.effect,
                        low=c.ci_low,
                        high=c.ci_high,
                        verdict=c.verdict,
                        category=c.category,
                        claimed=claimed,
                        refuting=refuting,
                        additive=additive,
                    )
                )
    return rows


def _xlim(rows: Sequence[ForestRow]) -> tuple[float, float]:
    """A log-scale range (a linear one for a difference) holding a claim's estimates, intervals and
    finite margins."""
    if rows[0].additive:
        values = [v for r in rows for v in (r.effect, r.low, r.high) if v is not None and math.isfinite(v)]
        values += [
            v
            for regions in (rows[0].claimed, rows[0].refuting)
            for span in regions
            for v in span
            if math.isfinite(v)
        ]
        lo, hi = min(values), max(values)
        pad = 0.08 * (hi - lo) or 1.0
        return lo - pad, hi + pad
    values = [v for r in rows for v in (r.effect, r.low, r.high) if v and math.isfinite(v) and v > 0]
    for regions in (rows[0].claimed, rows[0].refuting):
        values += [v for lo_hi in regions for v in lo_hi if 0 < v < math.inf]
    lo, hi = min(values), max(values)
    pad = max(1.15, (hi / lo) ** 0.08)
    return lo / pad, hi * pad


def audit_forest(audit: Audit, out_stem: Path | str) -> list[Path]:
    """Draw the forest figure of an audit to ``<out_stem>.pdf`` and ``.png``; return the two paths."""
    rows = forest_rows(audit)
    fig = _draw(rows) if rows else _nothing_to_draw()
    paths = [Path(out_stem).with_suffix(".pdf"), Path(out_stem).with_suffix(".png")]
    save(fig, *paths)
    return paths


def title_lines(title: str, width: float) -> list[str]:
    """A panel's title in lines that fit a forest ``width`` inches wide."""
    return textwrap.wrap(title, max(int(width * 72 / (TITLE_SIZE * CHAR_WIDTH)), 20))


def _panels(rows: Sequence[ForestRow]) -> list[list[ForestRow]]:
    """The rows by claim, in their order: one panel each."""
    return [[r for r in rows if r.claim == claim] for claim in dict.fromkeys(r.claim for r in rows)]


def _panel_heights(group: Sequence[ForestRow], width: float) -> tuple[float, float]:
    """A panel's title block and its plot (inches, the plot with its ticks)."""
    return TITLE_PAD + TITLE_LINE * len(title_lines(group[0].title, width)), ROW_HEIGHT * len(group) + TICKS


def forest_height(rows: Sequence[ForestRow], width: float = WIDTH) -> float:
    """The height (inches) of the forest of ``rows`` drawn ``width`` inches wide: a title and a row
    per comparison for each panel, the legend above and the axis label below."""
    return TOP + BOTTOM + sum(sum(_panel_heights(g, width)) for g in _panels(rows))


#: marks the title of a claim's panel continued from the image before
CONTINUED = "continued"


def split_rows(
    rows: Sequence[ForestRow], height: float, first: float | None = None, width: float = WIDTH
) -> list[list[ForestRow]]:
    """The rows in parts whose forest, ``width`` inches wide, is at most ``height`` inches (the first
    at most ``first``, e.g. below a heading): whole claims, in their order, as many as fit; a claim
    too long for one part alone is cut into parts of its own (a later part's panel titled
    "continued")."""
    first = height if first is None else min(first, height)
    pieces: list[list[ForestRow]] = []
    for group in _panels(rows):
        head = TOP + BOTTOM + sum(_panel_heights(group[:1], width)) - ROW_HEIGHT
        fits = int((first - head) / ROW_HEIGHT + 1e-9)  # comparisons of this panel in any part
        if fits < 1:
            raise ValueError(
                f"a forest image of {height:g} in holds no row (one row under its title needs "
                f"{head + ROW_HEIGHT:g} in)"
            )
        for k in range(0, len(group), fits):
            piece = group[k : k + fits]
            if k:
                piece = [
                    dataclasses.replace(r, claim=f"{r.claim} ({CONTINUED})", title=f"{r.title} ({CONTINUED})")
                    for r in piece
                ]
            pieces.append(piece)
    parts: list[list[ForestRow]] = []
    for piece in pieces:
        if parts and forest_height(parts[-1] + piece, width) <= (height if len(parts) > 1 else first):
            parts[-1] += piece
        else:
            parts.append(list(piece))
    return parts


def forest_parts(
    audit: Audit, out_stem: Path | str, width: float, height: float, first: float | None = None
) -> list[Path]:
    """Draw the forest of an audit as images at most ``height`` inches tall (the first ``first``) and
    ``width`` wide (:func:`split_rows`), ``<out_stem>-<k>.png`` and ``.pdf`` from k = 1; return the
    PNG paths."""
    rows = forest_rows(audit)
    stem = Path(out_stem)
    pngs = []
    for k, part in enumerate(split_rows(rows, height, first, width) if rows else [[]], start=1):
        fig = _draw(part, width, PAGE_LABEL_SIZE) if part else _nothing_to_draw()
        png = stem.with_name(f"{stem.name}-{k}.png")
        save(fig, png.with_suffix(".pdf"), png)
        pngs.append(png)
    return pngs


def _nothing_to_draw() -> Any:
    """A figure saying why it is empty (e.g. a config running every audited experiment reduced: every
    claim below its minimum seeds)."""
    fig, ax = plt.subplots(figsize=(9, 1.6))
    ax.axis("off")
    ax.text(
        0.5,
        0.5,
        "No comparison to draw: no claim was evaluated on this configuration's runs\n"
        "(each claim's reason in the audit, audit.md, says why, e.g. fewer seeds than it needs)",
        ha="center",
        va="center",
        fontsize=9,
    )
    return fig


def _label_share(rows: Sequence[ForestRow], width: float, font: float) -> float:
    """The share of the width left of the panels: the widest row label's, within :data:`LABEL_SHARE`."""
    widest = max(
        TextToPath().get_text_width_height_descent(r.label, FontProperties(size=font), False)[0] for r in rows
    )
    return min(max((widest + 2 * font) / 72 / width, LABEL_SHARE[0]), LABEL_SHARE[1])


def _draw(rows: Sequence[ForestRow], width: float = WIDTH, font: float = LABEL_SIZE) -> Any:
    """One panel per claim (its own log range) under its title at the figure's left, a row per
    comparison: estimate (dot), interval (bar). Laid out in inches (:func:`forest_height`)."""
    groups = _panels(rows)
    total = forest_height(rows, width)
    fig = plt.figure(figsize=(width, total))
    left = _label_share(rows, width, font)
    top = total - TOP  # inches from the bottom, going down
    axes = []
    for group in groups:
        head, body = _panel_heights(group, width)
        top -= head
        fig.text(
            0.005,
            (top + 0.02) / total,
            "\n".join(title_lines(group[0].title, width)),
            fontsize=TITLE_SIZE,
            weight="bold",
            va="bottom",
            ha="left",
        )
        plot = body - TICKS
        axes.append(fig.add_axes((left, (top - plot) / total, 1 - left - 0.02, plot / total)))
        top -= body
    for ax, group in zip(axes, groups, strict=True):
        xmin, xmax = _xlim(group)
        for regions, shade in ((group[0].claimed, CLAIMED_SHADE), (group[0].refuting, REFUTING_SHADE)):
            for lo, hi in regions:
                if hi > xmin and lo < xmax:
                    ax.axvspan(max(lo, xmin), min(hi, xmax), color=shade, linewidth=0)
        for y, r in enumerate(group):
            colour = verdict_colour(r.verdict, r.category)
            if r.low is not None and r.high is not None:
                lo = max(r.low, xmin) if r.low > 0 or r.additive else xmin
                hi = min(r.high, xmax) if math.isfinite(r.high) else xmax
                ax.plot([lo, hi], [y, y], color=colour, linewidth=1.8, solid_capstyle="butt")
            ax.plot([r.effect], [y], "o", color=colour, markersize=4)
        ax.set_xscale("linear" if group[0].additive else "log")
        ax.set_xlim(xmin, xmax)
        ax.set_ylim(len(group) - 0.4, -0.6)
        ax.set_yticks(range(len(group)), [r.label for r in group], fontsize=font)
        ax.tick_params(axis="x", labelsize=font, which="both")
        no_effect = 0.0 if group[0].additive else 1.0
        if xmin < no_effect < xmax:
            ax.axvline(no_effect, color="k", linewidth=0.5, linestyle=":")
    comparison_verdicts = {v: c for v, c in VERDICT_COLOURS.items() if v != READINGS_DISAGREE}
    handles = [plt.Line2D([], [], color=c, marker="o", label=v) for v, c in comparison_verdicts.items()]
    for shade, region in ((CLAIMED_SHADE, "claimed"), (REFUTING_SHADE, "refuting")):
        handles.append(plt.Rectangle((0, 0), 1, 1, color=shade, label=f"{region} region"))
    fig.legend(handles=handles, fontsize=LABEL_SIZE, loc="upper center", ncol=4, frameon=False)
    fig.text(
        0.5,
        0.1 / total,
        "estimate (ratio of means, ratio of ratios, or mean slope on a log scale;\na difference of "
        "differences on a linear one: each panel's title says which) with its interval",
        fontsize=7,
        ha="center",
        va="bottom",
    )
    return fig


def from_snakemake(smk: Any) -> None:
    """Entry point of the audit's forest rule's script: log to the rule's log file and draw the figure
    from the audit's JSON."""
    from vhct.pipeline.jobs import job_logging
    from vhct.reporting.audit.records import read_audit

    with job_logging("figure", smk.log[0] if len(smk.log) else None):
        audit_forest(read_audit(smk.input.audit), Path(smk.output.pdf).with_suffix(""))
