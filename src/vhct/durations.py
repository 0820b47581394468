"""Durations as a person reads them: the one formatter of the project's documents, figures and
console (hours and minutes, not fractions of 3600 s). Standard library only, so that the logger
plugin and every layer may import it.
"""

from __future__ import annotations

import math

MINUTE = 60
HOUR = 3600
#: significant digits of a duration under a minute
DIGITS = 3
#: the finest unit printed from a minute on: whole minutes, or whole seconds too
FINEST = ("min", "s")


def duration(seconds: float | None, finest: str = "min", total: bool = False) -> str:
    """``0.0704 ms``, ``3.2 ms``, ``45.2 s`` under a minute (DIGITS significant digits); from a minute
    on whole hours and minutes, and seconds where ``finest`` is "s": ``12 min``, ``2 h 05 min``, ``1 h``,
    ``1 h 02 min 05 s``; ``total``: the whole seconds after it, ``(3725 s)``; "-" for none or a value
    that is not finite."""
    if finest not in FINEST:
        raise ValueError(f"finest unit {finest!r}: one of {', '.join(FINEST)}")
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if abs(seconds) < 1:
        return f"{seconds * 1e3:.{DIGITS}g} ms" if seconds else "0 s"
    if abs(seconds) < MINUTE:
        return f"{seconds:.{DIGITS}g} s"
    unit = MINUTE if finest == "min" else 1
    hours, rest = divmod(round(seconds / unit) * unit, HOUR)
    minutes, secs = divmod(rest, MINUTE)
    if hours and not minutes and finest == "min":  # a whole hour: "1 h", not "1 h 00 min"
        parts = [f"{hours} h"]
    else:
        parts = ([f"{hours} h"] if hours else []) + [f"{minutes:02d} min" if hours else f"{minutes} min"]
    text = " ".join(parts + ([f"{secs:02d} s"] if finest == "s" else []))
    return f"{text} ({seconds:.0f} s)" if total else text
