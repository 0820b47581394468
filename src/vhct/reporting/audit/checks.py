"""The runs a claim reads and the kinds of check: one function per kind, each turning the settings'
per-seed statistics into typed comparisons (``records.Comparison``) with their two one-sided p-values.

Every kind states two regions of the ratio of means (or of a slope): the claimed one and the
refuting one, each with its margin. A check only computes the tests; the verdict of every
comparison is decided at the claim level (``vhct.reporting.audit.verdicts.decide``), where the
refuting tests of all the claim's experiments are Holm-corrected together.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vhct.pipeline.aggregate import best_observed, cumulative_regret_vs
from vhct.pipeline.stale import expected_specs
from vhct.pipeline.tables import read_runs as read_setting_runs
from vhct.reporting import stats
from vhct.reporting.audit.records import Comparison
from vhct.reporting.audit.verdicts import INCONCLUSIVE, NOT_EVALUATED

#: columns of a run table (``vhct.pipeline.tables.run_table_columns``) the audit reads (``value``:
#: for the regret against the best value observed, where f* is unknown)
AUDITED_COLUMNS = ("t", "value", "cumulative_regret", "depth", "step_seconds", "optimizer_seconds")
#: statistics that are regrets (rebased onto the best value observed where f* is unknown)
REGRET_STATISTICS = ("cumulative_regret", "average_regret", "normalized_regret")
#: relative tolerance of the cross-check of per-seed finals against the aggregate table
AGGREGATE_RTOL = 1e-8
#: a cost statistic of the optimizer's own time -> the whole round's, whose means a comparison of
#: it carries beside it (``Comparison.total_a``/``total_b``): what a round costs with the objective
TOTAL_BESIDE = {"optimizer_seconds_per_round": "seconds_per_round"}


@dataclass(frozen=True)
class Run:
    """One run (one seed) of one setting: its per-round table (columns ``AUDITED_COLUMNS``).

    ``f_star`` is the objective's maximum when known (the table's regret is against it); None for
    real data, whose table's regret is against 1 and which the audit rebases (:func:`rebase`).
    Given explicitly: read from the run's record (``vhct.pipeline.records.RunRecord.f_star``).
    """

    seed: int
    table: pd.DataFrame
    f_star: float | None

    @property
    def horizon(self) -> int:
        return len(self.table)


#: experiment -> setting -> runs
Runs = Mapping[str, Mapping[str, Sequence[Run]]]


def read_runs(
    run_paths: Mapping[str, Mapping[str, Sequence[Path | str]]], config: Mapping[str, Any]
) -> dict[str, dict[str, list[Run]]]:
    """Run tables (``.csv.gz``) with the seed and f* of their records, by experiment and setting.

    Read by the pipeline's one reader (``vhct.pipeline.tables.read_runs``): each table is checked
    against its record, and each record against what ``config`` asks of the run (a run of another
    config fails, naming the file and the first field that differs).
    """
    runs: dict[str, dict[str, list[Run]]] = {}
    for experiment, by_setting in run_paths.items():
        specs = expected_specs(config, experiment, by_setting)
        tables, records = read_setting_runs(by_setting, AUDITED_COLUMNS, specs=specs)
        runs[experiment] = {
            s: [Run(r.seed, t, r.f_star) for t, r in zip(tables[s], records[s], strict=True)]
            for s in by_setting
        }
    return runs


def check_aggregates(runs: Runs, final_paths: Mapping[str, Path | str]) -> None:
    """Require the per-seed final regrets to average to the aggregate table's ``final_mean``."""
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


