"""Questions the paper did not ask (``beyond.yaml``), answered with the audit's own machinery.

Each question ("does VHCT beat random search?") is read as a ``lowest`` check of setting ``a``
against ``b`` (the same comparisons, ratio tests, margins, rebasing of real-data regret and
labelled rounds as the paper's claims), then decided two-sided (``decide_question``). Beside each
answer: both settings' cost over the compared rounds, as mean wall seconds per round, twice: the
optimizer's own (ask + tell, the bo-cost claim's statistic) and the total (with the objective's
evaluation). The result is the audit's separate ``beyond`` part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from vhct.reporting.audit.claims_model import Claim, Thresholds
from vhct.reporting.audit.evaluate import claim_comparisons
from vhct.reporting.audit.questions_model import BeyondFile, Question
from vhct.reporting.audit.records import Beyond, Comparison, QuestionAnswer, QuestionRow
from vhct.reporting.audit.runs import Runs, samples
from vhct.reporting.audit.verdicts import NOT_EVALUATED, decide_question

#: the statistic of the cost beside each answer (the bo-cost claim's: the optimizer's own seconds)
COST_STATISTIC = "optimizer_seconds_per_round"
#: the whole round's seconds (with the objective's evaluation), recorded beside it
TOTAL_COST_STATISTIC = "seconds_per_round"
def question_claim(question: Question) -> Claim:
    """The question as a claim the audit's checks read: ``a`` lowest against ``b`` by the margin."""
    return Claim(
        id=question.id,
        quote=question.question,
        location="the questions beyond the paper",
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
    )


def cost(exp_runs: Mapping[str, Any], comp: Comparison) -> dict[str, float] | None:
    """Mean over seeds of each side's seconds per round over rounds 1..the comparison's round: the
    optimizer's own (``a``, ``b``) and the total with the objective's evaluation (``a_total``,
    ``b_total``)."""
    if comp.round is None:
        return None
    return {
        key + suffix: float(np.mean(list(samples(exp_runs[s], statistic, comp.round).values())))
        for suffix, statistic in (("", COST_STATISTIC), ("_total", TOTAL_COST_STATISTIC))
        for key, s in (("a", comp.a), ("b", comp.b))
    }


def evaluate_question(question: Question, runs: Runs) -> QuestionAnswer:
    """The question's answer on every experiment it names (one comparison each, or why none).

    Below ``min_seeds`` a question still reports its comparison and costs, "too few seeds" (a claim
    of the paper gets no verdict there: ``evaluate.too_few_seeds``).
    """
    parts = claim_comparisons(question_claim(question), runs, {}, few_seeds_compared=True)
    flat = [c for _, comps in parts if not isinstance(comps, str) for c in comps]
    decided = iter(decide_question(flat, question.alpha))
    rows = []
    for experiment, comps in parts:
        if isinstance(comps, str):
            rows.append(QuestionRow(experiment=experiment, verdict=NOT_EVALUATED, reason=comps,
                                    comparison=None, cost=None))  # fmt: skip
            continue
        (comp,) = [next(decided) for _ in comps]
        evaluated = comp.verdict != NOT_EVALUATED
        rows.append(
            QuestionRow(
                experiment=experiment,
                verdict=comp.verdict,
                reason=comp.reason,
                comparison=comp,
                cost=cost(runs[experiment], comp) if evaluated else None,
            )
        )
    return QuestionAnswer(question=question, experiments=rows)


def run_beyond(beyond: BeyondFile, runs: Runs) -> Beyond | None:
    """The audit's ``beyond`` part, or None when no question has an evaluated comparison."""
    questions = [evaluate_question(q, runs) for q in beyond.questions]
    if not any(r.comparison is not None and r.verdict != NOT_EVALUATED
               for q in questions for r in q.experiments):  # fmt: skip
        return None
    return Beyond(rules=beyond.rules.model_dump(), questions=questions)
