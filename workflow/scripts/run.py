"""Snakemake script of the run rules: one run, or a batch of runs sharing one process (`runs_per_job`),
each writing its own table and sidecar (all work is in vhct.pipeline.jobs.run_batch_job)."""

from vhct.pipeline.jobs import from_snakemake

from_snakemake("run", snakemake)  # noqa: F821 (injected by Snakemake)
