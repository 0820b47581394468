"""Snakemake script: write a figure's report caption (all work is in vhct.reporting.captions)."""

from vhct.reporting.captions import from_snakemake

from_snakemake(snakemake)  # noqa: F821 (injected by Snakemake)
