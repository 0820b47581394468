"""Snakemake script: draw one figure as PDF and PNG (all work is in vhct.reporting.plots)."""

from vhct.pipeline.jobs import job_logging
from vhct.reporting.plots import figure_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
with job_logging("figure", smk.log[0] if len(smk.log) else None):
    # the declared figure as JSON data (vhct.pipeline.specs.FigureSpec), validated by figure_job
    figure_job(smk.params.spec, smk.params.curves, smk.output.pdf, smk.output.png)
