"""The comparisons every kind of claim is made of (``vhct.reporting.audit.kinds``): per-seed
statistics turned into typed comparisons (``records.Comparison``) with one-sided p-values on the
claimed and refuting regions their kind states (``claim.spec``). The verdicts are decided at the
claim level (``verdicts.decide``), where the refuting tests of all its experiments are Holm-adjusted.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from vhct.reporting import stats
from vhct.reporting.audit.claims_model import Claim
from vhct.reporting.audit.records import Comparison
from vhct.reporting.audit.runs import Run, horizon, mean_statistic, samples
from vhct.reporting.audit.verdicts import INCONCLUSIVE, NOT_EVALUATED, TOO_FEW

#: a cost statistic of the optimizer's own time -> the whole round's, whose means a comparison of
#: it carries beside it (``Comparison.total_a``/``total_b``): what a round costs with the objective
TOTAL_BESIDE = {"optimizer_seconds_per_round": "seconds_per_round"}


@dataclass(frozen=True)
class Region:
    """A one-sided region of ``mean_a`` against ``factor * mean_b``: ``less`` or ``greater``."""

    alternative: str
    factor: float

    def text(self, what: str = "mean_a", of: str = "mean_b") -> str:
        sign = "<" if self.alternative == "less" else ">"
        return f"{what} {sign} {self.factor:.4g} {of}"


def no_effect_regions(claimed: Sequence[Region], refuting: Sequence[Region]) -> tuple[Region, ...]:
    """The complements of the claimed regions ("no effect of the claimed size"), unless they are the
    refuting regions themselves (a margin shared by both sides: then there is one kind of refutation)."""
    out = tuple(Region("greater" if r.alternative == "less" else "less", r.factor) for r in claimed)
    return () if set(out) <= set(refuting) else out


def seeds_needed(
    claimed: Sequence[Region],
    delta_sd: Callable[[Region, float], tuple[float, float]],
    effect: float,
    alpha: float,
) -> int | None:
    """Seeds per arm at which every claimed test at alpha has 80 % power when the true effect is
    ``effect`` (the claim's effect of interest) and the spread the samples': the one need of a
    comparison (the audit's and the analysis plan's). None: ``effect`` outside a claimed region.
    ``delta_sd(region, effect)``: the difference the region's test is about at that effect, and one
    seed's deviation of it (the samples' spread, not their mean)."""
    ns = []
    for r in claimed:
        delta = delta_sd(r, effect)[0]
        if not (delta < 0.0 if r.alternative == "less" else delta > 0.0):
            return None
        ns.append(stats.seeds_for_power(*delta_sd(r, effect), alpha))
    return None if None in ns else max(ns)


def comparison_round(claim: Claim, h_a: int, h_b: int, full: int) -> int | str:
    """The round of a comparison, or why there is none: ``final``, the experiment's last (both must
    have run it); ``common``, the last both ran; an integer, that round."""
    at = claim.round
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
    claim: Claim,
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
            why = f"setting {name} not run in this config"
            return Comparison(experiment, a, b, verdict=NOT_EVALUATED, reason=why)
    at = comparison_round(claim, horizon(runs_a), horizon(runs_b), full)
    if isinstance(at, str):
        return Comparison(experiment, a, b, verdict=NOT_EVALUATED, reason=at)
    sa = samples(runs_a, claim.statistic, at, scales[0])
    sb = samples(runs_b, claim.statistic, at, scales[1])
    for name, s in ((a, sa), (b, sb)):
        if any(math.isnan(v) for v in s.values()):
            why = f"{claim.statistic} is undefined for {name}"
            return Comparison(experiment, a, b, verdict=NOT_EVALUATED, reason=why)
    comp = compare_samples(claim, experiment, a, b, sa, sb, at, full, reference)
    total = TOTAL_BESIDE.get(claim.statistic)
    if total is None:
        return comp
    return dataclasses.replace(
        comp, total_a=mean_statistic(runs_a, total, at), total_b=mean_statistic(runs_b, total, at)
    )


#: ``test(regions)``: the one-sided p of each region, the resamples behind them (None: analytic)
#: and the effect's interval (None, None when skipped)
Tests = Callable[[Sequence[Region]], tuple[list[float], int | None, tuple[float | None, float | None]]]


def _tested(
    claim: Claim,
    comp: Comparison,
    test: Tests,
    delta_sd: Callable[[Region, float], tuple[float, float]],
    seeds: tuple[int, int],
    text: Callable[[Region], str] = Region.text,
) -> Comparison:
    """A comparison's claimed, refuting and no-effect tests on its kind's regions; none below the claim's
    seeds (``seeds``: both sides'). All claimed tests must hold (the larger p); two refuting (or
    no-effect) regions are Bonferroni-combined (the smaller p, doubled) before Holm across the claim."""
    claimed, refuting = claim.spec.regions(claim)
    none_ = no_effect_regions(claimed, refuting)
    comp = dataclasses.replace(
        comp,
        claimed=" and ".join(map(text, claimed)),
        refuted=" or ".join(map(text, refuting)),
        no_effect=" or ".join(map(text, none_)),
    )
    if claim.short_of_seeds({"a": seeds[0], "b": seeds[1]}):
        n = " vs ".join(map(str, seeds))
        few = f"{TOO_FEW}: this configuration runs n = {n}, the claim needs at least {claim.min_seeds}"
        return dataclasses.replace(comp, verdict=INCONCLUSIVE, category=TOO_FEW, reason=few)
    alpha = claim.alpha
    ps, resamples, (low, high) = test([*claimed, *refuting, *none_])
    k, m = len(claimed), len(refuting)
    return dataclasses.replace(
        comp,
        p_claimed=max(ps[:k]),
        p_refuted=min(1.0, m * min(ps[k : k + m])),
        p_no_effect=min(1.0, len(none_) * min(ps[k + m :])) if none_ else None,
        ci_low=low,
        ci_high=high,
        ci_level=1.0 - 2.0 * alpha,
        resamples=resamples,
        seeds_needed=None
        if claim.effect_of_interest is None  # (a claim read from an audit made before it existed)
        else seeds_needed(claimed, delta_sd, claim.effect_of_interest.value, alpha),
    )


def _bootstrap(claim: Claim, x, y, ratio: bool, with_interval: bool) -> Tests:
    """The regions' tests by one adaptive studentized bootstrap (``stats.bootstrap_tests``) of
    ``mean_x`` against ``factor * mean_y`` (``y`` a constant: a one-sample test), and its interval."""

    def test(regions: Sequence[Region]) -> tuple[list[float], int | None, tuple[float | None, float | None]]:
        queries = [(r.factor, r.alternative) for r in regions]
        ps, boot = stats.bootstrap_tests(x, y, queries, claim.alpha, family=claim.spec.family_size(claim))
        return ps, boot.resamples, boot.interval(claim.alpha, ratio) if with_interval else (None, None)

    return test


def compare_samples(
    claim: Claim,
    experiment: str,
    a: str,
    b: str,
    sa: Mapping[int, float],
    sb: Mapping[int, float],
    at: int | None = None,
    full: int | None = None,
    reference: str = "",
    with_interval: bool = True,
) -> Comparison:
    """The comparison of two per-seed samples on the claim's ratio regions (checks and calibration;
    ``with_interval=False`` skips the interval, which no verdict reads, to speed up the calibration)."""
    da, db = stats.describe(sa), stats.describe(sb)
    comp = Comparison(
        experiment,
        a,
        b,
        round=at,
        horizon=full,
        n_a=da["n"],
        n_b=db["n"],
        mean_a=da["mean"],
        mean_b=db["mean"],
        std_a=da["std"],
        std_b=db["std"],
        effect=stats.ratio(da["mean"], db["mean"]),
        effect_name="ratio of means",
        reference=reference,
        values_a={str(k): v for k, v in sorted(sa.items())},
        values_b={str(k): v for k, v in sorted(sb.items())},
    )

    def delta_sd(r: Region, effect: float) -> tuple[float, float]:
        # A's mean at ``effect`` x B's, each side's spread as observed
        return (effect - r.factor) * comp.mean_b, math.hypot(comp.std_a, r.factor * comp.std_b)

    test = _bootstrap(claim, sa, stats.values(sb), True, with_interval)
    return _tested(claim, comp, test, delta_sd, (comp.n_a, comp.n_b))


def slope_comparison(
    claim: Claim,
    base: Comparison,
    sample: Mapping[int, float],
    with_interval: bool = True,
    what: str = "slope",
    effect_name: str | None = None,
) -> Comparison:
    """The per-seed slopes' mean (``what``: or of another per-seed quantity, such as a difference of
    slopes or a run's wall time over a threshold, named ``effect_name``) against the claim's bounds
    (one-sample bootstrap-t), and its interval."""
    d = stats.describe(sample)
    comp = dataclasses.replace(
        base,
        n_a=d["n"],
        mean_a=d["mean"],
        std_a=d["std"],
        effect=d["mean"],
        effect_name=effect_name or f"mean {what} of log R_t on log t",
        values_a={str(k): v for k, v in sample.items()},
    )
    test = _bootstrap(claim, sample, 1.0, False, with_interval)
    return _tested(
        claim,
        comp,
        test,
        lambda r, effect: (effect - r.factor, d["std"]),
        (d["n"], d["n"]),
        text=lambda r: f"mean {what} {'<' if r.alternative == 'less' else '>'} {r.factor:g}",
    )


def _seed_values(sample) -> dict[str, float]:
    if isinstance(sample, Mapping):
        return {str(k): float(v) for k, v in sorted(sample.items())}
    return {str(k): float(v) for k, v in enumerate(stats.values(sample))}


def contrast_comparison(
    claim: Claim, base: Comparison, a1, b1, a2, b2, differences: bool = False
) -> Comparison:
    """Ratio a1/b1 against ratio a2/b2 on the claim's direction and margin (delta method), with the
    interval of the ratio of ratios; with ``differences``, the difference a1 - b1 against a2 - b2
    (``mean_a``/``mean_b`` the two differences, the effect their difference, the margin additive).
    The per-seed values of all four samples are kept."""
    first, _, second = base.experiment.partition(" / ")
    second = second or "the second"
    kept = dict(
        values_a=_seed_values(a1),
        values_b=_seed_values(b1),
        values_a2=_seed_values(a2),
        values_b2=_seed_values(b2),
    )
    a1, b1, a2, b2 = (stats.values(x) for x in (a1, b1, a2, b2))
    if differences:
        r1, r2 = a1.mean() - b1.mean(), a2.mean() - b2.mean()
        effect = r1 - r2

        def text(r: Region) -> str:
            sign, margin = "<" if r.alternative == "less" else ">", f" {r.factor:+.4g}" if r.factor else ""
            return f"difference on {first} {sign} difference on {second}{margin}"
    else:
        r1, r2 = a1.mean() / b1.mean(), a2.mean() / b2.mean()
        effect = r1 / r2

        def text(r: Region) -> str:
            return r.text(f"ratio on {first}", f"x ratio on {second}")

    comp = dataclasses.replace(
        base,
        n_a=int(min(a1.size, b1.size)),
        n_b=int(min(a2.size, b2.size)),
        mean_a=float(r1),
        mean_b=float(r2),
        effect=float(effect),
        **kept,
    )

    def delta_sd(r: Region, effect: float) -> tuple[float, float]:
        # the contrast (log ratio of ratios, or difference of differences) at ``effect``, the observed spread
        _, v, _ = stats._contrast(a1, b1, a2, b2, differences)
        at = effect - r.factor if differences else math.log(effect) - math.log(r.factor)
        return at, math.sqrt(v * min(comp.n_a, comp.n_b))

    def test(regions: Sequence[Region]) -> tuple[list[float], int | None, tuple[float | None, float | None]]:
        ps = [stats.contrast_test(a1, b1, a2, b2, r.alternative, r.factor, differences) for r in regions]
        return ps, None, stats.contrast_interval(a1, b1, a2, b2, claim.alpha, differences)

    return _tested(claim, comp, test, delta_sd, (comp.n_a, comp.n_b), text=text)
