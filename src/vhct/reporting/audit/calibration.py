"""The audit's rules on samples of known truth: how often each rule gives a false verdict.

Every rule is fed made-up per-seed samples, many times, through the same code as the audit
(``compare_samples`` / ``slope_comparison`` / ``contrast_comparison``, then ``conclude``), with
the structure of the shipped claim it stands for (experiments x comparisons). Truths, shared by
every comparison of the claim (the least favourable configuration for the claim-level error):

- ``claimed boundary``: the ratio of means exactly at the claimed margin; any "reproduced" is false;
- ``refuting boundary``: exactly at the refuting margin; any "not reproduced" is false;
- ``identical``: both settings drawn from one distribution;
- ``planted``: an effect past the claimed margin by the threshold's size again (power).

Distributions: normal with the spread of the shipped data (coefficient of variation 0.27, the 90th
percentile over the shipped comparisons) and bimodal like T-HOO rho = 0.25 on 2-D Rastrigin (30 %
of seeds near 0.28 of the upper mode, spread 40 %). Seeds: 20 (the paper's, and the claims' minimum)
and 12 (below it, to show why: bimodal samples break the level there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from vhct.reporting.audit.checks import (
    Comparison,
    compare_samples,
    contrast_comparison,
    regions,
    slope_comparison,
)
from vhct.reporting.audit.evaluate import conclude
from vhct.reporting.audit.verdicts import NOT_REPRODUCED, REPRODUCED

ALPHA = 0.05
#: coefficient of variation of the normal samples (90th percentile of the shipped comparisons)
SHIPPED_CV = 0.27
#: the bimodal shape of T-HOO rho = 0.25 on 2-D Rastrigin: share of seeds in the lower mode, its level
BIMODAL_SHARE, BIMODAL_LOW, BIMODAL_LOW_SPREAD, BIMODAL_JITTER = 0.3, 0.28, 0.4, 0.03
#: standard deviation of per-seed slopes of log R_t on log t (sublinear rule)
SLOPE_SD = 0.03
SEEDS = (20, 12)
DISTRIBUTIONS = ("normal", "bimodal")


@dataclass(frozen=True)
class Rule:
    """A rule as a shipped claim uses it: its claim, and experiments x comparisons per experiment."""

    name: str
    claim: Mapping[str, Any]
    experiments: int
    comparisons: int


def _claim(kind: str, thresholds: Mapping[str, float], **extra: Any) -> dict[str, Any]:
    # every sample size is evaluated here; the audit itself decides only from its min_seeds (20) on
    base = {"id": kind, "kind": kind, "thresholds": dict(thresholds), "alpha": ALPHA, "min_seeds": 2}
    return {"require": "all", **base, **extra}


RULES = (
    Rule("lowest (fig3-vhct-lowest)", _claim("lowest", {"min_relative_effect": 0.05}), 3, 4),
    Rule("among_fastest", _claim("among_fastest", {"max_excess_over_best": 0.25}), 4, 4),
    Rule("similar (high noise)", _claim("similar", {"lower_ratio": 0.8, "upper_ratio": 1.05}), 4, 1),
    Rule(
        "best_parameter (majority)",
        _claim("best_parameter", {"max_excess_over_best": 0.1}, require="majority"),
        3,
        2,
    ),
    Rule("greater (deeper tree)", _claim("greater", {"min_ratio": 1.1, "refuted_below": 1 / 1.1}), 5, 1),
    Rule("greater (bo-cost)", _claim("greater", {"min_ratio": 10.0}), 3, 5),
    Rule("contrast (small gap)", _claim("contrast", {"min_factor": 1.0}, direction="greater"), 6, 1),
    Rule("contrast (noise)", _claim("contrast", {"min_factor": 1.0}, direction="less"), 3, 1),
    Rule("easier (normalized regret)", _claim("lowest", {"min_relative_effect": 0.05}), 2, 3),
    Rule("sublinear", _claim("sublinear", {"max_slope": 0.95, "refuted_above": 1.0}), 5, 1),
)


def draw(
    rng: np.random.Generator, mean: float, n: int, distribution: str, cv: float = SHIPPED_CV
) -> np.ndarray:
    """n per-seed values with the given mean: normal (coefficient of variation cv) or bimodal."""
    if distribution == "normal":
        return rng.normal(mean, cv * abs(mean), n)
    low = rng.random(n) < BIMODAL_SHARE
    spread = np.where(low, BIMODAL_LOW_SPREAD, BIMODAL_JITTER)
    level = np.where(low, BIMODAL_LOW, 1.0) * (1.0 + spread * rng.standard_normal(n))
    upper = mean / (BIMODAL_SHARE * BIMODAL_LOW + 1.0 - BIMODAL_SHARE)
    return upper * level


def truths(rule: Rule) -> dict[str, float]:
    """The true ratio (or slope, or ratio of ratios) of each scenario."""
    kind = rule.claim["kind"]
    th = rule.claim["thresholds"]
    if kind == "sublinear":
        return {
            "claimed boundary": th["max_slope"],
            "refuting boundary": th["refuted_above"],
            "identical": 1.0,
            "planted": 2 * th["max_slope"] - 1.0,
        }
    if kind == "contrast":
        c = th["min_factor"]
        sign = -1.0 if rule.claim["direction"] == "less" else 1.0
        return {
            "claimed boundary": c**sign,
            "refuting boundary": c ** (-sign),
            "identical": 1.0,
            "planted": math.exp(sign * 0.15) * c**sign,
        }
    rs = regions(rule.claim)
    claimed, refuting = rs[0], rs[len(rs) // 2]
    if kind == "similar":
        claimed, refuting = rs[1], rs[3]  # the upper margin: at "similar", the refuting side is "worse"
        planted = (th["lower_ratio"] + th["upper_ratio"]) / 2
    else:
        step = claimed.factor - 1.0 if claimed.factor != 1.0 else 0.05
        planted = claimed.factor + (step if claimed.alternative == "greater" else -abs(step))
        if kind in ("among_fastest", "best_parameter"):
            planted = 1.0
    return {
        "claimed boundary": claimed.factor,
        "refuting boundary": refuting.factor,
        "identical": 1.0,
        "planted": planted,
    }


def _parts(rule: Rule, truth: float, n: int, distribution: str, rng) -> list[tuple[str, list[Comparison]]]:
    """One made-up claim: every experiment's comparisons at the given truth."""
    claim, parts = rule.claim, []
    for e in range(rule.experiments):
        name = f"e{e}"
        comps = []
        for k in range(rule.comparisons):
            if claim["kind"] == "sublinear":
                slopes = truth + SLOPE_SD * (draw(rng, 1.0, n, distribution, 1.0) - 1.0)
                base = Comparison(name, "A", "-")
                comps.append(slope_comparison(claim, base, dict(enumerate(slopes.tolist()))))
            elif claim["kind"] == "contrast":
                b1, a2, b2 = (draw(rng, 100.0, n, "normal") for _ in range(3))
                a1 = draw(rng, 100.0 * truth, n, distribution)
                base = Comparison(name, "A", "B")
                comps.append(contrast_comparison(claim, base, a1, b1, a2, b2))
            else:
                sb = draw(rng, 100.0, n, "normal")
                sa = draw(rng, 100.0 * truth, n, distribution)
                a, b = dict(enumerate(sa.tolist())), dict(enumerate(sb.tolist()))
                comps.append(compare_samples(claim, name, "A", f"B{k}", a, b))
        parts.append((name, comps))
    return parts


