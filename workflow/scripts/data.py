"""Snakemake script: fetch and verify one data file (all work is in vhct.pipeline.jobs)."""

from vhct.pipeline.jobs import from_snakemake

from_snakemake("data", snakemake)  # noqa: F821 (injected by Snakemake)
