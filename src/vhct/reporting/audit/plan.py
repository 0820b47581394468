"""``make plan``: the analysis plan of a confirmatory run, written from the pilot's results before it.

    python -m vhct.reporting.audit.plan config/paper-local.yaml            # writes its plan (make plan)
    python -m vhct.reporting.audit.plan --check config/paper-local.yaml    # what make paper-local checks

The pilot is the config the ``plan`` key names (the quick start, config/config.yaml); its audit
(``<its results>/audit.json``) holds every comparison's per-seed values. Per claim and comparison the
plan records the pilot's estimate, its spread and samples, the claim's effect of interest, and the
seeds per arm that give 80 % power at that effect with the pilot's spread: the audit's own computation
(the claim kind's comparison, ``ClaimKind.from_values``, whose ``seeds_needed`` is the one behind
"underpowered: N seeds per arm give 80 % power"), floored at the claim's ``min_seeds``; a comparison
whose need passes the config's ``plan`` caps runs at the cap, "underpowered at the cap" (no larger
need is recorded). The confirmatory seeds start after the pilot's and after every seed a committed
version of the shipped audit used (``vhct.reporting.audit.seen``); a plan whose seeds overlap those
is refused, naming the commit and the seed.
The record and its reader, the hashes and the seed table are the pipeline's
(``vhct.pipeline.config.plan``); this module adds what needs the audit: the samples from the pilot's
audit, each comparison's seeds computed again from them, and the pilot's results hashed again.
Writing the plan also prints what its runs cost at the pilot's measured seconds per round
(``plan_cost``, ``vhct.reporting.costs.full_scale``): a lower bound, to size the caps before the run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from vhct.pipeline.config import ConfigError, load
from vhct.pipeline.config.loading import base_chain, merged_files
from vhct.pipeline.config.plan import (
    PLAN_FORMAT,
    PLAN_KEY,
    REMEDY,
    SIDES,
    WALL_TIME_STATISTICS,
    Pilot,
    Plan,
    PlanError,
    PlannedClaim,
    PlannedComparison,
    PlanSpec,
    caps_of,
    config_sha256,
    need_text,
    plan_text,
    planned_seeds,
    read_plan,
    resolved,
    samples_sha256,
    seed_table,
    shown_need,
)
from vhct.pipeline.config.plan import claims_path as plan_claims_file
from vhct.pipeline.files import atomic_paths, display_path, sha256
from vhct.pipeline.layout import TIMING_TABLE, ResultsFolder
from vhct.pipeline.provenance import commit_state
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.claims_model import Claim, ClaimsFile
from vhct.reporting.audit.records import Audit, AuditRecordError, Comparison, read_audit
from vhct.reporting.audit.seen import (
    SHIPPED_AUDIT,
    ShippedVersion,
    first_overlap,
    largest_seen,
    seen_in,
    shipped_versions,
)
from vhct.reporting.audit.verdicts import NOT_EVALUATED
from vhct.reporting.costs import FullScale, full_scale

#: the claims file the workflow audits (workflow/rules/audit.smk)
CLAIMS_FILE = Path("config") / "claims.yaml"


def arms(claim: Claim, comp: Comparison) -> list[list[str]]:
    """The (experiment, setting) arms a comparison reads: each experiment of its unit (one, or a pair)
    with each setting the claim reads that the comparison names (``A`` or ``A on first``)."""
    named = {comp.a, comp.b}
    settings = [s for s in claim.settings if s in named or any(n.startswith(f"{s} on ") for n in named)]
    return [[e, s] for e in comp.experiment.split(" / ") for s in settings]


def sides(comp: Comparison) -> dict[str, dict[str, float]]:
    """The comparison's per-seed values by side (a, b and a contrast's second pair)."""
    got = {"a": comp.values_a, "b": comp.values_b, "a2": comp.values_a2, "b2": comp.values_b2}
    return {side: dict(got[side]) for side in SIDES if got[side]}


def seeds_needed(
    claim: Claim, experiment: str, a: str, b: str, samples: Mapping[str, Mapping[str, float]]
) -> int | None:
    """Seeds per arm that decide a comparison at 80 % power, computed from its per-seed ``samples``
    alone (side -> seed -> value) by the audit's computation; the plan's writer and its check call this."""
    comp = Comparison(
        experiment,
        a,
        b,
        values_a=dict(samples.get("a", {})),
        values_b=dict(samples.get("b", {})),
        values_a2=dict(samples.get("a2", {})),
        values_b2=dict(samples.get("b2", {})),
    )
    return claim.spec.from_values(claim, comp).seeds_needed


def pilot_comparisons(claims: ClaimsFile, pilot: Audit) -> list[tuple[Claim, list[Comparison]]]:
    """Per claim of ``claims``, the pilot's compared comparisons (with per-seed values) of that claim."""
    by_id = {r.claim.id: r for r in pilot.claims}
    out = []
    for claim in claims.claims:
        found = by_id.get(claim.id)
        comps = [] if found is None else [c for e in found.experiments for c in e.comparisons]
        out.append((claim, [c for c in comps if c.verdict != NOT_EVALUATED and c.values_a]))
    return out


