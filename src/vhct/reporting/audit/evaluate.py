"""Evaluating claims on runs: per experiment and combined, under the defaults and under each
implementation choice's variant, and the context recorded with the audit."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vhct.reporting.audit.checks import CHECKS, Runs
from vhct.reporting.audit.claims import substitute_settings
from vhct.reporting.audit.verdicts import (
    NOT_EVALUATED,
    VERDICTS,
    _labelled,
    _reason,
    combine,
    coverage,
    flips,
)


def evaluate_claim(claim: Mapping[str, Any], runs: Runs) -> dict[str, Any]:
    """Verdict of one claim on every experiment it names, and the combined verdict."""
    results = []
    for experiment in claim["experiments"]:
        exp_runs = runs.get(experiment)
        target = claim.get("target")
        if exp_runs is None:
            results.append(
                {
                    "experiment": experiment,
                    "verdict": NOT_EVALUATED,
                    "reason": "experiment not in this config",
                    "comparisons": [],
                }
            )
            continue
        if target is not None and target not in exp_runs:
            results.append(
                {
                    "experiment": experiment,
                    "verdict": NOT_EVALUATED,
                    "reason": f"setting {target} not run in this config",
                    "comparisons": [],
                }
            )
            continue
        comps = CHECKS[claim["kind"]](claim, exp_runs)
        verdicts = [c["verdict"] for c in comps]
        results.append(
            {
                "experiment": experiment,
                "verdict": combine(verdicts),
                "reason": _reason(verdicts, [_labelled(c) for c in comps]),
                "comparisons": comps,
            }
        )
    verdicts = [r["verdict"] for r in results]
    reasons = [f"{r['experiment']}: {r['reason']}" for r in results]
    fields = (
        "id",
        "quote",
        "location",
        "note",
        "kind",
        "statistic",
        "target",
        "claimed",
        "others",
        "checkpoints",
        "test",
        "alpha",
        "min_seeds",
        "round",
        "thresholds",
    )
    out = {k: copy.deepcopy(claim[k]) for k in fields if k in claim}
    out.update(
        verdict=combine(verdicts, strict=False),
        reason=_reason(verdicts, reasons, strict=False),
        coverage=coverage(results),
        experiments=results,
    )
    return out


def evaluate_sensitivity(
    claims: Mapping[str, Any], runs: Runs, results: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Every claim that names a substituted setting, evaluated again under each choice's variant.

    ``results`` are the claims' verdicts under the defaults (``evaluate_claim``), in the order of
    ``claims["claims"]``. Each choice lists, per affected claim, both verdicts and whether it flips.
    """
    out = []
    for choice in claims.get("sensitivity", []):
        rows = []
        for claim, default in zip(claims["claims"], results, strict=True):
            variant_claim = substitute_settings(claim, choice["substitute"])
            if variant_claim is None:
                continue
            variant = evaluate_claim(variant_claim, runs)
            rows.append(
                {
                    "claim": claim["id"],
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


def run_audit(
    claims: Mapping[str, Any], runs: Runs, context: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The whole audit: every claim's verdict, its sensitivity to the implementation choices, the
    verdict counts, the discrepancies and the context."""
    results = [evaluate_claim(claim, runs) for claim in claims["claims"]]
    sensitivity = evaluate_sensitivity(claims, runs, results)
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
        "context": dict(context or {}),
        "summary": counts,
        "flipped_claims": flipped,
        "rules": dict(claims["rules"]),
        "claims": results,
        "sensitivity": sensitivity,
        "discrepancies": list(claims["discrepancies"]),
    }


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
                    **(
                        {"max_horizon": config["settings"][s]["max_horizon"]}
                        if "max_horizon" in config["settings"][s]
                        else {}
                    ),
                }
                for s in exp["settings"]
            },
        }
    return out