@dataclass(frozen=True)
class Row:
    """Claim-level verdict rates of one rule, seeds and distribution."""

    rule: str
    seeds: int
    distribution: str
    false_refutation: float
    false_reproduction: float
    identical_reproduced: float
    identical_refuted: float
    power: float
    repetitions: int


def rates(rule: Rule, n: int, distribution: str, repetitions: int, seed: int) -> Row:
    """Claim-level rates of a rule under every scenario, from ``repetitions`` made-up claims."""
    rng = np.random.default_rng([seed, n, DISTRIBUTIONS.index(distribution), RULES.index(rule)])
    out = {}
    for scenario, truth in truths(rule).items():
        verdicts = [
            conclude(rule.claim, _parts(rule, truth, n, distribution, rng))["verdict"]
            for _ in range(repetitions)
        ]
        out[scenario] = (
            verdicts.count(REPRODUCED) / repetitions,
            verdicts.count(NOT_REPRODUCED) / repetitions,
        )
    return Row(
        rule.name,
        n,
        distribution,
        false_refutation=out["refuting boundary"][1],
        false_reproduction=out["claimed boundary"][0],
        identical_reproduced=out["identical"][0],
        identical_refuted=out["identical"][1],
        power=out["planted"][0],
        repetitions=repetitions,
    )


