"""The audit's rules on samples of known truth: how often each rule gives a false verdict, and its power.

Every rule is fed made-up per-seed samples, many times, through the same code as the audit
(``compare_samples`` / ``slope_comparison`` / ``contrast_comparison``, then ``conclude``; without
the display-only interval of the bootstrap comparisons, which no verdict reads), with
the structure and thresholds of the shipped claim it stands for (read from the claims file:
experiments x comparisons). Truths, each the least favourable configuration for its error:

- ``one at the claimed margin``: one comparison exactly at the claimed margin, the others far
  inside the claimed region (an all-must-hold claim then rests on one test at alpha; a majority
  claim of k experiments has one such comparison in each of k - need + 1 experiments, so only
  need - 1 hold): any "reproduced" is false;
- ``all at the claimed margin``: every comparison on the margin (the no-effect null's boundary):
  any "not reproduced" (either kind) is false;
- ``all at the refuting margin``: any "not reproduced: the opposite" is false;
- ``tie``: a true ratio inside the margins (between the claimed and the refuting margin): must give
  "no effect" or "inconclusive", never "reproduced" or "the opposite";
- a grid of true ratios shared by every comparison: the power curves (probability of each verdict).

Distributions: normal with the coefficient of variation measured at run time from the shipped
audit's per-seed values (``shipped_cv``: the 90th percentile over its comparisons), and bimodal like
T-HOO rho = 0.25 on 2-D Rastrigin (30 % of seeds near 0.28 of the upper mode, spread 40 %). Seeds:
20 (the paper's, and the claims' minimum) and the seeds the shipped configuration runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from vhct.reporting.audit.checks import (
    Comparison,
    compare_samples,
    contrast_comparison,
    regions,
    slope_comparison,
)
from vhct.reporting.audit.claims import load_beyond, load_claims
from vhct.reporting.audit.claims_model import Claim, ClaimsFile
from vhct.reporting.audit.evaluate import conclude
from vhct.reporting.audit.spread import shipped_cv
from vhct.reporting.audit.verdicts import NO_EFFECT, NOT_REPRODUCED, OPPOSITE, REPRODUCED

#: the shipped claims file, whose defaults and thresholds the rules are calibrated with
SHIPPED_CLAIMS = load_claims()
#: the claims' level (``defaults.alpha``)
ALPHA = SHIPPED_CLAIMS.defaults.alpha
#: the bimodal shape of T-HOO rho = 0.25 on 2-D Rastrigin: share of seeds in the lower mode, its level
BIMODAL_SHARE, BIMODAL_LOW, BIMODAL_LOW_SPREAD, BIMODAL_JITTER = 0.3, 0.28, 0.4, 0.03
#: standard deviation of per-seed slopes of log R_t on log t (sublinear rule)
SLOPE_SD = 0.03
SEEDS = (20,)
#: the claims' minimum of seeds (``defaults.min_seeds``): the audit decides nothing below it
MIN_SEEDS = SHIPPED_CLAIMS.defaults.min_seeds
DISTRIBUTIONS = ("normal", "bimodal")
#: how far inside the claimed region the other comparisons sit in the least favourable scenario
FAR_INSIDE = 0.5




@dataclass(frozen=True)
class Rule:
    """A rule as a shipped claim uses it: its claim, and experiments x comparisons per experiment."""

    name: str
    claim: Claim
    experiments: int
    comparisons: int


def _rule(claims: ClaimsFile, claim_id: str, name: str = "") -> Rule:
    """The shipped claim ``claim_id`` as a rule: its thresholds, alpha, direction and structure."""
    by_id = {c.id: c for c in claims.claims}
    if claim_id not in by_id:
        raise ValueError(f"claims file has no claim {claim_id!r} to calibrate")
    c = by_id[claim_id]
    kind = c.kind
    units = len(c.pairs or c.experiments)
    if kind == "best_parameter":
        per = len(c.claimed) * len(c.others)
    elif kind in ("sublinear", "contrast"):
        per = 1
    else:
        per = len(c.others)
    # every sample size is evaluated here (the audit itself decides only from the claim's min_seeds on)
    claim = c.model_copy(update={"kind": "lowest" if kind == "easier" else kind, "min_seeds": 2})
    return Rule(name or f"{kind} ({claim_id})", claim, units, per)


#: the shipped claims each rule stands for
RULE_CLAIMS = (
    "fig3-vhct-lowest", "vhct-faster-low-noise", "synthetic-vhct-among-fastest",
    "high-noise-vhct-hct-similar", "best-rho-thoo", "vhct-deeper-tree-low-noise", "bo-cost",
    "synthetic-vhct-hct-small-gap", "vhct-lead-low-vs-high-noise", "himmelblau-easier",
    "vhct-sublinear-regret",
)  # fmt: skip


def rules(claims: ClaimsFile | None = None) -> tuple[Rule, ...]:
    """Every calibrated rule, with the thresholds of the claims file (the shipped one by default)."""
    claims = claims or SHIPPED_CLAIMS
    return tuple(_rule(claims, cid) for cid in RULE_CLAIMS)


def draw(rng: np.random.Generator, mean: float, n: int, distribution: str, cv: float) -> np.ndarray:
    """n per-seed values with the given mean: normal (coefficient of variation cv) or bimodal."""
    if distribution == "normal":
        return rng.normal(mean, cv * abs(mean), n)
    low = rng.random(n) < BIMODAL_SHARE
    spread = np.where(low, BIMODAL_LOW_SPREAD, BIMODAL_JITTER)
    level = np.where(low, BIMODAL_LOW, 1.0) * (1.0 + spread * rng.standard_normal(n))
    upper = mean / (BIMODAL_SHARE * BIMODAL_LOW + 1.0 - BIMODAL_SHARE)
    return upper * level


def margins(rule: Rule) -> tuple[float, float, int]:
    """The claimed margin, the refuting margin and the claimed side (-1: below, +1: above) of the
    rule's quantity (ratio of means, ratio of ratios or mean slope)."""
    kind, th = rule.claim.kind, rule.claim.thresholds
    if kind == "sublinear":
        return th.max_slope, th.refuting_slope, -1
    if kind == "contrast":
        c, less = th.min_factor, rule.claim.direction == "less"
        return (1 / c, c, -1) if less else (c, 1 / c, 1)
    rs = regions(rule.claim)
    if kind == "similar":  # the upper margin: the refuting side that is "worse"
        return rs[1].factor, rs[3].factor, -1
    claimed, refuting = rs[0], rs[len(rs) // 2]
    return claimed.factor, refuting.factor, -1 if claimed.alternative == "less" else 1


def _far_inside(rule: Rule) -> float:
    claimed, _, side = margins(rule)
    if rule.claim.kind == "sublinear":
        return claimed - 0.2
    if rule.claim.kind == "similar":
        th = rule.claim.thresholds
        return (th.lower_ratio + th.upper_ratio) / 2
    return claimed * math.exp(side * FAR_INSIDE)


def scenarios(rule: Rule) -> dict[str, list[float]]:
    """Per scenario, the truth of every comparison (experiments x comparisons, in order)."""
    k = rule.experiments * rule.comparisons
    claimed, refuting, _ = margins(rule)
    far = _far_inside(rule)
    # an all-must-hold claim is false with one comparison at the margin; a majority claim needs
    # k - need + 1 experiments false (each with one comparison at the margin), the others holding
    false_experiments = 1
    if rule.claim.require == "majority":
        false_experiments = rule.experiments - (rule.experiments // 2 + 1) + 1
    one = [far] * k
    for e in range(false_experiments):
        one[e * rule.comparisons] = claimed
    out = {
        "one at the claimed margin": one,
        "all at the claimed margin": [claimed] * k,
        "all at the refuting margin": [refuting] * k,
    }
    if claimed != refuting:
        tie = (
            0.5 * (claimed + refuting) if rule.claim.kind == "sublinear" else math.sqrt(claimed * refuting)
        )
        out["tie"] = [tie] * k
    return out


def _comparison(rule: Rule, name: str, k: int, truth: float, n: int, distribution: str, cv: float, rng):
    claim = rule.claim
    if claim.kind == "sublinear":
        slopes = truth + SLOPE_SD * (draw(rng, 1.0, n, distribution, 1.0) - 1.0)
        return slope_comparison(
            claim, Comparison(name, "A", "-"), dict(enumerate(slopes.tolist())), with_interval=False
        )
    if claim.kind == "contrast":
        b1, a2, b2 = (draw(rng, 100.0, n, "normal", cv) for _ in range(3))
        a1 = draw(rng, 100.0 * truth, n, distribution, cv)
        return contrast_comparison(claim, Comparison(f"{name} / {name}2", "A", "B"), a1, b1, a2, b2)
    sb = draw(rng, 100.0, n, "normal", cv)
    sa = draw(rng, 100.0 * truth, n, distribution, cv)
    a, b = dict(enumerate(sa.tolist())), dict(enumerate(sb.tolist()))
    return compare_samples(claim, name, "A", f"B{k}", a, b, with_interval=False)


def _parts(rule: Rule, truths_: Sequence[float], n: int, distribution: str, cv: float, rng):
    """One made-up claim: every experiment's comparisons at the given truths."""
    parts, it = [], iter(truths_)
    for e in range(rule.experiments):
        comps = [
            _comparison(rule, f"e{e}", k, next(it), n, distribution, cv, rng) for k in range(rule.comparisons)
        ]
        parts.append((f"e{e}", comps))
    return parts


def outcomes(
    rule: Rule, truths_: Sequence[float], n: int, distribution: str, cv: float, repetitions: int, rng
):
    """Shares of the claim-level outcomes: reproduced, the opposite, no effect, inconclusive."""
    counts = {REPRODUCED: 0, OPPOSITE: 0, NO_EFFECT: 0, "inconclusive": 0}
    for _ in range(repetitions):
        result = conclude(rule.claim, _parts(rule, truths_, n, distribution, cv, rng))
        if result["verdict"] == REPRODUCED:
            counts[REPRODUCED] += 1
        elif result["verdict"] == NOT_REPRODUCED:
            counts[result["category"]] += 1
        else:
            counts["inconclusive"] += 1
    return {k: v / repetitions for k, v in counts.items()}


@dataclass(frozen=True)
class Row:
    """Claim-level false verdict rates of one rule, seeds and distribution."""

    rule: str
    seeds: int
    distribution: str
    false_reproduction: float  # one comparison at the claimed margin, the others far inside
    false_refutation: float  # every comparison at the claimed margin: any "not reproduced"
    false_opposite: float  # every comparison at the refuting margin: "the opposite"
    tie_reproduced: float
    tie_opposite: float
    tie_no_effect: float
    repetitions: int


def rates(rule: Rule, n: int, distribution: str, repetitions: int, seed: int, cv: float) -> Row:
    """Claim-level false verdict rates of a rule under the least favourable truths."""
    rng = np.random.default_rng([seed, n, DISTRIBUTIONS.index(distribution), sum(map(ord, rule.name))])
    got = {
        name: outcomes(rule, t, n, distribution, cv, repetitions, rng) for name, t in scenarios(rule).items()
    }
    tie = got.get("tie", {REPRODUCED: 0.0, OPPOSITE: 0.0, NO_EFFECT: 0.0})
    at_claimed = got["all at the claimed margin"]
    return Row(
        rule.name, n, distribution,
        false_reproduction=got["one at the claimed margin"][REPRODUCED],
        false_refutation=at_claimed[OPPOSITE] + at_claimed[NO_EFFECT],
        false_opposite=got["all at the refuting margin"][OPPOSITE],
        tie_reproduced=tie[REPRODUCED], tie_opposite=tie[OPPOSITE], tie_no_effect=tie[NO_EFFECT],
        repetitions=repetitions,
    )  # fmt: skip


def calibrate(
    repetitions: int,
    seed: int = 0,
    rules_: Sequence[Rule] | None = None,
    seeds=SEEDS,
    cv: float | None = None,
) -> Iterator[Row]:
    """Every rule x seeds x distribution."""
    cv = shipped_cv() if cv is None else cv
    for rule in rules_ or rules():
        for n in seeds:
            for distribution in DISTRIBUTIONS:
                yield rates(rule, n, distribution, repetitions, seed, cv)


def power_curve(
    rule: Rule, n: int, distribution: str, cv: float, repetitions: int, seed: int = 0, points: int = 9
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Probability of each claim-level outcome against the true ratio shared by every comparison."""
    claimed, refuting, side = margins(rule)
    if rule.claim.kind == "sublinear":
        grid = np.linspace(claimed - 0.1, refuting + 0.05, points)
    else:
        span = max(abs(math.log(refuting / claimed)), 0.1)
        lo, hi = sorted((math.log(claimed) + side * 2.0 * span, math.log(refuting) - side * 1.5 * span))
        grid = np.exp(np.linspace(lo, hi, points))
    rng = np.random.default_rng([seed, n, DISTRIBUTIONS.index(distribution), 7])
    k = rule.experiments * rule.comparisons
    rows = [outcomes(rule, [float(t)] * k, n, distribution, cv, repetitions, rng) for t in grid]
    return grid, {key: np.array([r[key] for r in rows]) for key in rows[0]}


def power_points(rule: Rule) -> tuple[float, float]:
    """Two true values past the claimed margin on the claimed side: 5 % and 15 % (slopes: 0.05, 0.1)."""
    claimed, _, side = margins(rule)
    if rule.claim.kind == "sublinear":
        return claimed - 0.05, claimed - 0.1
    if rule.claim.kind == "similar":  # inside the band, 5 % and 15 % below its upper margin
        side = -1
    return claimed * math.exp(side * 0.05), claimed * math.exp(side * 0.15)


def binomial_bound(rate: float, repetitions: int, z: float = 3.0) -> float:
    """``rate`` plus z binomial standard errors: the Monte Carlo allowance of an observed rate."""
    return rate + z * math.sqrt(rate * (1.0 - rate) / repetitions)


def worst(rows: Sequence[Row]) -> tuple[float, float]:
    """The largest false reproduction rate (one at the margin, or a tie) and the largest false
    refutation rate (any "not reproduced" at the claimed margin, "the opposite" at the refuting
    margin or at a tie) over the rows."""
    return (
        max(max(r.false_reproduction, r.tie_reproduced) for r in rows),
        max(max(r.false_refutation, r.false_opposite, r.tie_opposite) for r in rows),
    )


def table(rows: list[Row], emit: Callable[[str], None] = print) -> tuple[float, float]:
    """Print the rows as a Markdown table, then ``max false reproduction rate: X`` and, last,
    ``max false refutation rate: X`` (a false "not reproduced" of either kind at the claimed
    margin, or a false "the opposite" at the refuting margin or at a tie)."""
    emit(
        "| rule | seeds | samples | false reproduced (one at margin) | false not reproduced (at claimed "
        "margin) | false opposite (at refuting margin) | tie: reproduced / opposite / no effect |"
    )
    emit("|---|---|---|---|---|---|---|")
    for r in rows:
        emit(
            f"| {r.rule} | {r.seeds} | {r.distribution} | {r.false_reproduction:.3f} | "
            f"{r.false_refutation:.3f} | {r.false_opposite:.3f} | "
            f"{r.tie_reproduced:.3f} / {r.tie_opposite:.3f} / {r.tie_no_effect:.3f} |"
        )
    worst_rep, worst_ref = worst(rows)
    emit(f"max false reproduction rate: {worst_rep:.4f}")
    emit(f"max false refutation rate: {worst_ref:.4f}")
    return worst_rep, worst_ref


#: experiments of a question beyond the paper in the paper-scale config (garland, landmine, mnist, one more)
QUESTION_EXPERIMENTS = 4
#: the shipped questions' margin on the ratio of means (1 - ``defaults.thresholds.min_relative_effect``)
QUESTION_MARGIN = 1.0 - load_beyond().defaults.thresholds.min_relative_effect
#: the truths of the two-sided question rule: the ratio of means A/B shared by every experiment
QUESTION_TRUTHS = {
    "A at its margin": QUESTION_MARGIN,
    "B at its margin": 1 / QUESTION_MARGIN,
    "identical": 1.0,
    "planted": 0.9,
}


def question_rates(
    n: int,
    distribution: str,
    repetitions: int,
    seed: int = 0,
    experiments: int = QUESTION_EXPERIMENTS,
    cv: float | None = None,
) -> dict[str, float]:
    """False-answer rates and power of the two-sided question rule (``decide_question``).

    Made-up questions of ``experiments`` experiments, A's samples in ``distribution`` and B's normal:
    ``false A`` is the rate of any "A better" with every ratio at A's margin (the least favourable
    truth for it), ``false B`` the same for B, ``identical`` the rate of any answer but "no
    significant difference" for one distribution, ``power`` the share of "A better" at ratio 0.9.
    """
    from vhct.reporting.audit.beyond import question_claim
    from vhct.reporting.audit.claims_model import Question
    from vhct.reporting.audit.verdicts import decide_question

    defaults = load_beyond().defaults  # the shipped questions' alpha, statistic and margin
    question = Question(id="q", question="q", a="A", b="B", round="common", min_seeds=2,
                        experiments=[f"e{e}" for e in range(experiments)], alpha=defaults.alpha,
                        statistic=defaults.statistic, thresholds=defaults.thresholds)  # fmt: skip
    claim = question_claim(question)
    rng = np.random.default_rng([seed, n, DISTRIBUTIONS.index(distribution)])
    cv = shipped_cv() if cv is None else cv
    out = {}
    for scenario, truth in QUESTION_TRUTHS.items():
        answers = []
        for _ in range(repetitions):
            comps = []
            for e in range(experiments):
                sb = dict(enumerate(draw(rng, 100.0, n, "normal", cv).tolist()))
                sa = dict(enumerate(draw(rng, 100.0 * truth, n, distribution, cv).tolist()))
                comps.append(compare_samples(claim, f"e{e}", "A", "B", sa, sb, with_interval=False))
            answers.append([c.verdict for c in decide_question(comps, question.alpha)])
        if scenario == "planted":
            out["power"] = float(np.mean([a.count("A better") / experiments for a in answers]))
        elif scenario == "identical":
            out["identical"] = float(np.mean([any(v.endswith(" better") for v in a) for a in answers]))
        else:
            side = "A better" if scenario.startswith("A") else "B better"
            out["false A" if side == "A better" else "false B"] = float(np.mean([side in a for a in answers]))
    return out
