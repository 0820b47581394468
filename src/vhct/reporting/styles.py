"""Colour and line style of every algorithm in every figure: the reporting layer's one table of them.

The numpy-only optimizer registry (``vhct.optimizers.registry``) declares what an algorithm is;
this table (a :class:`vhct.registry.Registry`) declares how the figures draw it. Every algorithm
keeps its colour and line style in every figure and no two algorithms share a colour (the
registry's check refuses a taken one when :func:`register_style` adds a row), so
adding an algorithm is one row there and one row here (``tests/unit/test_registry.py`` checks that
every registered algorithm has a style). Plain data: importing it needs no plotting library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vhct.registry import Registry


@dataclass(frozen=True)
class Style:
    """How the figures draw one algorithm.

    Args:
        colour: its colour (a hex string, unique across the table).
        line: its matplotlib line style (a name like ``"--"`` or a dash tuple ``(0, (5, 1))``).
    """

    colour: str
    line: Any = "-"


def _distinct_colour(name: str, new: Style) -> None:
    """No two algorithms share a colour (case aside): a taken colour is refused, naming its owner."""
    clash = [other for other, row in STYLES.items() if row.colour.lower() == new.colour.lower()]
    if clash:
        raise ValueError(f"colour {new.colour!r} of {name!r} is already {clash[0]!r}'s")


#: algorithm name -> its style, in the optimizer registry's order
STYLES: Registry[Style] = Registry("algorithm style", check=_distinct_colour)


def register_style(name: str, colour: str, line: Any = "-") -> Style:
    """Give ``name`` its colour and line style; the name must be new and the colour not taken."""
    return STYLES.register(name, Style(colour, line))


def unregister_style(name: str) -> None:
    """Remove a style (for tests that register a temporary algorithm)."""
    STYLES.unregister(name)


def style(algorithm: str) -> tuple[str, Any]:
    """Colour and line style of a registered algorithm; an unknown name or a missing style is named."""
    from vhct.optimizers.registry import algorithm as registered

    registered(algorithm)  # an unknown algorithm: the registry's error, listing the known ones
    if algorithm not in STYLES:
        raise ValueError(
            f"algorithm {algorithm!r} has no figure style; give it one with "
            f"vhct.reporting.styles.register_style({algorithm!r}, '#rrggbb')"
        )
    row = STYLES.lookup(algorithm)
    return row.colour, row.line


for _name, _colour, _line in (
    ("VHCT", "#d62728", "-"),
    ("HCT", "#1f77b4", "--"),
    ("T-HOO", "#2ca02c", "-."),
    ("POO", "#7f7f7f", ":"),
    ("PCT", "#ff7f0e", (0, (5, 1, 1, 1))),
    ("BO", "#9467bd", (0, (3, 1, 1, 1, 1, 1))),
    ("Random", "#8c564b", (0, (1, 1))),
    ("TPE", "#e377c2", (0, (4, 2))),
    ("CMA-ES", "#17becf", (0, (6, 2, 1, 2))),
    ("GP-Optuna", "#bcbd22", (0, (2, 2, 6, 2))),
):
    register_style(_name, _colour, _line)