def rebase(exp_runs: Mapping[str, Sequence[Run]]) -> tuple[dict[str, list[Run]], str]:
    """Regret against the best value observed in any run, where f* is unknown (real data).

    The paper's regret on real data is against 1, which halves relative effects; the audit tests
    against the best value any run of the experiment observed, as the aggregates' ``*_vs_best``
    columns do (one definition: ``vhct.pipeline.aggregate.best_observed`` and
    ``cumulative_regret_vs``), and says so. Runs with an exact f* are returned unchanged: their
    tables' regret is against it.
    """
    all_runs = [r for runs in exp_runs.values() for r in runs]
    known = {r.f_star is not None for r in all_runs}
    if len(known) > 1:
        raise ValueError("the runs of one experiment disagree on whether f* is known")
    if not all_runs or known == {True}:
        return {s: list(v) for s, v in exp_runs.items()}, ""
    best = best_observed({s: [r.table for r in runs] for s, runs in exp_runs.items()})
    out = {}
    for setting, runs in exp_runs.items():
        out[setting] = []
        for r in runs:
            table = r.table.copy()
            table["cumulative_regret"] = cumulative_regret_vs([r.table], best, setting)[0]
            out[setting].append(Run(r.seed, table, r.f_star))
    return out, f"regret against the best value observed in any run, {best:.4g} (not 1)"


def statistic(run: Run, name: str, at_round: int, scale: float | None = None) -> float:
    """The named statistic of one run at round ``at_round`` (1-based); nan if undefined for the run.

    ``normalized_regret`` is ``R_t / (t * scale)`` with ``scale = f* - mean of f over the domain``,
    the per-round regret of uniform random search: 1 means no better than random search.
    ``optimizer_seconds_per_round`` is the optimizer's own mean wall time of a round (ask + tell),
    ``seconds_per_round`` the whole round's (ask + evaluate + tell), both over rounds 1..at_round.
    """
    if not 1 <= at_round <= run.horizon:
        raise ValueError(f"round {at_round} is outside the run's rounds 1..{run.horizon}")
    head = run.table.iloc[:at_round]
    if name == "cumulative_regret":
        return float(head["cumulative_regret"].iloc[-1])
    if name == "average_regret":
        return float(head["cumulative_regret"].iloc[-1]) / at_round
    if name == "normalized_regret":
        if not scale:
            return math.nan
        return float(head["cumulative_regret"].iloc[-1]) / (at_round * scale)
    if name == "max_depth":
        depth = head["depth"].to_numpy(dtype=float)
        return math.nan if np.all(np.isnan(depth)) else float(np.nanmax(depth))
    if name == "seconds_per_round":
        return float(head["step_seconds"].mean())
    if name == "optimizer_seconds_per_round":
        return float(head["optimizer_seconds"].mean())
    raise ValueError(f"unknown statistic {name!r}")


def samples(runs: Sequence[Run], name: str, at_round: int, scale: float | None = None) -> dict[int, float]:
    """Seed -> statistic at ``at_round``."""
    return {run.seed: statistic(run, name, at_round, scale) for run in runs}


def horizon(runs: Sequence[Run]) -> int:
    """Rounds every run of a setting has."""
    return min(run.horizon for run in runs)


@dataclass(frozen=True)
class Region:
    """A one-sided region of ``mean_a`` against ``factor * mean_b``: ``less`` or ``greater``."""

    alternative: str
    factor: float

    def text(self, what: str = "mean_a", of: str = "mean_b") -> str:
        sign = "<" if self.alternative == "less" else ">"
        return f"{what} {sign} {self.factor:.4g} {of}"


def regions(claim: Mapping[str, Any]) -> tuple[Region, Region] | tuple[Region, Region, Region, Region]:
    """The claimed and refuting regions of a pairwise kind, from the claim's thresholds."""
    th, kind = claim["thresholds"], claim["kind"]
    if kind == "lowest":
        m = th["min_relative_effect"]
        return Region("less", 1.0 - m), Region("greater", 1.0 / (1.0 - m))
    if kind in ("among_fastest", "best_parameter"):
        d = th["max_excess_over_best"]
        return Region("less", 1.0 + d), Region("greater", 1.0 + d)
    if kind == "greater":
        r = th["min_ratio"]
        return Region("greater", r), Region("less", th.get("refuted_below", r))
    if kind == "similar":
        lo, hi = th["lower_ratio"], th["upper_ratio"]
        return Region("greater", lo), Region("less", hi), Region("less", lo), Region("greater", hi)
    raise ValueError(f"kind {kind!r} has no ratio regions")


