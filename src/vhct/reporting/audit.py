"""Audit of the paper's empirical claims against the pipeline's runs.

The claims are data (``config/claims.yaml``, schema ``vhct/resources/claims.schema.yaml``): each
names its experiments and settings, a statistic read per run (per seed), a kind of check, a test,
a level and effect-size thresholds. This module computes the numbers, applies the verdict rule of
the kind (the rules are stated in words in the claims file) and writes the audit as Markdown,
JSON and HTML. Verdicts: reproduced, not reproduced, inconclusive (too few seeds, too small an
effect, not significant) and not evaluated (the config does not run what the claim needs).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from vhct.reporting import stats
from vhct.resources import CLAIMS, CLAIMS_SCHEMA, resource_path

#: the schema of the claims file and the default claims file
SCHEMA_PATH = resource_path(CLAIMS_SCHEMA)
CLAIMS_PATH = resource_path(CLAIMS)

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_EVALUATED = "not evaluated"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_EVALUATED)

#: columns of a run table the audit reads
RUN_COLUMNS = ("t", "cumulative_regret", "depth", "step_seconds")
#: relative tolerance of the cross-check of per-seed finals against the aggregate table
AGGREGATE_RTOL = 1e-8
#: significant digits of the numbers in the Markdown/HTML tables
DIGITS = 4


class ClaimsError(ValueError):
    """A malformed claims file; the message names the file and the offending key path."""


# ---------------------------------------------------------------- the claims file


def load_claims(path: Path | str = CLAIMS_PATH, schema_path: Path | str = SCHEMA_PATH) -> dict[str, Any]:
    """Read, validate and resolve a claims file: every claim gets its test, alpha, min_seeds and round."""
    import jsonschema

    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ClaimsError(f"claims file {path}: cannot be read as YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise ClaimsError(f"claims file {path}: does not hold a mapping")
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        raise ClaimsError(f"claims file {path}: key {where}: {error.message}")
    _check_semantics(doc, path)
    resolved = copy.deepcopy(doc)
    resolved.setdefault("sensitivity", [])
    for claim in resolved["claims"]:
        for key in ("alpha", "min_seeds", "test", "round"):
            claim.setdefault(key, doc["defaults"][key])
        if claim["kind"] == "decreasing":
            claim["test"] = "page"
    return resolved


def _check_semantics(doc: Mapping[str, Any], path: Path) -> None:
    """What the schema cannot say: unique ids, a rule for every kind used, no setting listed twice."""
    for section in ("claims", "discrepancies", "sensitivity"):
        seen: set[str] = set()
        for i, item in enumerate(doc.get(section, [])):
            if item["id"] in seen:
                raise ClaimsError(f"claims file {path}: key {section}/{i}/id: duplicate id {item['id']!r}")
            seen.add(item["id"])
    for i, choice in enumerate(doc.get("sensitivity", [])):
        same = sorted(k for k, v in choice["substitute"].items() if k == v)
        if same:
            raise ClaimsError(
                f"claims file {path}: key sensitivity/{i}/substitute: a setting substituted by itself: {same}"
            )
    for i, claim in enumerate(doc["claims"]):
        key = f"claims/{i}"
        if claim["kind"] not in doc["rules"]:
            raise ClaimsError(f"claims file {path}: key {key}/kind: no rule text for kind {claim['kind']!r}")
        named = [claim.get("target")] if "target" in claim else []
        named += list(claim.get("claimed", [])) + list(claim.get("others", []))
        twice = sorted({s for s in named if named.count(s) > 1})
        if twice:
            raise ClaimsError(f"claims file {path}: key {key}: settings listed twice: {twice}")
        points = claim.get("checkpoints")
        if points is not None and any(b <= a for a, b in zip(points, points[1:], strict=False)):
            raise ClaimsError(f"claims file {path}: key {key}/checkpoints: must increase, got {points}")
        if claim["kind"] == "decreasing" and claim.get("others"):
            raise ClaimsError(
                f"claims file {path}: key {key}/others: a decreasing check reads only its target"
            )


def claims_experiments(claims: Mapping[str, Any]) -> list[str]:
    """Every experiment some claim reads, in first-use order."""
    return list(dict.fromkeys(e for claim in claims["claims"] for e in claim["experiments"]))


# ---------------------------------------------------------------- runs and statistics


@dataclass(frozen=True)
class Run:
    """One run (one seed) of one setting: its per-round table (columns ``RUN_COLUMNS``)."""

    seed: int
    table: pd.DataFrame

    @property
    def horizon(self) -> int:
        return len(self.table)


#: experiment -> setting -> runs
Runs = Mapping[str, Mapping[str, Sequence[Run]]]


def read_runs(run_paths: Mapping[str, Mapping[str, Sequence[Path | str]]]) -> dict[str, dict[str, list[Run]]]:
    """Read run tables (``.csv.gz``) and the seed from their JSON sidecars, by experiment and setting."""
    runs: dict[str, dict[str, list[Run]]] = {}
    for experiment, by_setting in run_paths.items():
        runs[experiment] = {}
        for setting, paths in by_setting.items():
            runs[experiment][setting] = []
            for path in paths:
                table = pd.read_csv(path, usecols=lambda c: c in RUN_COLUMNS)
                missing = set(RUN_COLUMNS) - set(table.columns)
                if missing:
                    raise ValueError(f"run table {path} lacks columns {sorted(missing)}")
                sidecar = Path(str(path).removesuffix(".csv.gz") + ".json")
                seed = int(json.loads(sidecar.read_text(encoding="utf-8"))["seed"])
                runs[experiment][setting].append(Run(seed, table))
    return runs


def check_aggregates(runs: Runs, final_paths: Mapping[str, Path | str]) -> None:
    """Require the per-seed final regrets to average to the aggregate table's ``final_mean``.

    The audit reads the runs (it needs one number per seed) while the figures read the aggregates;
    this check guarantees both describe the same results.
    """
    for experiment, path in final_paths.items():
        final = pd.read_csv(path).set_index("setting")
        for setting, setting_runs in runs.get(experiment, {}).items():
            if setting not in final.index:
                raise ValueError(f"aggregate {path} has no row for setting {setting!r}")
            ours = float(np.mean([r.table["cumulative_regret"].iloc[-1] for r in setting_runs]))
            theirs = float(final.loc[setting, "final_mean"])
            if not math.isclose(ours, theirs, rel_tol=AGGREGATE_RTOL, abs_tol=AGGREGATE_RTOL):
                raise ValueError(
                    f"aggregate {path}, setting {setting!r}: final_mean {theirs!r} but the runs give {ours!r}"
                )


def statistic(run: Run, name: str, at_round: int) -> float:
    """The named statistic of one run at round ``at_round`` (1-based); nan if undefined for the run."""
    if not 1 <= at_round <= run.horizon:
        raise ValueError(f"round {at_round} is outside the run's rounds 1..{run.horizon}")
    head = run.table.iloc[:at_round]
    if name == "cumulative_regret":
        return float(head["cumulative_regret"].iloc[-1])
    if name == "average_regret":
        return float(head["cumulative_regret"].iloc[-1]) / at_round
    if name == "max_depth":
        depth = head["depth"].to_numpy(dtype=float)
        return math.nan if np.all(np.isnan(depth)) else float(np.nanmax(depth))
    if name == "seconds_per_round":
        return float(head["step_seconds"].mean())
    raise ValueError(f"unknown statistic {name!r}")


def samples(runs: Sequence[Run], name: str, at_round: int) -> dict[int, float]:
    """Seed -> statistic at ``at_round``."""
    return {run.seed: statistic(run, name, at_round) for run in runs}


def horizon(runs: Sequence[Run]) -> int:
    """Rounds every run of a setting has."""
    return min(run.horizon for run in runs)


# ---------------------------------------------------------------- verdict helpers


def combine(verdicts: Sequence[str], strict: bool = True) -> str:
    """Comparisons -> experiment (``strict``), experiments -> claim (not strict): the ``combine`` rule.

    Not reproduced if any part is; reproduced if every evaluated part is and, when ``strict``, no
    part was left unevaluated; not evaluated if no part was evaluated; otherwise inconclusive.
    """
    evaluated = [v for v in verdicts if v != NOT_EVALUATED]
    if not evaluated:
        return NOT_EVALUATED
    if NOT_REPRODUCED in evaluated:
        return NOT_REPRODUCED
    if all(v == REPRODUCED for v in (verdicts if strict else evaluated)):
        return REPRODUCED
    return INCONCLUSIVE


def _reason(verdicts: Sequence[str], reasons: Sequence[str], strict: bool = True) -> str:
    """A short reason for a combined verdict: the reasons of the parts that decided it."""
    verdict = combine(verdicts, strict)
    if verdict == REPRODUCED:
        return "every comparison reproduced"
    if verdict == NOT_REPRODUCED:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v == NOT_REPRODUCED]
    elif verdict == INCONCLUSIVE and not strict:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v == INCONCLUSIVE]
    else:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v != REPRODUCED]
    return "; ".join(dict.fromkeys(picked))


def _labelled(comp: Mapping[str, Any]) -> str:
    """A comparison's reason, prefixed with the setting it was compared with (if any)."""
    return comp["reason"] if comp["b"] == "-" else f"vs {comp['b']}: {comp['reason']}"


