"""Snakemake script: draw one figure as PDF and PNG (all work is in vhct.reporting.plots)."""

from vhct.reporting.plots import from_snakemake

from_snakemake(snakemake)  # noqa: F821 (injected by Snakemake)
