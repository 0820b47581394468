"""The audit's summary figure (:func:`audit_summary`): the findings at a glance on one page, one row per
statement of the paper (its readings together, as ``view.StatementView``; then each statement checked
by computation): a marker coloured by its verdict (the verdicts' one palette,
``styles.VERDICT_COLOURS``), its name in words, and under it its effect with its interval in a sentence
and its verdict, as every format of the findings prints them (``vhct.reporting.view``: durations in
hours and minutes, "mixed: k of m pairs", "not at the paper's scale"). Effects differ in kind and
scale, so they are told, not drawn on a shared axis. Drawn from the typed audit alone (and the paper's
scale, where given); saved by ``plots.common.save``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vhct.pipeline.specs import ExperimentInfo
from vhct.reporting.audit.records import Audit
from vhct.reporting.plots.common import plt, save
from vhct.reporting.styles import VERDICT_COLOURS, verdict_colour
from vhct.reporting.view import build_view, computed_name, paper_scale

#: the page the figure fits, in inches (portrait; A4 is 8.27 x 11.69, US letter 8.5 x 11)
PAGE_WIDTH, PAGE_HEIGHT = 8.2, 10.8
#: inches above the rows (the legend) and below them
HEADER_HEIGHT, FOOTER_HEIGHT = 0.75, 0.15
#: inches left of a row's text (its marker sits in the middle) and right of it
INDENT, RIGHT = 0.3, 0.1
#: font sizes (points) of a statement's name and of the line under it (effect and verdict), at most:
#: the rows shrink together to fit the page
NAME_FONT, DETAIL_FONT = 8.0, 6.5
#: a line's height per point of its font, the room between a name and its detail and between two rows
#: per point of the name's font, and a character's width per point of font (sans-serif on average,
#: with room): lines are wrapped to the width
LINE_SPACING, NAME_GAP, ROW_GAP, CHAR_WIDTH = 1.3, 0.2, 0.5, 0.56
#: points per inch; the factor the fonts shrink by at a time until the rows fit
POINTS, SHRINK = 72, 0.97


@dataclass(frozen=True)
class SummaryRow:
    """One statement: its name in words, verdict and category, and the line under the name (its effect
    and its verdict)."""

    name: str
    verdict: str
    category: str
    detail: str


def summary_rows(audit: Audit, paper: Mapping[str, ExperimentInfo] | None = None) -> list[SummaryRow]:
    """One row per statement audited on runs (the tally's, ``paper``: the paper's scale, as
    ``view.build_view`` takes it), then one per statement checked by computation."""
    rows = []
    for statement in build_view(audit, paper).statements:
        readings = statement.readings
        if len(readings) == 1:
            verdict = readings[0].short_verdict
        else:
            each = "; ".join(f"reading {k}: {r.short_verdict}" for k, r in enumerate(readings, 1))
            verdict = f"{statement.verdict} ({each})"
        effect = statement.lead.effect  # empty where no pair was evaluated
        detail = f"{effect}. Verdict: {verdict}" if effect else f"Verdict: {verdict}"
        rows.append(SummaryRow(statement.name, statement.verdict, statement.category, detail))
    for computed in audit.computed:
        detail = f"checked by computation on the standard partition, no interval. Verdict: {computed.verdict}"
        rows.append(SummaryRow(computed_name(computed.claim), computed.verdict, computed.verdict, detail))
    return rows


def audit_summary(
    audit: Audit, out_stem: Path | str, paper: Mapping[str, ExperimentInfo] | None = None
) -> list[Path]:
    """Draw the summary figure of an audit to ``<out_stem>.pdf`` and ``.png``; return the two paths."""
    fig = draw_summary(summary_rows(audit, paper))
    paths = [Path(out_stem).with_suffix(".pdf"), Path(out_stem).with_suffix(".png")]
    save(fig, *paths)
    return paths


def _lines(text: str, font: float) -> list[str]:
    """``text`` wrapped to the width of a row's text at ``font`` points."""
    chars = int((PAGE_WIDTH - INDENT - RIGHT) * POINTS / (font * CHAR_WIDTH))
    return textwrap.wrap(text, max(chars, 20)) or [""]


