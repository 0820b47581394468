"""The registry of figure kinds (a :class:`vhct.registry.Registry`): the one place a kind of figure
is declared.

A kind names what its panels may and must say and whether it reads the regret aggregates of its
panels' experiments. The config model checks panels against this table, so adding a kind is one
:func:`register` call here plus its drawer, registered under the kind's name in the reporting
layer's drawers registry (``vhct.reporting.plots.drawers``: the pipeline layer does not import
reporting, and a test checks every kind here has a drawer there).
"""

from __future__ import annotations

from dataclasses import dataclass

from vhct.registry import Registry

#: every key a panel may give, and what it means (the config model's panel fields)
PANEL_KEYS = ("title", "experiment", "settings", "setting", "seed", "round", "objective", "objective_params")


@dataclass(frozen=True)
class FigureKind:
    """One kind of figure.

    ``aggregates``: the figure reads the curve and timing aggregates of each setting its panels draw
    (``results/aggregates/<experiment>/settings/<setting>/``, its input files; no other setting's).
    ``required`` and ``allowed``: the panel keys it must and may give
    (``title`` is always allowed). ``osc``: its panel's setting must be an algorithm exposing the OSC
    traversal report (the optimizer registry's ``osc`` column). ``band``: it draws each setting's mean
    curve over seeds with a band (:data:`BAND_NOTE`), so its figure and caption say what the band is
    and its legend gives each curve's seeds. Its drawer (registered in
    ``vhct.reporting.plots.drawers``) is called as ``drawer(figure_spec, curves)`` when it reads
    aggregates, else ``drawer(figure_spec)``, and returns the matplotlib figure.
    """

    name: str
    description: str
    aggregates: bool
    required: frozenset[str]
    allowed: frozenset[str]
    osc: bool = False
    band: bool = False

    def __post_init__(self) -> None:
        unknown = (self.required | self.allowed) - set(PANEL_KEYS)
        if unknown or not self.required <= self.allowed:
            raise ValueError(f"figure kind {self.name!r}: bad panel keys {sorted(unknown or self.required)}")


#: every figure kind, in declaration order
FIGURE_KINDS: Registry[FigureKind] = Registry("figure kind")


def register(kind: FigureKind) -> FigureKind:
    """Declare a figure kind (a name declared twice is an error)."""
    return FIGURE_KINDS.register(kind)


def unregister(name: str) -> None:
    """Remove a figure kind (tests that register one)."""
    FIGURE_KINDS.unregister(name)


def figure_kind(name: str) -> FigureKind:
    """The kind ``name``; an unknown name is a ValueError listing the known ones."""
    return FIGURE_KINDS.lookup(name)


_CURVES = frozenset({"title", "experiment", "settings"})

#: what the band around a mean curve is (``vhct.pipeline.aggregate.std_across``: the sample standard
#: deviation across seeds, 0 for one seed), in the figure (the legend's title) and in its caption
BAND_NOTE = "lines: mean over seeds; bands: mean ± 1 standard deviation across seeds"
BAND_CAPTION = (
    "Each curve is the mean over its seeds; its band is the mean plus or minus one standard deviation "
    "across seeds (the sample standard deviation, n - 1 in the denominator; no band for a single seed). "
    "The legend gives each curve's number of seeds."
)

register(
    FigureKind(
        "regret",
        "cumulative regret R_t of each setting, one panel per experiment",
        True,
        frozenset({"experiment"}),
        _CURVES,
        band=True,
    )
)
register(
    FigureKind(
        "average_regret",
        "average regret R_t / t of each setting, one panel per experiment",
        True,
        frozenset({"experiment"}),
        _CURVES,
        band=True,
    )
)
register(
    FigureKind(
        "regret_cost",
        "cumulative regret next to each setting's seconds per round (beyond the paper)",
        True,
        frozenset({"experiment"}),
        _CURVES,
        band=True,
    )
)
register(
    FigureKind(
        "function",
        "objective plots (1-D curves, 2-D surfaces); no runs",
        False,
        frozenset({"objective"}),
        frozenset({"title", "objective", "objective_params"}),
    )
)
register(
    FigureKind(
        "osc",
        "traversal path of a VHCT/HCT run at one round",
        False,
        frozenset({"experiment", "setting", "round"}),
        frozenset({"title", "experiment", "setting", "seed", "round"}),
        osc=True,
    )
)


#: figures the audit stage draws from its own JSON, beside the config's figures (not a config kind:
#: they read no aggregates and take no panels); the provenance records and ship copies them too: the
#: forest (every comparison) and the one-page summary (every statement)
AUDIT_FIGURES = ("audit_forest", "audit_summary")
register(
    FigureKind(
        "near_optimal",
        "near-optimal cells per depth of a 1-D objective on the standard partition (computed, no runs)",
        False,
        frozenset({"objective"}),
        frozenset({"title", "objective"}),
    )
)
