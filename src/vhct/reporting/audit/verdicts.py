"""The verdicts of the audit and how they are decided: one rule for every kind of check.

A comparison is reproduced when its claimed test is significant at alpha; not reproduced when a
refuting test ("the opposite", or "no effect of the claimed size"), Holm-adjusted over all the
claim's refuting tests, is; else inconclusive (underpowered, or too few seeds: ``category``). An
experiment is reproduced when every comparison is (intersection-union); a claim when every evaluated
experiment is, or a majority (Holm over experiments).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from vhct.pipeline.config.plan import need_text, shown_need
from vhct.reporting import stats
from vhct.reporting.audit.effects import effect_text
from vhct.reporting.audit.records import (  # noqa: F401 (the verdicts' vocabulary, re-exported)
    CATEGORIES,
    INCONCLUSIVE,
    NO_DIFFERENCE,
    NO_EFFECT,
    NOT_EVALUATED,
    NOT_REPRODUCED,
    OPPOSITE,
    PENDING,
    REPRODUCED,
    TOO_FEW,
    TOO_FEW_SEEDS,
    UNDERPOWERED,
    VERDICTS,
    ClaimVerdict,
    Comparison,
    ExperimentVerdict,
    PlannedNeed,
)

#: a statement whose evaluated readings give different verdicts (a flip: none of them is picked)
READINGS_DISAGREE = "readings disagree"
#: how a comparison's label marks a round before the experiment's horizon ("at t = 50 of 500")
EARLY_MARK = " at t = "


def _fmt(p: float) -> str:
    return f"{p:.3g}"


def estimate_text(c: Comparison) -> str:
    """``ratio of means 1.043, 90% CI [1.000, 1.088]`` (the interval when there is one; durations
    where the effect is in units of a threshold of seconds: :func:`.effects.effect_text`)."""
    return effect_text(c.effect_name, c.effect, c.ci_low, c.ci_high, c.ci_level) if c.effect_name else ""


def _holm_text(p: float, p_holm: float, family: int, floor: float | None) -> str:
    raw = stats.format_p(p, floor)
    at_floor = floor is not None and p <= floor * (1.0 + 1e-9)
    adjusted = f"< {p_holm:.3g}" if at_floor and p_holm < 1.0 else f"= {_fmt(p_holm)}"
    return f"{raw}, Holm-adjusted over {family} refuting tests {adjusted}"


#: a comparison's planned need, if its audit has an analysis plan (``records.Design.needs``)
Planned = Callable[[Comparison], PlannedNeed | None]

#: the most seeds per arm a need is stated as: the analysis plan's cap (``plan: max_seeds`` of
#: config/paper-local.yaml; tests/unit/test_plan.py checks they agree); past it a comparison reads
#: "underpowered at the cap", as in the plan, and no larger need is printed
NEED_CAP = 200


def _need_text(need: int | None) -> str:
    if need is None:
        return "the claim's effect of interest lies outside its claimed region at this margin"
    return need_text(need, NEED_CAP) + " given the observed spread"


def decide(comps: Sequence[Comparison], alpha: float, planned: Planned | None = None) -> list[Comparison]:
    """Verdicts of a claim's comparisons: claimed tests at alpha, refuting tests Holm-adjusted together.
    ``planned(comparison)``: its analysis plan's need, which an underpowered one states (the one need
    of that comparison in every document) instead of one from its own spread."""
    tested = [i for i, c in enumerate(comps) if c.verdict == PENDING]
    family = [(i, "refuted", comps[i].p_refuted) for i in tested]
    family += [(i, "no_effect", comps[i].p_no_effect) for i in tested if comps[i].p_no_effect is not None]
    adjusted = stats.holm([p for _, _, p in family]) if family else []
    holm_of = {(i, kind): p for (i, kind, _), p in zip(family, adjusted, strict=True)}
    out = list(comps)
    for i in tested:
        c = comps[i]
        p_holm, p_ne_holm = holm_of[(i, "refuted")], holm_of.get((i, "no_effect"))
        floor, need = (1.0 / (c.resamples + 1) if c.resamples else None), None
        if c.p_claimed <= alpha:
            verdict, category = REPRODUCED, REPRODUCED
            why = f"{c.claimed}: {stats.format_p(c.p_claimed, floor)} <= {alpha:g}"
        elif p_holm <= alpha:
            verdict, category = NOT_REPRODUCED, OPPOSITE
            holm = _holm_text(c.p_refuted, p_holm, len(family), floor)
            why = f"the opposite, {c.refuted}: {holm} <= {alpha:g}"
        elif p_ne_holm is not None and p_ne_holm <= alpha:
            verdict, category = NOT_REPRODUCED, NO_EFFECT
            holm = _holm_text(c.p_no_effect, p_ne_holm, len(family), floor)
            why = f"no effect of the claimed size, {c.no_effect}: {holm} <= {alpha:g}"
        else:
            verdict, category, need = INCONCLUSIVE, UNDERPOWERED, shown_need(c.seeds_needed, NEED_CAP)
            said = _need_text(c.seeds_needed)
            plan = planned(c) if planned is not None else None
            if plan is not None:
                need, said = plan.need, f"the analysis plan: {need_text(plan.need, plan.cap)}"
            against = f"; {c.no_effect}: Holm-adjusted p = {_fmt(p_ne_holm)}" if p_ne_holm is not None else ""
            why = (
                f"underpowered: neither {c.claimed} ({stats.format_p(c.p_claimed, floor)}) nor {c.refuted} "
                f"(Holm-adjusted p = {_fmt(p_holm)}{against}) significant; " + said
            )
        out[i] = dataclasses.replace(
            c,
            p_refuted_holm=p_holm,
            p_no_effect_holm=p_ne_holm,
            verdict=verdict,
            category=category,
            seeds_needed=need,
            reason=_reason(c, estimate_text(c), why),
        )
    for i, c in enumerate(out):  # the untested: a category, and the label before the reason
        labelled = c.verdict in (REPRODUCED, NOT_REPRODUCED) or c.reason.startswith(c.label)
        out[i] = dataclasses.replace(
            c,
            category=c.category or (TOO_FEW if c.verdict == INCONCLUSIVE else c.verdict),
            reason=c.reason if labelled else f"{c.label}: {c.reason}",
        )
    return out


def _reason(c: Comparison, estimate: str, why: str) -> str:
    """``label: estimate; why (reference)``."""
    reason = f"{c.label}: {estimate}; {why}" if estimate else f"{c.label}: {why}"
    return reason + (f" ({c.reference})" if c.reference else "")


def category_of(verdict: str, categories: Sequence[str]) -> str:
    """The category of a combined verdict from its parts' categories: "the opposite" over "no effect",
    "too few seeds" over "underpowered" (the configuration, not the data, left it open)."""
    return next((c for c in CATEGORIES[verdict] if c in categories), CATEGORIES[verdict][0])


def seeds_to_decide(parts: Sequence[Comparison | ExperimentVerdict]) -> int | None:
    """The seeds per arm that would decide every underpowered part (their largest need)."""
    needs = [c.seeds_needed for c in parts if c.category == UNDERPOWERED]
    return None if not needs or None in needs else max(needs)


def decide_question(comps: Sequence[Comparison], alpha: float) -> list[Comparison]:
    """Answers of a two-sided question ("does A beat B?"): both one-sided tests of every comparison in
    one Holm family; "A better" or "B better" where that side's adjusted p <= alpha, else no difference."""
    tested = [i for i, c in enumerate(comps) if c.verdict == PENDING]
    adjusted = stats.holm([p for i in tested for p in (comps[i].p_claimed, comps[i].p_refuted)])
    out = list(comps)
    family = f"Holm over the {2 * len(tested)} one-sided tests of the question"
    for k, i in enumerate(tested):
        c = comps[i]
        p_a, p_b = adjusted[2 * k], adjusted[2 * k + 1]
        if p_a <= alpha:
            verdict, why = f"{c.a} better", f"{c.claimed}: p = {_fmt(c.p_claimed)}, {family} = {_fmt(p_a)}"
        elif p_b <= alpha:
            verdict, why = f"{c.b} better", f"{c.refuted}: p = {_fmt(c.p_refuted)}, {family} = {_fmt(p_b)}"
        else:
            verdict = NO_DIFFERENCE
            why = f"neither {c.claimed} nor {c.refuted} significant ({family}: {_fmt(p_a)}, {_fmt(p_b)})"
        reason = _reason(c, effect_text(c.effect_name, c.effect), why)
        out[i] = dataclasses.replace(
            c, p_claimed_holm=p_a, p_refuted_holm=p_b, verdict=verdict, reason=reason
        )
    for i, c in enumerate(out):
        if c.verdict == INCONCLUSIVE:
            out[i] = dataclasses.replace(c, verdict=TOO_FEW_SEEDS, reason=f"{c.label}: {c.reason}")
        elif c.verdict == NOT_EVALUATED and not c.reason.startswith(c.label):
            out[i] = dataclasses.replace(c, reason=f"{c.label}: {c.reason}")
    return out


