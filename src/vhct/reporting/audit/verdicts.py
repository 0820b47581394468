"""The verdicts of the audit and how they combine: comparisons into an experiment's verdict,
experiments into a claim's, one verdict ladder for every kind of check."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

REPRODUCED = "reproduced"


NOT_REPRODUCED = "not reproduced"


INCONCLUSIVE = "inconclusive"


NOT_EVALUATED = "not evaluated"


VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_EVALUATED)


def combine(verdicts: Sequence[str], strict: bool = True) -> str:
    """Comparisons -> experiment (``strict``), experiments -> claim (not strict): the ``combine`` rule.

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


def _reason(verdicts: Sequence[str], reasons: Sequence[str], strict: bool = True) -> str:
    """A short reason for a combined verdict: the reasons of the parts that decided it."""
    verdict = combine(verdicts, strict)
    if verdict == REPRODUCED:
        return "every comparison reproduced"
    if verdict == NOT_REPRODUCED:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v == NOT_REPRODUCED]
    elif verdict == INCONCLUSIVE and not strict:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v == INCONCLUSIVE]
    else:
        picked = [r for v, r in zip(verdicts, reasons, strict=True) if v != REPRODUCED]
    return "; ".join(dict.fromkeys(picked))


def _labelled(comp: Mapping[str, Any]) -> str:
    """A comparison's reason, prefixed with the setting it was compared with (if any)."""
    return comp["reason"] if comp["b"] == "-" else f"vs {comp['b']}: {comp['reason']}"


def coverage(results: Sequence[Mapping[str, Any]]) -> str:
    """Which experiments a claim was evaluated on, e.g. ``garland (4/5 comparisons); 1 of 3 experiments``."""
    parts = []
    for r in results:
        if r["verdict"] == NOT_EVALUATED:
            continue
        comps = r["comparisons"]
        done = sum(c["verdict"] != NOT_EVALUATED for c in comps)
        parts.append(r["experiment"] + ("" if done == len(comps) else f" ({done}/{len(comps)} comparisons)"))
    return f"{', '.join(parts) or 'none'}; {len(parts)} of {len(results)} experiments"


def flips(default: str, variant: str) -> bool:
    """A verdict flips when both readings were evaluated and disagree."""
    return NOT_EVALUATED not in (default, variant) and default != variant


def ladder(few: str | None, rungs: Sequence[tuple[bool, str, str]], otherwise: str) -> dict[str, str]:
    """The verdict of one comparison, the same ladder for every kind of check.

    Inconclusive when the seeds cannot decide (``few`` says why); else the first rung
    ``(holds, verdict, reason)`` that holds; else inconclusive, for the reason ``otherwise``.
    """
    if few:
        return {"verdict": INCONCLUSIVE, "reason": few}
    for holds, verdict, reason in rungs:
        if holds:
            return {"verdict": verdict, "reason": reason}
    return {"verdict": INCONCLUSIVE, "reason": otherwise}
