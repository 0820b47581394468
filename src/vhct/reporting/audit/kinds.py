"""What each kind of claim means, in one place: one class per kind, one row of ``CLAIM_KINDS``.

A kind declares the keys, thresholds and statistics it needs, its claimed and refuting regions, its
comparisons per experiment, how it compares runs (:meth:`ClaimKind.check`) and how the calibration
draws samples of a known truth (:meth:`ClaimKind.made_up`); everything else asks it (``claim.spec``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from vhct.reporting.audit.checks import (
    Region,
    compare_samples,
    contrast_comparison,
    no_effect_regions,
    pair,
)
from vhct.reporting.audit.claims_model import Claim, key_error
from vhct.reporting.audit.records import Comparison
from vhct.reporting.audit.runs import Run, horizon, samples
from vhct.reporting.audit.verdicts import NOT_EVALUATED

#: one experiment's runs: setting -> its runs
ExperimentRuns = Mapping[str, Sequence[Run]]
#: regions of an effect as intervals on (0, inf) (the forest's shading)
Intervals = list[tuple[float, float]]
#: ``draw(mean, n, shaped, spread=None)``: the calibration's n per-seed values of the given mean, in
#: its distribution when ``shaped``, else normal (coefficient of variation ``spread`` or its own)
Draw = Callable[..., np.ndarray]
#: the mean of the reference side of a made-up ratio comparison (any positive scale)
MADE_UP_SCALE = 100.0


def full_horizon(exp_runs: ExperimentRuns) -> int:
    """The experiment's horizon: the most rounds any of its settings ran."""
    return max(horizon(r) for r in exp_runs.values())


def _interval(region: Region) -> tuple[float, float]:
    return (0.0, region.factor) if region.alternative == "less" else (region.factor, math.inf)


