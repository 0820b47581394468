"""Audit of the paper's claims (config/claims.yaml) on the runs, and captions of the report.

    snakemake --cores 2 audit                     # the audit alone (and only the runs it needs)
    snakemake --report report.html                # figures + audit, after a complete run

The claims file is validated when the workflow is parsed, so a malformed one fails before any job.
"""

import vhct.reporting.audit.claims as va
from vhct.reporting.view import PAPER_CONFIG
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.reporting.job_specs import audit_figure_spec, audit_job_spec, caption_job_spec

CLAIMS = str(REPO / "config" / "claims.yaml")
#: questions beyond the paper (baselines), answered in the audit's separate "beyond" part
BEYOND = str(REPO / "config" / "beyond.yaml")
#: the paper's scale, beside which the summary figure says where a verdict was reached below it
PAPER = str(REPO / PAPER_CONFIG)
AUDIT_MD, AUDIT_JSON, AUDIT_HTML = LAYOUT.results.audit_md, LAYOUT.results.audit_json, LAYOUT.results.audit_html
#: the audit's verdicts as one table (vhct.reporting.render.verdict_table)
AUDIT_CSV = LAYOUT.results.verdicts
CAPTIONS_DIR = REPO / "workflow" / "report" / "figures"
FIGURE_CAPTION = LAYOUT.results.caption("{figure}")
#: the audit's forest figure (vhct.reporting.plots.forest) and one-page summary (plots.summary), drawn
#: from the audit JSON
FOREST, SUMMARY = AUDIT_FIGURES
#: spec files (vhct.pipeline.stale): the audit's, its figures' and each figure caption's
AUDIT_SPEC = LAYOUT.results.spec("audit", "audit")
FOREST_SPEC = FIGURE_SPEC.format(figure=FOREST)
SUMMARY_SPEC = FIGURE_SPEC.format(figure=SUMMARY)
CAPTION_SPEC = LAYOUT.results.spec("captions", "{figure}")

_CLAIMS = va.load_claims(CLAIMS)
_BEYOND = va.load_beyond(BEYOND)
# a cap that runs a setting a claim reads below the claim's min_seeds is refused here, before any job
try:
    va.check_claim_seeds(_CLAIMS, CFG)
except va.ClaimsError as _error:
    raise WorkflowError(f"invalid config: {_error}") from None
#: experiments some claim or question reads and the config runs (the others are reported "not evaluated")
AUDIT_EXPERIMENTS = [
    e
    for e in dict.fromkeys([*_CLAIMS.experiments, *_BEYOND.experiments])
    if e in CFG.experiments
]


# the audit's inputs: the claims file, the final aggregates and every batch file of the audited
# experiments
AUDIT_BATCHES = list(
    dict.fromkeys(p for e in AUDIT_EXPERIMENTS for paths in CFG.run_paths(e).values() for p in paths)
)


# what each job is asked (vhct.reporting.job_specs): the audit the whole config, its files and the
# runs it reads; its figures their code's hash; each caption its text
SPEC_FILES[AUDIT_SPEC] = audit_job_spec(CFG, CONFIG_FILES, AUDIT_EXPERIMENTS)
SPEC_FILES[FOREST_SPEC] = audit_figure_spec("forest")
SPEC_FILES[SUMMARY_SPEC] = audit_figure_spec("summary")
for _figure in CFG.figures:
    SPEC_FILES[CAPTION_SPEC.format(figure=_figure)] = caption_job_spec(CFG, _figure, CAPTIONS_DIR)


rule audit:
    input:
        claims=CLAIMS,
        finals=[FINAL.format(experiment=e) for e in AUDIT_EXPERIMENTS],
        batches=AUDIT_BATCHES,
        beyond=BEYOND,
        spec=AUDIT_SPEC,
    output:
        md=AUDIT_MD,
        json=AUDIT_JSON,
        csv=AUDIT_CSV,
        html=report(
            AUDIT_HTML,
            caption="../report/audit.rst",
            category="Audit",
            labels={"name": "audit of the paper's claims"},
        ),
    log:
        LAYOUT.log("audit", "audit"),
    threads: 1
    resources:
        mem_mb=resource("aggregate", "mem_mb"),
        runtime=resource("aggregate", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/audit.py"


rule audit_forest:
    """The audit's forest figure: every comparison's ratio and interval against its claim's margins."""
    input:
        audit=AUDIT_JSON,
        spec=FOREST_SPEC,
    output:
        pdf=FIGURE.format(figure=FOREST, ext="pdf"),
        png=FIGURE.format(figure=FOREST, ext="png"),
    log:
        LAYOUT.log("audit", "forest"),
    threads: 1
    resources:
        mem_mb=resource("figure", "mem_mb"),
        runtime=resource("figure", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/forest.py"


rule audit_summary:
    """The audit's summary figure: one page, a row per statement, its verdict and headline effect."""
    input:
        audit=AUDIT_JSON,
        paper=PAPER,
        spec=SUMMARY_SPEC,
    output:
        pdf=FIGURE.format(figure=SUMMARY, ext="pdf"),
        png=FIGURE.format(figure=SUMMARY, ext="png"),
    log:
        LAYOUT.log("audit", "summary"),
    threads: 1
    resources:
        mem_mb=resource("figure", "mem_mb"),
        runtime=resource("figure", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/summary.py"


rule figure_caption:
    """Marks a figure for the report (the PNG, captioned) and records its caption text."""
    input:
        png=report(
            FIGURE.replace("{ext}", "png"),
            caption="../report/figure.rst",
            category="Figures",
            labels={"figure": "{figure}"},
        ),
        spec=CAPTION_SPEC,
    output:
        FIGURE_CAPTION,
    log:
        LAYOUT.log("figure_caption", "{figure}"),
    localrule: True
    conda:
        "../../environment.yml"
    script:
        "../scripts/caption.py"


EXTRA_TARGETS.extend([AUDIT_MD, AUDIT_JSON, AUDIT_HTML, AUDIT_CSV])
EXTRA_TARGETS.extend(FIGURE.format(figure=f, ext=ext) for f in AUDIT_FIGURES for ext in FIGURE_EXTS)
EXTRA_TARGETS.extend(expand(FIGURE_CAPTION, figure=list(CFG.figures)))