def _blocks(name: list[str], detail: list[str], scale: float) -> tuple[float, float]:
    """The heights (inches) of a row's name with the gap under it, and of its detail with the gap
    before the next row, at the fonts times ``scale``."""
    name_font, detail_font = NAME_FONT * scale, DETAIL_FONT * scale
    return (
        (len(name) * LINE_SPACING + NAME_GAP) * name_font / POINTS,
        (len(detail) * detail_font * LINE_SPACING + ROW_GAP * name_font) / POINTS,
    )


def _layout(rows: list[SummaryRow], scale: float) -> tuple[list[tuple[list[str], list[str]]], float]:
    """Each row's name and detail in lines at the fonts times ``scale``, and the rows' height (inches)."""
    wrapped = [(_lines(r.name, NAME_FONT * scale), _lines(r.detail, DETAIL_FONT * scale)) for r in rows]
    return wrapped, sum(sum(_blocks(n, d, scale)) for n, d in wrapped)


def draw_summary(rows: list[SummaryRow]) -> Any:
    """One page: a row per statement, top to bottom in the audit's order; the fonts shrink together
    until the rows fit the page."""
    room = PAGE_HEIGHT - HEADER_HEIGHT - FOOTER_HEIGHT
    scale = 1.0
    wrapped, height = _layout(rows, scale)
    while height > room:
        scale *= SHRINK
        wrapped, height = _layout(rows, scale)
    total = HEADER_HEIGHT + FOOTER_HEIGHT + max(height, 0.3)
    fig = plt.figure(figsize=(PAGE_WIDTH, total))
    ax = fig.add_axes((0, 0, 1, 1))  # in inches from the top left
    ax.set_xlim(0, PAGE_WIDTH)
    ax.set_ylim(total, 0)
    ax.axis("off")
    name_font, detail_font = NAME_FONT * scale, DETAIL_FONT * scale
    y = HEADER_HEIGHT
    for r, (name, detail) in zip(rows, wrapped, strict=True):
        first = name_font * LINE_SPACING / POINTS
        name_block, detail_block = _blocks(name, detail, scale)
        ax.plot(
            [INDENT / 2],
            [y + first / 2],
            "o",
            color=verdict_colour(r.verdict, r.category),
            markersize=7 * scale,
        )
        ax.text(INDENT, y, "\n".join(name), fontsize=name_font, va="top", linespacing=LINE_SPACING)
        y += name_block
        ax.text(
            INDENT,
            y,
            "\n".join(detail),
            fontsize=detail_font,
            va="top",
            color="dimgray",
            linespacing=LINE_SPACING,
        )
        y += detail_block
    if not rows:
        ax.text(
            PAGE_WIDTH / 2,
            HEADER_HEIGHT,
            "no statement in this audit",
            ha="center",
            va="top",
            fontsize=NAME_FONT,
        )
    handles = [
        plt.Line2D([], [], color=c, marker="o", linestyle="", label=v) for v, c in VERDICT_COLOURS.items()
    ]
    fig.legend(handles=handles, fontsize=6, loc="upper center", ncol=4, frameon=False)
    fig.text(
        INDENT / PAGE_WIDTH,
        1 - (HEADER_HEIGHT - 0.08) / total,
        "Each statement of the paper, coloured by its verdict: its effect with its interval, and its verdict",
        fontsize=7,
        va="bottom",
    )
    return fig


def from_snakemake(smk: Any) -> None:
    """Entry point of the audit's summary rule's script: log to the rule's log file and draw the figure
    from the audit's JSON, beside the paper's scale (``config/paper.yaml``)."""
    from vhct.pipeline.jobs import job_logging
    from vhct.reporting.audit.records import read_audit

    with job_logging("figure", smk.log[0] if len(smk.log) else None):
        audit_summary(
            read_audit(smk.input.audit), Path(smk.output.pdf).with_suffix(""), paper_scale(smk.input.paper)
        )
