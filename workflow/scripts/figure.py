"""Snakemake script: draw one figure as PDF and PNG (all work is in vhct.pipeline.jobs)."""

from vhct.pipeline.jobs import from_snakemake

from_snakemake("figure", snakemake)  # noqa: F821 (injected by Snakemake)