def _too_few(claim: Mapping[str, Any], n_a: int, n_b: int) -> str | None:
    if min(n_a, n_b) < claim["min_seeds"]:
        return f"too few seeds (n = {n_a} vs {n_b}; the claim needs at least {claim['min_seeds']})"
    return None


def _at_round(claim: Mapping[str, Any], h_a: int, h_b: int, full: int) -> int | str:
    """The round of a comparison, or why there is none.

    ``final``: the experiment's last round, which both settings must have run (a setting that
    stopped early is left out of a claim about the final round); ``common``: the last round both
    ran (labelled when earlier than the experiment's); an integer: that round.
    """
    at = claim["round"]
    if at == "final":
        short = [h for h in (h_a, h_b) if h < full]
        if short:
            return f"stopped at t = {min(short)} of {full}: not compared at the final round"
        return full
    common = min(h_a, h_b)
    if at == "common":
        return common
    if at > common:
        return f"round {at} is beyond the {common} rounds both settings ran"
    return int(at)


def pair(
    claim: Mapping[str, Any],
    experiment: str,
    runs_a: Sequence[Run] | None,
    runs_b: Sequence[Run] | None,
    a: str,
    b: str,
    full: int,
    scales: tuple[float | None, float | None] = (None, None),
    reference: str = "",
) -> Comparison:
    """Setting ``a``'s per-seed statistic against ``b``'s on the claim's ratio regions."""
    for name, runs in ((a, runs_a), (b, runs_b)):
        if runs is None:
            return Comparison(
                experiment, a, b, verdict=NOT_EVALUATED, reason=f"setting {name} not run in this config"
            )
    at = _at_round(claim, horizon(runs_a), horizon(runs_b), full)
    if isinstance(at, str):
        return Comparison(experiment, a, b, verdict=NOT_EVALUATED, reason=at)
    sa = samples(runs_a, claim["statistic"], at, scales[0])
    sb = samples(runs_b, claim["statistic"], at, scales[1])
    for name, s in ((a, sa), (b, sb)):
        if any(math.isnan(v) for v in s.values()):
            return Comparison(
                experiment,
                a,
                b,
                verdict=NOT_EVALUATED,
                reason=f"{claim['statistic']} is undefined for {name}",
            )
    comp = compare_samples(claim, experiment, a, b, sa, sb, at, full, reference)
    total = TOTAL_BESIDE.get(claim["statistic"])
    if total is None:
        return comp
    mean_total = [float(np.mean(list(samples(runs, total, at).values()))) for runs in (runs_a, runs_b)]
    return dataclasses.replace(comp, total_a=mean_total[0], total_b=mean_total[1])


def compare_samples(
    claim: Mapping[str, Any],
    experiment: str,
    a: str,
    b: str,
    sa: Mapping[int, float],
    sb: Mapping[int, float],
    at: int | None = None,
    full: int | None = None,
    reference: str = "",
) -> Comparison:
    """The comparison of two per-seed samples on the claim's ratio regions (checks and calibration)."""
    da, db = stats.describe(sa), stats.describe(sb)
    base = Comparison(
        experiment, a, b, round=at, horizon=full, n_a=da["n"], n_b=db["n"], mean_a=da["mean"],
        mean_b=db["mean"], std_a=da["std"], std_b=db["std"], effect=stats.ratio(da["mean"], db["mean"]),
        effect_name="ratio of means", reference=reference,
        values_a={str(k): v for k, v in sorted(sa.items())},
        values_b={str(k): v for k, v in sorted(sb.items())},
    )  # fmt: skip
    return test_regions(claim, base, sa, sb)


