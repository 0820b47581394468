"""Algorithm names, as used in configs, mapped to constructors with a uniform signature."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .base import Optimizer, SeedLike


def _vhct(domain, horizon, seed, **params):
    from .tree import VHCT

    return VHCT(domain, seed=seed, **params)


def _hct(domain, horizon, seed, **params):
    from .tree import HCT

    return HCT(domain, seed=seed, **params)


def _thoo(domain, horizon, seed, **params):
    from .hoo import TruncatedHOO

    return TruncatedHOO(domain, horizon, seed=seed, **params)


def _poo(domain, horizon, seed, **params):
    from .parallel import POO

    return POO(domain, horizon, seed=seed, **params)


def _pct(domain, horizon, seed, **params):
    from .parallel import PCT

    return PCT(domain, horizon=horizon, seed=seed, **params)


def _bo(domain, horizon, seed, **params):
    from .bo import BayesianOptimization

    return BayesianOptimization(domain, seed=seed, **params)


def _target(name: str) -> Callable[..., Any]:
    """The class or factory behind a registry name (imported lazily: BO pulls in GPy)."""
    if name in ("VHCT", "HCT"):
        from . import tree

        return getattr(tree, name)
    if name == "T-HOO":
        from .hoo import TruncatedHOO

        return TruncatedHOO
    if name in ("POO", "PCT"):
        from . import parallel

        return getattr(parallel, name)
    from .bo import BayesianOptimization

    return BayesianOptimization


ALGORITHMS: dict[str, Callable[..., Optimizer]] = {
    "VHCT": _vhct,
    "HCT": _hct,
    "T-HOO": _thoo,
    "POO": _poo,
    "PCT": _pct,
    "BO": _bo,
}

#: arguments every constructor takes from the runner, not from the config
_RUNNER_ARGS = {"self", "domain", "horizon", "seed"}


def algorithm_names() -> list[str]:
    return list(ALGORITHMS)


def algorithm_params(name: str) -> set[str]:
    """Parameter names that ``name`` accepts from a config."""
    _check_name(name)
    signature = inspect.signature(_target(name))
    return {p for p in signature.parameters if p not in _RUNNER_ARGS}


def _check_name(name: str) -> None:
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(ALGORITHMS)}")


def make_optimizer(name: str, domain, horizon: int, seed: SeedLike = None, **params: Any) -> Optimizer:
    """Build the optimizer ``name`` for ``domain``; ``horizon`` is used only by those that need it."""
    _check_name(name)
    unknown = set(params) - algorithm_params(name)
    if unknown:
        accepted = sorted(algorithm_params(name))
        raise ValueError(f"{name} does not accept parameter(s) {sorted(unknown)}; accepted: {accepted}")
    return ALGORITHMS[name](domain, horizon, seed, **params)
