"""Snakemake script of the run rules: the runs of one batch, written as one file of the run store
(all work is in vhct.pipeline.jobs.run_job)."""

from vhct.pipeline.jobs import from_snakemake

from_snakemake("run", snakemake)  # noqa: F821 (injected by Snakemake)
