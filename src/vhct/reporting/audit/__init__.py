"""Audit of the paper's empirical claims against the pipeline's runs.

The claims are data (``config/claims.yaml``, schema ``vhct/resources/claims.schema.yaml``): each
names its experiments and settings, a statistic read per run (per seed), a kind of check, a test,
a level and effect-size thresholds. One module per job:

- ``claims``: read, validate and resolve the claims file;
- ``checks``: the runs a claim reads and one function per kind of check;
- ``verdicts``: the verdict ladder every check uses and how verdicts combine;
- ``evaluate``: claims per experiment and combined, under the defaults and each variant;
- ``render``: the audit as Markdown, HTML and JSON; ``job``: the pipeline's audit stage.

Verdicts: reproduced, not reproduced, inconclusive (too few seeds, too small an effect, not
significant) and not evaluated (the config does not run what the claim needs).
"""

from vhct.reporting.audit.checks import (
    AUDITED_COLUMNS,
    CHECKS,
    Run,
    Runs,
    check_aggregates,
    horizon,
    read_runs,
    samples,
    statistic,
)
from vhct.reporting.audit.claims import (
    CLAIMS_PATH,
    SCHEMA_PATH,
    ClaimsError,
    claims_experiments,
    load_claims,
    substitute_settings,
)
from vhct.reporting.audit.evaluate import (
    config_summary,
    display_path,
    evaluate_claim,
    evaluate_sensitivity,
    file_sha256,
    run_audit,
)
from vhct.reporting.audit.job import audit_job
from vhct.reporting.audit.render import document, render_html, render_markdown, write_audit
from vhct.reporting.audit.verdicts import (
    INCONCLUSIVE,
    NOT_EVALUATED,
    NOT_REPRODUCED,
    REPRODUCED,
    VERDICTS,
    combine,
    coverage,
    flips,
)

__all__ = [
    "AUDITED_COLUMNS",
    "CHECKS",
    "CLAIMS_PATH",
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
    "check_aggregates",
    "claims_experiments",
    "combine",
    "config_summary",
    "coverage",
    "display_path",
    "document",
    "evaluate_claim",
    "evaluate_sensitivity",
    "file_sha256",
    "flips",
    "horizon",
    "load_claims",
    "read_runs",
    "render_html",
    "render_markdown",
    "run_audit",
    "samples",
    "statistic",
    "substitute_settings",
    "write_audit",
]
