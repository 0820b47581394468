"""Pipeline configuration: schema with the registries' names, semantic checks, expansion into jobs.

The JSON schema (``vhct/resources/config.schema.yaml``) checks structure and ranges; this
module adds what a schema cannot express (cross references between sections, parameter names
per algorithm) and turns experiments into the run jobs of the Snakemake DAG.
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import importlib.util
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from vhct.resources import CONFIG_SCHEMA, resource_path

#: the schema shipped with the workflow
SCHEMA_PATH = resource_path(CONFIG_SCHEMA)
#: figure kinds whose panels are experiments
CURVE_KINDS = frozenset({"regret", "average_regret", "regret_cost"})


#: the keys a config must have (also the schema's ``required``); named when the whole file is off
REQUIRED_SECTIONS = ("settings", "experiments", "figures")
#: said when a config file lacks a section: users may expect the default config to fill it in
#: key of a config file naming the config file it extends (its keys are read first)
BASE_KEY = "base"
#: the config read when no config file is given (relative to the checkout)
DEFAULT_CONFIG = Path("config") / "config.yaml"
#: default resources per rule family (overridden by config `resources`, per experiment, per setting)
DEFAULT_RESOURCES: dict[str, dict[str, int]] = {
    "data": {"threads": 1, "mem_mb": 500, "runtime": 30},
    "run": {"threads": 1, "mem_mb": 1000, "runtime": 60},
    "aggregate": {"threads": 1, "mem_mb": 2000, "runtime": 10},
    "figure": {"threads": 1, "mem_mb": 2000, "runtime": 15},
}
#: bytes a run job holds per value of its run table at its peak: 8 in the table's arrays and
#: 121 while writing it as CSV text (measured: benchmarks/run_table_memory.py, 129 in all)
TABLE_BYTES_PER_VALUE = 130
#: megabytes of a run job that are not its table (interpreter, numpy, objective, tree: a
#: synthetic run of n = 5000 peaks at 85 MiB, config/paper.yaml)
RUN_BASE_MB = 100
#: synthetic stand-in domain for the optimizer check of objectives imported lazily (torch):
#: the parameters of every algorithm are checked the same way on any box
STAND_IN_DOMAIN = ((0.0, 1.0), (0.0, 1.0))
NOT_MERGED = (
    "the default config/config.yaml is used only when no config file is given; it is not merged with yours"
)


class ConfigError(ValueError):
    """An invalid configuration; the message names the key path (and the file and line when known).

    ``key`` is the key path as a tuple (``()`` for the top level, None when no key is concerned).
    """

    def __init__(self, message: str, key: Sequence[str] | None = None):
        super().__init__(message)
        self.key = None if key is None else tuple(str(k) for k in key)


def _key_error(key: Sequence[str] | str, text: str) -> ConfigError:
    """A ConfigError ``config key a/b/c: text`` (``key`` as parts or as ``"a/b/c"``)."""
    parts = [p for p in key.split("/") if p] if isinstance(key, str) else [str(p) for p in key]
    return ConfigError(f"config key {'/'.join(parts) or '<root>'}: {text}", parts)


def _registries() -> tuple[list[str], list[str]]:
    """Objective and algorithm names, read from the registries (imported lazily)."""
    from vhct.objectives import OBJECTIVES
    from vhct.optimizers.registry import ALGORITHMS

    return sorted(OBJECTIVES), sorted(ALGORITHMS)


def resolved_schema(schema_path: Path | str = SCHEMA_PATH) -> dict[str, Any]:
    """Load the schema and pin objective/algorithm names to the registries' names as enums."""
    with open(schema_path, encoding="utf-8") as handle:
        schema = yaml.safe_load(handle)
    objectives, algorithms = _registries()
    props = schema["properties"]
    props["settings"]["additionalProperties"]["properties"]["algorithm"]["enum"] = algorithms
    props["experiments"]["additionalProperties"]["properties"]["objective"]["enum"] = objectives
    panel = props["figures"]["additionalProperties"]["properties"]["panels"]["items"]
    panel["properties"]["objective"]["enum"] = objectives
    return schema


