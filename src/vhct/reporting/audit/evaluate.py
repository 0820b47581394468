"""Evaluating claims on runs: per experiment and combined, under the defaults and under each
implementation choice's variant, and the context recorded with the audit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vhct.pipeline.config import Config
from vhct.pipeline.specs import ExperimentInfo
from vhct.reporting.audit.claims import substitute_settings
from vhct.reporting.audit.claims_model import Choice, Claim, ClaimsFile
from vhct.reporting.audit.computed import evaluate_computed
from vhct.reporting.audit.records import (
    AUDIT_FORMAT,
    NOT_APPLICABLE,
    Audit,
    AuditContext,
    ClaimVerdict,
    Comparison,
    Design,
    ExperimentVerdict,
    MarginReading,
    PlannedNeed,
    ReadingFlip,
    SensitivityChoice,
    SensitivityRow,
    need_key,
)
from vhct.reporting.audit.runs import REGRET_STATISTICS, Run, Runs, rebase, statistic
from vhct.reporting.audit.verdicts import (
    INCONCLUSIVE,
    NOT_EVALUATED,
    Planned,
    category_of,
    combine,
    combined_reason,
    coverage,
    decide,
    flips,
    majority,
    seeds_to_decide,
    statement_counts,
)


def claim_comparisons(
    claim: Claim,
    runs: Runs,
    scales: Mapping[str, float | None],
    left_out: Mapping[str, str] | None = None,
    few_seeds_compared: bool = False,
) -> list[tuple[str, list[Comparison] | str]]:
    """Per experiment (or pair) of the claim: its comparisons (its kind's ``check``), or why none.
    ``left_out``: experiment -> why no verdict there (``claims.left_out``); ``few_seeds_compared``:
    compare below ``min_seeds`` too ("too few seeds", as a question does) rather than give no verdict."""
    out: list[tuple[str, list[Comparison] | str]] = []
    regret, kind, target = claim.statistic in REGRET_STATISTICS, claim.spec, claim.target

    def why_not(experiment: str) -> str | None:
        """``left_out``'s reason, or a setting run on too few seeds (no verdict, not "inconclusive")."""
        if experiment in (left_out or {}):
            return left_out[experiment]
        return None if few_seeds_compared else too_few_seeds(claim, experiment, runs[experiment])

    if kind.over_pairs:
        units = [(f"{first} / {second}", [first, second]) for first, second in claim.pairs]
    else:
        units = [(experiment, [experiment]) for experiment in claim.experiments]
    for unit, experiments in units:
        missing = [e for e in experiments if e not in runs]
        if missing:
            named = f" {', '.join(missing)}" if kind.over_pairs else ""
            out.append((unit, f"experiment{named} not in this config"))
        elif not kind.over_pairs and target is not None and target not in runs[unit]:
            out.append((unit, f"setting {target} not run in this config"))
        elif reasons := [r for e in experiments if (r := why_not(e))]:
            out.append((unit, "; ".join(reasons)))
        else:
            rebased = [rebase(runs[e]) if regret else (runs[e], "") for e in experiments]
            reference = "" if kind.over_pairs else rebased[0][1]
            unit_runs, unit_scales = [r for r, _ in rebased], tuple(scales.get(e) for e in experiments)
            out.append((unit, kind.check(claim, unit, unit_runs, unit_scales, reference)))
    return out


def too_few_seeds(claim: Claim, experiment: str, exp_runs: Mapping[str, Sequence[Run]]) -> str | None:
    """Why the claim gets no verdict on ``experiment``: a setting it reads short of seeds, or None."""
    full = max((run.horizon for setting_runs in exp_runs.values() for run in setting_runs), default=0)
    read = {s: exp_runs[s] for s in claim.settings if exp_runs.get(s)}
    seeds, horizons = {s: len(r) for s, r in read.items()}, {s: r[0].horizon for s, r in read.items()}
    short = claim.short_of_seeds(seeds, horizons, full)
    if not short:
        return None
    runs_text = ", ".join(f"{n} seeds of {setting}" for setting, n in short.items())
    return f"this configuration runs {runs_text} on {experiment}, the claim needs {claim.min_seeds}"


def evaluate_claim(
    claim: Claim,
    runs: Runs,
    scales: Mapping[str, float | None] | None = None,
    left_out: Mapping[str, str] | None = None,
    margins: bool = True,
    design: Design | None = None,
) -> ClaimVerdict:
    """The claim's verdict on every experiment it names (but those ``left_out``) and combined, and with
    ``margins`` its verdict at each of the other margins it names (``Claim.at_margins``); with a
    ``design``, an underpowered comparison states its analysis plan's need."""
    parts = claim_comparisons(claim, runs, scales or {}, left_out)
    planned = None
    if design is not None:
        needs = design.needs

        def planned(c: Comparison) -> PlannedNeed | None:
            return needs.get(need_key(claim.id, c.experiment, c.a, c.b))

    readings = [
        MarginReading(
            thresholds=other.thresholds.given(),
            **conclude(other, claim_comparisons(other, runs, scales or {}, left_out)),
        )
        for other in (claim.at_margins() if margins else [])
    ]
    return ClaimVerdict(claim=claim, **conclude(claim, parts, planned), margins=readings)


def conclude(
    claim: Claim, parts: Sequence[tuple[str, list[Comparison] | str]], planned: Planned | None = None
) -> dict[str, Any]:
    """The claim's verdict from its comparisons per experiment (or why an experiment has none):
    every comparison decided at the claim level (``decide``; ``planned``: each one's planned need),
    combined per experiment, then by the claim's ``require``. The calibration benchmark calls this
    on made-up samples."""
    flat = [c for _, comps in parts if not isinstance(comps, str) for c in comps]
    decided = iter(decide(flat, claim.alpha, planned))
    results = []
    for experiment, comps in parts:
        mine = [] if isinstance(comps, str) else [next(decided) for _ in comps]
        if mine:
            verdicts, reasons = [c.verdict for c in mine], [c.reason for c in mine]
            summary = _summary(mine, combine(verdicts), combined_reason(verdicts, reasons))
        else:  # why not, or none left: every setting it would compare stopped before the round it reads
            summary = _summary([], NOT_EVALUATED, comps or "no other setting it reads ran the final round")
        results.append(ExperimentVerdict(experiment=experiment, comparisons=mine, **summary))
    verdicts, reasons = [r.verdict for r in results], [f"{r.experiment}: {r.reason}" for r in results]
    if claim.require == "majority":
        verdict, reason = majority(results, claim.alpha)
    else:
        verdict, reason = combine(verdicts, strict=False), combined_reason(verdicts, reasons, strict=False)
    return {**_summary(results, verdict, reason), "coverage": coverage(results), "experiments": results}


def _summary(parts: Sequence[Comparison | ExperimentVerdict], verdict: str, reason: str) -> dict[str, Any]:
    """A combined verdict with its reason, its category and the seeds that would decide its parts."""
    category = category_of(verdict, [p.category for p in parts])
    needed = seeds_to_decide(parts) if verdict == INCONCLUSIVE else None
    return {"verdict": verdict, "category": category, "seeds_needed": needed, "reason": reason}


def reading_flips(results: Sequence[ClaimVerdict]) -> list[ReadingFlip]:
    """Claims that are readings of one statement (``reading_of``) and disagree: reported as a flip."""
    groups: dict[str, dict[str, str]] = {}  # statement -> claim id -> verdict
    for r in results:
        if r.claim.reading_of:
            groups.setdefault(r.claim.reading_of, {})[r.claim.id] = r.verdict
    return [
        ReadingFlip(statement=statement, readings=read, flips=len(set(read.values()) - {NOT_EVALUATED}) > 1)
        for statement, read in groups.items()
    ]


def evaluate_sensitivity(
    claims: ClaimsFile,
    runs: Runs,
    results: Sequence[ClaimVerdict],
    scales: Mapping[str, float | None] | None = None,
    left_out: Mapping[str, Mapping[str, str]] | None = None,
) -> list[SensitivityChoice]:
    """Each claim the variant touches evaluated again under each choice's variant, beside its
    ``results``: a claim naming a substituted setting (``substitute``, ``choose_best``) or read at the
    final round (``round``). A claim the variant would make compare a setting with itself, or whose
    experiments all stop before the variant's round, is listed "not applicable"."""
    out = []
    left_out = left_out or {}
    for choice in claims.sensitivity:
        rows = []
        chosen: dict[str, dict[str, str]] = {}
        if choice.round is not None:
            variant_runs, common_runs, common_rounds = at_round(runs, choice.round), None, {}
        elif choice.choose_best:
            chosen = choose_best(runs, choice.choose_best)
            variant_runs, common_runs, common_rounds = stand_in(runs, chosen), None, {}
        else:
            variant_runs = runs
            common_runs, common_rounds = at_common_rounds(runs, choice.substitute)
        for claim, default in zip(claims.claims, results, strict=True):
            skipped = dict(left_out.get(claim.id) or {})
            variant_claim, why_not = variant_of(claim, choice)
            if variant_claim is None and why_not is None:
                continue
            unread = {} if why_not is not None else unread_experiments(claim, choice, runs)
            if unread and all(e in unread for e in claim.experiments_read if e in runs):
                why_not = "; ".join(unread.values())
            if why_not is not None:
                rows.append(_not_applicable(claim.id, default.verdict, why_not))
                continue
            assert variant_claim is not None
            skipped.update(unread)
            variant = evaluate_claim(variant_claim, variant_runs, scales, skipped, margins=False)
            if unread or (common_runs is not None and common_rounds):  # read where the variant is
                default_runs = common_runs if common_runs is not None and common_rounds else runs
                default = evaluate_claim(claim, default_runs, scales, skipped, margins=False)
            rows.append(
                SensitivityRow(
                    claim=claim.id,
                    common_rounds=dict(common_rounds),
                    default_verdict=default.verdict,
                    variant_verdict=variant.verdict,
                    flips=flips(default.verdict, variant.verdict),
                    variant_coverage=variant.coverage,
                    variant_reason=variant.reason,
                    variant_experiments=variant.experiments,
                    unread=unread,
                )
            )
        out.append(SensitivityChoice(choice=choice, claims=rows, chosen=chosen))
    return out


def unread_experiments(claim: Claim, choice: Choice, runs: Runs) -> dict[str, str]:
    """Experiment -> why the variant cannot be read there: it stops before the choice's round, or a
    setting the choice substitutes for one of the claim's is not run there (a config may run a
    variant on some experiments only). Both verdicts of the row leave these experiments out."""
    out = {}
    for e in claim.experiments_read:
        if e not in runs:
            continue
        if choice.round is not None and _horizon(runs[e]) < choice.round:
            out[e] = f"{e} stops before round {choice.round}"
        ran = runs[e]
        substituted = {s: v for s, v in choice.substitute.items() if s in claim.settings}
        missing = [v for s, v in substituted.items() if s in ran and v not in ran]
        if missing:
            out[e] = f"{', '.join(missing)} not run on {e}"
    return out


def variant_of(claim: Claim, choice: Choice) -> tuple[Claim | None, str | None]:
    """The claim as the variant reads it and None, (None, None) if the variant does not touch it,
    or (None, why) if it does but cannot be read: it would name one setting twice."""
    if choice.round is not None:
        return (claim, None) if claim.round == "final" else (None, None)
    if choice.choose_best:  # the runs change under the same names; the claim stays
        touched = [d for d in choice.choose_best if d in claim.settings]
        if not touched:
            return None, None
        both = sorted({c for d in touched for c in choice.variants[d] if c in claim.settings})
        if both:
            return None, f"the claim already names {', '.join(both)}, which may stand in for another setting"
        return claim, None
    variant = substitute_settings(claim, choice.substitute)
    if variant is None:
        return None, None
    named = [s for s in claim.settings if s in choice.substitute]
    twice = sorted(choice.substitute[s] for s in named if choice.substitute[s] in claim.settings)
    if twice:
        return None, f"the claim already names {', '.join(twice)}: the variant would compare it with itself"
    return variant, None


def _not_applicable(claim: str, default: str, why: str) -> SensitivityRow:
    return SensitivityRow(
        claim=claim,
        common_rounds={},
        default_verdict=default,
        variant_verdict=NOT_APPLICABLE,
        flips=False,
        variant_coverage="",
        variant_reason=why,
        variant_experiments=[],
        unread={},
    )


def choose_best(runs: Runs, candidates: Mapping[str, Sequence[str]]) -> dict[str, dict[str, str]]:
    """Per experiment, each default setting -> the candidate run there with the lowest mean final
    cumulative regret (against the experiment's common reference, ``rebase``); ties keep the first listed.
    Chosen on the very runs the audit reads, the same way for every setting: an optimistic variant."""
    out: dict[str, dict[str, str]] = {}
    for experiment, by_setting in runs.items():
        rebased, _ = rebase(by_setting)
        for default, cands in candidates.items():
            ran = [c for c in cands if rebased.get(c)]
            if default not in rebased or len(ran) < 2:
                continue
            means = {
                c: float(np.mean([statistic(r, "cumulative_regret", r.horizon) for r in rebased[c]]))
                for c in ran
            }
            out.setdefault(experiment, {})[default] = min(ran, key=lambda c: means[c])
    return out


def stand_in(runs: Runs, chosen: Mapping[str, Mapping[str, str]]) -> Runs:
    """``runs`` with each default setting's runs replaced by its chosen candidate's (``choose_best``)."""
    out: dict[str, dict[str, list[Run]]] = {}
    for experiment, by_setting in runs.items():
        out[experiment] = dict(by_setting)
        for default, candidate in chosen.get(experiment, {}).items():
            out[experiment][default] = list(by_setting[candidate])
    return out


def _horizon(by_setting: Mapping[str, Sequence[Run]]) -> int:
    return max((r.horizon for rs in by_setting.values() for r in rs), default=0)


def at_round(runs: Runs, reach: int) -> Runs:
    """``runs`` cut to their first ``reach`` rounds (a run that stopped earlier stays as it ran, as at
    the final round); an experiment whose horizon falls short of ``reach`` is kept whole, for its
    claims leave it out."""
    out: dict[str, dict[str, list[Run]]] = {}
    for experiment, by_setting in runs.items():
        out[experiment] = {
            s: [Run(r.seed, r.table.iloc[:reach], r.f_star) if r.horizon > reach else r for r in rs]
            for s, rs in by_setting.items()
        }
    return out


def at_common_rounds(runs: Runs, substitute: Mapping[str, str]) -> tuple[Runs, dict[str, int]]:
    """``runs`` with each default setting cut to the rounds its variant ran where the variant stopped
    earlier, and those rounds by experiment: a flip comes from the choice, not from the horizon."""
    cut: dict[str, dict[str, list[Run]]] = {}
    rounds: dict[str, int] = {}
    for experiment, by_setting in runs.items():
        cut[experiment] = dict(by_setting)
        for default, variant in substitute.items():
            if not by_setting.get(default) or not by_setting.get(variant):
                continue
            reach = min(r.horizon for r in by_setting[variant])
            if reach < min(r.horizon for r in by_setting[default]):
                cut[experiment][default] = [
                    Run(r.seed, r.table.iloc[:reach], r.f_star) for r in by_setting[default]
                ]
                rounds[experiment] = min(reach, rounds.get(experiment, reach))
    return cut, rounds


def run_audit(
    claims: ClaimsFile,
    runs: Runs,
    context: AuditContext | None = None,
    scales: Mapping[str, float | None] | None = None,
    left_out: Mapping[str, Mapping[str, str]] | None = None,
) -> Audit:
    """The whole audit of ``claims`` on ``runs``. ``scales``: experiment -> ``random_search_regret`` (for
    ``normalized_regret``); ``left_out``: claim id -> experiment -> why no verdict there."""
    left_out = left_out or {}
    if context is not None and context.design is not None:  # a confirmatory run: its seeds only
        runs, dropped = confirmatory_runs(runs, context.design)
        design = context.design.model_copy(update={"left_out_runs": dropped})
        context = context.model_copy(update={"design": design})
    design = context.design if context is not None else None
    results = [
        evaluate_claim(claim, runs, scales, left_out.get(claim.id), design=design) for claim in claims.claims
    ]
    sensitivity = evaluate_sensitivity(claims, runs, results, scales, left_out)
    flipped = sorted({row.claim for choice in sensitivity for row in choice.claims if row.flips})
    return Audit(
        format=AUDIT_FORMAT,
        context=context or AuditContext(experiments={}),
        summary=statement_counts(results),
        flipped_claims=flipped,
        reading_flips=reading_flips(results),
        rules=claims.rules.texts(),
        claims=results,
        sensitivity=sensitivity,
        discrepancies=claims.discrepancies,
        conditions=claims.conditions,
        computed=[evaluate_computed(claim) for claim in claims.computed],
    )


def confirmatory_runs(runs: Runs, design: Design) -> tuple[Runs, int]:
    """``runs`` on the design's confirmatory seeds only (a setting it plans no seeds for keeps none), and
    how many runs on other seeds (the pilot's, or any not planned) were left out of every verdict."""
    kept: dict[str, dict[str, list[Run]]] = {}
    dropped = 0
    for experiment, by_setting in runs.items():
        planned = design.confirmatory_seeds.get(experiment, {})
        for setting, setting_runs in by_setting.items():
            seeds = set(planned.get(setting, ()))
            mine = [r for r in setting_runs if r.seed in seeds]
            dropped += len(setting_runs) - len(mine)
            kept.setdefault(experiment, {})[setting] = mine
    return kept, dropped


def config_summary(config: Config, experiments: Sequence[str]) -> dict[str, ExperimentInfo]:
    """The audited experiments as the config computes them (``Config.experiment_info``)."""
    return {name: config.experiment_info(name) for name in experiments if name in config.experiments}