def planned_claims(
    claims: ClaimsFile, pilot: Audit, cap: Callable[[str, str], int], recompute: bool = True
) -> list[PlannedClaim]:
    """The plan's claims from the pilot's audit: per comparison its estimate, spread, samples (not for a
    wall time) and seeds. ``recompute=False`` leaves the seeds to the caller (the samples' hash only)."""
    out = []
    for claim, comps in pilot_comparisons(claims, pilot):
        planned = []
        for comp in comps:
            read = arms(claim, comp)
            limit = min((cap(e, s) for e, s in read), default=claim.min_seeds)
            wall_time = claim.statistic in WALL_TIME_STATISTICS
            samples = {} if wall_time else sides(comp)
            needed = (
                None
                if wall_time or not recompute
                else shown_need(seeds_needed(claim, comp.experiment, comp.a, comp.b, samples), limit)
            )
            if wall_time:
                seeds, short = min(claim.min_seeds, limit), False
                note = "a wall time: not sized from the pilot (not reproducible), min_seeds"
            else:
                seeds, short = planned_seeds(needed, claim.min_seeds, limit)
                note = need_text(needed, limit) + (f", at least {seeds}" if needed and needed < seeds else "")
            planned.append(
                PlannedComparison(
                    experiment=comp.experiment,
                    a=comp.a,
                    b=comp.b,
                    arms=read,
                    effect_name=comp.effect_name,
                    estimate=_finite(comp.effect),
                    std_a=_finite(comp.std_a),
                    std_b=_finite(comp.std_b),
                    pilot_seeds=[comp.n_a, comp.n_b],
                    samples=samples,
                    seeds_needed=needed,
                    seeds=seeds,
                    underpowered=short,
                    note=note,
                )
            )
        out.append(
            PlannedClaim(
                id=claim.id,
                reading_of=claim.reading_of,
                kind=claim.kind,
                statistic=claim.statistic,
                round=claim.round,
                alpha=claim.alpha,
                min_seeds=claim.min_seeds,
                thresholds=claim.thresholds.given(),
                effect_of_interest=claim.effect_of_interest.value,
                comparisons=planned,
            )
        )
    return out


def _finite(x: float) -> float | None:
    return float(x) if x == x and abs(x) != float("inf") else None


# ---------------------------------------------------------------- the pilot


def pilot_audit(pilot_config: Path | str, claims_path: Path | str, where: str) -> tuple[Audit, Path]:
    """The pilot's audit, refused (a PlanError naming it) when absent or made from other files."""
    cfg, _ = load([pilot_config])
    path = Path(cfg.layout.results.audit_json)
    if not path.is_file():
        raise PlanError(f"{where}: the pilot's audit {path} is missing: run the pilot first (`make figures`)")
    try:
        audit = read_audit(path)
    except AuditRecordError as exc:
        raise PlanError(f"{where}: the pilot's audit: {exc}") from None
    if audit.context.claims_sha256 != sha256(claims_path):
        raise PlanError(
            f"{where}: the pilot's audit {path} read another claims file than {display_path(claims_path)}: "
            "run the pilot again (`make figures`)"
        )
    recorded = (audit.context.config_sha256 or {}).get(display_path(pilot_config))
    if recorded != sha256(pilot_config):
        raise PlanError(
            f"{where}: the pilot's audit {path} was made from another {display_path(pilot_config)}: run the "
            "pilot again (`make figures`)"
        )
    return audit, path


def _spec(config: Path | str) -> tuple[dict, PlanSpec]:
    source, _ = merged_files([config])
    source = resolved(source, base_chain([config]))
    if not isinstance(source.get(PLAN_KEY), dict):
        raise PlanError(f"{config}: the config declares no analysis plan (key {PLAN_KEY})")
    return source, PlanSpec.model_validate(dict(source[PLAN_KEY]))


