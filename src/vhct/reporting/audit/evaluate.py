"""Evaluating claims on runs: per experiment and combined, under the defaults and under each
implementation choice's variant, and the context recorded with the audit."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vhct.pipeline.config import setting_cap
from vhct.reporting.audit.checks import (
    CHECKS,
    REGRET_STATISTICS,
    Comparison,
    Run,
    Runs,
    check_contrast,
    check_easier,
    rebase,
)
from vhct.reporting.audit.claims import substitute_settings
from vhct.reporting.audit.verdicts import (
    INCONCLUSIVE,
    NOT_EVALUATED,
    UNDERPOWERED,
    VERDICTS,
    _reason,
    category_of,
    combine,
    coverage,
    decide,
    flips,
    majority,
    seeds_to_decide,
)

#: points of the scrambled Sobol sequence that estimate an objective's mean over its domain
SCALE_POINTS_LOG2 = 14
#: seed of that sequence (the estimate is deterministic)
SCALE_SEED = 0


def regret_scale(objective: str, params: Mapping[str, Any] | None = None) -> float | None:
    """``f* - mean of f over the domain``: the per-round regret of uniform random search.

    Dividing R_n / n by it gives a scale-free difficulty (0: no regret, 1: no better than random
    search), so objectives of different ranges can be compared. None where f* is unknown.
    """
    from scipy.stats import qmc

    from vhct.objectives import make_objective

    f = make_objective(objective, **dict(params or {}))
    if f.f_star is None:
        return None
    unit = qmc.Sobol(f.dim, scramble=True, seed=SCALE_SEED).random_base2(SCALE_POINTS_LOG2)
    points = qmc.scale(unit, f.domain[:, 0], f.domain[:, 1])
    return float(f.f_star - np.mean([f(x) for x in points]))


def _not_evaluated(experiment: str, reason: str) -> dict[str, Any]:
    return {"experiment": experiment, "verdict": NOT_EVALUATED, "category": NOT_EVALUATED,
            "seeds_needed": None, "reason": reason, "comparisons": []}  # fmt: skip


def claim_comparisons(
    claim: Mapping[str, Any], runs: Runs, scales: Mapping[str, float | None]
) -> list[tuple[str, list[Comparison] | str]]:
    """Per experiment (or pair of experiments) of the claim: its comparisons, or why there are none."""
    out: list[tuple[str, list[Comparison] | str]] = []
    if claim["kind"] in ("contrast", "easier"):
        for first, second in claim["pairs"]:
            name = f"{first} / {second}"
            missing = [e for e in (first, second) if e not in runs]
            if missing:
                out.append((name, f"experiment {', '.join(missing)} not in this config"))
            elif claim["kind"] == "contrast":
                out.append((name, check_contrast(claim, name, runs[first], runs[second])))
            else:
                pair_scales = (scales.get(first), scales.get(second))
                out.append((name, check_easier(claim, name, runs[first], runs[second], pair_scales)))
        return out
    for experiment in claim["experiments"]:
        exp_runs = runs.get(experiment)
        target = claim.get("target")
        if exp_runs is None:
            out.append((experiment, "experiment not in this config"))
            continue
        if target is not None and target not in exp_runs:
            out.append((experiment, f"setting {target} not run in this config"))
            continue
        reference = ""
        if claim["statistic"] in REGRET_STATISTICS:
            exp_runs, reference = rebase(exp_runs)
        out.append((experiment, CHECKS[claim["kind"]](claim, experiment, exp_runs, reference)))
    return out


def evaluate_claim(
    claim: Mapping[str, Any], runs: Runs, scales: Mapping[str, float | None] | None = None
) -> dict[str, Any]:
    """Verdict of one claim on every experiment it names, and the combined verdict.

    The refuting tests of all the claim's comparisons are Holm-adjusted together (``decide``).
    """
    out = {k: copy.deepcopy(claim[k]) for k in CLAIM_FIELDS if k in claim}
    out.update(conclude(claim, claim_comparisons(claim, runs, scales or {})))
    return out


def conclude(claim: Mapping[str, Any], parts: Sequence[tuple[str, list[Comparison] | str]]) -> dict[str, Any]:
    """The claim's verdict from its comparisons per experiment (or the reason an experiment has none).

    Decides every comparison at the claim level (``decide``), combines them per experiment and the
    experiments by the claim's ``require``. The calibration benchmark calls this on made-up samples.
    """
    flat = [c for _, comps in parts if not isinstance(comps, str) for c in comps]
    decided = iter(decide(flat, claim["alpha"]))
    results = []
    for experiment, comps in parts:
        if isinstance(comps, str):
            results.append(_not_evaluated(experiment, comps))
            continue
        mine = [next(decided) for _ in comps]
        verdicts = [c.verdict for c in mine]
        verdict = combine(verdicts)
        results.append(
            {
                "experiment": experiment,
                "verdict": verdict,
                "category": category_of(verdict, [c.category for c in mine]),
                "seeds_needed": seeds_to_decide(mine) if verdict == INCONCLUSIVE else None,
                "reason": _reason(verdicts, [c.reason for c in mine]),
                "comparisons": mine,
            }
        )
    verdicts = [r["verdict"] for r in results]
    if claim.get("require", "all") == "majority":
        verdict, reason = majority(results, claim["alpha"])
    else:
        verdict = combine(verdicts, strict=False)
        reason = _reason(verdicts, [f"{r['experiment']}: {r['reason']}" for r in results], strict=False)
    category = category_of(verdict, [r["category"] for r in results])
    needs = [r["seeds_needed"] for r in results if r["category"] == UNDERPOWERED]
    return {
        "verdict": verdict,
        "category": category,
        # the seeds per arm that would decide every underpowered comparison of the claim
        "seeds_needed": max(needs) if needs and None not in needs and verdict == INCONCLUSIVE else None,
        "reason": reason,
        "coverage": coverage(results),
        "experiments": results,
    }


#: the claim's keys copied into its result
CLAIM_FIELDS = (
    "id", "quote", "location", "note", "reading_of", "kind", "statistic", "target", "claimed", "others",
    "pairs", "direction", "checkpoints", "require", "alpha", "min_seeds", "round", "thresholds",
)  # fmt: skip


def reading_flips(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Claims that are readings of one statement (``reading_of``) and disagree: reported as a flip."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        if r.get("reading_of"):
            groups.setdefault(r["reading_of"], []).append(r)
    out = []
    for group, members in groups.items():
        evaluated = {m["verdict"] for m in members if m["verdict"] != NOT_EVALUATED}
        out.append(
            {
                "statement": group,
                "readings": {m["id"]: m["verdict"] for m in members},
                "flips": len(evaluated) > 1,
            }
        )
    return out


def evaluate_sensitivity(
    claims: Mapping[str, Any],
    runs: Runs,
    results: Sequence[Mapping[str, Any]],
    scales: Mapping[str, float | None] | None = None,
) -> list[dict[str, Any]]:
    """Every claim that names a substituted setting, evaluated again under each choice's variant.

    ``results`` are the claims' verdicts under the defaults (``evaluate_claim``), in the order of
    ``claims["claims"]``. Each choice lists, per affected claim, both verdicts and whether it flips.
    """
    out = []
    for choice in claims.get("sensitivity", []):
        rows = []
        common_runs, common_rounds = at_common_rounds(runs, choice["substitute"])
        for claim, default in zip(claims["claims"], results, strict=True):
            variant_claim = substitute_settings(claim, choice["substitute"])
            if variant_claim is None:
                continue
            variant = evaluate_claim(variant_claim, runs, scales)
            if common_rounds:  # a variant run to fewer rounds: the default read where both reach
                default = evaluate_claim(claim, common_runs, scales)
            rows.append(
                {
                    "claim": claim["id"],
                    "common_rounds": dict(common_rounds),
                    "default_verdict": default["verdict"],
                    "variant_verdict": variant["verdict"],
                    "flips": flips(default["verdict"], variant["verdict"]),
                    "variant_coverage": variant["coverage"],
                    "variant_reason": variant["reason"],
                    "variant_experiments": variant["experiments"],
                }
            )
        out.append({**copy.deepcopy(dict(choice)), "claims": rows})
    return out


def at_common_rounds(runs: Runs, substitute: Mapping[str, str]) -> tuple[Runs, dict[str, int]]:
    """``runs`` with each substituted default setting cut to the rounds its variant ran, where the
    variant stopped earlier (BO-restarts5 at t = 100 against BO at t = 500), and those rounds by
    experiment: so a flip between the readings comes from the choice, not from the horizon."""
    cut: dict[str, dict[str, list[Run]]] = {}
    rounds: dict[str, int] = {}
    for experiment, by_setting in runs.items():
        cut[experiment] = dict(by_setting)
        for default, variant in substitute.items():
            if not by_setting.get(default) or not by_setting.get(variant):
                continue
            reach = min(r.horizon for r in by_setting[variant])
            if reach < min(r.horizon for r in by_setting[default]):
                cut[experiment][default] = [Run(r.seed, r.table.iloc[:reach]) for r in by_setting[default]]
                rounds[experiment] = min(reach, rounds.get(experiment, reach))
    return cut, rounds


def run_audit(
    claims: Mapping[str, Any],
    runs: Runs,
    context: Mapping[str, Any] | None = None,
    scales: Mapping[str, float | None] | None = None,
) -> dict[str, Any]:
    """The whole audit: every claim's verdict, its sensitivity to the implementation choices, the
    readings that disagree, the verdict counts, the discrepancies and the context.

    ``scales``: experiment -> ``regret_scale`` of its objective (for ``normalized_regret``).
    """
    results = [evaluate_claim(claim, runs, scales) for claim in claims["claims"]]
    sensitivity = evaluate_sensitivity(claims, runs, results, scales)
    for result in results:
        result["sensitivity"] = [
            {"choice": choice["id"], "verdict": row["variant_verdict"], "flips": row["flips"]}
            for choice in sensitivity
            for row in choice["claims"]
            if row["claim"] == result["id"]
        ]
    counts = {v: sum(r["verdict"] == v for r in results) for v in VERDICTS}
    flipped = sorted({row["claim"] for choice in sensitivity for row in choice["claims"] if row["flips"]})
    return {
        "format": AUDIT_FORMAT,
        "context": dict(context or {}),
        "summary": counts,
        "flipped_claims": flipped,
        "reading_flips": reading_flips(results),
        "rules": dict(claims["rules"]),
        "claims": results,
        "sensitivity": sensitivity,
        "discrepancies": list(claims["discrepancies"]),
    }


#: version of the audit's JSON shape; the findings renderer refuses any other
AUDIT_FORMAT = 2


def display_path(path: Path | str) -> str:
    """The path relative to the working directory when inside it (machine-independent), else as given."""
    try:
        return str(Path(path).absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def file_sha256(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def config_summary(config: Mapping[str, Any], experiments: Sequence[str]) -> dict[str, Any]:
    """The parts of the pipeline config behind the audited experiments (objective, noise, horizon, seeds)."""
    out = {}
    for name in experiments:
        exp = config["experiments"].get(name)
        if exp is None:
            continue
        seeds = exp["seeds"]
        out[name] = {
            "objective": exp["objective"],
            "objective_params": dict(exp.get("objective_params") or {}),
            "noise": exp["noise"],
            "horizon": exp["horizon"],
            "seeds": list(range(seeds)) if isinstance(seeds, int) else list(seeds),
            "settings": {
                s: {
                    "algorithm": config["settings"][s]["algorithm"],
                    "params": dict(config["settings"][s].get("params") or {}),
                    **{  # the caps of costly settings, the experiment's own where it sets them
                        key: cap
                        for key in ("max_horizon", "max_seeds")
                        if (cap := setting_cap(config, name, s, key)) is not None
                    },
                }
                for s in exp["settings"]
            },
        }
    return out