class ClaimKind:
    """A kind of claim; subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    #: the claim keys (beyond the common ones) and the thresholds it needs
    keys: ClassVar[tuple[str, ...]] = ("target", "others")
    thresholds: ClassVar[tuple[str, ...]]
    #: the statistics it may compare (None: any)
    statistics: ClassVar[tuple[str, ...] | None] = None
    #: it compares pairs of experiments (``pairs``), not each experiment alone
    over_pairs: ClassVar[bool] = False
    #: its effect is a difference (a slope), drawn on a linear scale; else a ratio, on a log scale
    additive: ClassVar[bool] = False
    #: a made-up claim's keys and thresholds of this kind (the contract test and docs/audit.md)
    example: ClassVar[dict[str, Any]]
    #: its verdict does not say which way the target differs (a band): the renderers state it plainly
    states_direction: ClassVar[bool] = False
    #: its effect's value of "no difference" (a ratio: 1, a difference: 0, a slope: 1, linear regret),
    #: the bound of a claim that states a direction and no size; None: the kind states a size by its
    #: nature (a band, non-inferiority, a share, an absolute limit), so its claims quote it (``size``)
    null: ClassVar[float | None] = None

    def validate(self, claim: Claim) -> None:
        """What a type cannot say about a claim of this kind (a ``key_error`` naming the key)."""

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        """The claimed regions (all must hold) and the refuting ones (any refutes)."""
        raise NotImplementedError

    def at_no_difference(self, claim: Claim) -> bool:
        """Whether every claimed and refuting region of ``claim`` is bounded at :attr:`null` (no
        margin: any difference in the claimed direction reproduces it)."""
        claimed, refuting = self.regions(claim)
        return self.null is not None and all(r.factor == self.null for r in (*claimed, *refuting))

    def per_unit(self, claim: Claim) -> int:
        """Comparisons per experiment (or pair): one per other setting (one for a sublinear claim, which
        names none, and a contrast, which names one)."""
        return len(claim.others or [None])

    def family_size(self, claim: Claim) -> int:
        """An upper bound on the number of refuting tests of the claim (both kinds), for sizing seeds."""
        claimed, refuting = self.regions(claim)
        kinds = 2 if no_effect_regions(claimed, refuting) else 1
        return len(claim.pairs or claim.experiments) * self.per_unit(claim) * kinds

    def intervals(self, claim: Claim) -> tuple[Intervals, Intervals]:
        """The claimed region (the claimed ones intersected) and the refuting ones as effect intervals."""
        claimed, refuting = self.regions(claim)
        spans = [_interval(r) for r in claimed]
        return [(max(s[0] for s in spans), min(s[1] for s in spans))], [_interval(r) for r in refuting]

    def margins(self, claim: Claim) -> tuple[float, float, int]:
        """The calibrated margins: the claimed one, the refuting one across from it and the claimed
        side (-1: below, +1: above); a band's upper side."""
        claimed, refuting = (rs[-1] for rs in self.regions(claim))
        return claimed.factor, refuting.factor, -1 if claimed.alternative == "less" else 1

    def check(
        self,
        claim: Claim,
        unit: str,
        runs: Sequence[ExperimentRuns],
        scales: Sequence[float | None],
        reference: str,
    ) -> list[Comparison]:
        """The comparisons of one experiment (``runs`` holds its runs) or pair (both experiments'): here
        the target against each other setting. A claim about the final round leaves out an other
        setting that stopped early there (BO on Garland), rather than count it against the target."""
        exp_runs, a, full = runs[0], claim.target, full_horizon(runs[0])
        kept = [
            b
            for b in claim.others
            if not (claim.round == "final" and exp_runs.get(b) and horizon(exp_runs[b]) < full)
        ]
        return [
            pair(claim, unit, exp_runs.get(a), exp_runs.get(b), a, b, full, reference=reference) for b in kept
        ]

    def made_up(self, claim: Claim, name: str, truth: float, draw: Draw, n: int) -> Comparison:
        """A comparison of made-up samples whose true effect is ``truth`` (the calibration's)."""
        sb = draw(MADE_UP_SCALE, n, False)
        sa = draw(MADE_UP_SCALE * truth, n, True)
        a, b = dict(enumerate(sa.tolist())), dict(enumerate(sb.tolist()))
        return compare_samples(claim, name, "A", "B", a, b, with_interval=False)

    def from_values(self, claim: Claim, comp: Comparison) -> Comparison:
        """``comp`` computed again from its recorded per-seed values (the analysis plan's seed computation
        on a pilot's samples, ``vhct.reporting.audit.plan``): here two samples on the ratio regions."""
        return compare_samples(
            claim,
            comp.experiment,
            comp.a,
            comp.b,
            comp.values_a,
            comp.values_b,
            comp.round,
            comp.horizon,
            comp.reference,
            with_interval=False,
        )


class Lowest(ClaimKind):
    """The target's statistic is lower than each other's by at least ``min_relative_effect``."""

    name = "lowest"
    thresholds = ("min_relative_effect",)
    null = 1.0
    example = {"target": "A", "others": ["B"], "thresholds": {"min_relative_effect": 0.05}}

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        m = claim.thresholds.min_relative_effect
        return (Region("less", 1.0 - m),), (Region("greater", 1.0 / (1.0 - m)),)


class AmongFastest(ClaimKind):
    """The target is within ``max_excess_over_best`` of each other (non-inferiority)."""

    name = "among_fastest"
    thresholds = ("max_excess_over_best",)
    example = {"target": "A", "others": ["B"], "thresholds": {"max_excess_over_best": 0.1}}

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        d = claim.thresholds.max_excess_over_best
        return (Region("less", 1.0 + d),), (Region("greater", 1.0 + d),)


class BestParameter(AmongFastest):
    """Each claimed setting is within ``max_excess_over_best`` of each other setting ("a good choice")."""

    name = "best_parameter"
    keys = ("claimed", "others")
    example = {"claimed": ["A"], "others": ["B"], "thresholds": {"max_excess_over_best": 0.1}}

    def per_unit(self, claim: Claim) -> int:
        return len(claim.claimed) * len(claim.others)

    def check(self, claim, unit, runs, scales, reference):  # type: ignore[no-untyped-def]
        exp_runs, full = runs[0], full_horizon(runs[0])
        return [
            pair(claim, unit, exp_runs.get(c), exp_runs.get(o), c, o, full, reference=reference)
            for c in claim.claimed
            for o in claim.others
        ]