def calibrate(repetitions: int, seed: int = 0, rules=RULES, seeds=SEEDS) -> Iterator[Row]:
    """Every rule x seeds x distribution."""
    for rule in rules:
        for n in seeds:
            for distribution in DISTRIBUTIONS:
                yield rates(rule, n, distribution, repetitions, seed)


def binomial_bound(rate: float, repetitions: int, z: float = 3.0) -> float:
    """``rate`` plus z binomial standard errors: the Monte Carlo allowance of an observed rate."""
    return rate + z * math.sqrt(rate * (1.0 - rate) / repetitions)


def table(rows: list[Row], emit: Callable[[str], None] = print) -> float:
    """Print the rows as a Markdown table and the last line ``max false refutation rate: X``."""
    emit(
        "| rule | seeds | samples | false not reproduced | false reproduced | identical: reproduced / "
        "not reproduced | power |"
    )
    emit("|---|---|---|---|---|---|---|")
    for r in rows:
        emit(
            f"| {r.rule} | {r.seeds} | {r.distribution} | {r.false_refutation:.3f} | "
            f"{r.false_reproduction:.3f} | {r.identical_reproduced:.3f} / {r.identical_refuted:.3f} | "
            f"{r.power:.3f} |"
        )
    worst = max(r.false_refutation for r in rows)
    emit(f"max false reproduction rate: {max(r.false_reproduction for r in rows):.4f}")
    emit(f"max false refutation rate: {worst:.4f}")
    return worst


#: experiments of a question beyond the paper in the paper-scale config (garland, landmine, mnist, one more)
QUESTION_EXPERIMENTS = 4
#: the truths of the two-sided question rule: the ratio of means A/B shared by every experiment
QUESTION_TRUTHS = {"A at its margin": 0.95, "B at its margin": 1 / 0.95, "identical": 1.0, "planted": 0.9}


def question_rates(
    n: int, distribution: str, repetitions: int, seed: int = 0, experiments: int = QUESTION_EXPERIMENTS
) -> dict[str, float]:
    """False-answer rates and power of the two-sided question rule (``decide_question``).

    Made-up questions of ``experiments`` experiments, A's samples in ``distribution`` and B's normal:
    ``false A`` is the rate of any "A better" with every ratio at A's margin (the least favourable
    truth for it), ``false B`` the same for B, ``identical`` the rate of any answer but "no
    significant difference" for one distribution, ``power`` the share of "A better" at ratio 0.9.
    """
    from vhct.reporting.audit.beyond import question_claim
    from vhct.reporting.audit.verdicts import decide_question

    question = {"id": "q", "statistic": "cumulative_regret", "a": "A", "b": "B", "round": "common",
                "experiments": [f"e{e}" for e in range(experiments)], "alpha": ALPHA, "min_seeds": 2,
                "thresholds": {"min_relative_effect": 0.05}}  # fmt: skip
    claim = question_claim(question)
    rng = np.random.default_rng([seed, n, DISTRIBUTIONS.index(distribution)])
    out = {}
    for scenario, truth in QUESTION_TRUTHS.items():
        answers = []
        for _ in range(repetitions):
            comps = []
            for e in range(experiments):
                sb = dict(enumerate(draw(rng, 100.0, n, "normal").tolist()))
                sa = dict(enumerate(draw(rng, 100.0 * truth, n, distribution).tolist()))
                comps.append(compare_samples(claim, f"e{e}", "A", "B", sa, sb))
            answers.append([c.verdict for c in decide_question(comps, ALPHA)])
        if scenario == "planted":
            out["power"] = float(np.mean([a.count("A better") / experiments for a in answers]))
        elif scenario == "identical":
            out["identical"] = float(np.mean([any(v.endswith(" better") for v in a) for a in answers]))
        else:
            side = "A better" if scenario.startswith("A") else "B better"
            out["false A" if side == "A better" else "false B"] = float(np.mean([side in a for a in answers]))
    return out
