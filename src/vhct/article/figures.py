"""The article's figures, drawn into its build folder by the reporting layer's own drawers: the
audit's forest (``vhct.reporting.plots.forest``) and each regret figure whose per-round curves are
in the input (``vhct.reporting.plots.figure_job``); a figure whose curves are absent is not drawn
(the article says so)."""

from __future__ import annotations

from pathlib import Path

from vhct.article.record import RegretFigure
from vhct.reporting.audit.records import Audit
from vhct.reporting.plots import figure_job
from vhct.reporting.plots.forest import audit_forest

#: the image format the article embeds (Typst reads PNG, SVG and PDF; PNG keeps the PDF small)
IMAGE = ".png"


def draw_forest(audit: Audit, folder: Path) -> Path:
    """The forest figure of the audit in ``folder``; the image the article embeds."""
    paths = audit_forest(audit, folder / "audit_forest")
    return next(p for p in paths if p.suffix == IMAGE)


def draw_regret(figure: RegretFigure, folder: Path) -> Path | None:
    """A regret figure from its curve aggregates in ``folder`` (None when the input lacks them)."""
    if not figure.present:
        return None
    stem = folder / figure.name
    curves = {e: {s: str(p) for s, p in by.items()} for e, by in figure.curves.items()}
    figure_job(figure.spec, curves, stem.with_suffix(".pdf"), stem.with_suffix(".png"))
    return stem.with_suffix(IMAGE)
