"""The checks of a config that need the registries: objectives built (or their source read) with
their parameters, every optimizer built once, a run's table sized against its job's memory; and
the data an objective reads: only verified files, inside the data directory.

Data parameters: an objective reads a file named by its parameter ``data_path``, or the files of
a folder named by ``data_dir``. Run jobs verify, before a run, the files of the experiment's
``data`` list (their stamps are the jobs' inputs), so a data parameter must name those files and
nothing else: ``data_path`` must be ``data/<path>`` of one of them; for ``data_dir``, each file the
objective reads there must be one of them. An objective with a ``data_dir`` declares the files
it reads as module literals, read from its source without importing it (torch): ``MODE_SPLITS``,
the splits each value of its ``mode`` parameter reads, and ``MNIST_FILES``, the file names of
each split (``vhct.objectives.mnist``).

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
#: horizon a setting no experiment runs is built with (on STAND_IN_DOMAIN), so its parameters are
#: checked all the same (at least 2: PCT's fixed budget)
STAND_IN_HORIZON = 100


def known_name(name: str, known: Any, what: str) -> str:
    """``name`` if it is among ``known`` (a registry), else an error listing the known names."""
    if name not in known:
        raise ValueError(f"unknown {what} {name!r} (known: {', '.join(sorted(known))})")
    return name


def lazy_source(target: str) -> tuple[dict[str, ast.expr], ast.FunctionDef]:
    """The module constants (name: expression) and the ``__init__`` of an objective class imported
    lazily (``module:Class``), read from its module's source without importing it."""
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
    return constants, init


def lazy_objective(target: str) -> tuple[set[str], int | None]:
    """Constructor parameters and dimension of an objective class imported lazily (torch), read
    from its module's source without importing it: parameters from ``__init__``, the dimension
    from the module constant it passes to ``super().__init__``, when it is a literal."""
    constants, init = lazy_source(target)
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
    algorithm: str, params: Mapping[str, Any], domain: tuple, horizon: int, experiment: str | None
) -> None:
    """Build the optimizer once (no round is run: milliseconds), so a parameter it does not accept
    or a value it rejects (``truncation: 5``, ``schedule: fast``, ``variance_floor: -1``, ...) fails
    before any job; the registry's own check of parameter names is the one used. Errors are keyed
    ``params/<name>``; a missing extra is left to the job, which names it. ``experiment`` is None for
    a setting no experiment runs (built on ``STAND_IN_DOMAIN``)."""
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
        where = f"experiment {experiment!r}" if experiment else "a stand-in box: no experiment runs it"
        raise key_error(
            param_key("params", values, exc),
            f"{algorithm} rejects it (built for {where}, horizon {horizon}): {exc}",
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


#: objective parameters naming a data file, and a folder of data files (see the module)
DATA_FILE_PARAM = "data_path"
DATA_DIR_PARAM = "data_dir"
#: module literals of an objective with a ``data_dir``: the splits each mode reads, their files
MODE_SPLITS, SPLIT_FILES = "MODE_SPLITS", "MNIST_FILES"
#: the parameter choosing the mode, as the objective names it
MODE_PARAM = "mode"


def data_file_path(path: str) -> str:
    """A declared data file's path, refused (ValueError) unless it stays inside the data directory:
    ``../../outside/x`` would make the rule write outside the project (the data module's rule)."""
    from vhct.pipeline.data import inside_data_dir

    return inside_data_dir(path)


def in_data_dir(value: Any) -> str | None:
    """``data/<path>`` as ``<path>`` (``data`` itself as ""), else None: a relative path with no
    ``..`` part whose first part is the data directory."""
    if not isinstance(value, str):
        return None
    from vhct.pipeline.data import DATA_DIR

    parts = [p for p in value.split("/") if p not in ("", ".")]
    if value.startswith("/") or ".." in parts or not parts or parts[0] != DATA_DIR:
        return None
    return "/".join(parts[1:])


def data_dir_reads(objective: str, params: Mapping[str, Any]) -> list[str] | None:
    """The file names the objective reads in its ``data_dir`` with these parameters (from its
    module literals), None when it declares none."""
    from vhct import objectives

    target = objectives.OBJECTIVES.target(objective)
    if target is None:
        return None
    constants, init = lazy_source(target)
    if MODE_SPLITS not in constants or SPLIT_FILES not in constants:
        return None
    splits, files = (ast.literal_eval(constants[name]) for name in (MODE_SPLITS, SPLIT_FILES))
    names = [a.arg for a in init.args.args]
    defaults = dict(zip(names[len(names) - len(init.args.defaults) :], init.args.defaults, strict=True))
    mode = params[MODE_PARAM] if MODE_PARAM in params else ast.literal_eval(defaults.get(MODE_PARAM, "None"))
    if mode not in splits:
        return None  # an unknown mode: the objective refuses it, naming the modes
    return [name for split in splits[mode] for name in files[split]]


def check_data_params(objective: str, params: Mapping[str, Any] | None, verified: list[str]) -> None:
    """The data parameters of an experiment's objective name only files among ``verified`` (the
    paths, relative to the data directory, of the experiment's ``data`` list), which the run jobs
    verify before a run: a file outside them would be read unverified, its checksum bypassed.
    Errors are keyed ``objective_params/<name>`` and name the file."""
    params = params or {}
    listed = ", ".join(f"data/{p}" for p in verified) or "none"
    if DATA_FILE_PARAM in params:
        value = params[DATA_FILE_PARAM]
        if in_data_dir(value) not in verified:  # None, "" (the folder itself): never a listed file
            raise key_error(
                f"objective_params/{DATA_FILE_PARAM}",
                f"{value!r} is not a verified data file of the experiment (its `data` list: {listed}); "
                "declare the file under data/files with its checksum and list it in the experiment's `data`",
            )
    if DATA_DIR_PARAM in params:
        value = params[DATA_DIR_PARAM]
        folder = in_data_dir(value)
        reads = data_dir_reads(objective, params)
        if folder is None or reads is None:
            what = "is not a folder inside data/" if folder is None else "declares no files it reads there"
            raise key_error(
                f"objective_params/{DATA_DIR_PARAM}",
                f"{value!r}: objective {objective!r} {what}, so its files cannot be verified",
            )
        paths = {name: f"{folder}/{name}" if folder else name for name in reads}
        unverified = [f"data/{path}" for path in paths.values() if path not in verified]
        if unverified:
            raise key_error(
                f"objective_params/{DATA_DIR_PARAM}",
                f"objective {objective!r} reads {', '.join(unverified)} from {value!r}, not among the "
                f"experiment's verified data files (its `data` list: {listed}); list them in its `data`",
            )
