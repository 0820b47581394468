"""Snakemake script: the audit's one-page summary figure from its JSON (all work is in
vhct.reporting.plots.summary)."""

from pathlib import Path

from vhct.pipeline.jobs import job_logging
from vhct.reporting.audit.records import read_audit
from vhct.reporting.plots.summary import audit_summary

smk = snakemake  # noqa: F821 (injected by Snakemake)
with job_logging("figure", smk.log[0] if len(smk.log) else None):
    audit_summary(read_audit(smk.input.audit), Path(smk.output.pdf).with_suffix(""))
