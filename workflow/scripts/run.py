"""Snakemake script: run one (experiment, setting, seed) job (all work is in vhct.pipeline.jobs)."""

from vhct.pipeline.jobs import from_snakemake

from_snakemake("run", snakemake)  # noqa: F821 (injected by Snakemake)