def test_regions(claim: Mapping[str, Any], base: Comparison, sa, sb) -> Comparison:
    """The claimed and refuting Welch tests of a pairwise comparison (all claimed tests must hold)."""
    rs = regions(claim)
    half = len(rs) // 2
    claimed, refuting = rs[:half], rs[half:]
    few = _too_few(claim, base.n_a, base.n_b)
    text_c = " and ".join(r.text() for r in claimed)
    text_r = " or ".join(r.text() for r in refuting)
    if few:
        return dataclasses.replace(base, claimed=text_c, refuted=text_r, verdict=INCONCLUSIVE, reason=few)
    p_c = max(stats.ratio_test(sa, sb, r.factor, r.alternative) for r in claimed)
    # two refuting regions (similar): Bonferroni within the comparison, then Holm across the claim
    p_r = min(1.0, len(refuting) * min(stats.ratio_test(sa, sb, r.factor, r.alternative) for r in refuting))
    return dataclasses.replace(base, claimed=text_c, refuted=text_r, p_claimed=p_c, p_refuted=p_r)


def _full(exp_runs: Mapping[str, Sequence[Run]]) -> int:
    """The experiment's horizon: the most rounds any of its settings ran."""
    return max(horizon(r) for r in exp_runs.values())


def check_against_others(claim, experiment, exp_runs, reference="") -> list[Comparison]:
    """lowest, greater, among_fastest, similar: the target against each other setting."""
    a, full = claim["target"], _full(exp_runs)
    return [pair(claim, experiment, exp_runs.get(a), exp_runs.get(b), a, b, full, reference=reference)
            for b in claim["others"]]  # fmt: skip


def check_best_parameter(claim, experiment, exp_runs, reference="") -> list[Comparison]:
    """Each claimed setting against each other setting (non-inferiority: "a good choice")."""
    full = _full(exp_runs)
    return [
        pair(claim, experiment, exp_runs.get(c), exp_runs.get(o), c, o, full, reference=reference)
        for c in claim["claimed"]
        for o in claim["others"]
    ]


def check_sublinear(claim, experiment, exp_runs, reference="") -> list[Comparison]:
    """Per seed, the slope of log R_t against log t at the checkpoints; its mean against the bounds."""
    a = claim["target"]
    runs = sorted(exp_runs[a], key=lambda r: r.seed)
    n = horizon(runs)
    rounds = list(dict.fromkeys(max(1, round(f * n)) for f in claim["checkpoints"]))
    base = Comparison(experiment, a, "-", round=n, horizon=_full(exp_runs), reference=reference)
    if len(rounds) < 2:
        return [
            dataclasses.replace(base, verdict=NOT_EVALUATED, reason=f"horizon {n}: fewer than 2 checkpoints")
        ]
    matrix = np.array([[statistic(r, "cumulative_regret", t) for t in rounds] for r in runs])
    slopes = stats.log_slopes(matrix, rounds)
    sample = {r.seed: float(v) for r, v in zip(runs, slopes, strict=True) if not np.isnan(v)}
    return [slope_comparison(claim, base, sample)]


def slope_comparison(claim: Mapping[str, Any], base: Comparison, sample: Mapping[int, float]) -> Comparison:
    """The per-seed slopes' mean against the claim's bounds (one-sample t-tests)."""
    th = claim["thresholds"]
    up, down = th["max_slope"], th.get("refuted_above", 1.0)
    d = stats.describe(sample)
    comp = dataclasses.replace(
        base, claimed=f"mean slope < {up:g}", refuted=f"mean slope > {down:g}", n_a=d["n"], mean_a=d["mean"],
        std_a=d["std"], effect=d["mean"], effect_name="mean slope of log R_t on log t",
        values_a={str(k): v for k, v in sample.items()},
    )  # fmt: skip
    few = _too_few(claim, d["n"], d["n"])
    if few:
        return dataclasses.replace(comp, verdict=INCONCLUSIVE, reason=few)
    return dataclasses.replace(
        comp,
        p_claimed=stats.mean_test(sample, up, "less"),
        p_refuted=stats.mean_test(sample, down, "greater"),
    )


CheckFunction = Callable[..., list[Comparison]]

