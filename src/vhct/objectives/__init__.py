"""Objectives by name: the synthetic functions and the real-data tuning tasks.

``OBJECTIVES`` is a :class:`vhct.registry.Registry` of classes. The real-data classes (``landmine``: SVM
on Landmine, ``mnist``: MLP on MNIST) pull in scikit-learn and torch, so they are registered lazily
and imported only when first looked up (membership imports nothing); ``import vhct.objectives`` stays
light.
"""

from __future__ import annotations

import inspect
from typing import Any

from vhct.objectives.base import Objective
from vhct.objectives.rescaled import Rescaled
from vhct.objectives.synthetic import (
    Ackley,
    CounterExample,
    DifficultFunction,
    DoubleSine,
    Garland,
    Himmelblau,
    Rastrigin,
    SyntheticObjective,
)
from vhct.registry import Registry

__all__ = [
    "OBJECTIVES",
    "Ackley",
    "CounterExample",
    "DifficultFunction",
    "DoubleSine",
    "Garland",
    "Himmelblau",
    "Objective",
    "Rastrigin",
    "Rescaled",
    "SyntheticObjective",
    "make_objective",
    "objective_names",
]


def _check(name: str, cls: type[Objective]) -> None:
    """An entry is an :class:`Objective` class registered under its own ``name``; one registered
    lazily has no exact optimum (the pipeline reads ``exact_optimum`` without importing it)."""
    if not (isinstance(cls, type) and issubclass(cls, Objective)) or cls.name != name:
        raise ValueError(f"objective {name!r}: {cls!r} is not an Objective class named {name!r}")
    if cls.exact_optimum and name in OBJECTIVES and OBJECTIVES.target(name) is not None:
        raise ValueError(
            f"objective {name!r} declares an exact optimum but is registered lazily: register the "
            "class itself, so that its optimum is known without importing it"
        )


#: every objective by name; the real-data ones lazily, as "module:attribute" (scikit-learn, torch)
OBJECTIVES: Registry[type[Objective]] = Registry("objective", check=_check)
for _cls in (Garland, DoubleSine, Ackley, CounterExample, Himmelblau, Rastrigin, DifficultFunction, Rescaled):
    OBJECTIVES.register(_cls)
Rescaled.objectives = OBJECTIVES  # a f + b of any objective registered here
OBJECTIVES.register("landmine", "vhct.objectives.landmine:LandmineSVM")
OBJECTIVES.register("mnist", "vhct.objectives.mnist:MnistMLP")


def objective_names() -> list[str]:
    """Registered objective names, in registry order."""
    return list(OBJECTIVES)


def make_objective(name: str, **params: Any) -> Objective:
    """Build the objective registered as ``name`` with constructor ``params``.

    Raises ValueError naming an unknown objective (and listing the valid ones), an unknown or missing
    parameter, or a bad parameter value (the constructors check their own values).
    """
    cls = OBJECTIVES.lookup(name)
    signature = inspect.signature(cls)
    try:
        signature.bind(**params)
    except TypeError as exc:
        accepted = ", ".join(signature.parameters) or "none"
        raise ValueError(f"bad parameters for objective {name!r}: {exc} (accepted: {accepted})") from exc
    return cls(**params)


def __getattr__(attribute: str) -> type[Objective]:
    """Lazy module attributes: the classes registered lazily (``LandmineSVM``, ``MnistMLP``)."""
    for name in OBJECTIVES:
        if (OBJECTIVES.target(name) or "").endswith(f":{attribute}"):
            return OBJECTIVES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
