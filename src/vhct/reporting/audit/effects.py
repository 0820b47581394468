"""How an effect of the audit is printed: a number, or a duration where the effect is in units of a
threshold of seconds (a wall-time claim's "mean wall time per run to t = 100 / 3600 s"). This module
writes that form of an effect's name and reads it back, so the audit's reasons (:mod:`.verdicts`),
its report and the view (:mod:`vhct.reporting.view`) print the same "6.67 s", never "0.001854".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vhct.durations import duration

#: significant digits of the numbers in the documents
DIGITS = 4
#: from this size on, and below WHOLE_BELOW, a number is printed whole (no exponent)
WHOLE_FROM, WHOLE_BELOW = 10.0**DIGITS, 1e15
#: an effect's name in units of a threshold of seconds: the name without the unit, the unit's seconds
PER_THRESHOLD = re.compile(r"^(?P<name>.*) / (?P<seconds>[0-9.e+]+) s$")


def format_number(value: Any) -> str:
    """A number for the documents: DIGITS significant digits, whole from WHOLE_FROM to WHOLE_BELOW
    (``11067``, not ``1.107e+04``); nan, inf and -inf as Python spells them, None empty."""
    if value is None:
        return ""
    if not isinstance(value, float):
        return str(value)
    return f"{value:.0f}" if WHOLE_FROM <= abs(value) < WHOLE_BELOW else f"{value:.{DIGITS}g}"


def per_threshold_name(name: str, seconds: float) -> str:
    """The name of an effect stated in units of ``seconds`` (the one writer of :data:`PER_THRESHOLD`)."""
    return f"{name} / {seconds:g} s"


@dataclass(frozen=True)
class EffectUnit:
    """An effect's name without its unit, and the seconds of its unit (None: a plain number)."""

    name: str
    seconds: float | None = None

    def text(self, value: float) -> str:
        """``value`` as printed: a duration where the unit is a threshold of seconds, else a number."""
        return format_number(value) if self.seconds is None else duration(value * self.seconds, finest="s")


def effect_unit(effect_name: str | None) -> EffectUnit:
    """The unit of an effect named ``effect_name`` (the one reader of :data:`PER_THRESHOLD`)."""
    found = PER_THRESHOLD.match(effect_name or "")
    if found is None:
        return EffectUnit(effect_name or "")
    return EffectUnit(found["name"], float(found["seconds"]))


def effect_text(
    effect_name: str,
    effect: float,
    low: float | None = None,
    high: float | None = None,
    level: float | None = None,
) -> str:
    """``ratio of means 1.043, 90% CI [1.000, 1.088]``; an effect in units of a threshold of seconds
    as durations beside the threshold: ``mean wall time per run to t = 100 is 6.67 s, 90% CI [6.02 s,
    7.22 s], against a threshold of 1 h``. The interval where there is one."""
    unit = effect_unit(effect_name)
    text = f"{unit.name}{' is' if unit.seconds is not None else ''} {unit.text(effect)}"
    if low is not None and high is not None and level:
        text += f", {100 * level:.0f}% CI [{unit.text(low)}, {unit.text(high)}]"
    if unit.seconds is not None:
        text += f", against a threshold of {duration(unit.seconds)}"
    return text