def schema_validate(config: dict[str, Any], schema_path: Path | str = SCHEMA_PATH) -> None:
    """Validate with jsonschema outside Snakemake (fills schema defaults in place, like Snakemake)."""
    import jsonschema

    schema = resolved_schema(schema_path)
    base = jsonschema.Draft202012Validator
    set_defaults = base.VALIDATORS["properties"]

    def properties_with_defaults(validator, properties, instance, schema_part):
        if isinstance(instance, dict):
            for key, sub in properties.items():
                if "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
        yield from set_defaults(validator, properties, instance, schema_part)

    validator_cls = jsonschema.validators.extend(base, {"properties": properties_with_defaults})
    # an unknown key (a typo) explains a missing required key at the same level better than the reverse
    relevance = jsonschema.exceptions.by_relevance(strong=frozenset({"additionalProperties"}))
    error = jsonschema.exceptions.best_match(validator_cls(schema).iter_errors(config), key=relevance)
    if error is not None:
        raise _schema_error(error)


def _schema_error(error: Any) -> ConfigError:
    """One line for a jsonschema error: the key path and what is wrong (no schema dump)."""
    path = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        allowed = set(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        unknown = [
            k for k in error.instance if k not in allowed and not any(_matches(p, k) for p in patterns)
        ]
        if unknown:
            key = str(unknown[0])
            guess = difflib.get_close_matches(key, sorted(allowed), n=1)
            hint = f"did you mean {guess[0]!r}? " if guess else ""
            extra = " or a name starting with 'x-'" if "^x-" in patterns else ""
            return _key_error(
                [*path, key], f"unknown key {key!r} ({hint}allowed: {', '.join(sorted(allowed))}{extra})"
            )
    if error.validator == "required" and not path and isinstance(error.instance, Mapping):
        missing = [k for k in error.validator_value if k not in error.instance]
        return _key_error(path, f"missing top-level key(s) {', '.join(missing)} ({NOT_MERGED})")
    return _key_error(path, error.message)


def _matches(pattern: str, key: Any) -> bool:
    import re

    return isinstance(key, str) and re.search(pattern, key) is not None


# ---------------------------------------------------------------- reading files, locating keys


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping gives the same key twice (YAML parsers silently keep the last one)."""


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that rejects a key given twice in one mapping, naming both lines.

    Keys brought in by a YAML merge (``<<: *anchor``) may be overridden, as YAML intends.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool | None):
                continue  # unhashable or unusual keys: the base class reports them
            if key in first:
                raise DuplicateKeyError(
                    problem=f"duplicate key {key!r} (first given on line {first[key]}): a mapping may "
                    "give a key only once",
                    problem_mark=key_node.start_mark,
                )
            first[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def read_config_file(path: Path | str) -> dict[str, Any]:
    """Parse one YAML config file; an empty file, a syntax error, a key given twice or a
    non-mapping names the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from exc
    try:
        config = yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        raise ConfigError(f"{path}:{mark.line + 1}:{mark.column + 1}: {exc.problem}") from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = ": ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(f"{where}: YAML syntax error: {problem}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: YAML syntax error: {exc}") from exc
    if config is None:
        raise ConfigError(
            f"{path}: the config file is empty (or only comments); it needs the keys "
            f"{', '.join(REQUIRED_SECTIONS)} ({NOT_MERGED})",
            (),
        )
    if not isinstance(config, dict):
        raise ConfigError(
            f"{path}:1: the config file does not hold a mapping of keys (got a {type(config).__name__})"
        )
    return config


def key_line(path: Path | str, key: Sequence[str]) -> tuple[int | None, int]:
    """Line (1-based) of the deepest part of ``key`` that the YAML file spells out, and that depth."""
    try:
        node = yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return None, 0
    line, depth = None, 0
    for part in key:
        child = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                    child, line = value, key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and str(part).isdigit() and int(part) < len(node.value):
            child = node.value[int(part)]
            line = child.start_mark.line + 1
        if child is None:
            break
        node, depth = child, depth + 1
    return line, depth


def located(error: ConfigError, files: Sequence[Path | str]) -> ConfigError:
    """The error prefixed with ``file:line:`` of its key (the last file spelling out most of the key wins)."""
    if not files:
        return error
    best, line, depth = None, None, 0
    if error.key:
        for path in files:
            found, level = key_line(path, error.key)
            if level >= depth and level > 0:
                best, line, depth = path, found, level
    where = f"{best}:{line}" if best is not None else ", ".join(map(str, files))
    return ConfigError(f"{where}: {error}", error.key)


def validate_config(
    config: dict[str, Any], files: Sequence[Path | str] = (), schema_path: Path | str = SCHEMA_PATH
) -> None:
    """Schema (filling defaults in place) and cross-reference checks; errors name file, line and key."""
    try:
        check_finite(config)
        schema_validate(config, schema_path)
        check_config(config)
    except ConfigError as exc:
        raise located(exc, files) from None


def pipeline_config(
    files: Sequence[Path | str],
    overrides: Mapping[str, Any] | None = None,
    schema_path: Path | str = SCHEMA_PATH,
) -> tuple[dict[str, Any], list[Path]]:
    """The config a pipeline run uses, and the files it was read from (bases first).

    The files are read with :class:`UniqueKeyLoader`, each after the files it extends, and
    merged in order (:func:`merge`), then ``overrides`` (Snakemake's ``--config KEY=VALUE``);
    the result is validated (schema defaults filled in). This is the one loader: the pre-check
    (``python -m vhct.pipeline.config``) and the workflow (``workflow/rules/common.smk``) both
    call it. Errors name the file, the line and the key.
    """
    chain = _base_chain(files)
    config = _merge_chain(chain)
    if overrides:
        config = merge(config, overrides)
    paths = [path for path, _ in chain]
    validate_config(config, paths, schema_path)
    return config, paths


def load_config(path: Path | str, schema_path: Path | str = SCHEMA_PATH) -> dict[str, Any]:
    """Read a YAML config (and the files it extends), check it against the schema and semantically."""
    return pipeline_config([path], schema_path=schema_path)[0]


def check_finite(value: Any, key: tuple[str, ...] = ()) -> None:
    """Reject NaN and infinity anywhere in a config (YAML ``.nan``, ``.inf``): they pass the
    schema's ``minimum`` checks and would fail, or run silently wrong, inside a job."""
    if isinstance(value, float) and not math.isfinite(value):
        raise _key_error(key, f"must be a finite number, got {value!r}")
    if isinstance(value, Mapping):
        for k, v in value.items():
            check_finite(v, (*key, str(k)))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            check_finite(v, (*key, str(i)))


def _need(section: Mapping[str, Any], name: str, key_path: str, what: str) -> None:
    if name not in section:
        known = ", ".join(sorted(section)) or "none"
        raise _key_error(key_path, f"unknown {what} {name!r} (declared: {known})")


def check_config(config: Mapping[str, Any]) -> None:
    """Cross-reference checks the schema cannot express; raise ConfigError naming the key path."""
    from vhct.optimizers.registry import algorithm_params

    settings = config["settings"]
    for name, setting in settings.items():
        accepted = set(algorithm_params(setting["algorithm"]))
        for param in setting.get("params", {}) or {}:
            if param not in accepted:
                raise _key_error(
                    f"settings/{name}/params/{param}",
                    f"{setting['algorithm']} does not accept "
                    f"parameter {param!r} (accepted: {', '.join(sorted(accepted)) or 'none'})",
                )
    data = _files(config)
    paths: dict[str, str] = {}
    for name, spec in data.items():
        if spec["path"] in paths:
            other = paths[spec["path"]]
            raise _key_error(f"data/files/{name}/path", f"{spec['path']!r} already used by {other}")
        paths[spec["path"]] = name
    experiments = config["experiments"]
    _check_name_collisions(experiments)
    dims = {}
    for name, exp in experiments.items():
        dims[name] = _check_objective_params(
            exp["objective"], exp.get("objective_params"), f"experiments/{name}"
        )
        for i, setting in enumerate(exp["settings"]):
            _need(settings, setting, f"experiments/{name}/settings/{i}", "setting")
        for i, item in enumerate(exp.get("data", [])):
            _need(data, item, f"experiments/{name}/data/{i}", "data file")
        for setting in exp.get("caps") or {}:
            if setting not in exp["settings"]:
                raise _key_error(
                    f"experiments/{name}/caps/{setting}",
                    f"setting {setting!r} is not run in experiment {name!r} "
                    f"(its settings: {', '.join(exp['settings'])})",
                )
    for fig_name, fig in config["figures"].items():
        for i, panel in enumerate(fig["panels"]):
            _check_panel(config, fig["kind"], panel, f"figures/{fig_name}/panels/{i}")
    _check_optimizers(config, dims)
    _check_table_memory(config, dims)


def rule_safe(name: str) -> str:
    """``name`` as Snakemake rule names spell it (characters other than letters, digits and
    ``_`` become ``_``): two experiments the same here would give two rules one name."""
    return re.sub(r"\W", "_", name)


def _check_name_collisions(experiments: Mapping[str, Any]) -> None:
    seen: dict[str, str] = {}
    for name in experiments:
        other = seen.setdefault(rule_safe(name), name)
        if other != name:
            raise _key_error(
                f"experiments/{name}",
                f"the name collides with experiment {other!r}: both are {rule_safe(name)!r} in "
                "Snakemake's rule names (rename one)",
            )


def _lazy_objective(target: str) -> tuple[set[str], int | None]:
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


def _check_objective_params(objective: str, params: Mapping[str, Any] | None, key: str) -> int | None:
    """Check an objective's parameters before any job and return its dimension (None: unknown).

    Synthetic objectives are built with their parameters (cheap), so a bad value fails here;
    those imported lazily (real data: scikit-learn, torch, data files) have their parameter
    names checked against the constructor's source.
    """
    import inspect

    from vhct import objectives

    lazy = getattr(objectives, "_LAZY", {})
    if objective in lazy:
        accepted, dim = _lazy_objective(lazy[objective])
    else:
        accepted, dim = set(inspect.signature(objectives.OBJECTIVES[objective]).parameters), None
    for param in params or {}:
        if param not in accepted:
            raise _key_error(
                f"{key}/objective_params/{param}",
                f"objective {objective!r} does not accept "
                f"parameter {param!r} (accepted: {', '.join(sorted(accepted)) or 'none'})",
            )
    if objective in lazy:
        return dim
    try:
        return objectives.OBJECTIVES[objective](**copy.deepcopy(dict(params or {}))).dim
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise _key_error(
            _param_key(f"{key}/objective_params", params, exc), f"objective {objective!r}: {exc}"
        ) from None


def _param_key(prefix: str, params: Mapping[str, Any] | None, error: Exception) -> str:
    """The key of the parameter an error message names (the longest name it contains), else ``prefix``."""
    text = str(error)
    named = [p for p in params or {} if re.search(rf"(?<![\w-]){re.escape(str(p))}(?![\w-])", text)]
    return f"{prefix}/{max(named, key=len)}" if named else prefix


def _experiment_domain(config: Mapping[str, Any], experiment: str, dim: int | None) -> tuple:
    exp = config["experiments"][experiment]
    from vhct import objectives

    if exp["objective"] in getattr(objectives, "_LAZY", {}):
        return STAND_IN_DOMAIN if dim is None else ((0.0, 1.0),) * dim
    f = objectives.OBJECTIVES[exp["objective"]](**copy.deepcopy(dict(exp.get("objective_params") or {})))
    return tuple(map(tuple, f.domain.tolist()))


def _check_optimizers(config: Mapping[str, Any], dims: Mapping[str, int | None]) -> None:
    """Build every setting's optimizer once per experiment domain and horizon it runs with (no
    round is run: milliseconds), so a value the algorithm rejects (``truncation: 5``,
    ``schedule: fast``, ``variance_floor: -1``, ...) fails before any job, naming its key.

    Objectives imported lazily (real data) lend a box of their dimension: the algorithms check
    their parameters the same way on any box.
    """
    from vhct.extras import MissingExtraError
    from vhct.optimizers.registry import make_optimizer

    built: set[tuple[str, tuple, int]] = set()
    for experiment, exp in config["experiments"].items():
        domain = _experiment_domain(config, experiment, dims.get(experiment))
        for setting in exp["settings"]:
            horizon = run_horizon(config, experiment, setting)
            if (setting, domain, horizon) in built:
                continue
            built.add((setting, domain, horizon))
            algo = config["settings"][setting]
            params = copy.deepcopy(dict(algo.get("params") or {}))
            try:
                make_optimizer(algo["algorithm"], [list(r) for r in domain], horizon, 0, **params)
            except MissingExtraError:
                continue  # the job reports the missing extra by name
            except (ValueError, TypeError, ArithmeticError) as exc:
                raise _key_error(
                    _param_key(f"settings/{setting}/params", params, exc),
                    f"{algo['algorithm']} rejects it (built for experiment {experiment!r}, "
                    f"horizon {horizon}): {exc}",
                ) from None


def resource(
    config: Mapping[str, Any],
    family: str,
    key: str,
    experiment: str | None = None,
    setting: str | None = None,
) -> int:
    """Threads/mem_mb/runtime of a rule family: the default, then the config's ``resources``,
    then the experiment's, then the setting's (the setting wins)."""
    value = DEFAULT_RESOURCES[family][key]
    value = (config.get("resources", {}).get(family) or {}).get(key, value)
    if experiment is not None:
        value = (config["experiments"][experiment].get("resources") or {}).get(key, value)
    if setting is not None:
        value = (config["settings"][setting].get("resources") or {}).get(key, value)
    return value


def _check_table_memory(config: Mapping[str, Any], dims: Mapping[str, int | None]) -> None:
    """A run's table must fit its job's ``mem_mb``: a horizon of 10^9 would allocate gigabytes in
    the job; here it fails before any job, with the largest horizon that fits."""
    from vhct.pipeline.tables import run_table_columns

    for experiment, exp in config["experiments"].items():
        dim = dims.get(experiment)
        columns = len(run_table_columns(1 if dim is None else dim))
        for setting in exp["settings"]:
            horizon = run_horizon(config, experiment, setting)
            mem_mb = resource(config, "run", "mem_mb", experiment, setting)
            need_mb = RUN_BASE_MB + horizon * columns * TABLE_BYTES_PER_VALUE / 1e6
            if need_mb > mem_mb:
                fits = max(int((mem_mb - RUN_BASE_MB) * 1e6 / (columns * TABLE_BYTES_PER_VALUE)), 0)
                raise _key_error(
                    cap_key(config, experiment, setting, "max_horizon")
                    or f"experiments/{experiment}/horizon",
                    f"a run of {horizon} rounds ({setting}) needs about {need_mb:,.0f} MB "
                    f"({columns} table columns x {TABLE_BYTES_PER_VALUE} bytes per value, plus "
                    f"{RUN_BASE_MB} MB), more than its job's mem_mb {mem_mb}: at most {fits} rounds "
                    "fit (or raise resources/run/mem_mb)",
                )


def _check_panel(config: Mapping[str, Any], kind: str, panel: Mapping[str, Any], key: str) -> None:
    experiments = config["experiments"]
    if kind == "function":
        _check_objective_params(panel["objective"], panel.get("objective_params"), key)
    if kind in CURVE_KINDS or kind == "osc":
        _need(experiments, panel["experiment"], f"{key}/experiment", "experiment")
        declared = experiments[panel["experiment"]]["settings"]
        chosen = panel.get("settings", []) + ([panel["setting"]] if kind == "osc" else [])
        for j, setting in enumerate(chosen):
            if setting not in declared:
                where = f"{key}/setting" if kind == "osc" else f"{key}/settings/{j}"
                raise _key_error(
                    where,
                    f"setting {setting!r} is not run in experiment "
                    f"{panel['experiment']!r} (its settings: {', '.join(declared)})",
                )
    if kind == "osc":
        algorithm = config["settings"][panel["setting"]]["algorithm"]
        from vhct.optimizers.registry import osc_algorithms  # the registry's osc column

        if algorithm not in osc_algorithms():
            needs = ", ".join(sorted(osc_algorithms()))
            raise _key_error(f"{key}/setting", f"the OSC figure needs one of {needs}, got {algorithm}")
        horizon = run_horizon(config, panel["experiment"], panel["setting"])
        if panel["round"] > horizon:
            raise _key_error(
                f"{key}/round",
                f"{panel['round']} exceeds the horizon {horizon} of setting {panel['setting']!r} "
                f"in experiment {panel['experiment']!r}",
            )
        run = seeds(config, panel["experiment"])
        if panel.get("seed", 0) not in run:
            raise _key_error(
                f"{key}/seed",
                f"seed {panel.get('seed', 0)} is not run in experiment {panel['experiment']!r} "
                f"(its seeds: {', '.join(map(str, run))})",
            )


# ---------------------------------------------------------------- expansion into jobs


def seeds(config: Mapping[str, Any], experiment: str) -> list[int]:
    """Seeds of an experiment: ``0..n-1`` for a count, else the explicit list."""
    value = config["experiments"][experiment]["seeds"]
    return list(range(value)) if isinstance(value, int) else [int(s) for s in value]


def cap_key(config: Mapping[str, Any], experiment: str, setting: str, cap: str) -> str | None:
    """Config key that sets a setting's ``cap`` (``max_horizon`` or ``max_seeds``) in one experiment:
    the experiment's ``caps`` entry if it has one, else the setting's own; None when uncapped."""
    if cap in ((config["experiments"][experiment].get("caps") or {}).get(setting) or {}):
        return f"experiments/{experiment}/caps/{setting}/{cap}"
    return f"settings/{setting}/{cap}" if config["settings"][setting].get(cap) is not None else None


def setting_cap(config: Mapping[str, Any], experiment: str, setting: str, cap: str) -> int | None:
    """A setting's ``max_horizon`` or ``max_seeds`` in one experiment (see :func:`cap_key`)."""
    key = cap_key(config, experiment, setting, cap)
    if key is None:
        return None
    value: Any = config
    for part in key.split("/"):
        value = value[part]
    return int(value)


def setting_seeds(config: Mapping[str, Any], experiment: str, setting: str) -> list[int]:
    """Seeds of one setting in one experiment: the experiment's, the first ``max_seeds`` of them
    when the setting (or the experiment's ``caps``) caps them (e.g. BO, whose runs cost minutes)."""
    chosen = seeds(config, experiment)
    cap = setting_cap(config, experiment, setting, "max_seeds")
    return chosen if cap is None else chosen[:cap]


def run_horizon(config: Mapping[str, Any], experiment: str, setting: str) -> int:
    """Rounds of one setting in one experiment: the experiment horizon capped by ``max_horizon``
    (the setting's, or the experiment's ``caps`` entry for it)."""
    horizon = int(config["experiments"][experiment]["horizon"])
    cap = setting_cap(config, experiment, setting, "max_horizon")
    return horizon if cap is None else min(horizon, cap)


def run_jobs(
    config: Mapping[str, Any], experiments: Iterable[str] | None = None
) -> list[tuple[str, str, int]]:
    """Every run job ``(experiment, setting, seed)``, in config order."""
    names = list(config["experiments"]) if experiments is None else list(experiments)
    return [
        (exp, setting, seed)
        for exp in names
        for setting in config["experiments"][exp]["settings"]
        for seed in setting_seeds(config, exp, setting)
    ]


def runs_per_job(config: Mapping[str, Any], experiment: str, setting: str) -> int:
    """Runs per job of an (experiment, setting): the setting's value, else the experiment's, else 1."""
    for section in (config["settings"][setting], config["experiments"][experiment]):
        if section.get("runs_per_job") is not None:
            return int(section["runs_per_job"])
    return 1


class RunBatch(NamedTuple):
    """Runs of one experiment that one job runs one after the other: ``(setting, seed)`` pairs."""

    experiment: str
    index: int
    runs: tuple[tuple[str, int], ...]

    @property
    def rule(self) -> str:
        """Snakemake rule name of this batch (one rule per batch, its outputs spelled out)."""
        return rule_safe(f"run_{self.experiment}_batch{self.index}")


def run_batches(config: Mapping[str, Any]) -> list[RunBatch]:
    """The jobs of more than one run: per experiment, its runs in config order (setting by
    setting, seeds in order), cut into chunks of ``runs_per_job``.

    Runs of settings with ``runs_per_job`` 1 (e.g. BO) are left to the one-run rule. Settings of
    the same ``runs_per_job`` share chunks; a setting whose own value differs from the
    experiment's (e.g. a costly baseline, two runs per job) is chunked apart, after them. Batches
    are numbered per experiment, so adding a setting at the end of an experiment's list keeps the
    existing batches.
    """
    batches = []
    for experiment, exp in config["experiments"].items():
        pools: dict[int, list[tuple[str, int]]] = {}  # runs by their runs_per_job, in config order
        for setting in exp["settings"]:
            per_job = runs_per_job(config, experiment, setting)
            if per_job > 1:
                pools.setdefault(per_job, [])
                pools[per_job] += [(setting, seed) for seed in setting_seeds(config, experiment, setting)]
        chunks = [
            tuple(runs[start : start + size])
            for size, runs in pools.items()
            for start in range(0, len(runs), size)
        ]
        batches += [RunBatch(experiment, index, runs) for index, runs in enumerate(chunks)]
    names = [b.rule for b in batches]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"two run batches share the rule name {name!r}; rename an experiment")
    return batches


