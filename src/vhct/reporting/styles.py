"""Colour and line style of every algorithm in every figure, the reporting layer's one table of them
(plain data: no plotting library). The built-in algorithms have a row each (the paper's colours);
another (a plugin, one registered at run time) gets an automatic style (:func:`automatic_styles`),
so no two algorithms share a colour while free colours last, nor a colour and line after, and every
process with the same algorithms installed draws each alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vhct.registry import Registry


@dataclass(frozen=True)
class Style:
    """How the figures draw one algorithm: its colour (hex, unique across the table) and matplotlib
    line style (``"--"`` or a dash tuple ``(0, (5, 1))``)."""

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
    """Give ``name`` its own colour and line style (else it is drawn in an automatic one); the name
    must be new and the colour not another row's."""
    return STYLES.register(name, Style(colour, line))


#: colours of algorithms without a style row, in the order they are given (tab20b's dark shades, then
#: its middle ones, then black: none is a built-in's); one a row takes is skipped
AUTO_COLOURS = (
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
    "#5254a3",
    "#8ca252",
    "#bd9e39",
    "#ad494a",
    "#a55194",
    "#000000",
)
#: line styles of algorithms without a style row: the first while free colours last, then the next
AUTO_LINES = ("-", "--", "-.", ":")


def automatic_styles(unstyled: list[str], taken: set[str]) -> dict[str, Style]:
    """The styles of ``unstyled`` algorithms (in the registry's order), given the colours rows take:
    the k-th gets the (k mod n)-th of the n free colours (all, if rows take every one) and the
    (k div n)-th line style."""
    rows = {colour.lower() for colour in taken}
    free = [c for c in AUTO_COLOURS if c.lower() not in rows] or list(AUTO_COLOURS)
    return {
        name: Style(free[k % len(free)], AUTO_LINES[k // len(free) % len(AUTO_LINES)])
        for k, name in enumerate(unstyled)
    }


def style(algorithm: str) -> tuple[str, Any]:
    """Colour and line style of a registered algorithm: its row's, else its automatic style; an
    unknown name is the algorithm registry's error."""
    from vhct.optimizers.registry import algorithm as registered
    from vhct.optimizers.registry import algorithm_names

    registered(algorithm)  # an unknown algorithm: the registry's error, listing the known ones
    if algorithm in STYLES:
        row = STYLES.lookup(algorithm)
    else:
        unstyled = [name for name in algorithm_names() if name not in STYLES]
        row = automatic_styles(unstyled, {s.colour for s in STYLES.values()})[algorithm]
    return row.colour, row.line


def every_style() -> dict[str, tuple[str, Any]]:
    """Every registered algorithm's colour and line style, by name: a figure job's parameter, so a
    changed style (a row's, or an automatic one moved by a newly installed plugin) redraws it."""
    from vhct.optimizers.registry import algorithm_names

    return {name: style(name) for name in algorithm_names()}


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


#: the verdicts' one palette (hex): a verdict, or a verdict and its category ("not reproduced: the
#: opposite"), -> colour; the forest and summary figures' markers and, tinted (:func:`tint`), the HTML
#: audit's verdict cells. Keys are the verdicts of ``vhct.reporting.audit.verdicts`` and their categories.
VERDICT_COLOURS = {
    "reproduced": "#2ca02c",
    "not reproduced: the opposite": "#d62728",
    "not reproduced: no effect of the claimed size": "#ff7f0e",
    "inconclusive: underpowered": "#696969",
    "inconclusive: too few seeds": "#c0c0c0",
    "not evaluated": "#d3d3d3",
    "readings disagree": "#9467bd",
}
#: the share of a verdict's colour in its HTML cell's background (the rest white): the text stays legible
CELL_TINT = 0.3


def verdict_colour(verdict: str, category: str = "") -> str:
    """The colour of a verdict and its category; without a category (a statement's, an old audit's),
    the first of its verdict's; black for a verdict the palette lacks."""
    key = verdict if not category or category == verdict else f"{verdict}: {category}"
    if key in VERDICT_COLOURS:
        return VERDICT_COLOURS[key]
    return next((c for k, c in VERDICT_COLOURS.items() if k.split(":")[0] == verdict), "#000000")


def tint(colour: str, share: float = CELL_TINT) -> str:
    """A hex colour mixed with white, ``share`` of it kept: ``tint("#2ca02c")`` is a pale green."""
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - share * (255 - v)):02x}" for v in rgb)