def make_plan(config: Path | str, claims_path: Path | str = CLAIMS_FILE) -> Plan:
    """The analysis plan of ``config`` from its pilot's results (not written, its file the config names)."""
    where = str(config)
    source, spec = _spec(config)
    claims = load_claims(claims_path)
    audit, results = pilot_audit(spec.pilot, claims_path, where)
    pilot_cfg, _ = load([spec.pilot])
    target, _ = load([config], plan=False)
    cap = caps_of(spec.model_dump())
    plan_claims = planned_claims(claims, audit, cap)
    substitutes: dict[str, list[str]] = {}  # default -> the variants every sensitivity row puts in its place
    for choice in claims.sensitivity:
        pairs = list((choice.substitute or {}).items())
        pairs += [(d, c) for d, found in (choice.choose_best or {}).items() for c in found if c != d]
        for default, variant in pairs:
            found = substitutes.setdefault(default, [])
            if variant not in found:
                found.append(variant)
    floor = max(c.min_seeds for c in claims.claims)
    pilot_seeds = {name: pilot_cfg.seeds(name) for name in pilot_cfg.experiments}
    versions = shipped_versions()
    largest = max(max(s for seeds in pilot_seeds.values() for s in seeds), largest_seen(seen_in(versions)))
    settings = {name: list(exp.settings) for name, exp in target.experiments.items()}
    commit, dirty = commit_state()
    plan = Plan(
        format=PLAN_FORMAT,
        config=display_path(config),
        config_sha256=config_sha256(source),
        claims_file=os.path.relpath(Path(claims_path).resolve(), Path(spec.file).resolve().parent),
        claims_sha256=sha256(claims_path),
        commit=commit,
        dirty=dirty,
        pilot=Pilot(
            config=display_path(spec.pilot),
            results=display_path(results.parent),
            seeds=pilot_seeds,
            samples_sha256=samples_sha256(plan_claims),
        ),
        floor=floor,
        start=largest + 1,
        seen={v.commit: v.largest for v in versions},
        substitutes=substitutes,
        seeds=seed_table(plan_claims, settings, floor, cap, substitutes),
        claims=plan_claims,
    )
    refuse_seen(plan, where, versions)
    return plan


def refuse_seen(plan: Plan, where: str, versions: Sequence[ShippedVersion] | None = None) -> None:
    """A PlanError (one line naming the commit and the seed) when a confirmatory seed of ``plan`` was
    used by any committed version of the shipped audit (``versions``: read from git when None)."""
    planned = {e: sorted({s for seeds in by.values() for s in seeds}) for e, by in seeds_of(plan).items()}
    overlap = first_overlap(seen_in(shipped_versions() if versions is None else versions), planned)
    if overlap is not None:
        raise PlanError(
            f"{where}: {overlap.text(SHIPPED_AUDIT)}: confirmatory seeds must be unseen: {REMEDY}"
        )


def write_plan(config: Path | str, claims_path: Path | str = CLAIMS_FILE) -> tuple[Plan, Path]:
    """``make plan``: the plan written (atomically) to the file the config's ``plan`` key names."""
    plan = make_plan(config, claims_path)
    _, spec = _spec(config)
    path = Path(spec.file)
    with atomic_paths(path) as (tmp,):
        tmp.write_text(plan_text(plan), encoding="utf-8")
    return plan, path


# ---------------------------------------------------------------- the full check


