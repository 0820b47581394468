"""Objectives by name: the synthetic functions and the real-data tuning tasks.

The real-data classes (``landmine``: SVM on Landmine, ``mnist``: MLP on MNIST) pull in scikit-learn and
torch, so they are imported only when first looked up; ``import vhct.objectives`` stays light.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator, Mapping
from typing import Any

from vhct.objectives.base import Objective
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
    "SyntheticObjective",
    "make_objective",
    "objective_names",
]

#: classes imported on first use, as "module:attribute"
_LAZY = {
    "landmine": "vhct.objectives.landmine:LandmineSVM",
    "mnist": "vhct.objectives.mnist:MnistMLP",
}


def _load(target: str) -> type[Objective]:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class _Registry(Mapping[str, type[Objective]]):
    """Read-only name -> objective class mapping that imports the lazy entries on first access."""

    def __init__(self, entries: Mapping[str, type[Objective] | str]):
        self._entries = dict(entries)

    def __getitem__(self, name: str) -> type[Objective]:
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = self._entries[name] = _load(entry)
        return entry

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered, without importing a lazy entry (a config check of a
        real-data objective must not need its extra)."""
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"OBJECTIVES({list(self._entries)})"


OBJECTIVES: Mapping[str, type[Objective]] = _Registry(
    {
        Garland.name: Garland,
        DoubleSine.name: DoubleSine,
        Ackley.name: Ackley,
        CounterExample.name: CounterExample,
        Himmelblau.name: Himmelblau,
        Rastrigin.name: Rastrigin,
        DifficultFunction.name: DifficultFunction,
        **_LAZY,
    }
)


def objective_names() -> list[str]:
    """Registered objective names, in registry order."""
    return list(OBJECTIVES)


def make_objective(name: str, **params: Any) -> Objective:
    """Build the objective registered as ``name`` with constructor ``params``.

    Raises ValueError naming an unknown objective (and listing the valid ones), an unknown or missing
    parameter, or a bad parameter value (the constructors check their own values).
    """
    if not isinstance(name, str) or name not in OBJECTIVES:
        raise ValueError(f"unknown objective {name!r}; valid names: {', '.join(objective_names())}")
    cls = OBJECTIVES[name]
    signature = inspect.signature(cls)
    try:
        signature.bind(**params)
    except TypeError as exc:
        accepted = ", ".join(signature.parameters) or "none"
        raise ValueError(f"bad parameters for objective {name!r}: {exc} (accepted: {accepted})") from exc
    return cls(**params)


def __getattr__(attribute: str) -> type[Objective]:
    """Lazy module attributes ``LandmineSVM`` and ``MnistMLP``."""
    for target in _LAZY.values():
        if target.endswith(f":{attribute}"):
            return _load(target)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