def run_spec(config: Mapping[str, Any], experiment: str, setting: str, seed: int) -> dict[str, Any]:
    """Everything one run job needs (passed to it as params, recorded in its JSON sidecar)."""
    exp = config["experiments"][experiment]
    algo = config["settings"][setting]
    return {
        "experiment": experiment,
        "setting": setting,
        "algorithm": algo["algorithm"],
        "params": copy.deepcopy(algo.get("params", {}) or {}),
        "objective": exp["objective"],
        "objective_params": copy.deepcopy(exp.get("objective_params", {}) or {}),
        "noise": float(exp["noise"]),
        "horizon": run_horizon(config, experiment, setting),
        "seed": int(seed),
        "progress_every": int(config.get("progress_every", 500)),
    }


def setting_info(config: Mapping[str, Any], experiment: str) -> dict[str, dict[str, Any]]:
    """Per setting of an experiment: algorithm, label, params, run horizon and seeds (tables, legends)."""
    out = {}
    for setting in config["experiments"][experiment]["settings"]:
        algo = config["settings"][setting]
        out[setting] = {
            "algorithm": algo["algorithm"],
            "label": algo.get("label", setting),
            "params": copy.deepcopy(algo.get("params", {}) or {}),
            "horizon": run_horizon(config, experiment, setting),
            "seeds": setting_seeds(config, experiment, setting),
        }
    return out


