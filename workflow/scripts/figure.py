"""Snakemake script: draw one figure as PDF and PNG (all work is in vhct.reporting.plots)."""

from vhct.pipeline.jobs import job_logging
from vhct.pipeline.stale import read_spec
from vhct.reporting.plots import figure_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
with job_logging("figure", smk.log[0] if len(smk.log) else None):
    # what the job is asked, its spec file (common.smk's figure_spec): the declared figure as JSON
    # data (vhct.pipeline.specs.FigureSpec, validated by figure_job) and the curves it draws
    spec = read_spec(smk.input.spec)
    figure_job(spec["figure"], spec["curves"], smk.output.pdf, smk.output.png)
