"""Snakemake script: aggregate one experiment's runs, or one setting's (all work is in
vhct.pipeline.aggregate)."""

from vhct.pipeline.aggregate import from_snakemake

from_snakemake(snakemake)  # noqa: F821 (injected by Snakemake)
