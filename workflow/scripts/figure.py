"""Snakemake script: draw one figure as PDF and PNG (all work is in vhct.reporting.plots)."""

from vhct.pipeline.jobs import job_logging
from vhct.pipeline.stale import FigureJob, read_spec
from vhct.reporting.plots import figure_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
with job_logging("figure", smk.log[0] if len(smk.log) else None):
    # what the job is asked, its spec file (vhct.reporting.job_specs.figure_job_spec): the declared
    # figure (vhct.pipeline.specs.FigureSpec) and the curves it draws
    spec = read_spec(smk.input.spec, FigureJob)
    figure_job(spec.figure, spec.curves, smk.output.pdf, smk.output.png)
