"""The figure job: a declared figure drawn by its kind's drawer and saved as PDF and PNG. One module
per family (``regret``, ``functions``, ``osc``, ``cells``), each registering its drawers in ``drawers``;
``forest`` the audit's figure; ``common`` what they share; one palette (``vhct.reporting.styles``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from vhct.pipeline.figure_kinds import figure_kind
from vhct.pipeline.specs import FigureSpec
from vhct.reporting.plots import cells, functions, osc, regret  # noqa: F401 (each registers its drawers)
from vhct.reporting.plots.common import RC, plt, save
from vhct.reporting.plots.drawers import DRAWERS
from vhct.reporting.plots.regret import Curves

log = logging.getLogger("vhct.reporting.plots")


def figure_job(
    spec: FigureSpec,
    curves: Curves,
    pdf_path: Path | str,
    png_path: Path | str,
    seeds_in_legend: bool = True,
) -> None:
    """Draw one declared figure as PDF and PNG (the ``figure`` rule's job) by its kind's drawer (an
    unknown kind: a ValueError listing the drawn ones), given ``curves`` when the kind reads them;
    ``seeds_in_legend`` False (a curve kind only): legend labels name the settings alone, for a
    document whose caption gives the seeds (the article)."""
    log.info("figure %s (%s, %d panels)", spec.name, spec.kind, len(spec.panels))
    with plt.rc_context(RC):
        draw = DRAWERS.lookup(spec.kind)
        if figure_kind(spec.kind).aggregates:
            fig = draw(spec, curves) if seeds_in_legend else draw(spec, curves, seeds_in_legend=False)
        else:
            fig = draw(spec)
        save(fig, pdf_path, png_path)
    log.info("wrote %s and %s", pdf_path, png_path)


def from_snakemake(smk: Any) -> None:
    """Entry point of the figure rule's script: log to the rule's log file and draw the figure its
    spec file asks for (``vhct.reporting.job_specs.figure_job_spec``)."""
    from vhct.pipeline.jobs import job_logging
    from vhct.pipeline.stale import FigureJob, read_spec

    with job_logging("figure", smk.log[0] if len(smk.log) else None):
        spec = read_spec(smk.input.spec, FigureJob)
        figure_job(spec.figure, spec.curves, smk.output.pdf, smk.output.png)
