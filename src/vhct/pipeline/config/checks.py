"""The checks of a config that need the registries: objectives built (or their source read) with
their parameters, every optimizer built once, a run's table sized against its job's memory.

Called by the model's validators (``vhct.pipeline.config.model``); each raises a
:class:`ConfigError` whose key is relative to where the validator runs.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vhct.pipeline.config.errors import ConfigError, key_error

#: bytes a run job holds per value of its run table at its peak: 8 in the table's arrays and
#: 121 while writing it as CSV text (measured: benchmarks/run_table_memory.py, 129 in all)
TABLE_BYTES_PER_VALUE = 130
#: megabytes of a run job that are not its table (interpreter, numpy, objective, tree: a
#: synthetic run of n = 5000 peaks at 85 MiB, config/paper.yaml)
RUN_BASE_MB = 100
#: synthetic stand-in domain for the optimizer check of objectives imported lazily (torch):
#: the parameters of every algorithm are checked the same way on any box
STAND_IN_DOMAIN = ((0.0, 1.0), (0.0, 1.0))


def known_name(name: str, known: Any, what: str) -> str:
    """``name`` if it is among ``known`` (a registry), else an error listing the known names."""
    if name not in known:
        raise ValueError(f"unknown {what} {name!r} (known: {', '.join(sorted(known))})")
    return name


def lazy_objective(target: str) -> tuple[set[str], int | None]:
    """Constructor parameters and dimension of an objective class imported lazily (torch), read
    from its module's source without importing it: parameters from ``__init__``, the dimension
    from the module constant it passes to ``super().__init__``, when it is a literal."""
    module, _, attribute = target.partition(":")
    spec = importlib.util.find_spec(module)
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    constants = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == attribute)
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    params = {a.arg for a in (*init.args.args[1:], *init.args.kwonlyargs)}
    dim = None
    for call in ast.walk(init):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "__init__"
            and call.args
            and isinstance(call.args[0], ast.Name)
            and call.args[0].id in constants
        ):
            dim = len(ast.literal_eval(constants[call.args[0].id]))
    return params, dim


def objective_domain(objective: str, params: Mapping[str, Any] | None) -> tuple[tuple[float, float], ...]:
    """The domain of an objective with its parameters, checked before any job.

    Synthetic objectives are built with their parameters (cheap), so a bad value fails here;
    those imported lazily (real data: scikit-learn, torch, data files) have their parameter
    names checked against the constructor's source and lend a unit box of their dimension (the
    algorithms check their parameters the same way on any box). Errors are keyed
    ``objective_params/<name>``.
    """
    import inspect

    from vhct import objectives

    target = objectives.OBJECTIVES.target(objective)  # registered lazily: its source is read instead
    if target is not None:
        accepted, dim = lazy_objective(target)
    else:
        accepted, dim = set(inspect.signature(objectives.OBJECTIVES[objective]).parameters), None
    for param in params or {}:
        if param not in accepted:
            raise key_error(
                f"objective_params/{param}",
                f"objective {objective!r} does not accept "
                f"parameter {param!r} (accepted: {', '.join(sorted(accepted)) or 'none'})",
            )
    if target is not None:
        return STAND_IN_DOMAIN if dim is None else ((0.0, 1.0),) * dim
    try:
        f = objectives.OBJECTIVES[objective](**copy.deepcopy(dict(params or {})))
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise key_error(
            param_key("objective_params", params, exc), f"objective {objective!r}: {exc}"
        ) from None
    return tuple(map(tuple, f.domain.tolist()))


def param_key(prefix: str, params: Mapping[str, Any] | None, error: Exception) -> str:
    """The key of the parameter an error message names (the longest name it contains), else ``prefix``."""
    text = str(error)
    named = [p for p in params or {} if re.search(rf"(?<![\w-]){re.escape(str(p))}(?![\w-])", text)]
    return f"{prefix}/{max(named, key=len)}" if named else prefix


def build_optimizer(
    algorithm: str, params: Mapping[str, Any], domain: tuple, horizon: int, experiment: str
) -> None:
    """Build the optimizer once (no round is run: milliseconds), so a parameter it does not accept
    or a value it rejects (``truncation: 5``, ``schedule: fast``, ``variance_floor: -1``, ...) fails
    before any job; the registry's own check of parameter names is the one used. Errors are keyed
    ``params/<name>``; a missing extra is left to the job, which names it."""
    from vhct.extras import MissingExtraError
    from vhct.optimizers.registry import algorithm_params, make_optimizer

    values = copy.deepcopy(dict(params))
    try:
        make_optimizer(algorithm, [list(r) for r in domain], horizon, 0, **values)
    except MissingExtraError:
        return
    except (ValueError, TypeError, ArithmeticError) as exc:
        unknown = sorted(set(values) - algorithm_params(algorithm))
        if unknown:  # the registry refused the name: say which, as the registry does
            raise key_error(f"params/{unknown[0]}", str(exc)) from None
        raise key_error(
            param_key("params", values, exc),
            f"{algorithm} rejects it (built for experiment {experiment!r}, horizon {horizon}): {exc}",
        ) from None


def table_need_mb(horizon: int, dim: int) -> float:
    """Megabytes a run of ``horizon`` rounds on a ``dim``-dimensional objective holds at its peak."""
    from vhct.pipeline.tables import run_table_columns

    return RUN_BASE_MB + horizon * len(run_table_columns(dim)) * TABLE_BYTES_PER_VALUE / 1e6


def check_table_memory(horizon: int, dim: int, mem_mb: int, setting: str) -> None:
    """A run's table must fit its job's ``mem_mb``: a horizon of 10^9 would allocate gigabytes in
    the job; here it fails before any job, with the largest horizon that fits (ValueError, keyed by
    the caller to the key that sets the horizon)."""
    from vhct.pipeline.tables import run_table_columns

    need_mb = table_need_mb(horizon, dim)
    if need_mb > mem_mb:
        columns = len(run_table_columns(dim))
        fits = max(int((mem_mb - RUN_BASE_MB) * 1e6 / (columns * TABLE_BYTES_PER_VALUE)), 0)
        raise ConfigError(
            f"a run of {horizon} rounds ({setting}) needs about {need_mb:,.0f} MB "
            f"({columns} table columns x {TABLE_BYTES_PER_VALUE} bytes per value, plus "
            f"{RUN_BASE_MB} MB), more than its job's mem_mb {mem_mb}: at most {fits} rounds "
            "fit (or raise resources/run/mem_mb)"
        )