class Similar(ClaimKind):
    """The ratio of means lies within [``lower_ratio``, ``upper_ratio``]."""

    name = "similar"
    thresholds = ("lower_ratio", "upper_ratio")
    states_direction = True
    example = {"target": "A", "others": ["B"], "thresholds": {"lower_ratio": 0.95, "upper_ratio": 1.05}}

    def validate(self, claim: Claim) -> None:
        if claim.thresholds.lower_ratio >= claim.thresholds.upper_ratio:
            raise key_error(("thresholds",), "lower_ratio must be below upper_ratio")

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        lo, hi = claim.thresholds.lower_ratio, claim.thresholds.upper_ratio
        return (Region("greater", lo), Region("less", hi)), (Region("less", lo), Region("greater", hi))


class Greater(ClaimKind):
    """The target's statistic exceeds each other's ``min_ratio`` times (refuted below ``refuted_below``)."""

    name = "greater"
    thresholds = ("min_ratio",)
    null = 1.0
    example = {"target": "A", "others": ["B"], "thresholds": {"min_ratio": 1.1}}

    def validate(self, claim: Claim) -> None:
        th = claim.thresholds
        if th.refuted_below is not None and th.refuted_below > th.min_ratio:
            raise key_error(("thresholds",), "refuted_below exceeds min_ratio")

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        th = claim.thresholds  # refuted below min_ratio unless refuted_below says otherwise
        refuting = th.min_ratio if th.refuted_below is None else th.refuted_below
        return (Region("greater", th.min_ratio),), (Region("less", refuting),)


class Contrast(ClaimKind):
    """The ratio target/other on the first experiment of a pair against the same ratio on the second,
    in ``direction`` by at least ``min_factor``."""

    name = "contrast"
    keys = ("target", "others", "pairs", "direction")
    thresholds = ("min_factor",)
    over_pairs = True
    null = 1.0
    example = {"target": "A", "others": ["B"], "direction": "less", "thresholds": {"min_factor": 1.1}}
    #: the name of its effect, of the target ``a`` and the other setting ``b``
    effect_label: ClassVar[str] = "ratio of ratios {a}/{b}"

    def validate(self, claim: Claim) -> None:
        if len(claim.others) != 1:
            raise key_error(("others",), "a contrast names exactly one other setting")

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        c = claim.thresholds.min_factor
        if claim.direction == "less":
            return (Region("less", 1.0 / c),), (Region("greater", c),)
        return (Region("greater", c),), (Region("less", 1.0 / c),)

    def check(self, claim, unit, runs, scales, reference):  # type: ignore[no-untyped-def]
        a, b = claim.target, claim.others[0]
        base = Comparison(unit, a, b, effect_name=self.effect_label.format(a=a, b=b))
        got = []
        for exp_runs in runs:
            for s in (a, b):
                if s not in exp_runs:
                    return [dataclasses.replace(base, verdict=NOT_EVALUATED, reason=f"setting {s} not run")]
            full = full_horizon(exp_runs)
            if min(horizon(exp_runs[a]), horizon(exp_runs[b])) < full:
                return [dataclasses.replace(base, verdict=NOT_EVALUATED, reason="a setting stopped early")]
            got.append([samples(exp_runs[s], claim.statistic, full) for s in (a, b)])
        (a1, b1), (a2, b2) = got
        return [self.compare(claim, base, a1, b1, a2, b2)]

    def compare(self, claim: Claim, base: Comparison, a1, b1, a2, b2) -> Comparison:  # type: ignore[no-untyped-def]
        """The pair's comparison of its four per-seed samples (a ratio of ratios)."""
        return contrast_comparison(claim, base, a1, b1, a2, b2)

    def made_up_means(self, truth: float) -> tuple[float, float]:
        """The means of a made-up comparison's reference samples and of its first target sample."""
        return MADE_UP_SCALE, MADE_UP_SCALE * truth

    def made_up(self, claim: Claim, name: str, truth: float, draw: Draw, n: int) -> Comparison:
        reference, first = self.made_up_means(truth)
        b1, a2, b2 = (draw(reference, n, False) for _ in range(3))
        a1 = draw(first, n, True)
        base = Comparison(f"{name} / {name}2", "A", "B", effect_name=self.effect_label.format(a="A", b="B"))
        return self.compare(claim, base, a1, b1, a2, b2)

    def from_values(self, claim: Claim, comp: Comparison) -> Comparison:
        base = Comparison(comp.experiment, comp.a, comp.b, effect_name=comp.effect_name)
        return self.compare(claim, base, comp.values_a, comp.values_b, comp.values_a2, comp.values_b2)