def combine(verdicts: Sequence[str], strict: bool = True) -> str:
    """Comparisons -> experiment (``strict``: an unevaluated part blocks "reproduced"), experiments ->
    claim: not reproduced if any part is, reproduced if all are, not evaluated if none was, else
    inconclusive."""
    evaluated = [v for v in verdicts if v != NOT_EVALUATED]
    if not evaluated:
        return NOT_EVALUATED
    if NOT_REPRODUCED in evaluated:
        return NOT_REPRODUCED
    if all(v == REPRODUCED for v in (verdicts if strict else evaluated)):
        return REPRODUCED
    return INCONCLUSIVE


def majority(results: Sequence[ExperimentVerdict], alpha: float) -> tuple[str, str]:
    """A claim that holds "in general": each experiment's intersection-union p Holm-adjusted over the
    experiments; reproduced when a majority reject, not reproduced when no majority can hold."""
    evaluated = [r for r in results if r.verdict != NOT_EVALUATED]
    if not evaluated:
        return NOT_EVALUATED, "no experiment evaluated"
    k = len(evaluated)
    need = k // 2 + 1

    def iut(r: ExperimentVerdict) -> float:  # the largest claimed p of its comparisons (1: untested)
        return max((1.0 if c.p_claimed is None else c.p_claimed for c in r.comparisons), default=1.0)

    adjusted = stats.holm([iut(r) for r in evaluated])
    held = [r.experiment for r, p in zip(evaluated, adjusted, strict=True) if p <= alpha]
    refuted = [r.experiment for r in evaluated if r.verdict == NOT_REPRODUCED]
    if len(held) >= need:
        why = f"holds on {len(held)} of {k} experiments ({', '.join(held)}; Holm over experiments)"
        return REPRODUCED, why
    if len(refuted) > k - need:
        why = f"refuted on {len(refuted)} of {k} experiments ({', '.join(refuted)}): no majority"
        return NOT_REPRODUCED, why
    return INCONCLUSIVE, (
        f"holds on {len(held)} and is refuted on {len(refuted)} of {k} experiments (a majority needs {need})"
    )


