"""The audit stage of the pipeline: read the claims and runs, cross-check the aggregates,
evaluate, write the renderings and the verdict table.

Above both the audit (``vhct.reporting.audit``, which evaluates) and the renderer
(``vhct.reporting.render``, which writes): the audit imports neither this module nor the renderer."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vhct.objectives import make_objective
from vhct.pipeline.config import Config
from vhct.pipeline.config.plan import PlannedComparison, caps_of, read_plan
from vhct.pipeline.files import display_path, sha256
from vhct.pipeline.provenance import RUN_ID_ENV
from vhct.pipeline.versions import package_versions
from vhct.reporting.audit.beyond import run_beyond
from vhct.reporting.audit.claims import left_out, load_beyond, load_claims
from vhct.reporting.audit.claims_model import ClaimsFile
from vhct.reporting.audit.evaluate import config_summary, run_audit
from vhct.reporting.audit.records import Audit, AuditContext, Design, PlannedNeed, need_key
from vhct.reporting.audit.runs import check_aggregates, read_runs
from vhct.reporting.render import write_audit


def audit_context(
    config: Config,
    claims: ClaimsFile,
    claims_path: Path | str,
    configfiles: Sequence[str],
    beyond_path: Path | str | None = None,
) -> AuditContext:
    """The audit's context (its one writer): its files with their sha256, its run, its experiments."""
    return AuditContext(
        configfiles=[display_path(p) for p in configfiles],
        # the run that made it (the provenance recorder's): `make findings` ships one run's outputs
        run_id=os.environ.get(RUN_ID_ENV),
        config_sha256={display_path(p): sha256(p) for p in configfiles},
        claims_file=display_path(claims_path),
        claims_sha256=sha256(claims_path),
        experiments=config_summary(config, claims.experiments),
        beyond_file=None if beyond_path is None else display_path(beyond_path),
        beyond_sha256=None if beyond_path is None else sha256(beyond_path),
        # the packages that shape the numbers, as the audit job saw them (ship refuses a mix)
        versions=package_versions(),
        design=design_of(config, claims.experiments),
    )


def design_of(config: Config, experiments: Sequence[str]) -> Design | None:
    """The confirmatory design of a config that runs an analysis plan (its record), else None."""
    if config.plan is None:
        return None
    plan = read_plan(config.plan.file)
    audited = [e for e in experiments if e in config.experiments]
    return Design(
        plan_file=display_path(config.plan.file),
        plan_sha256=sha256(config.plan.file),
        commit=plan.commit,
        dirty=plan.dirty,
        config_sha256=plan.config_sha256,
        claims_sha256=plan.claims_sha256,
        pilot_config=plan.pilot.config,
        pilot_samples_sha256=plan.pilot.samples_sha256,
        pilot_seeds=plan.pilot.seeds,
        confirmatory_seeds={
            e: {s: config.setting_seeds(e, s) for s in config.experiments[e].settings} for e in audited
        },
        underpowered=plan.underpowered(),
        needs={
            need_key(c.id, p.experiment, p.a, p.b): PlannedNeed(need=p.seeds_needed, cap=plan_cap(p, config))
            for c in plan.claims
            for p in c.comparisons
        },
    )


def plan_cap(planned: PlannedComparison, config: Config) -> int:
    """The cap a planned comparison was sized under: the config's ``plan`` caps of its arms."""
    assert config.plan is not None
    cap = caps_of(config.plan.model_dump())
    return min((cap(e, s) for e, s in planned.arms), default=config.plan.max_seeds)


def audit_job(
    claims_path: Path | str,
    run_paths: Mapping[str, Mapping[str, Sequence[Path | str]]],
    final_paths: Mapping[str, Path | str],
    config: Config,
    configfiles: Sequence[str],
    md_path: Path | str,
    json_path: Path | str,
    html_path: Path | str | None = None,
    beyond_path: Path | str | None = None,
    csv_path: Path | str | None = None,
) -> Audit:
    """The audit stage: read claims and runs, cross-check the aggregates, evaluate, write (``csv_path``:
    the verdict table); the questions of ``beyond_path`` answered in the separate ``beyond`` part
    (absent if none evaluated)."""
    claims = load_claims(claims_path)
    runs = read_runs(run_paths, config)
    check_aggregates(runs, final_paths)
    context = audit_context(config, claims, claims_path, configfiles, beyond_path)
    scaled = {e for c in claims.claims if c.statistic == "normalized_regret" for p in c.pairs for e in p}
    scales: dict[str, float] = {}
    for e in sorted(scaled & set(config.experiments)):
        exp = config.experiments[e]
        scales[e] = make_objective(exp.objective, **exp.objective_params).random_search_regret()
    # the experiments the config leaves each claim out of (skip_claims): no verdict there
    audit = run_audit(claims, runs, context, scales, left_out(claims, config))
    beyond = run_beyond(load_beyond(beyond_path), runs) if beyond_path is not None else None
    if beyond is not None:
        audit = audit.model_copy(update={"beyond": beyond})
    write_audit(audit, md_path, json_path, html_path, csv_path)
    return audit


def from_snakemake(smk: Any) -> None:
    """Entry point of the audit rule's script: log to the rule's log file and audit what its spec file
    asks (``vhct.reporting.job_specs.audit_job_spec``)."""
    from vhct.pipeline.config import model
    from vhct.pipeline.jobs import job_logging
    from vhct.pipeline.stale import AuditJob, read_spec

    with job_logging("audit", smk.log[0] if len(smk.log) else None):
        spec = read_spec(smk.input.spec, AuditJob)
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
