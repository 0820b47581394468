"""Snakemake script: the audit of the paper's claims (all work is in vhct.reporting.audit_job)."""

from vhct.reporting.audit_job import from_snakemake

from_snakemake(snakemake)  # noqa: F821 (injected by Snakemake)
