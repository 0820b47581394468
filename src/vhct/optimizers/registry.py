"""The one table of algorithms (a :class:`vhct.registry.Registry` of rows): a row per name (as used
in configs), from which everything follows.

A row says where the class is (imported lazily: BO pulls in GPy, the Optuna baselines Optuna)
and whether it exposes the OSC traversal report (fig. 2). Names, config parameters (the class's
keyword arguments) and the config checks are all read from here, so adding an algorithm means
adding one row (:func:`register`). Installed packages add rows without editing this one: each
entry point of the group ``vhct.algorithms`` (:data:`PLUGIN_GROUP`, ``Name = "module:Class"``) is a
row, read in every process when the table is first used, after the built-ins (docs/library.md,
"Adding an algorithm"). Its colour and line style in the figures belong to the reporting layer
(``vhct.reporting.styles``, which draws an algorithm without a style of its own in a free one),
not to this numpy-only one.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vhct.registry import Registry, import_target

from .base import Optimizer, SeedLike


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm.

    Args:
        name: the name in configs, tables and legends.
        target: ``"module:Class"``, the module absolute or relative to ``vhct.optimizers``
            (``".tree:VHCT"``); the class takes ``domain``, ``seed`` and, if it declares one,
            ``horizon``.
        osc: it exposes the OSC traversal report (the fig. 2 panel).
        origin: the entry point a plugin's row comes from (for messages); None for a row registered
            in code.
    """

    name: str
    target: str
    osc: bool = False
    origin: str | None = None

    def load(self) -> Callable[..., Optimizer]:
        """The class behind this row (imported now); a plugin's that does not import is a one-line
        :class:`vhct.registry.PluginError` naming its entry point and distribution."""
        return import_target(self.target, __package__, self.origin)


#: the entry-point group of algorithms from other packages: ``Name = "module:Class"``
PLUGIN_GROUP = "vhct.algorithms"


def _plugin_row(name: str, target: str, origin: str) -> Algorithm:
    """The row of an entry point of :data:`PLUGIN_GROUP` (no OSC report: the osc figure draws the
    tree methods' internals)."""
    return Algorithm(name, target, origin=origin)


#: every algorithm, in the order of figures' legends; the paper's first, then today's baselines,
#: then the plugins (entry points of PLUGIN_GROUP, by name)
ALGORITHM_TABLE: Registry[Algorithm] = Registry("algorithm", plugins=PLUGIN_GROUP, plugin=_plugin_row)

#: arguments every constructor takes from the runner, not from the config
_RUNNER_ARGS = {"self", "domain", "horizon", "seed"}


def register(algorithm: Algorithm) -> Algorithm:
    """Add a row: its name must be new."""
    return ALGORITHM_TABLE.register(algorithm)


def unregister(name: str) -> None:
    """Remove a row (for tests that register a temporary algorithm)."""
    ALGORITHM_TABLE.unregister(name)


for _row in (
    Algorithm("VHCT", ".tree:VHCT", osc=True),
    Algorithm("HCT", ".tree:HCT", osc=True),
    Algorithm("T-HOO", ".hoo:TruncatedHOO"),
    Algorithm("POO", ".parallel:POO"),
    Algorithm("PCT", ".parallel:PCT"),
    Algorithm("BO", ".bo:BayesianOptimization"),
    Algorithm("Random", ".optuna_baselines:RandomSearch"),
    Algorithm("TPE", ".optuna_baselines:TPE"),
    Algorithm("CMA-ES", ".optuna_baselines:CMAES"),
    Algorithm("GP-Optuna", ".optuna_baselines:GPOptuna"),
):
    register(_row)


def algorithm_names() -> list[str]:
    """Registered algorithm names, in the registry's order."""
    return list(ALGORITHM_TABLE)


def algorithm(name: str) -> Algorithm:
    """The row of ``name``; an unknown name is a ValueError listing the known ones."""
    return ALGORITHM_TABLE.lookup(name)


def algorithm_origin(name: str) -> str:
    """Where the code of ``name`` comes from, for messages about it: the entry point that named it
    (a plugin's row), else its ``module:Class`` with the module absolute. Imports nothing."""
    row = algorithm(name)
    if row.origin is not None:
        return row.origin
    module, _, attribute = row.target.partition(":")
    return f"{importlib.util.resolve_name(module, __package__)}:{attribute}"


def osc_algorithms() -> frozenset[str]:
    """Algorithms that expose the OSC traversal report."""
    return frozenset(a.name for a in ALGORITHM_TABLE.values() if a.osc)


def algorithm_sources(name: str) -> list[Path]:
    """The source files of the code behind ``name``, built-in or plugin, so a record of a run can
    hash them: the file of its target (a class or a factory) and, for a class, the files of the
    classes it inherits from (``vhct.optimizers.base`` among them), the standard library's left
    out. Sorted, absolute; importing the target is the caller's cost."""
    target = algorithm(name).load()
    owners = inspect.getmro(target) if isinstance(target, type) else (target,)
    files = set()
    for owner in owners:
        module = sys.modules.get(owner.__module__)
        if owner.__module__.partition(".")[0] in sys.stdlib_module_names or module is None:
            continue
        source = inspect.getsourcefile(module) if getattr(module, "__file__", None) else None
        if source is not None:
            files.add(Path(source).resolve())
    return sorted(files)


def needs_horizon(name: str) -> bool:
    """Whether the algorithm's constructor takes the horizon (T-HOO, POO, PCT)."""
    return "horizon" in inspect.signature(algorithm(name).load()).parameters


def algorithm_params(name: str) -> set[str]:
    """Parameter names that ``name`` accepts from a config."""
    signature = inspect.signature(algorithm(name).load())
    return {p for p in signature.parameters if p not in _RUNNER_ARGS}


def check_params(name: str, params: Mapping[str, Any]) -> None:
    """The one check of parameter names: a ValueError naming those ``name`` does not accept
    (used by :func:`make_optimizer` and by the pipeline's config check)."""
    unknown = set(params) - algorithm_params(name)
    if unknown:
        accepted = sorted(algorithm_params(name))
        raise ValueError(f"{name} does not accept parameter(s) {sorted(unknown)}; accepted: {accepted}")


def _build(name: str, domain, horizon: int | None, seed: SeedLike, params: dict[str, Any]) -> Optimizer:
    cls = algorithm(name).load()
    if needs_horizon(name):
        return cls(domain, horizon=horizon, seed=seed, **params)
    return cls(domain, seed=seed, **params)


def make_optimizer(
    name: str, domain, horizon: int | None = None, seed: SeedLike = None, **params: Any
) -> Optimizer:
    """Build the optimizer ``name`` for ``domain``; ``horizon`` is used only by those that need it."""
    check_params(name, params)
    if horizon is None and needs_horizon(name):
        raise ValueError(f"{name} needs the horizon (the number of rounds it will run); horizon is None")
    return _build(name, domain, horizon, seed, params)
