"""The runs a claim reads and the kinds of check: one function per kind, each comparing the
settings' per-seed statistics and giving every comparison a verdict."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vhct.pipeline.tables import read_sidecar
from vhct.reporting import stats
from vhct.reporting.audit.verdicts import INCONCLUSIVE, NOT_EVALUATED, NOT_REPRODUCED, REPRODUCED, ladder

#: columns of a run table (``vhct.pipeline.tables.run_table_columns``) the audit reads
AUDITED_COLUMNS = ("t", "cumulative_regret", "depth", "step_seconds")


#: relative tolerance of the cross-check of per-seed finals against the aggregate table
AGGREGATE_RTOL = 1e-8


@dataclass(frozen=True)
class Run:
    """One run (one seed) of one setting: its per-round table (columns ``AUDITED_COLUMNS``)."""

    seed: int
    table: pd.DataFrame

    @property
    def horizon(self) -> int:
        return len(self.table)


#: experiment -> setting -> runs
Runs = Mapping[str, Mapping[str, Sequence[Run]]]


def read_runs(run_paths: Mapping[str, Mapping[str, Sequence[Path | str]]]) -> dict[str, dict[str, list[Run]]]:
    """Read run tables (``.csv.gz``) and the seed from their JSON sidecars, by experiment and setting.

    The tables were checked when they were aggregated (``vhct.pipeline.tables.read_run``), and the
    audit cross-checks its numbers against the aggregates (``check_aggregates``).
    """
    runs: dict[str, dict[str, list[Run]]] = {}
    for experiment, by_setting in run_paths.items():
        runs[experiment] = {}
        for setting, paths in by_setting.items():
            runs[experiment][setting] = []
            for path in paths:
                table = pd.read_csv(path, usecols=lambda c: c in AUDITED_COLUMNS)
                missing = set(AUDITED_COLUMNS) - set(table.columns)
                if missing:
                    raise ValueError(f"run table {path} lacks columns {sorted(missing)}")
                seed = int(read_sidecar(path)["seed"])
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
    rungs = [
        (
            p_yes <= alpha and value >= threshold,
            REPRODUCED,
            f"p = {p_yes:.3g} <= {alpha:g}, effect {value:.3g} >= {threshold:g}",
        ),
        (
            p_no <= alpha / n_tests,
            NOT_REPRODUCED,
            f"opposite direction significant: p = {p_no:.3g} <= {alpha:g}/{n_tests}",
        ),
        (p_yes <= alpha, INCONCLUSIVE, f"effect too small: {value:.3g} < {threshold:g}"),
    ]
    comp.update(ladder(few, rungs, f"not significant: p = {p_yes:.3g} > {alpha:g}"))
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
    rungs = [
        (p_yes <= alpha, REPRODUCED, f"within the margin of the best ({best}): p = {p_yes:.3g}"),
        (p_no <= alpha, NOT_REPRODUCED, f"worse than the best ({best}) beyond the margin: p = {p_no:.3g}"),
    ]
    comp.update(ladder(few, rungs, f"not significant either way (p = {p_yes:.3g}, {p_no:.3g})"))
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
        p_tost = max(p_upper, p_lower)
        rungs = [
            (p_tost <= alpha, REPRODUCED, f"equivalent within the margin: TOST p = {p_tost:.3g}"),
            (
                gap > margin and p_diff <= alpha,
                NOT_REPRODUCED,
                f"different beyond the margin: p = {p_diff:.3g}",
            ),
        ]
        comp.update(ladder(few, rungs, f"equivalence not shown: TOST p = {p_tost:.3g}"))
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
    rungs = [
        (
            p_dec <= alpha and decrease >= threshold,
            REPRODUCED,
            f"decreasing trend p = {p_dec:.3g}, fall {decrease:.3g} >= {threshold:g}",
        ),
        (p_inc <= alpha, NOT_REPRODUCED, f"increasing trend: p = {p_inc:.3g} <= {alpha:g}"),
        (p_dec <= alpha, INCONCLUSIVE, f"fall too small: {decrease:.3g} < {threshold:g}"),
    ]
    comp.update(ladder(None, rungs, f"no significant trend: p = {p_dec:.3g}"))
    return [comp]


CHECKS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Sequence[Run]]], list[dict]]] = {
    "lowest": check_lowest,
    "greater": check_greater,
    "best_parameter": check_best_parameter,
    "among_fastest": check_among_fastest,
    "similar": check_similar,
    "decreasing": check_decreasing,
}
