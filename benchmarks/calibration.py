"""The audit's rules on samples of known truth: how often each rule gives a false verdict, and its power
(used by ``audit_calibration.py``, ``beyond_calibration.py`` and ``tests/unit/test_calibration.py``).

Every rule is fed made-up per-seed samples, many times, through the same code as the audit (the
claim kind's ``made_up`` comparison, then ``conclude``; without the display-only interval of the
bootstrap comparisons, which no verdict reads). A rule is a claim of the claims file with its
structure (experiments x comparisons per experiment), one per distinct shape (kind, thresholds,
direction, require, alpha, structure). Truths, each the least favourable configuration for its error:

- ``one at the claimed margin``: one comparison exactly at the claimed margin, the others far
  inside the claimed region (an all-must-hold claim then rests on one test at alpha; a majority
  claim of k experiments has one such comparison in each of k - need + 1 experiments): any
  "reproduced" is false;
- ``all at the claimed margin``: any "not reproduced" (either kind) is false;
- ``all at the refuting margin``: any "not reproduced: the opposite" is false;
- ``tie``: a true effect between the claimed and the refuting margin: must give "no effect" or
  "inconclusive", never "reproduced" or "the opposite";
- a grid of true effects shared by every comparison: the power curves.

Distributions: normal with the coefficient of variation measured from an audit's per-seed values
(:func:`shipped_cv`: the 90th percentile over the shipped audit's comparisons), and bimodal like
T-HOO rho = 0.25 on 2-D Rastrigin (30 % of seeds near 0.28 of the upper mode, spread 40 %).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from vhct.reporting.audit.claims import load_beyond, load_claims
from vhct.reporting.audit.claims_model import Claim, ClaimsFile
from vhct.reporting.audit.evaluate import conclude
from vhct.reporting.audit.records import read_audit
from vhct.reporting.audit.verdicts import NO_EFFECT, NOT_REPRODUCED, OPPOSITE, REPRODUCED

#: the shipped audit whose per-seed values give the spread of the normal samples
SHIPPED_AUDIT = Path(__file__).resolve().parents[1] / "docs" / "findings" / "audit.json"
#: the bimodal shape of T-HOO rho = 0.25 on 2-D Rastrigin: share of seeds in the lower mode, its level
BIMODAL_SHARE, BIMODAL_LOW, BIMODAL_LOW_SPREAD, BIMODAL_JITTER = 0.3, 0.28, 0.4, 0.03
SEEDS = (20,)
DISTRIBUTIONS = ("normal", "bimodal")
#: how far inside the claimed region the other comparisons sit (log ratio, or slope for a difference)
FAR_INSIDE = 0.5
FAR_INSIDE_ADDITIVE = 0.2
#: the power points past the claimed margin (log ratio, or slope): 5 % and 15 % (slopes 0.05, 0.1)
POWER_STEPS, POWER_STEPS_ADDITIVE = (0.05, 0.15), (0.05, 0.1)


@dataclass(frozen=True)
class Rule:
    """A rule as a claim uses it: the claim, and experiments x comparisons per experiment."""

    name: str
    claim: Claim
    experiments: int
    comparisons: int


def rule_of(claim: Claim, margin: str = "") -> Rule:
    """The claim as a rule (``margin``: the other margin it is read at, named in the rule's name);
    every sample size is evaluated (the audit itself decides only from the claim's ``min_seeds`` on)."""
    units = len(claim.pairs or claim.experiments)
    made_up = claim.model_copy(update={"min_seeds": 2})
    name = f"{claim.kind} ({claim.id}{' at ' + margin if margin else ''})"
    return Rule(name, made_up, units, claim.spec.per_unit(claim))


def _read_at(claim: Claim) -> list[tuple[Claim, str]]:
    """The claim, then the claim at each other margin it is read at with that margin's text."""
    return [(claim, "")] + [
        (other, ", ".join(f"{k} {v:g}" for k, v in margin.given().items()))
        for other, margin in zip(claim.at_margins(), claim.margins or [], strict=True)
    ]


def rules(claims: ClaimsFile | None = None) -> tuple[Rule, ...]:
    """One rule per distinct shape of the claims file's claims (the shipped one by default), each
    also at the other margins it is read at (``margins``: the project's, printed beside its verdict)."""
    shapes = {}
    for claim, margin in (read for c in (claims or load_claims()).claims for read in _read_at(c)):
        rule = rule_of(claim, margin)
        key = (
            claim.kind,
            tuple(sorted(claim.thresholds.given().items())),
            claim.direction,
            claim.require,
            claim.alpha,
            rule.experiments,
            rule.comparisons,
        )
        shapes.setdefault(key, rule)
    return tuple(shapes.values())


def draw(
    rng: np.random.Generator,
    distribution: str,
    cv: float,
    mean: float,
    n: int,
    shaped: bool = True,
    spread: float | None = None,
) -> np.ndarray:
    """n per-seed values with the given mean: in ``distribution`` when ``shaped`` (else normal),
    normal ones with coefficient of variation ``spread`` (default ``cv``)."""
    if distribution == "normal" or not shaped:
        return rng.normal(mean, (cv if spread is None else spread) * abs(mean), n)
    low = rng.random(n) < BIMODAL_SHARE
    jitter = np.where(low, BIMODAL_LOW_SPREAD, BIMODAL_JITTER)
    level = np.where(low, BIMODAL_LOW, 1.0) * (1.0 + jitter * rng.standard_normal(n))
    return mean / (BIMODAL_SHARE * BIMODAL_LOW + 1.0 - BIMODAL_SHARE) * level


def margins(rule: Rule) -> tuple[float, float, int]:
    """The claimed margin, the refuting margin and the claimed side (the kind's)."""
    return rule.claim.spec.margins(rule.claim)


def _step(rule: Rule, value: float, step: float) -> float:
    """``value`` moved by ``step`` (a difference, or a log ratio)."""
    return value + step if rule.claim.spec.additive else value * math.exp(step)


def far_inside(rule: Rule) -> float:
    """A truth far inside the claimed region: a band's middle, else past the claimed margin."""
    (claimed_span,), _ = rule.claim.spec.intervals(rule.claim)
    if all(math.isfinite(v) and v > 0 for v in claimed_span):
        return sum(claimed_span) / 2
    claimed, _, side = margins(rule)
    return _step(rule, claimed, side * (FAR_INSIDE_ADDITIVE if rule.claim.spec.additive else FAR_INSIDE))


def scenarios(rule: Rule) -> dict[str, list[float]]:
    """Per scenario, the truth of every comparison (experiments x comparisons, in order)."""
    k = rule.experiments * rule.comparisons
    claimed, refuting, _ = margins(rule)
    false_experiments = 1
    if rule.claim.require == "majority":
        false_experiments = rule.experiments - (rule.experiments // 2 + 1) + 1
    one = [far_inside(rule)] * k
    for e in range(false_experiments):
        one[e * rule.comparisons] = claimed
    out = {
        "one at the claimed margin": one,
        "all at the claimed margin": [claimed] * k,
        "all at the refuting margin": [refuting] * k,
    }
    if claimed != refuting:
        additive = rule.claim.spec.additive
        out["tie"] = [0.5 * (claimed + refuting) if additive else math.sqrt(claimed * refuting)] * k
    return out


def _parts(rule: Rule, truths: Sequence[float], sample: Callable[..., np.ndarray], n: int):
    """One made-up claim: every experiment's comparisons at the given truths."""
    parts, it, kind = [], iter(truths), rule.claim.spec
    for e in range(rule.experiments):
        parts.append(
            (
                f"e{e}",
                [kind.made_up(rule.claim, f"e{e}", next(it), sample, n) for _ in range(rule.comparisons)],
            )
        )
    return parts


def outcomes(
    rule: Rule, truths: Sequence[float], n: int, distribution: str, cv: float, repetitions: int, rng
):
    """Shares of the claim-level outcomes: reproduced, the opposite, no effect, inconclusive."""
    counts = {REPRODUCED: 0, OPPOSITE: 0, NO_EFFECT: 0, "inconclusive": 0}
    sample = partial(draw, rng, distribution, cv)
    for _ in range(repetitions):
        result = conclude(rule.claim, _parts(rule, truths, sample, n))
        key = result["category"] if result["verdict"] == NOT_REPRODUCED else result["verdict"]
        counts[key if key in counts else "inconclusive"] += 1
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
        rule.name,
        n,
        distribution,
        false_reproduction=got["one at the claimed margin"][REPRODUCED],
        false_refutation=at_claimed[OPPOSITE] + at_claimed[NO_EFFECT],
        false_opposite=got["all at the refuting margin"][OPPOSITE],
        tie_reproduced=tie[REPRODUCED],
        tie_opposite=tie[OPPOSITE],
        tie_no_effect=tie[NO_EFFECT],
        repetitions=repetitions,
    )


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
    """Probability of each claim-level outcome against the true effect shared by every comparison."""
    claimed, refuting, side = margins(rule)
    if rule.claim.spec.additive:
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
    """Two true effects past the claimed margin into the claimed region."""
    claimed, _, side = margins(rule)
    steps = POWER_STEPS_ADDITIVE if rule.claim.spec.additive else POWER_STEPS
    return _step(rule, claimed, side * steps[0]), _step(rule, claimed, side * steps[1])


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
    ``max false refutation rate: X``."""
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


# ---------------------------------------------------------------- the spread, from an audit


def audit_samples(path: Path | str = SHIPPED_AUDIT) -> tuple[list[dict[str, float]], frozenset[int]]:
    """The per-seed values of each side of each comparison of an audit JSON (read by the audit's one
    reader), and the distinct seed counts of its experiments and settings."""
    audit = read_audit(path)
    comparisons = [c for claim in audit.claims for e in claim.experiments for c in e.comparisons]
    experiments = audit.context.experiments.values()
    counts = {len(e.seeds) for e in experiments} | {
        len(s.seeds) for e in experiments for s in e.settings.values()
    }
    return [v for c in comparisons for v in (c.values_a, c.values_b)], frozenset(counts)


def shipped_cvs(path: Path | str = SHIPPED_AUDIT) -> np.ndarray:
    """Coefficients of variation (sd / mean) of every per-seed sample in an audit JSON."""
    out = []
    for values in audit_samples(path)[0]:
        x = np.array(list(values.values()), dtype=float)
        if x.size >= 2 and x.mean() > 0:
            out.append(x.std(ddof=1) / x.mean())
    if not out:
        raise ValueError(f"audit {path} has no per-seed values to measure a spread from")
    return np.array(out)


def shipped_cv(quantile: float = 0.9, path: Path | str = SHIPPED_AUDIT) -> float:
    """A quantile of an audit's samples' coefficients of variation (the calibration's spread)."""
    return float(np.quantile(shipped_cvs(path), quantile))


def shipped_seeds(path: Path | str = SHIPPED_AUDIT) -> tuple[int, ...]:
    """The distinct seed counts of the settings of an audit's experiments, largest first."""
    return tuple(sorted(audit_samples(path)[1], reverse=True))


# ---------------------------------------------------------------- the questions beyond the paper

#: experiments of a question beyond the paper in the paper-scale config (garland, landmine, mnist, one more)
QUESTION_EXPERIMENTS = 4
#: the planted truth of the questions' power: the ratio of means A/B
QUESTION_PLANTED = 0.9


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
    significant difference" for one distribution, ``power`` the share of "A better" at the planted ratio.
    """
    from vhct.reporting.audit.beyond import question_claim
    from vhct.reporting.audit.questions_model import Question
    from vhct.reporting.audit.verdicts import decide_question

    defaults = load_beyond().defaults  # the shipped questions' alpha, statistic and margin
    margin = 1.0 - defaults.thresholds.min_relative_effect
    truths = {
        "A at its margin": margin,
        "B at its margin": 1 / margin,
        "identical": 1.0,
        "planted": QUESTION_PLANTED,
    }
    question = Question(
        id="q",
        question="q",
        a="A",
        b="B",
        round="common",
        min_seeds=2,
        experiments=[f"e{e}" for e in range(experiments)],
        alpha=defaults.alpha,
        statistic=defaults.statistic,
        thresholds=defaults.thresholds,
    )
    claim = question_claim(question)
    rng = np.random.default_rng([seed, n, DISTRIBUTIONS.index(distribution)])
    sample = partial(draw, rng, distribution, shipped_cv() if cv is None else cv)
    out = {}
    for scenario, truth in truths.items():
        answers = []
        for _ in range(repetitions):
            comps = [claim.spec.made_up(claim, f"e{e}", truth, sample, n) for e in range(experiments)]
            answers.append([c.verdict for c in decide_question(comps, question.alpha)])
        if scenario == "planted":
            out["power"] = float(np.mean([a.count("A better") / experiments for a in answers]))
        elif scenario == "identical":
            out["identical"] = float(np.mean([any(v.endswith(" better") for v in a) for a in answers]))
        else:
            side = "A better" if scenario.startswith("A") else "B better"
            out["false A" if side == "A better" else "false B"] = float(np.mean([side in a for a in answers]))
    return out


# ---------------------------------------------------------------- the two-stage design (issue 37)

#: the most seeds per arm the two-stage simulation's plan may give (config/paper-local.yaml's synthetic cap)
TWO_STAGE_CAP = 200
#: what the two-stage rates are reported on: the least favourable truths of a false verdict
TWO_STAGE_SCENARIOS = ("one at the claimed margin", "all at the claimed margin", "all at the refuting margin")


@dataclass(frozen=True)
class TwoStageRow:
    """Claim-level false verdict rates of a rule under the two-stage design, with their Monte Carlo
    errors (binomial standard errors), and the confirmatory seeds the plan gave (mean per comparison)."""

    rule: str
    distribution: str
    false_reproduction: float
    false_refutation: float
    false_opposite: float
    repetitions: int
    mean_seeds: float

    def error(self, rate: float) -> float:
        """One binomial standard error of ``rate`` at this row's repetitions (at least that of alpha's)."""
        return math.sqrt(max(rate, 1e-12) * (1.0 - rate) / self.repetitions)


#: repetitions per chunk of the two-stage simulation: each chunk has its own seeded generator, so the
#: rates do not depend on how many processes run the chunks
TWO_STAGE_CHUNK = 25


def two_stage_outcomes(
    rule: Rule,
    truths: Sequence[float],
    distribution: str,
    cv: float,
    repetitions: int,
    rng,
    pilot: int = 20,
    cap: int = TWO_STAGE_CAP,
    floor: int | None = None,
) -> tuple[dict[str, int], int, int]:
    """Counts of the claim-level outcomes under the two-stage design, the planned seeds' total and the
    comparisons planned: per repetition a pilot of ``pilot`` seeds at the truths, each comparison's
    seeds computed from the pilot's samples by the analysis plan's own computation (the audit's need
    at the claim's effect of interest, ``planned_seeds``: floored at the claims' min_seeds, past
    ``cap`` the cap), then a fresh confirmatory sample of that many, and the verdict on it alone."""
    from vhct.pipeline.config.plan import planned_seeds

    floor = load_claims().defaults.min_seeds if floor is None else floor
    counts = {REPRODUCED: 0, OPPOSITE: 0, NO_EFFECT: 0, "inconclusive": 0}
    sample = partial(draw, rng, distribution, cv)
    kind, total, planned = rule.claim.spec, 0, 0
    for _ in range(repetitions):
        parts = []
        it = iter(truths)
        for e in range(rule.experiments):
            comps = []
            for _ in range(rule.comparisons):
                truth = next(it)
                first = kind.made_up(rule.claim, f"e{e}", truth, sample, pilot)
                # the pilot comparison's own need: the audit's computation, which the plan's
                # seeds_needed runs again from the samples (tests/unit/test_plan.py: the same number)
                n, _ = planned_seeds(first.seeds_needed, floor, cap)
                total, planned = total + n, planned + 1
                comps.append(kind.made_up(rule.claim, f"e{e}", truth, sample, n))
            parts.append((f"e{e}", comps))
        result = conclude(rule.claim, parts)
        key = result["category"] if result["verdict"] == NOT_REPRODUCED else result["verdict"]
        counts[key if key in counts else "inconclusive"] += 1
    return counts, total, planned


def two_stage_chunk(
    rule: Rule,
    distribution: str,
    scenario: str,
    chunk: int,
    repetitions: int,
    seed: int,
    cv: float,
    cap: int,
    floor: int,
) -> tuple[dict[str, int], int, int]:
    """One chunk of a scenario's repetitions, from its own generator (seeded by the seed, the
    distribution, the rule, the scenario and the chunk): what a worker process runs."""
    key = [seed, 37, DISTRIBUTIONS.index(distribution), sum(map(ord, rule.name))]
    rng = np.random.default_rng([*key, TWO_STAGE_SCENARIOS.index(scenario), chunk])
    return two_stage_outcomes(
        rule, scenarios(rule)[scenario], distribution, cv, repetitions, rng, cap=cap, floor=floor
    )


def two_stage_tasks(rule: Rule, distribution: str, repetitions: int) -> list[tuple[str, int, int]]:
    """The (scenario, chunk, repetitions) of a rule's two-stage simulation."""
    chunks = [
        (c, min(TWO_STAGE_CHUNK, repetitions - c * TWO_STAGE_CHUNK))
        for c in range(math.ceil(repetitions / TWO_STAGE_CHUNK))
    ]
    return [(name, c, n) for name in TWO_STAGE_SCENARIOS for c, n in chunks]


def two_stage_row(
    rule: Rule, distribution: str, repetitions: int, results: Sequence[tuple[str, tuple[dict, int, int]]]
) -> TwoStageRow:
    """A rule's two-stage rates from its chunks' results (scenario, (counts, seeds total, planned))."""
    got = {
        name: dict.fromkeys((REPRODUCED, OPPOSITE, NO_EFFECT, "inconclusive"), 0)
        for name in TWO_STAGE_SCENARIOS
    }
    seeds = {name: [0, 0] for name in TWO_STAGE_SCENARIOS}
    for name, (counts, total, planned) in results:
        for key, v in counts.items():
            got[name][key] += v
        seeds[name][0] += total
        seeds[name][1] += planned
    share = {name: {k: v / repetitions for k, v in c.items()} for name, c in got.items()}
    at_claimed = share["all at the claimed margin"]
    return TwoStageRow(
        rule.name,
        distribution,
        false_reproduction=share["one at the claimed margin"][REPRODUCED],
        false_refutation=at_claimed[OPPOSITE] + at_claimed[NO_EFFECT],
        false_opposite=share["all at the refuting margin"][OPPOSITE],
        repetitions=repetitions,
        mean_seeds=float(np.mean([t / max(p, 1) for t, p in seeds.values()])),
    )


def two_stage_rates(
    rule: Rule, distribution: str, repetitions: int, seed: int, cv: float, cap: int = TWO_STAGE_CAP
) -> TwoStageRow:
    """A rule's false verdict rates under the two-stage design (pilot, plan, confirmatory sample), its
    chunks run here in turn (``audit_calibration.py`` runs them on every core: the same numbers)."""
    floor = load_claims().defaults.min_seeds
    results = [
        (name, two_stage_chunk(rule, distribution, name, c, n, seed, cv, cap, floor))
        for name, c, n in two_stage_tasks(rule, distribution, repetitions)
    ]
    return two_stage_row(rule, distribution, repetitions, results)


def two_stage_table(rows: Sequence[TwoStageRow], alpha: float, emit: Callable[[str], None] = print) -> bool:
    """The two-stage rows as a Markdown table (each rate with its Monte Carlo error); whether every
    rate is within alpha + 3 Monte Carlo errors (of alpha at the rows' repetitions)."""
    emit(
        "| rule | samples | false reproduced (one at margin) | false not reproduced (at claimed margin) "
        "| false opposite (at refuting margin) | confirmatory seeds per arm (mean) |"
    )
    emit("|---|---|---|---|---|---|")
    ok = True
    for r in rows:
        cells = []
        for rate in (r.false_reproduction, r.false_refutation, r.false_opposite):
            cells.append(f"{rate:.3f} ± {r.error(rate):.3f}")
            ok &= rate <= binomial_bound(alpha, r.repetitions)
        emit(f"| {r.rule} | {r.distribution} | {' | '.join(cells)} | {r.mean_seeds:.0f} |")
    return ok