def coverage(results: Sequence[Mapping[str, Any]]) -> str:
    """Which experiments a claim was evaluated on, e.g. ``garland (4/5 comparisons); 1 of 3 experiments``."""
    parts = []
    for r in results:
        if r["verdict"] == NOT_EVALUATED:
            continue
        comps = r["comparisons"]
        done = sum(c["verdict"] != NOT_EVALUATED for c in comps)
        parts.append(r["experiment"] + ("" if done == len(comps) else f" ({done}/{len(comps)} comparisons)"))
    return f"{', '.join(parts) or 'none'}; {len(parts)} of {len(results)} experiments"


def _too_few(claim: Mapping[str, Any], n_a: int, n_b: int, checkpoints: int = 0) -> str | None:
    """Why the seeds cannot decide this comparison, or None."""
    if min(n_a, n_b) < claim["min_seeds"]:
        return f"too few seeds (n = {n_a} vs {n_b}; the claim needs at least {claim['min_seeds']})"
    smallest = stats.min_p_value(claim["test"], n_a, n_b, checkpoints)
    if smallest > claim["alpha"]:
        return (
            f"too few seeds: with n = {n_a} vs {n_b} the {claim['test']} test cannot reach "
            f"p <= {claim['alpha']:g} (smallest p = {smallest:.3g})"
        )
    return None


