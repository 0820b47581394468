"""Snakemake script: the audit of the paper's claims (all work is in vhct.reporting.audit)."""

import logging

from vhct.pipeline.config import model
from vhct.pipeline.jobs import job_logging
from vhct.pipeline.stale import AuditJob, read_spec
from vhct.reporting.audit_job import audit_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
with job_logging("audit", smk.log[0] if len(smk.log) else None):
    spec = read_spec(smk.input.spec, AuditJob)  # what the job is asked (audit.smk's AUDIT_SPEC)
    audit = audit_job(
        claims_path=smk.input.claims,
        run_paths=spec.run_paths,
        final_paths=spec.final_paths,
        config=model(smk.config),  # the typed config (validated once more, without building optimizers)
        configfiles=list(spec.configfiles),
        md_path=smk.output.md,
        json_path=smk.output.json,
        html_path=smk.output.html,
        csv_path=smk.output.csv,
        beyond_path=smk.input.beyond,
    )
    summary = ", ".join(f"{v}: {n}" for v, n in audit.summary.items())
    logging.getLogger("vhct.reporting.audit").info("audit written: %s", summary)