class Easier(Lowest):
    """Each setting's scale-free regret on the first experiment of a pair is lower than on the second
    (the lowest rule, both read at the shorter horizon)."""

    name = "easier"
    keys = ("others", "pairs")
    statistics = ("normalized_regret", "average_regret")
    over_pairs = True
    example = {"others": ["A"], "statistic": "average_regret", "thresholds": {"min_relative_effect": 0.05}}

    def check(self, claim, unit, runs, scales, reference):  # type: ignore[no-untyped-def]
        first, second = unit.split(" / ")
        common = claim.model_copy(update={"round": "common"})
        out = []
        for s in claim.others:
            r1, r2 = runs[0].get(s), runs[1].get(s)
            if r1 is None or r2 is None:
                why = f"setting {s} not run in both"
                out.append(Comparison(unit, s, s, verdict=NOT_EVALUATED, reason=why))
                continue
            # both read at the shorter horizon: per-round regret falls with t, so rounds must match
            comp = pair(common, unit, r1, r2, s, s, min(horizon(r1), horizon(r2)), tuple(scales))
            out.append(dataclasses.replace(comp, a=f"{s} on {first}", b=f"{s} on {second}"))
        return out


#: the mean of the reference samples of a made-up difference comparison (its margins and truths are in
#: these units): small enough that the calibration's steps in the difference (0.05 to 0.2, as for a
#: slope) stand several standard errors apart at its spreads, so "far inside" is far
MADE_UP_UNIT = 0.2


class DifferenceContrast(Contrast):
    """The difference target - other on the first experiment of a pair against the same difference on
    the second, in ``direction`` by at least ``min_difference`` (in the statistic's units): a contrast
    of the gaps themselves, as the paper's "the regret differences ... are small" words it."""

    name = "difference_contrast"
    thresholds = ("min_difference",)
    additive = True
    null = 0.0
    example = {"target": "A", "others": ["B"], "direction": "greater", "thresholds": {"min_difference": 0.1}}
    effect_label = "difference of differences {a} - {b}"

    def regions(self, claim: Claim) -> tuple[tuple[Region, ...], tuple[Region, ...]]:
        m = claim.thresholds.min_difference
        if claim.direction == "less":
            return (Region("less", -m),), (Region("greater", m),)
        return (Region("greater", m),), (Region("less", -m),)

    def intervals(self, claim: Claim) -> tuple[Intervals, Intervals]:
        """As :meth:`ClaimKind.intervals`, on the whole line: a difference may be negative."""
        claimed, refuting = self.regions(claim)

        def span(r: Region) -> tuple[float, float]:
            return (-math.inf, r.factor) if r.alternative == "less" else (r.factor, math.inf)

        return [span(r) for r in claimed], [span(r) for r in refuting]

    def compare(self, claim: Claim, base: Comparison, a1, b1, a2, b2) -> Comparison:  # type: ignore[no-untyped-def]
        return contrast_comparison(claim, base, a1, b1, a2, b2, differences=True)

    def made_up_means(self, truth: float) -> tuple[float, float]:
        return MADE_UP_UNIT, MADE_UP_UNIT + truth