def _comparison(a: str, b: str, at_round: int, sa: Mapping[int, float], sb: Mapping[int, float]) -> dict:
    """The numbers of a pairwise comparison (values per seed, n, mean, std)."""
    da, db = stats.describe(sa), stats.describe(sb)
    return {
        "a": a,
        "b": b,
        "round": at_round,
        "n_a": da["n"],
        "n_b": db["n"],
        "mean_a": da["mean"],
        "mean_b": db["mean"],
        "std_a": da["std"],
        "std_b": db["std"],
        "values_a": {str(k): v for k, v in sorted(sa.items())},
        "values_b": {str(k): v for k, v in sorted(sb.items())},
        "probability_a_lower": stats.probability_of_superiority(sa, sb),
    }


def _skipped(a: str, b: str, reason: str) -> dict:
    return {"a": a, "b": b, "verdict": NOT_EVALUATED, "reason": reason}


def _pair_round(claim: Mapping[str, Any], runs_a: Sequence[Run], runs_b: Sequence[Run]) -> int | str:
    """The round of a comparison, or a reason why there is none."""
    common = min(horizon(runs_a), horizon(runs_b))
    if claim["round"] == "final":
        return common
    if claim["round"] > common:
        return f"round {claim['round']} is beyond the {common} rounds both settings ran"
    return int(claim["round"])


def _pair_samples(claim, exp_runs, a, b) -> tuple[dict | None, Any, Any]:
    """Samples of a and b at the comparison round, or (skipped-comparison, None, None)."""
    if b not in exp_runs:
        return _skipped(a, b, f"setting {b} not run in this config"), None, None
    at = _pair_round(claim, exp_runs[a], exp_runs[b])
    if isinstance(at, str):
        return _skipped(a, b, at), None, None
    sa = samples(exp_runs[a], claim["statistic"], at)
    sb = samples(exp_runs[b], claim["statistic"], at)
    for name, s in ((a, sa), (b, sb)):
        if any(math.isnan(v) for v in s.values()):
            return _skipped(a, b, f"{claim['statistic']} is undefined for setting {name}"), None, None
    return _comparison(a, b, at, sa, sb), sa, sb


