"""The audit's summary figure (:func:`audit_summary`): the findings at a glance on one page, one row per
statement of the paper (its readings together, ``verdicts.statements``; then each statement checked by
computation): its name in words, a marker coloured by its verdict (the verdicts' one palette,
``styles.VERDICT_COLOURS``) and, as text, its headline effect with its interval (the deciding
comparison of its first reading, ``view.decider``; effects differ in kind and scale, so no shared
axis). Drawn from the typed audit alone; saved by ``plots.common.save``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vhct.reporting.audit.records import Audit
from vhct.reporting.audit.verdicts import estimate_text, statements
from vhct.reporting.plots.common import plt, save
from vhct.reporting.styles import VERDICT_COLOURS, verdict_colour
from vhct.reporting.view import decider

#: the page the figure fits, in inches (portrait; A4 is 8.27 x 11.69, US letter 8.5 x 11)
PAGE_WIDTH, PAGE_HEIGHT = 8.2, 10.8
#: inches per statement's row (two lines of text) at most, and the room above and below the rows
ROW_HEIGHT, HEADER_HEIGHT, FOOTER_HEIGHT = 0.3, 0.9, 0.2
#: the least row height (inches) with room for the line under the effect; shorter rows (many
#: statements) leave it out, the effect alone
TWO_LINES = 0.26
#: the share of the width left of the markers for the statements' names
NAME_SHARE = 0.36
#: font sizes (points): a statement's name, its effect, the line under it
NAME_FONT, EFFECT_FONT, WHERE_FONT = 8, 6.5, 6


@dataclass(frozen=True)
class SummaryRow:
    """One statement: its name in words, verdict and category, headline effect and where it was read."""

    name: str
    verdict: str
    category: str
    effect: str
    where: str


def words(name: str) -> str:
    """A statement's id in words: ``fig3-vhct-fastest`` -> ``fig3 vhct fastest``."""
    return name.replace("-", " ").replace("_", " ")


def summary_rows(audit: Audit) -> list[SummaryRow]:
    """One row per statement audited on runs (the tally's), then one per statement checked by computation."""
    rows = []
    for statement in statements(audit.claims):
        first = statement.readings[0]
        c = decider(first)
        n = len(statement.readings)
        readings = f"{n} readings (verdicts.csv)" if n > 1 else ""
        if c is None:
            effect, where = statement.verdict, readings
        else:
            effect = estimate_text(c) or c.verdict
            where = "; ".join(p for p in (f"{c.experiment}: {c.label}", readings) if p)
        rows.append(SummaryRow(words(statement.id), statement.verdict, statement.category, effect, where))
    for computed in audit.computed:
        rows.append(
            SummaryRow(
                words(computed.claim.id),
                computed.verdict,
                computed.verdict,
                "checked by computation (no interval)",
                computed.claim.objective,
            )
        )
    return rows


def audit_summary(audit: Audit, out_stem: Path | str) -> list[Path]:
    """Draw the summary figure of an audit to ``<out_stem>.pdf`` and ``.png``; return the two paths."""
    fig = draw_summary(summary_rows(audit))
    paths = [Path(out_stem).with_suffix(".pdf"), Path(out_stem).with_suffix(".png")]
    save(fig, *paths)
    return paths


def draw_summary(rows: list[SummaryRow]) -> Any:
    """One page: a row per statement, top to bottom in the audit's order; the rows shrink to fit (below
    :data:`TWO_LINES`, without the line saying where the effect was read)."""
    row_height = min(ROW_HEIGHT, (PAGE_HEIGHT - HEADER_HEIGHT - FOOTER_HEIGHT) / max(len(rows), 1))
    height = HEADER_HEIGHT + FOOTER_HEIGHT + row_height * max(len(rows), 1)
    fig = plt.figure(figsize=(PAGE_WIDTH, height))
    ax = fig.add_axes(
        (NAME_SHARE, FOOTER_HEIGHT / height, 1 - NAME_SHARE - 0.01, row_height * max(len(rows), 1) / height)
    )
    ax.set_xlim(0, 1)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks(range(len(rows)), [r.name for r in rows], fontsize=NAME_FONT)
    ax.set_xticks([])
    ax.tick_params(axis="y", length=0)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    two_lines = row_height >= TWO_LINES
    for y, r in enumerate(rows):
        ax.plot([0.02], [y], "o", color=verdict_colour(r.verdict, r.category), markersize=7)
        ax.text(0.05, y - 0.08 if r.where and two_lines else y, r.effect, fontsize=EFFECT_FONT, va="center")
        if r.where and two_lines:
            ax.text(0.05, y + 0.3, r.where, fontsize=WHERE_FONT, va="center", color="dimgray")
    if not rows:
        ax.text(0.5, 0, "no statement in this audit", ha="center", va="center", fontsize=NAME_FONT)
    handles = [
        plt.Line2D([], [], color=c, marker="o", linestyle="", label=v) for v, c in VERDICT_COLOURS.items()
    ]
    fig.legend(handles=handles, fontsize=6, loc="upper center", ncol=4, frameon=False)
    fig.text(
        NAME_SHARE,
        1 - 0.62 / height,
        "verdict (colour); the effect and interval of the comparison that decided the first reading",
        fontsize=7,
    )
    return fig


def from_snakemake(smk: Any) -> None:
    """Entry point of the audit's summary rule's script: log to the rule's log file and draw the figure
    from the audit's JSON."""
    from vhct.pipeline.jobs import job_logging
    from vhct.reporting.audit.records import read_audit

    with job_logging("figure", smk.log[0] if len(smk.log) else None):
        audit_summary(read_audit(smk.input.audit), Path(smk.output.pdf).with_suffix(""))
