"""The audit's forest figure (:func:`audit_forest`): every comparison's estimate and interval, coloured
by verdict, over its claim kind's claimed (green) and refuting (red) regions (``spec.intervals``),
one row per comparison, a panel per claim, on a log axis (0.5 and 2 equally far from 1; a linear one
for a difference, each panel's title says which): a reader sees whether an interval lies in the
claimed region, the refuting one, outside the claimed one or across a margin. Drawn from the typed
audit alone; saved by ``plots.common.save``. :func:`audit_forest` draws one image (the pipeline's);
:func:`forest_parts` several, each at most a given height (the article's pages).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vhct.reporting.audit.records import Audit, ClaimVerdict
from vhct.reporting.audit.verdicts import READINGS_DISAGREE
from vhct.reporting.plots.common import plt, save
from vhct.reporting.styles import VERDICT_COLOURS, verdict_colour

#: regions of a claim's effect, as intervals on (0, inf)
Regions = list[tuple[float, float]]
CLAIMED_SHADE, REFUTING_SHADE = "#d9f2d9", "#f7d4d4"
#: the forest's width (inches) and per row of a comparison; a panel's title takes PANEL_HEAD rows; the
#: legend and axis label take MARGIN inches
WIDTH, ROW_HEIGHT, PANEL_HEAD, MARGIN = 9.0, 0.2, 1.2, 1.0
#: points of the rows' labels and ticks: the pipeline's image (shrunk to a page's width by a reader)
#: and the article's parts (printed at their drawn size, a row's height holds a larger font); the
#: legend keeps LABEL_SIZE (four columns across the article's width)
LABEL_SIZE, PAGE_LABEL_SIZE = 6, 7


@dataclass(frozen=True)
class ForestRow:
    """One row of the forest: a comparison's estimate, interval and verdict, and its claim's regions."""

    claim: str
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


def forest_rows(claims: Iterable[ClaimVerdict]) -> list[ForestRow]:
    """One row per comparison with a finite positive estimate, claim by claim (``Audit.claims``)."""
    rows = []
    for claim in claims:
        claimed, refuting = claim.claim.spec.intervals(claim.claim)
        additive = claim.claim.spec.additive
        for exp in claim.experiments:
            for c in exp.comparisons:
                if not (math.isfinite(c.effect) and (additive or c.effect > 0.0)):
                    continue
                rows.append(
                    ForestRow(
                        claim=claim.claim.id,
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
    rows = forest_rows(audit.claims)
    fig = _draw(rows) if rows else _nothing_to_draw()
    paths = [Path(out_stem).with_suffix(".pdf"), Path(out_stem).with_suffix(".png")]
    save(fig, *paths)
    return paths


def forest_height(rows: Sequence[ForestRow]) -> float:
    """The height (inches) of the forest of ``rows``: a row per comparison, a title per panel."""
    return ROW_HEIGHT * (len(rows) + PANEL_HEAD * len(dict.fromkeys(r.claim for r in rows))) + MARGIN


#: marks the title of a claim's panel continued from the image before
CONTINUED = "continued"


def split_rows(rows: Sequence[ForestRow], height: float, first: float | None = None) -> list[list[ForestRow]]:
    """The rows in parts whose forest is at most ``height`` inches (the first at most ``first``,
    e.g. below a heading): whole claims, in their order, as many as fit; a claim too long for one
    part alone is cut into parts of its own (a later part's panel titled "continued")."""
    first = height if first is None else min(first, height)
    fits = int((first - MARGIN) / ROW_HEIGHT - PANEL_HEAD)  # comparisons of one panel in any part
    if fits < 1:
        least = MARGIN + ROW_HEIGHT * (PANEL_HEAD + 1)
        raise ValueError(f"a forest image of {height:g} in holds no row (one row needs {least:g} in)")
    pieces: list[list[ForestRow]] = []
    for claim in dict.fromkeys(r.claim for r in rows):
        group = [r for r in rows if r.claim == claim]
        for k in range(0, len(group), fits):
            piece = group[k : k + fits]
            if k:
                piece = [dataclasses.replace(r, claim=f"{claim} ({CONTINUED})") for r in piece]
            pieces.append(piece)
    parts: list[list[ForestRow]] = []
    for piece in pieces:
        if parts and forest_height(parts[-1] + piece) <= (height if len(parts) > 1 else first):
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
    rows = forest_rows(audit.claims)
    stem = Path(out_stem)
    pngs = []
    for k, part in enumerate(split_rows(rows, height, first) if rows else [[]], start=1):
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


def _draw(rows: Sequence[ForestRow], width: float = WIDTH, font: float = LABEL_SIZE) -> Any:
    """One panel per claim (its own log range), a row per comparison: estimate (dot), interval (bar)."""
    claims = list(dict.fromkeys(r.claim for r in rows))
    groups = [[r for r in rows if r.claim == c] for c in claims]
    heights = [len(g) + PANEL_HEAD for g in groups]
    total = forest_height(rows)
    fig, axes = plt.subplots(
        len(groups),
        1,
        figsize=(width, total),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, claim, group in zip(axes[:, 0], claims, groups, strict=True):
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
        scale = "linear scale" if group[0].additive else "log scale"
        ax.set_title(f"{claim} ({scale})", fontsize=8, loc="left", weight="bold", pad=2)
    comparison_verdicts = {v: c for v, c in VERDICT_COLOURS.items() if v != READINGS_DISAGREE}
    handles = [plt.Line2D([], [], color=c, marker="o", label=v) for v, c in comparison_verdicts.items()]
    for shade, region in ((CLAIMED_SHADE, "claimed"), (REFUTING_SHADE, "refuting")):
        handles.append(plt.Rectangle((0, 0), 1, 1, color=shade, label=f"{region} region"))
    fig.legend(handles=handles, fontsize=LABEL_SIZE, loc="upper center", ncol=4, frameon=False)
    fig.supxlabel(
        "estimate (ratio of means, ratio of ratios, or mean slope on a log scale;\na difference of "
        "differences on a linear one: each panel's title says which) with its interval",
        fontsize=7,
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / total))
    return fig


def from_snakemake(smk: Any) -> None:
    """Entry point of the audit's forest rule's script: log to the rule's log file and draw the figure
    from the audit's JSON."""
    from vhct.pipeline.jobs import job_logging
    from vhct.reporting.audit.records import read_audit

    with job_logging("figure", smk.log[0] if len(smk.log) else None):
        audit_forest(read_audit(smk.input.audit), Path(smk.output.pdf).with_suffix(""))
