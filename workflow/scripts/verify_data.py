"""Snakemake script: verify one data file, fetch it again if corrupted, write its stamp."""

from vhct.pipeline.jobs import from_snakemake

from_snakemake("verify", snakemake)  # noqa: F821 (injected by Snakemake)