# ---------------------------------------------------------------- the kinds of check


def _directional(
    claim, exp_runs, a: str, b: str, claimed: str, effect: Callable, threshold: float, n_tests: int
):
    """Shared rule of lowest/greater/best_parameter: a vs b in the ``claimed`` direction, with effect size."""
    comp, sa, sb = _pair_samples(claim, exp_runs, a, b)
    if sa is None:
        return comp
    test, alpha = claim["test"], claim["alpha"]
    opposite = "greater" if claimed == "less" else "less"
    p_yes = stats.compare(sa, sb, claimed, test)
    p_no = stats.compare(sa, sb, opposite, test)
    value = effect(comp["mean_a"], comp["mean_b"])
    comp.update(test=test, p_value=p_yes, p_value_opposite=p_no, effect=value, effect_threshold=threshold)
    few = _too_few(claim, *stats.sample_sizes(sa, sb, test))
    if few:
        comp.update(verdict=INCONCLUSIVE, reason=few)
    elif p_yes <= alpha and value >= threshold:
        comp.update(
            verdict=REPRODUCED, reason=f"p = {p_yes:.3g} <= {alpha:g}, effect {value:.3g} >= {threshold:g}"
        )
    elif p_no <= alpha / n_tests:
        comp.update(
            verdict=NOT_REPRODUCED,
            reason=f"opposite direction significant: p = {p_no:.3g} <= {alpha:g}/{n_tests}",
        )
    elif p_yes <= alpha:
        comp.update(verdict=INCONCLUSIVE, reason=f"effect too small: {value:.3g} < {threshold:g}")
    else:
        comp.update(verdict=INCONCLUSIVE, reason=f"not significant: p = {p_yes:.3g} > {alpha:g}")
    return comp


def check_lowest(claim: Mapping[str, Any], exp_runs: Mapping[str, Sequence[Run]]) -> list[dict]:
    """The target's statistic is lower than each other setting's (relative difference of means)."""
    a, others = claim["target"], claim["others"]
    threshold = claim["thresholds"]["min_relative_effect"]
    return [
        _directional(claim, exp_runs, a, b, "less", stats.relative_difference, threshold, len(others))
        for b in others
    ]


def check_greater(claim: Mapping[str, Any], exp_runs: Mapping[str, Sequence[Run]]) -> list[dict]:
    """The target's statistic is greater than each other setting's (ratio of means)."""
    a, others = claim["target"], claim["others"]
    threshold = claim["thresholds"]["min_ratio"]
    return [
        _directional(claim, exp_runs, a, b, "greater", stats.ratio, threshold, len(others)) for b in others
    ]


def check_best_parameter(claim: Mapping[str, Any], exp_runs: Mapping[str, Sequence[Run]]) -> list[dict]:
    """The best of the claimed settings beats each other setting."""
    present = [s for s in claim["claimed"] if s in exp_runs]
    missing = [
        _skipped(s, "-", f"setting {s} not run in this config") for s in claim["claimed"] if s not in present
    ]
    if not present:
        return missing
    common = min(horizon(exp_runs[s]) for s in present)
    at = common if claim["round"] == "final" else int(claim["round"])
    if at > common:
        return [
            *missing,
            _skipped("-", "-", f"round {at} is beyond the {common} rounds the claimed settings ran"),
        ]
    means = {s: stats.describe(samples(exp_runs[s], claim["statistic"], at))["mean"] for s in present}
    best = min(present, key=lambda s: means[s])
    threshold = claim["thresholds"]["min_relative_effect"]
    others = claim["others"]
    comps = [
        _directional(claim, exp_runs, best, o, "less", stats.relative_difference, threshold, len(others))
        for o in others
    ]
    return missing + comps


