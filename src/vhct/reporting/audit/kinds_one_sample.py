"""The kinds of claim whose evidence is one per-seed quantity per setting, tested against constants
(one-sample): the slope of log R_t on log t (``sublinear``), its paired difference across two
experiments (``same_rate``), a share of rounds (``share_at_least``) and a run's wall time
(``wall_time``). Each is one class and one row of ``CLAIM_KINDS``, as in :mod:`.kinds`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from vhct.reporting import stats
from vhct.reporting.audit.checks import Region, comparison_round, slope_comparison
from vhct.reporting.audit.claims_model import Claim, key_error
from vhct.reporting.audit.effects import per_threshold_name
from vhct.reporting.audit.kinds import ClaimKind, Draw, Intervals, full_horizon
from vhct.reporting.audit.records import Comparison
from vhct.reporting.audit.runs import GUARANTEE_STATISTICS, Run, horizon, samples, statistic
from vhct.reporting.audit.statistics import STATISTICS, said
from vhct.reporting.audit.verdicts import NOT_EVALUATED


class Sublinear(ClaimKind):
    """Per seed, the slope of log R_t on log t at the checkpoints; its mean below ``max_slope``."""

    name = "sublinear"
    keys = ("target", "checkpoints")
    thresholds = ("max_slope",)
    additive = True
    null = 1.0
    example = {"target": "A", "checkpoints": [0.25, 1.0], "thresholds": {"max_slope": 0.9}}

    def validate(self, claim: Claim) -> None:
        if claim.others:
            raise key_error(("others",), "a sublinear check reads only its target")

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        th = claim.thresholds  # refuted above refuted_above, else above 1 (linear regret)
        refuting = 1.0 if th.refuted_above is None else th.refuted_above
        return (Region("less", th.max_slope),), (Region("greater", refuting),)

    def check(self, claim, unit, runs, scales, reference):  # type: ignore[no-untyped-def]
        a = claim.target
        seeds = sorted(runs[0][a], key=lambda r: r.seed)
        n = horizon(seeds)
        rounds = list(dict.fromkeys(max(1, round(f * n)) for f in claim.checkpoints))
        base = Comparison(unit, a, "-", round=n, horizon=full_horizon(runs[0]), reference=reference)
        if len(rounds) < 2:
            why = f"horizon {n}: fewer than 2 checkpoints"
            return [dataclasses.replace(base, verdict=NOT_EVALUATED, reason=why)]
        slopes = _slopes(seeds, rounds)
        sample = {r.seed: float(v) for r, v in zip(seeds, slopes, strict=True) if not np.isnan(v)}
        return [slope_comparison(claim, base, sample)]

    def made_up(self, claim: Claim, name: str, truth: float, draw: Draw, n: int) -> Comparison:
        slopes = truth + SLOPE_SD * (draw(1.0, n, True, 1.0) - 1.0)  # a unit-mean draw's deviations
        return slope_comparison(claim, Comparison(name, "A", "-"), dict(enumerate(slopes.tolist())), False)

    def from_values(self, claim: Claim, comp: Comparison) -> Comparison:
        base = Comparison(comp.experiment, comp.a, "-", round=comp.round, horizon=comp.horizon)
        return slope_comparison(claim, base, comp.values_a, False)


#: standard deviation of made-up per-seed slopes of log R_t on log t (the calibration's)
SLOPE_SD = 0.03


class ShareAtLeast(ClaimKind):
    """Per seed, a share of rounds (a statistic in [0, 1], such as the rounds where the selection
    guarantee holds); its mean over seeds at least ``min_share`` (one-sample, against an absolute level),
    refuted below ``refuted_below`` (default ``min_share``)."""

    name = "share_at_least"
    keys = ("target",)
    thresholds = ("min_share",)
    statistics = GUARANTEE_STATISTICS
    additive = True
    example = {"target": "A", "thresholds": {"min_share": 0.5}}

    def validate(self, claim: Claim) -> None:
        if claim.others:
            raise key_error(("others",), "a share_at_least check reads only its target")
        th = claim.thresholds
        if th.refuted_below is not None and th.refuted_below > th.min_share:
            raise key_error(("thresholds",), "refuted_below exceeds min_share")

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        th = claim.thresholds
        refuting = th.min_share if th.refuted_below is None else th.refuted_below
        return (Region("greater", th.min_share),), (Region("less", refuting),)

    def check(self, claim, unit, runs, scales, reference):  # type: ignore[no-untyped-def]
        a, full = claim.target, full_horizon(runs[0])
        seeds = runs[0][a]
        base = Comparison(unit, a, "-", horizon=full)
        at = comparison_round(claim, horizon(seeds), horizon(seeds), full)
        if isinstance(at, str):
            return [dataclasses.replace(base, verdict=NOT_EVALUATED, reason=at)]
        sample = samples(seeds, claim.statistic, at)
        if any(math.isnan(v) for v in sample.values()):
            why = f"{claim.statistic} is undefined for {a}"
            return [dataclasses.replace(base, round=at, verdict=NOT_EVALUATED, reason=why)]
        return [self._compare(claim, dataclasses.replace(base, round=at), sample, True)]

    def from_values(self, claim: Claim, comp: Comparison) -> Comparison:
        base = Comparison(comp.experiment, comp.a, "-", round=comp.round, horizon=comp.horizon)
        return self._compare(claim, base, comp.values_a, False)

    def made_up(self, claim: Claim, name: str, truth: float, draw: Draw, n: int) -> Comparison:
        shares = truth + SHARE_SD * (draw(1.0, n, True, 1.0) - 1.0)  # a unit-mean draw's deviations
        return self._compare(claim, Comparison(name, "A", "-"), dict(enumerate(shares.tolist())), False)

    @staticmethod
    def _compare(claim: Claim, base: Comparison, sample: Mapping[int, float], interval: bool) -> Comparison:
        name = f"mean {said(claim.statistic)}"
        return slope_comparison(claim, base, sample, interval, what="share", effect_name=name)


#: standard deviation of made-up per-seed shares (the calibration's)
SHARE_SD = 0.02


class SameRate(ClaimKind):
    """Each setting's rate, the per-seed slope of log R_t on log t at the checkpoints, is the same on
    the first experiment of a pair as on the second within +-``max_slope_difference`` (equivalence by
    two one-sided tests on the seeds' paired differences: the pair's experiments run the same seeds)."""

    name = "same_rate"
    keys = ("others", "pairs", "checkpoints")
    thresholds = ("max_slope_difference",)
    statistics = ("cumulative_regret",)
    over_pairs = True
    additive = True
    example = {"others": ["A"], "checkpoints": [0.5, 1.0], "thresholds": {"max_slope_difference": 0.25}}

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        d = claim.thresholds.max_slope_difference
        return (Region("greater", -d), Region("less", d)), (Region("less", -d), Region("greater", d))

    def intervals(self, claim: Claim) -> tuple[Intervals, Intervals]:
        d = claim.thresholds.max_slope_difference
        return [(-d, d)], [(-math.inf, -d), (d, math.inf)]

    def check(self, claim, unit, runs, scales, reference):  # type: ignore[no-untyped-def]
        first, second = unit.split(" / ")
        out = []
        for s in claim.others:
            base = Comparison(unit, f"{s} on {first}", f"{s} on {second}", reference=reference)
            r1, r2 = runs[0].get(s), runs[1].get(s)
            if r1 is None or r2 is None:
                why = f"setting {s} not run in both"
                out.append(dataclasses.replace(base, verdict=NOT_EVALUATED, reason=why))
                continue
            n = min(horizon(r1), horizon(r2))  # both read at the same rounds
            rounds = list(dict.fromkeys(max(1, round(f * n)) for f in claim.checkpoints))
            if len(rounds) < 2:
                why = f"horizon {n}: fewer than 2 checkpoints"
                out.append(dataclasses.replace(base, verdict=NOT_EVALUATED, reason=why))
                continue
            slopes = [
                {r.seed: float(v) for r, v in zip(rs, _slopes(rs, rounds), strict=True) if not np.isnan(v)}
                for rs in (r1, r2)
            ]
            paired = sorted(set(slopes[0]) & set(slopes[1]))  # the seeds both experiments ran
            sample = {seed: slopes[0][seed] - slopes[1][seed] for seed in paired}
            base = dataclasses.replace(base, round=n, horizon=n)
            name = f"mean slope difference ({first} - {second}) of log R_t on log t"
            out.append(slope_comparison(claim, base, sample, what="slope difference", effect_name=name))
        return out

    def from_values(self, claim: Claim, comp: Comparison) -> Comparison:
        base = Comparison(comp.experiment, comp.a, comp.b, round=comp.round, horizon=comp.horizon)
        return slope_comparison(claim, base, comp.values_a, False, "slope difference", comp.effect_name)

    def made_up(self, claim: Claim, name: str, truth: float, draw: Draw, n: int) -> Comparison:
        differences = truth + SLOPE_SD * (draw(1.0, n, True, 1.0) - 1.0)  # a unit-mean draw's deviations
        base = Comparison(f"{name} / {name}2", "A", "A")
        sample = dict(enumerate(differences.tolist()))
        return slope_comparison(claim, base, sample, False, "slope difference")


def _slopes(runs: Sequence[Run], rounds: list[int]) -> np.ndarray:
    """Per run, the slope of log R_t on log t at ``rounds`` (nan where R_t is not positive)."""
    matrix = np.array([[statistic(r, "cumulative_regret", t) for t in rounds] for r in runs])
    return stats.log_slopes(matrix, rounds)


#: the share of a stopped run's last rounds whose mean cost per round extends it to the horizon
EXTRAPOLATED_SHARE = 0.1


def seconds_to(run: Run, column: str, full: int) -> float:
    """The run's wall seconds (``column``: ``step_seconds``, the whole rounds, or ``optimizer_seconds``)
    to round ``full``: measured to its last round, then, if it stopped earlier, each further round at
    the mean cost of its last ``EXTRAPOLATED_SHARE`` of rounds. A lower bound where the cost per round
    grows with the rounds (a GP's), exact for a run that reached ``full``."""
    spent = np.asarray(run.column(column), dtype=float)
    last = spent[-max(1, round(EXTRAPOLATED_SHARE * spent.size)) :]
    return float(spent.sum() + max(0, full - spent.size) * last.mean())


#: the effect of a wall-time claim (its name, before the horizon it is measured to and its unit)
WALL_TIME_EFFECT = "mean wall time per run"
#: how that name marks a run that stopped early and was extended to the horizon
LOWER_BOUND = "extended: a lower bound"


class WallTime(ClaimKind):
    """Each named setting's wall time per run to the experiment's horizon, in ``direction`` (less: at
    most, greater: at least) of an absolute number of ``seconds`` (a one-sample test of the mean over
    seeds; the effect is that mean over the threshold). A setting that stopped early is extended to
    the horizon at its last rounds' cost (a lower bound where the cost grows: a GP's), so only the
    test a lower bound can decide is made: "at least" may be reproduced, "at most" refuted; the other
    test's p is 1 (a lower bound below the threshold says nothing of the time itself)."""

    name = "wall_time"
    keys = ("others", "direction")
    thresholds = ("seconds",)
    #: the column each reads (its row of the statistics table) is the one the claim sums
    statistics = ("seconds_per_round", "optimizer_seconds_per_round")
    example = {
        "others": ["A"],
        "direction": "less",
        "statistic": "seconds_per_round",
        "thresholds": {"seconds": 1.0},
    }

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        other = "greater" if claim.direction == "less" else "less"
        return (Region(claim.direction, 1.0),), (Region(other, 1.0),)

    def check(self, claim, unit, runs, scales, reference):  # type: ignore[no-untyped-def]
        exp_runs, full, limit = runs[0], full_horizon(runs[0]), claim.thresholds.seconds
        out = []
        for s in claim.others:
            base = Comparison(unit, s, "-")
            if s not in exp_runs:
                out.append(dataclasses.replace(base, verdict=NOT_EVALUATED, reason=f"setting {s} not run"))
                continue
            h = horizon(exp_runs[s])
            (column,) = STATISTICS.lookup(claim.statistic).columns
            sample = {r.seed: seconds_to(r, column, full) / limit for r in exp_runs[s]}
            to = f"to t = {full}" + (f" (measured to t = {h}, {LOWER_BOUND})" if h < full else "")
            name = per_threshold_name(f"{WALL_TIME_EFFECT} {to}", limit)
            base = dataclasses.replace(base, round=full, horizon=full)
            comp = slope_comparison(claim, base, sample, what="wall time / threshold", effect_name=name)
            if h < full and comp.p_claimed is not None:  # a lower bound decides one side only
                side = "p_refuted" if claim.direction == "greater" else "p_claimed"
                comp = dataclasses.replace(comp, **{side: 1.0})
            out.append(comp)
        return out

    def from_values(self, claim: Claim, comp: Comparison) -> Comparison:
        base = Comparison(comp.experiment, comp.a, "-", round=comp.round, horizon=comp.horizon)
        return slope_comparison(claim, base, comp.values_a, False, "wall time / threshold", comp.effect_name)

    def made_up(self, claim: Claim, name: str, truth: float, draw: Draw, n: int) -> Comparison:
        sample = dict(enumerate(draw(truth, n, True).tolist()))
        return slope_comparison(claim, Comparison(name, "A", "-"), sample, False, "wall time / threshold", "")
