"""A synthetic objective rescaled, ``a f + b``: the paper's rescaling remark made checkable.

The appendix says "the convergence rate of different algorithms will not change as long as the function
is uniformly bounded over its domain" and rescales its objectives into [-1, 1] "to commit a fair
comparison (i.e., sharing similar signal/noise ratio)". ``Rescaled`` runs any synthetic objective as
``scale * f + offset`` (``scale > 0``: still maximized, the same maximizer), so the audit can compare the
rates of the tree algorithms on f and on a f + b (claim ``rescaling-keeps-the-rate``). Only the function
is rescaled: the experiment's noise keeps its half-width, as the paper's remark implies (rescaling
changes the signal-to-noise ratio, which is why the paper rescales to a common range).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from vhct.objectives.synthetic import SyntheticObjective

if TYPE_CHECKING:
    from vhct.objectives.base import Objective
    from vhct.registry import Registry

#: the objective rescaled when none is named
DEFAULT_OBJECTIVE = "garland"


class Rescaled(SyntheticObjective):
    """``scale * f + offset`` for the synthetic objective ``objective`` (with ``objective_params``).

    f* and the maximizer follow exactly: ``scale * f* + offset`` at f's maximizer. The defaults are
    the identity on Garland (what ``rescaled`` builds without parameters, as every registered
    objective must).
    """

    name = "rescaled"
    #: the registry the rescaled objective is looked up in: ``vhct.objectives.OBJECTIVES``, set there
    #: when it registers this class (this module does not import the package: no import cycle)
    objectives: ClassVar[Registry[type[Objective]] | None] = None

    def __init__(
        self,
        objective: str = DEFAULT_OBJECTIVE,
        objective_params: Mapping[str, Any] | None = None,
        scale: float = 1.0,
        offset: float = 0.0,
    ) -> None:
        registry = type(self).objectives
        if registry is None:
            raise ValueError("Rescaled has no registry to look objectives up in (register it in one)")
        for key, value in (("scale", scale), ("offset", offset)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{key} must be a finite number, got {value!r}")
        if scale <= 0:
            raise ValueError(f"scale must be positive (a f + b is then maximized where f is), got {scale!r}")
        if objective not in registry or objective == self.name:
            known = ", ".join(n for n in registry if n != self.name)
            raise ValueError(
                f"objective must name an objective to rescale (known: {known}), got {objective!r}"
            )
        if registry.target(objective) is not None or not registry[objective].exact_optimum:
            raise ValueError(
                f"objective {objective!r} has no exact optimum: only synthetic objectives are rescaled"
            )
        if objective_params is not None and not isinstance(objective_params, Mapping):
            raise ValueError(f"objective_params must be a mapping, got {objective_params!r}")
        base = registry[objective](**dict(objective_params or {}))
        assert isinstance(base, SyntheticObjective)
        super().__init__(base.domain)
        self.base, self.scale, self.offset = base, float(scale), float(offset)

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        return self.scale * self.base(x) + self.offset

    def _values(self, X: np.ndarray) -> np.ndarray:
        return self.scale * self.base._values(X) + self.offset

    @property
    def f_star(self) -> float:
        return self.scale * float(self.base.f_star) + self.offset

    @property
    def maximizer(self) -> np.ndarray:
        return np.asarray(self.base.maximizer)