def check_among_fastest(claim: Mapping[str, Any], exp_runs: Mapping[str, Sequence[Run]]) -> list[dict]:
    """The target is within a margin of the best setting (non-inferiority)."""
    a = claim["target"]
    present = [s for s in [a, *claim["others"]] if s in exp_runs]
    missing = [
        _skipped(a, s, f"setting {s} not run in this config") for s in claim["others"] if s not in present
    ]
    common = min(horizon(exp_runs[s]) for s in present)
    at = common if claim["round"] == "final" else int(claim["round"])
    if at > common:
        return [*missing, _skipped(a, "-", f"round {at} is beyond the {common} rounds all settings ran")]
    all_samples = {s: samples(exp_runs[s], claim["statistic"], at) for s in present}
    means = {s: stats.describe(v)["mean"] for s, v in all_samples.items()}
    best = min(present, key=lambda s: means[s])
    margin = claim["thresholds"]["max_excess_over_best"] * abs(means[best])
    if best == a:
        runner_up = min((s for s in present if s != a), key=lambda s: means[s], default=None)
        if runner_up is None:
            return [*missing, _skipped(a, "-", "no other setting run in this config")]
        b = runner_up
        comp = _comparison(a, b, at, all_samples[a], all_samples[b])
        comp.update(
            verdict=REPRODUCED,
            reason=f"{a} has the lowest mean of all {len(present)} settings",
            margin=margin,
        )
        few = _too_few(claim, comp["n_a"], comp["n_b"])
        if few:
            comp.update(verdict=INCONCLUSIVE, reason=f"{a} has the lowest mean, but {few}")
        return [*missing, comp]
    sa, sb = all_samples[a], all_samples[best]
    comp = _comparison(a, best, at, sa, sb)
    test, alpha = claim["test"], claim["alpha"]
    p_yes = stats.compare(sa, sb, "less", test, shift=margin)
    p_no = stats.compare(sa, sb, "greater", test, shift=margin)
    excess = (means[a] - means[best]) / abs(means[best]) if means[best] else math.inf
    comp.update(
        test=test,
        p_value=p_yes,
        p_value_opposite=p_no,
        margin=margin,
        effect=excess,
        effect_threshold=claim["thresholds"]["max_excess_over_best"],
    )
    few = _too_few(claim, *stats.sample_sizes(sa, sb, test))
    if few:
        comp.update(verdict=INCONCLUSIVE, reason=few)
    elif p_yes <= alpha:
        comp.update(verdict=REPRODUCED, reason=f"within the margin of the best ({best}): p = {p_yes:.3g}")
    elif p_no <= alpha:
        comp.update(
            verdict=NOT_REPRODUCED, reason=f"worse than the best ({best}) beyond the margin: p = {p_no:.3g}"
        )
    else:
        comp.update(verdict=INCONCLUSIVE, reason=f"not significant either way (p = {p_yes:.3g}, {p_no:.3g})")
    return [*missing, comp]


def check_similar(claim: Mapping[str, Any], exp_runs: Mapping[str, Sequence[Run]]) -> list[dict]:
    """Two one-sided tests: the target is within a relative margin of each other setting."""
    a = claim["target"]
    comps = []
    for b in claim["others"]:
        comp, sa, sb = _pair_samples(claim, exp_runs, a, b)
        if sa is None:
            comps.append(comp)
            continue
        test, alpha = claim["test"], claim["alpha"]
        pooled = float(np.mean([*sa.values(), *sb.values()]))
        margin = claim["thresholds"]["max_relative_difference"] * abs(pooled)
        p_upper = stats.compare(sa, sb, "less", test, shift=margin)
        p_lower = stats.compare(sa, sb, "greater", test, shift=-margin)
        p_diff = stats.compare(sa, sb, "two-sided", test)
        gap = abs(comp["mean_a"] - comp["mean_b"])
        rel = gap / abs(pooled) if pooled else (0.0 if gap == 0 else math.inf)
        comp.update(
            test=test,
            p_value=max(p_upper, p_lower),
            p_value_opposite=p_diff,
            margin=margin,
            effect=rel,
            effect_threshold=claim["thresholds"]["max_relative_difference"],
        )
        few = _too_few(claim, *stats.sample_sizes(sa, sb, test))
        if few:
            comp.update(verdict=INCONCLUSIVE, reason=few)
        elif max(p_upper, p_lower) <= alpha:
            comp.update(
                verdict=REPRODUCED,
                reason=f"equivalent within the margin: TOST p = {max(p_upper, p_lower):.3g}",
            )
        elif gap > margin and p_diff <= alpha:
            comp.update(verdict=NOT_REPRODUCED, reason=f"different beyond the margin: p = {p_diff:.3g}")
        else:
            comp.update(
                verdict=INCONCLUSIVE, reason=f"equivalence not shown: TOST p = {max(p_upper, p_lower):.3g}"
            )
        comps.append(comp)
    return comps


