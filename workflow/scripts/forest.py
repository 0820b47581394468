"""Snakemake script: the audit's forest figure from its JSON (all work is in vhct.reporting.plots.forest)."""

from vhct.reporting.plots.forest import from_snakemake

from_snakemake(snakemake)  # noqa: F821 (injected by Snakemake)
