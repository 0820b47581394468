"""Snakemake script: aggregate one experiment's runs (all work is in vhct.pipeline.jobs)."""

from vhct.pipeline.jobs import from_snakemake

from_snakemake("aggregate", snakemake)  # noqa: F821 (injected by Snakemake)