def experiment_info(config: Mapping[str, Any], experiment: str) -> dict[str, Any]:
    """What a figure needs to know about an experiment (title, noise, seeds, horizon, settings)."""
    exp = config["experiments"][experiment]
    return {
        "name": experiment,
        "title": exp.get("title", experiment),
        "objective": exp["objective"],
        "objective_params": copy.deepcopy(exp.get("objective_params", {}) or {}),
        "noise": float(exp["noise"]),
        "horizon": int(exp["horizon"]),
        "seeds": seeds(config, experiment),
        "settings": setting_info(config, experiment),
    }


def figure_experiments(config: Mapping[str, Any], figure: str) -> list[str]:
    """Experiments whose aggregates a figure reads (none for function and OSC figures)."""
    fig = config["figures"][figure]
    if fig["kind"] not in CURVE_KINDS:
        return []
    return list(dict.fromkeys(panel["experiment"] for panel in fig["panels"]))


def figure_spec(config: Mapping[str, Any], figure: str) -> dict[str, Any]:
    """A figure's declaration plus the info of every experiment its panels use."""
    fig = copy.deepcopy(dict(config["figures"][figure]))
    used = dict.fromkeys(p["experiment"] for p in fig["panels"] if "experiment" in p)
    fig["name"] = figure
    fig["experiments"] = {name: experiment_info(config, name) for name in used}
    for panel in fig["panels"]:
        if fig["kind"] == "osc":
            panel["run"] = run_spec(config, panel["experiment"], panel["setting"], panel.get("seed", 0))
    return fig


