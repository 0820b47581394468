"""Snakemake script: the audit's one-page summary figure from its JSON (all work is in
vhct.reporting.plots.summary)."""

from vhct.reporting.plots.summary import from_snakemake

from_snakemake(snakemake)  # noqa: F821 (injected by Snakemake)
