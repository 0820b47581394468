"""The verdicts of the audit and how they are decided: one rule for every kind of check.

A comparison carries two one-sided p-values (``Comparison.p_claimed``, ``p_refuted``). At the claim
level: the refuting p-values of all the claim's comparisons, across experiments, are Holm-adjusted
together (family-wise error at the claim level); a comparison is reproduced when its claimed test
is significant at alpha, not reproduced when its Holm-adjusted refuting test is, else
inconclusive. An experiment is reproduced when every comparison is (an intersection-union test:
each test at alpha keeps the level alpha, no correction needed); a claim requires every evaluated
experiment (``require: all``) or a majority (``require: majority``, experiments Holm-adjusted).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from vhct.reporting import stats
from vhct.reporting.audit.records import PENDING, Comparison, ExperimentVerdict

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_EVALUATED = "not evaluated"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_EVALUATED)
#: how a comparison's label marks a round before the experiment's horizon ("at t = 50 of 500")
EARLY_MARK = " at t = "


def _fmt(p: float) -> str:
    return f"{p:.3g}"


def decide(comps: Sequence[Comparison], alpha: float) -> list[Comparison]:
    """Verdicts of a claim's comparisons: claimed test at alpha, refuting tests Holm-adjusted together."""
    tested = [i for i, c in enumerate(comps) if c.verdict == PENDING]
    adjusted = stats.holm([comps[i].p_refuted for i in tested]) if tested else []
    out = list(comps)
    for i, p_holm in zip(tested, adjusted, strict=True):
        c = comps[i]
        effect = f"{c.effect_name} {c.effect:.4g}" if c.effect_name else ""
        if c.p_claimed <= alpha:
            verdict = REPRODUCED
            why = f"{c.claimed}: p = {_fmt(c.p_claimed)} <= {alpha:g}"
        elif p_holm <= alpha:
            verdict = NOT_REPRODUCED
            why = (
                f"{c.refuted}: p = {_fmt(c.p_refuted)}, Holm-adjusted over {len(tested)} tests "
                f"= {_fmt(p_holm)} <= {alpha:g}"
            )
        else:
            verdict = INCONCLUSIVE
            why = (
                f"neither {c.claimed} (p = {_fmt(c.p_claimed)}) nor {c.refuted} "
                f"(Holm-adjusted p = {_fmt(p_holm)}) significant"
            )
        reason = f"{c.label}: {effect}; {why}" if effect else f"{c.label}: {why}"
        if c.reference:
            reason += f" ({c.reference})"
        out[i] = dataclasses.replace(c, p_refuted_holm=p_holm, verdict=verdict, reason=reason)
    return [
        c
        if c.verdict in (REPRODUCED, NOT_REPRODUCED) or c.reason.startswith(c.label)
        else dataclasses.replace(c, reason=f"{c.label}: {c.reason}")
        for c in out
    ]


#: answers of a two-sided question beyond the paper (``decide_question``); ``better(s)`` names a side
NO_DIFFERENCE = "no significant difference"
TOO_FEW_SEEDS = "inconclusive (too few seeds)"


def better(setting: str) -> str:
    """The answer "``setting`` better" of a two-sided question."""
    return f"{setting} better"


def decide_question(comps: Sequence[Comparison], alpha: float) -> list[Comparison]:
    """Answers of a two-sided question ("does A beat B?") over its experiments' comparisons.

    Both one-sided tests of every tested comparison (A lower by the margin, B lower by the margin)
    form one family, Holm-adjusted together: "A better" when A's adjusted p <= alpha, "B better"
    when B's is, else "no significant difference" (the two regions are disjoint, so at most one
    holds). The family-wise error of the question is at most alpha. A comparison with too few seeds
    answers "inconclusive (too few seeds)"; one not evaluated stays so.
    """
    tested = [i for i, c in enumerate(comps) if c.verdict == PENDING]
    adjusted = stats.holm([p for i in tested for p in (comps[i].p_claimed, comps[i].p_refuted)])
    out = list(comps)
    family = f"Holm over the {2 * len(tested)} one-sided tests of the question"
    for k, i in enumerate(tested):
        c = comps[i]
        p_a, p_b = adjusted[2 * k], adjusted[2 * k + 1]
        if p_a <= alpha:
            verdict, why = better(c.a), f"{c.claimed}: p = {_fmt(c.p_claimed)}, {family} = {_fmt(p_a)}"
        elif p_b <= alpha:
            verdict, why = better(c.b), f"{c.refuted}: p = {_fmt(c.p_refuted)}, {family} = {_fmt(p_b)}"
        else:
            verdict = NO_DIFFERENCE
            why = f"neither {c.claimed} nor {c.refuted} significant ({family}: {_fmt(p_a)}, {_fmt(p_b)})"
        reason = f"{c.label}: {c.effect_name} {c.effect:.4g}; {why}"
        if c.reference:
            reason += f" ({c.reference})"
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
    """Comparisons -> experiment (``strict``), experiments -> claim (not strict).

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


def majority(results: Sequence[ExperimentVerdict], alpha: float) -> tuple[str, str]:
    """A claim that holds "in general": reproduced on a majority of the evaluated experiments.

    Each experiment's intersection-union p-value (the largest claimed p of its comparisons, 1 if
    any comparison was not tested) is Holm-adjusted over the experiments; the claim is reproduced
    when at least ``need = floor(k / 2) + 1`` of the ``k`` experiments reject, and not reproduced
    when more than ``k - need`` experiments are refuted (then no majority can hold). Holm controls
    the family-wise error, so either conclusion is wrong with probability at most alpha.
    """
    evaluated = [r for r in results if r.verdict != NOT_EVALUATED]
    if not evaluated:
        return NOT_EVALUATED, "no experiment evaluated"
    k = len(evaluated)
    need = k // 2 + 1

    def iut(r: ExperimentVerdict) -> float:
        ps = [c.p_claimed if c.p_claimed is not None else 1.0 for c in r.comparisons]
        return max(ps) if ps else 1.0

    adjusted = stats.holm([iut(r) for r in evaluated])
    held = [r.experiment for r, p in zip(evaluated, adjusted, strict=True) if p <= alpha]
    refuted = [r.experiment for r in evaluated if r.verdict == NOT_REPRODUCED]
    if len(held) >= need:
        return (
            REPRODUCED,
            f"holds on {len(held)} of {k} experiments ({', '.join(held)}; Holm over experiments)",
        )
    if len(refuted) > k - need:
        return (
            NOT_REPRODUCED,
            f"refuted on {len(refuted)} of {k} experiments ({', '.join(refuted)}): no majority",
        )
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
    if verdict == NOT_REPRODUCED:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v == NOT_REPRODUCED]
    elif verdict == INCONCLUSIVE and not strict:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v == INCONCLUSIVE]
    else:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v != REPRODUCED]
    return "; ".join(dict.fromkeys(picked))


def coverage(results: Sequence[ExperimentVerdict]) -> str:
    """Which experiments a claim was evaluated on, e.g. ``garland (4/5 comparisons); 1 of 3 experiments``."""
    parts = []
    for r in results:
        if r.verdict == NOT_EVALUATED:
            continue
        comps = r.comparisons
        done = sum(c.verdict != NOT_EVALUATED for c in comps)
        parts.append(r.experiment + ("" if done == len(comps) else f" ({done}/{len(comps)} comparisons)"))
    return f"{', '.join(parts) or 'none'}; {len(parts)} of {len(results)} experiments"


def flips(default: str, variant: str) -> bool:
    """A verdict flips when both readings were evaluated and disagree."""
    return NOT_EVALUATED not in (default, variant) and default != variant