def check_decreasing(claim: Mapping[str, Any], exp_runs: Mapping[str, Sequence[Run]]) -> list[dict]:
    """The statistic of each run falls along checkpoints (fractions of the horizon): Page's L test."""
    a = claim["target"]
    runs = sorted(exp_runs[a], key=lambda r: r.seed)
    n = horizon(runs)
    rounds = list(dict.fromkeys(max(1, round(f * n)) for f in claim["checkpoints"]))
    matrix = np.array([[statistic(r, claim["statistic"], t) for t in rounds] for r in runs])
    first, last = float(matrix[:, 0].mean()), float(matrix[:, -1].mean())
    decrease = (first - last) / abs(first) if first else 0.0
    comp = {
        "a": a,
        "b": "-",
        "rounds": rounds,
        "n_a": len(runs),
        "mean_by_round": {str(t): float(v) for t, v in zip(rounds, matrix.mean(axis=0), strict=True)},
        "values_by_seed": {str(r.seed): row.tolist() for r, row in zip(runs, matrix, strict=True)},
        "test": "page",
        "effect": decrease,
        "effect_threshold": claim["thresholds"]["min_relative_decrease"],
    }
    alpha, threshold = claim["alpha"], claim["thresholds"]["min_relative_decrease"]
    if len(rounds) < 3:
        comp.update(verdict=NOT_EVALUATED, reason=f"the horizon {n} gives fewer than 3 distinct checkpoints")
        return [comp]
    few = _too_few(claim, len(runs), len(runs), len(rounds))
    if few:
        comp.update(verdict=INCONCLUSIVE, reason=few)
        return [comp]
    p_dec, p_inc = stats.trend(matrix, decreasing=True), stats.trend(matrix, decreasing=False)
    comp.update(p_value=p_dec, p_value_opposite=p_inc)
    if p_dec <= alpha and decrease >= threshold:
        comp.update(
            verdict=REPRODUCED,
            reason=f"decreasing trend p = {p_dec:.3g}, fall {decrease:.3g} >= {threshold:g}",
        )
    elif p_inc <= alpha:
        comp.update(verdict=NOT_REPRODUCED, reason=f"increasing trend: p = {p_inc:.3g} <= {alpha:g}")
    elif p_dec <= alpha:
        comp.update(verdict=INCONCLUSIVE, reason=f"fall too small: {decrease:.3g} < {threshold:g}")
    else:
        comp.update(verdict=INCONCLUSIVE, reason=f"no significant trend: p = {p_dec:.3g}")
    return [comp]


CHECKS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Sequence[Run]]], list[dict]]] = {
    "lowest": check_lowest,
    "greater": check_greater,
    "best_parameter": check_best_parameter,
    "among_fastest": check_among_fastest,
    "similar": check_similar,
    "decreasing": check_decreasing,
}


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


# ---------------------------------------------------------------- sensitivity to implementation choices

#: claim keys that name settings (substituted under a variant)
SETTING_KEYS = ("target", "claimed", "others")


def substitute_settings(claim: Mapping[str, Any], substitute: Mapping[str, str]) -> dict[str, Any] | None:
    """The claim with the variant's settings in place of the default's, or None if it names none of them."""
    named = [claim.get("target")] + list(claim.get("claimed", [])) + list(claim.get("others", []))
    if not set(named) & set(substitute):
        return None
    variant = copy.deepcopy(dict(claim))
    for key in SETTING_KEYS:
        if key == "target" and key in variant:
            variant[key] = substitute.get(variant[key], variant[key])
        elif key in variant:
            variant[key] = [substitute.get(s, s) for s in variant[key]]
    return variant


def flips(default: str, variant: str) -> bool:
    """A verdict flips when both readings were evaluated and disagree."""
    return NOT_EVALUATED not in (default, variant) and default != variant


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


# ---------------------------------------------------------------- context


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