def check(config: Path | str) -> Plan:
    """Everything a confirmatory run checks before it starts (a PlanError naming what differs): the
    loader's checks (config and claims hashes, samples hash, seed table), then each comparison's seeds
    computed again from its embedded samples, and the pilot's results, when present, hashed again."""
    where = str(config)
    load([config])  # the pipeline's checks
    _, spec = _spec(config)
    cap = caps_of(spec.model_dump())
    plan = read_plan(spec.file, where)
    claims_file = plan_claims_file(plan, spec.file)  # the one whose hash the loader checked
    claims = {c.id: c for c in load_claims(claims_file).claims}
    at = f"{where}: analysis plan {display_path(spec.file)}"
    for planned in plan.claims:
        claim = claims.get(planned.id)
        if claim is None:
            raise PlanError(f"{at}: claim {planned.id} is not in the claims file: {REMEDY}")
        for p in planned.comparisons:
            if not p.samples:
                continue
            limit = min((cap(e, s) for e, s in p.arms), default=claim.min_seeds)
            got = shown_need(seeds_needed(claim, p.experiment, p.a, p.b, p.samples), limit)
            if got != p.seeds_needed:
                raise PlanError(
                    f"{at}: {planned.id}, {p.experiment}, {p.a} vs {p.b}: its samples give "
                    f"'{need_text(got, limit)}', the plan '{need_text(p.seeds_needed, limit)}': {REMEDY}"
                )
    refuse_seen(plan, at)
    audit_path = Path(ResultsFolder(plan.pilot.results).audit_json)
    if audit_path.is_file():
        audit = read_audit(audit_path)
        again = samples_sha256(
            planned_claims(load_claims(claims_file), audit, lambda e, s: 1, recompute=False)
        )
        if again != plan.pilot.samples_sha256:
            raise PlanError(
                f"{at}: the pilot's results {display_path(audit_path)} hash to {again[:12]}, the plan's "
                f"pilot hash is {plan.pilot.samples_sha256[:12]} (the pilot changed after the plan): {REMEDY}"
            )
    return plan


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or ``--check``) a config's analysis plan; 0 when done, 1 with one line on stderr if not."""
    parser = argparse.ArgumentParser(
        prog="python -m vhct.reporting.audit.plan", description=__doc__.splitlines()[0]
    )
    parser.add_argument("config", type=Path, help="the confirmatory config (config/paper-local.yaml)")
    parser.add_argument("--check", action="store_true", help="check the plan, write nothing")
    parser.add_argument(
        "--claims",
        type=Path,
        default=CLAIMS_FILE,
        help="the claims file the plan is written for (--check reads the one the plan names)",
    )
    args = parser.parse_args(argv)
    try:
        if args.check:
            plan = check(args.config)
            print(f"{args.config}: analysis plan {plan_summary(plan)}")
        else:
            plan, path = write_plan(args.config, args.claims)
            print(f"wrote {display_path(path)}: {plan_summary(plan)}")
            for line in plan.underpowered():
                print(f"  underpowered: {line}")
            load([args.config])  # the config on its new plan, as `make paper-local` loads it
            print(f"  cost {cost_summary(plan_cost(args.config, plan), os.cpu_count() or 1)}")
    except (ConfigError, AuditRecordError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


def plan_cost(config: Path | str, plan: Plan) -> FullScale:
    """What ``config``'s planned runs cost at the pilot's measured seconds per round of the same
    experiment and setting (``costs.full_scale`` on the pilot's timing aggregates): a lower bound,
    without process starts and the scheduler, and where a setting runs more rounds than the pilot
    measured (a Gaussian process's cost per round grows with its rounds). A sensitivity variant the
    pilot did not run is costed at its default's seconds per round (``plan.substitutes``)."""
    import pandas as pd

    pilot_cfg, _ = load([plan.pilot.config])
    pilot = ResultsFolder(plan.pilot.results)
    timings = {
        name: pd.read_csv(pilot.aggregate(name, TIMING_TABLE))
        for name in pilot_cfg.experiments
        if Path(pilot.aggregate(name, TIMING_TABLE)).is_file()
    }
    measured = {name: pilot_cfg.experiment_info(name) for name in pilot_cfg.experiments}
    stand_ins: dict[str, str] = {}
    for default, variants in plan.substitutes.items():
        for variant in variants:
            stand_ins.setdefault(variant, default)
    return full_scale(Path(config), timings, measured, stand_ins)


def cost_summary(cost: FullScale, cores: int) -> str:
    """One line: the planned runs' run-hours at the pilot's costs and the least wall time on ``cores``."""
    notes = []
    if cost.extrapolated:
        notes.append(f"{len(cost.extrapolated)} settings run more rounds than the pilot measured")
    if cost.stood_in:
        notes.append(f"{len(cost.stood_in)} variant settings at their default's seconds per round")
    if cost.unmeasured:
        notes.append(f"{len(cost.unmeasured)} settings the pilot did not run are not counted")
    if cost.objective_differs:
        notes.append(f"the pilot's objective differs on {', '.join(cost.objective_differs)}")
    said = f" ({'; '.join(notes)})" if notes else ""
    return (
        f"at the pilot's seconds per round: {cost.total_seconds / 3600:.1f} run-hours, at least "
        f"{cost.total_seconds / 60 / cores:.0f} min on {cores} cores{said}"
    )


def plan_summary(plan: Plan) -> str:
    """One line: the runs per arm, the seeds, the pilot, the comparisons the caps leave underpowered."""
    runs = sum(n for by_setting in plan.seeds.values() for n in by_setting.values())
    most = max(n for by_setting in plan.seeds.values() for n in by_setting.values())
    pilot = max((s for seeds in plan.pilot.seeds.values() for s in seeds), default=-1)
    seen = max(plan.seen.values(), default=-1)
    shipped = f"; shipped audits of {len(plan.seen)} commits: up to {seen}" if plan.seen else ""
    return (
        f"{runs:,} confirmatory runs, seeds {plan.start} to {plan.start + most - 1} "
        f"(after the seeds used before: pilot {plan.pilot.config} up to {pilot}{shipped}), "
        f"{len(plan.underpowered())} comparisons underpowered at the caps"
    )


def seeds_of(plan: Plan) -> Mapping[str, Mapping[str, list[int]]]:
    """Experiment -> setting -> its confirmatory seeds."""
    return {e: {s: plan.seed_list(e, s) for s in by} for e, by in plan.seeds.items()}


if __name__ == "__main__":
    sys.exit(main())
