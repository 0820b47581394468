"""The registry of figure drawers by figure kind, filled where each is defined
(``@DRAWERS.register("regret")``), only under a declared kind (``vhct.pipeline.figure_kinds``): a
drawer missing or misnamed fails at import or in the tests, not when a figure job runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vhct.pipeline.figure_kinds import AUDIT_FIGURES, FIGURE_KINDS
from vhct.registry import Registry

Drawer = Callable[..., Any]


def _check(kind: str, draw: Drawer) -> None:
    """A drawer is callable and draws a declared figure kind."""
    if kind not in FIGURE_KINDS and kind not in AUDIT_FIGURES:
        known = ", ".join([*FIGURE_KINDS, *AUDIT_FIGURES])
        raise ValueError(f"a drawer for {kind!r}, which is no figure kind; known: {known}")
    if not callable(draw):
        raise ValueError(f"the drawer of figure kind {kind!r} is not callable: {draw!r}")


#: figure kind -> its drawer, called as ``draw(figure_spec, curves)`` when the kind reads
#: aggregates (``regret.Curves``), else ``draw(figure_spec)``; it returns the matplotlib figure
DRAWERS: Registry[Drawer] = Registry("figure drawer", check=_check)
