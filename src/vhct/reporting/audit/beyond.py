"""Questions the paper did not ask (``beyond.yaml``), answered with the audit's own machinery.

A question ("does VHCT beat random search?") is read as a ``lowest`` claim of ``a`` against ``b``
(the same comparisons, rebasing and labelled rounds as the paper's claims), decided two-sided
(``decide_question``), with both sides' cost beside it; the result is the audit's ``beyond`` part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vhct.reporting.audit.checks import TOTAL_BESIDE
from vhct.reporting.audit.claims_model import Claim, EffectOfInterest, Thresholds
from vhct.reporting.audit.evaluate import claim_comparisons
from vhct.reporting.audit.questions_model import BeyondFile, Question
from vhct.reporting.audit.records import Beyond, Comparison, QuestionAnswer, QuestionRow
from vhct.reporting.audit.runs import Runs, mean_statistic
from vhct.reporting.audit.verdicts import NOT_EVALUATED, decide_question

#: the statistic of the cost beside each answer (the bo-cost claim's: the optimizer's own seconds)
COST_STATISTIC = "optimizer_seconds_per_round"
#: the words of a question's claim that name its size: the margin its file states (``thresholds``)
QUESTION_SIZE = "by the question's margin"
#: a question's effect of interest, as a factor of its margin's ratio (1 - m): 10 % past it. Questions
#: are not planned (no analysis plan sizes their seeds); the value only words an underpowered answer
QUESTION_EFFECT = 0.9


def question_claim(question: Question) -> Claim:
    """The question as a claim the audit's checks read: ``a`` lowest against ``b`` by the margin."""
    return Claim(
        id=question.id,
        quote=f"{question.question} ({QUESTION_SIZE})",
        location="the questions beyond the paper",
        size=QUESTION_SIZE,
        kind="lowest",
        statistic=question.statistic,
        target=question.a,
        others=[question.b],
        experiments=list(question.experiments),
        round=question.round,
        alpha=question.alpha,
        min_seeds=question.min_seeds,
        require="all",
        thresholds=Thresholds(**question.thresholds.given()),
        effect_of_interest=EffectOfInterest(
            value=QUESTION_EFFECT * (1.0 - question.thresholds.min_relative_effect),
            reason="10 % past the question's margin (questions are not planned)",
        ),
    )


def cost(exp_runs: Mapping[str, Any], comp: Comparison) -> dict[str, float] | None:
    """Each side's mean seconds per round up to the comparison's round: own (``a``), total (``a_total``)."""
    if comp.round is None:
        return None
    return {
        key + suffix: mean_statistic(exp_runs[s], statistic, comp.round)
        for suffix, statistic in (("", COST_STATISTIC), ("_total", TOTAL_BESIDE[COST_STATISTIC]))
        for key, s in (("a", comp.a), ("b", comp.b))
    }


def evaluate_question(question: Question, runs: Runs) -> QuestionAnswer:
    """The question's answer on every experiment it names (one comparison each, or why none); below
    ``min_seeds`` still compared, "too few seeds" (a claim gets no verdict there)."""
    parts = claim_comparisons(question_claim(question), runs, {}, few_seeds_compared=True)
    flat = [c for _, comps in parts if not isinstance(comps, str) for c in comps]
    decided = iter(decide_question(flat, question.alpha))
    rows = []
    for experiment, comps in parts:
        if isinstance(comps, str):
            verdict, reason, comp, spent = NOT_EVALUATED, comps, None, None
        else:
            (comp,) = [next(decided) for _ in comps]
            verdict, reason = comp.verdict, comp.reason
            spent = cost(runs[experiment], comp) if verdict != NOT_EVALUATED else None
        rows.append(
            QuestionRow(experiment=experiment, verdict=verdict, reason=reason, comparison=comp, cost=spent)
        )
    return QuestionAnswer(question=question, experiments=rows)


def run_beyond(beyond: BeyondFile, runs: Runs) -> Beyond | None:
    """The audit's ``beyond`` part, or None when no question has an evaluated comparison."""
    questions = [evaluate_question(q, runs) for q in beyond.questions]
    if not any(
        r.comparison is not None and r.verdict != NOT_EVALUATED for q in questions for r in q.experiments
    ):
        return None
    return Beyond(rules=beyond.rules.model_dump(), questions=questions)