CHECKS: dict[str, CheckFunction] = {
    "lowest": check_against_others,
    "greater": check_against_others,
    "among_fastest": check_against_others,
    "similar": check_against_others,
    "best_parameter": check_best_parameter,
    "sublinear": check_sublinear,
}


def check_contrast(claim, pair_name: str, runs_1, runs_2) -> list[Comparison]:
    """The ratio target/other on the first experiment against the same ratio on the second."""
    a, b = claim["target"], claim["others"][0]
    first, second = pair_name.split(" / ")
    direction = claim["direction"]
    c = claim["thresholds"]["min_factor"]
    claimed_f = 1.0 / c if direction == "less" else c
    refuted_f = c if direction == "less" else 1.0 / c
    sign, osign = ("<", ">") if direction == "less" else (">", "<")
    label_c = f"ratio on {first} {sign} {claimed_f:.4g} x ratio on {second}"
    label_r = f"ratio on {first} {osign} {refuted_f:.4g} x ratio on {second}"
    base = Comparison(
        pair_name, a, b, claimed=label_c, refuted=label_r, effect_name=f"ratio of ratios {a}/{b}"
    )
    got = []
    for runs in (runs_1, runs_2):
        for s in (a, b):
            if s not in runs:
                return [dataclasses.replace(base, verdict=NOT_EVALUATED, reason=f"setting {s} not run")]
        full = _full(runs)
        if min(horizon(runs[a]), horizon(runs[b])) < full:
            return [dataclasses.replace(base, verdict=NOT_EVALUATED, reason="a setting stopped early")]
        got.append([stats.values(samples(runs[s], claim["statistic"], full)) for s in (a, b)])
    (a1, b1), (a2, b2) = got
    return [contrast_comparison(claim, base, a1, b1, a2, b2)]


def contrast_comparison(claim: Mapping[str, Any], base: Comparison, a1, b1, a2, b2) -> Comparison:
    """Ratio a1/b1 against ratio a2/b2 on the claim's direction and margin (delta method)."""
    direction, c = claim["direction"], claim["thresholds"]["min_factor"]
    claimed_f = 1.0 / c if direction == "less" else c
    refuted_f = c if direction == "less" else 1.0 / c
    opposite = "greater" if direction == "less" else "less"
    a1, b1, a2, b2 = (stats.values(x) for x in (a1, b1, a2, b2))
    r1, r2 = a1.mean() / b1.mean(), a2.mean() / b2.mean()
    comp = dataclasses.replace(
        base, n_a=int(min(a1.size, b1.size)), n_b=int(min(a2.size, b2.size)), mean_a=float(r1),
        mean_b=float(r2), effect=float(r1 / r2),
    )  # fmt: skip
    few = _too_few(claim, comp.n_a, comp.n_b)
    if few:
        return dataclasses.replace(comp, verdict=INCONCLUSIVE, reason=few)
    return dataclasses.replace(
        comp,
        p_claimed=stats.contrast_test(a1, b1, a2, b2, direction, claimed_f),
        p_refuted=stats.contrast_test(a1, b1, a2, b2, opposite, refuted_f),
    )


def check_easier(claim, pair_name: str, runs_1, runs_2, scales: tuple) -> list[Comparison]:
    """Each setting's normalized regret on the first experiment against the second's (lowest rule)."""
    first, second = pair_name.split(" / ")
    out = []
    lowest = {**claim, "kind": "lowest"}
    for s in claim["others"]:
        r1, r2 = runs_1.get(s), runs_2.get(s)
        if r1 is None or r2 is None:
            out.append(
                Comparison(pair_name, s, s, verdict=NOT_EVALUATED, reason=f"setting {s} not run in both")
            )
            continue
        # both read at the shorter horizon: per-round regret falls with t, so rounds must match
        full = min(horizon(r1), horizon(r2))
        comp = pair({**lowest, "round": "common"}, pair_name, r1, r2, s, s, full, scales)
        out.append(dataclasses.replace(comp, a=f"{s} on {first}", b=f"{s} on {second}"))
    return out