def _files(config: Mapping[str, Any]) -> dict[str, Any]:
    return (config.get("data") or {}).get("files") or {}


def data_mirror(config: Mapping[str, Any]) -> str | None:
    """The configured mirror directory of data files (None: only the environment variable)."""
    return (config.get("data") or {}).get("mirror")


def data_files(config: Mapping[str, Any], experiment: str | None = None) -> list[str]:
    """Paths (relative to ``data/``) of the data files of one experiment, or of all declared ones."""
    data = _files(config)
    names = list(data) if experiment is None else config["experiments"][experiment].get("data", [])
    return [data[name]["path"] for name in names]


def data_spec(config: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The declaration of the data file written to ``data/<path>``."""
    for spec in _files(config).values():
        if spec["path"] == path:
            return copy.deepcopy(spec)
    raise _key_error("data/files", f"no data file declares path {path!r}")


# ---------------------------------------------------------------- command line


def merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``update``, neither changed: a mapping in both is merged key by key
    (recursively); any other value of ``update`` (list, number, string, null) replaces the base's."""
    out = copy.deepcopy(dict(base))
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _base_chain(files: Sequence[Path | str]) -> list[tuple[Path, dict[str, Any]]]:
    """Each config file (resolved) with its content, the files it extends (key ``base``,
    relative to the file) before it; every file once. A base chain that loops is an error."""
    out: dict[Path, dict[str, Any]] = {}

    def visit(path: Path, chain: tuple[Path, ...]) -> None:
        if path in chain:
            raise ConfigError(
                f"{path}: 'base' chain loops: {' -> '.join(map(str, (*chain, path)))}", ("base",)
            )
        content = out[path] if path in out else read_config_file(path)
        base = content.get(BASE_KEY)
        if base is not None:
            if not isinstance(base, str):
                raise located(_key_error(BASE_KEY, f"must be a file path, got {base!r}"), [path])
            visit((path.parent / base).resolve(), (*chain, path))
        out.setdefault(path, content)

    for path in files:
        visit(Path(path).resolve(), ())
    return list(out.items())


def _merge_chain(chain: Sequence[tuple[Path, Mapping[str, Any]]]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for _, content in chain:
        config = merge(config, content)
    config.pop(BASE_KEY, None)
    return config


def with_bases(files: Sequence[Path | str]) -> list[Path]:
    """The config files with the files they extend (key ``base``, relative to the file) before them.

    A file's base comes before the file, its base's base before that, and every file appears
    once; a base chain that loops is an error naming the files.
    """
    return [path for path, _ in _base_chain(files)]


def merged_config(files: Sequence[Path | str]) -> dict[str, Any]:
    """The files merged as the pipeline merges them (each after its bases; later files update
    earlier ones, :func:`merge`), not validated; the result has no ``base`` key."""
    return _merge_chain(_base_chain(files))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m vhct.pipeline.config FILE...``: check config files as the pipeline would, before Snakemake.

    Snakemake parses ``--configfile`` itself, before the workflow's own checks run, and reports a
    YAML syntax error or an empty file without its name; this check names the file and line.
    """
    parser = argparse.ArgumentParser(
        prog="python -m vhct.pipeline.config", description=main.__doc__.splitlines()[0]
    )
    parser.add_argument("files", nargs="+", type=Path, help="config files, in --configfile order")
    args = parser.parse_args(argv)
    try:
        config, _ = pipeline_config(args.files)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    names = ", ".join(map(str, args.files))
    print(f"{names}: valid ({len(config['experiments'])} experiments, {len(run_jobs(config))} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
