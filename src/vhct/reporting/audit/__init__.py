"""Audit of the paper's empirical claims against the pipeline's runs.

The claims are data (``config/claims.yaml``, schema ``vhct/resources/claims.schema.yaml``): each
names its experiments and settings, a statistic read per run (per seed), a kind of check, a test,
a level and effect-size thresholds. One module per job:

- ``claims``: read, validate and resolve the claims file;
- ``kinds``: what each kind of claim means (one class per kind, registered in ``claims_model.CLAIM_KINDS``);
- ``checks``: the comparisons and tests the kinds are made of; ``runs``: the runs a claim reads;
- ``verdicts``: the verdict ladder every check uses and how verdicts combine;
- ``evaluate``: claims per experiment and combined, under the defaults and each variant;
- ``beyond``: the questions beyond the paper (``beyond.yaml``), two-sided, with the same checks;
- ``records``: the typed records and their JSON writer and reader;
- ``render``: the one renderer (Markdown, HTML, the findings; templates in ``vhct/reporting/templates``);
  ``job``: the pipeline's audit stage.

Verdicts: reproduced, not reproduced, inconclusive (too few seeds, or neither the claimed nor the
refuting test significant) and not evaluated (the config does not run what the claim needs). Every
comparison, experiment verdict, claim verdict and the whole audit is a typed record (``records``) with
one JSON writer and one reader, used alike by the checks, the renderer and the findings.
"""

from vhct.reporting.audit.beyond import evaluate_question, run_beyond
from vhct.reporting.audit.claims import (
    CLAIMS_PATH,
    SCHEMA_PATH,
    ClaimsError,
    beyond_experiments,
    check_claim_seeds,
    claims_experiments,
    left_out,
    load_beyond,
    load_claims,
    substitute_settings,
)
from vhct.reporting.audit.claims_model import BeyondFile, Claim, ClaimsFile, Question, Thresholds
from vhct.reporting.audit.evaluate import (
    conclude,
    config_summary,
    evaluate_claim,
    evaluate_sensitivity,
    reading_flips,
    run_audit,
)
from vhct.reporting.audit.job import audit_job
from vhct.reporting.audit.records import (
    AUDIT_FORMAT,
    Audit,
    AuditContext,
    AuditRecordError,
    ClaimVerdict,
    Comparison,
    Discrepancy,
    ExperimentVerdict,
    read_audit,
)
from vhct.reporting.audit.render import render_html, render_markdown, write_audit
from vhct.reporting.audit.runs import (
    AUDITED_COLUMNS,
    Run,
    Runs,
    check_aggregates,
    horizon,
    read_runs,
    rebase,
    samples,
    statistic,
)
from vhct.reporting.audit.verdicts import (
    INCONCLUSIVE,
    NOT_EVALUATED,
    NOT_REPRODUCED,
    REPRODUCED,
    VERDICTS,
    combine,
    coverage,
    decide,
    flips,
    majority,
)

__all__ = [
    "AUDITED_COLUMNS",
    "AUDIT_FORMAT",
    "conclude",
    "CLAIMS_PATH",
    "Comparison",
    "ClaimsError",
    "INCONCLUSIVE",
    "NOT_EVALUATED",
    "NOT_REPRODUCED",
    "REPRODUCED",
    "Run",
    "Runs",
    "SCHEMA_PATH",
    "VERDICTS",
    "audit_job",
    "beyond_experiments",
    "evaluate_question",
    "load_beyond",
    "run_beyond",
    "check_aggregates",
    "claims_experiments",
    "combine",
    "config_summary",
    "coverage",
    "decide",
    "Audit",
    "AuditContext",
    "Discrepancy",
    "AuditRecordError",
    "ClaimVerdict",
    "ExperimentVerdict",
    "read_audit",
    "evaluate_claim",
    "evaluate_sensitivity",
    "flips",
    "horizon",
    "load_claims",
    "check_claim_seeds",
    "left_out",
    "BeyondFile",
    "Claim",
    "ClaimsFile",
    "Question",
    "Thresholds",
    "majority",
    "reading_flips",
    "rebase",
    "read_runs",
    "render_html",
    "render_markdown",
    "run_audit",
    "samples",
    "statistic",
    "substitute_settings",
    "write_audit",
]