def combined_reason(verdicts: Sequence[str], reasons: Sequence[str], strict: bool = True) -> str:
    """A short reason for a combined verdict: the reasons of the parts that decided it."""
    verdict = combine(verdicts, strict)
    if verdict == REPRODUCED:
        # a comparison read before the horizon keeps its round in every reason that covers it
        early = [r for r in reasons if EARLY_MARK in r]
        return "; ".join(["every comparison reproduced", *dict.fromkeys(early)])
    if verdict == NOT_REPRODUCED or (verdict == INCONCLUSIVE and not strict):
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v == verdict]
    else:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v != REPRODUCED]
    return "; ".join(dict.fromkeys(picked))


def coverage(results: Sequence[ExperimentVerdict]) -> str:
    """Which experiments a claim was evaluated on, e.g. ``garland (4/5 comparisons); 1 of 3 experiments``."""
    parts = []
    for r in (r for r in results if r.verdict != NOT_EVALUATED):
        done, n = sum(c.verdict != NOT_EVALUATED for c in r.comparisons), len(r.comparisons)
        parts.append(r.experiment + ("" if done == n else f" ({done}/{n} comparisons)"))
    return f"{', '.join(parts) or 'none'}; {len(parts)} of {len(results)} experiments"


def flips(default: str, variant: str) -> bool:
    """A verdict flips when both readings were evaluated and disagree."""
    return NOT_EVALUATED not in (default, variant) and default != variant


@dataclasses.dataclass(frozen=True)
class Statement:
    """One statement of the paper: its readings (the claims with its ``reading_of``, or one claim
    without) and its verdict, theirs where the evaluated ones agree, else ``readings disagree``."""

    id: str
    readings: list[ClaimVerdict]

    @property
    def verdict(self) -> str:
        found = {r.verdict for r in self.readings} - {NOT_EVALUATED}
        if not found:
            return NOT_EVALUATED
        return found.pop() if len(found) == 1 else READINGS_DISAGREE

    @property
    def category(self) -> str:
        """The category the evaluated readings share (the verdict where they differ)."""
        found = {r.category for r in self.readings if r.verdict == self.verdict}
        return found.pop() if len(found) == 1 else self.verdict


def statements(claims: Sequence[ClaimVerdict]) -> list[Statement]:
    """The claims grouped by the statement they read (``reading_of``; a claim without one is its own
    statement), in the order of their first reading."""
    groups: dict[str, list[ClaimVerdict]] = {}
    for c in claims:
        groups.setdefault(c.claim.reading_of or c.claim.id, []).append(c)
    return [Statement(name, readings) for name, readings in groups.items()]


def statement_counts(claims: Sequence[ClaimVerdict]) -> dict[str, int]:
    """Statements per verdict: the four verdicts, then ``readings disagree`` and any other found."""
    found = [s.verdict for s in statements(claims)]
    order = [*VERDICTS, READINGS_DISAGREE, *(v for v in dict.fromkeys(found) if v not in VERDICTS)]
    return {v: found.count(v) for v in dict.fromkeys(order)}
