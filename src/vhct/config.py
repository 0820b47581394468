"""Pipeline configuration: schema with the registries' names, semantic checks, expansion into jobs.

The JSON schema (``workflow/schemas/config.schema.yaml``) checks structure and ranges; this
module adds what a schema cannot express (cross references between sections, parameter names
per algorithm) and turns experiments into the run jobs of the Snakemake DAG.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

#: the schema shipped with the workflow
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"
#: figure kinds whose panels are experiments
CURVE_KINDS = frozenset({"regret", "average_regret"})
#: algorithms that expose the OSC traversal report (fig. 2)
OSC_ALGORITHMS = frozenset({"VHCT", "HCT"})


class ConfigError(ValueError):
    """A configuration that is valid for the schema but inconsistent; the message names the key path."""


def _registries() -> tuple[list[str], list[str]]:
    """Objective and algorithm names, read from the registries (imported lazily)."""
    from vhct.objectives import OBJECTIVES
    from vhct.registry import ALGORITHMS

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
    error = jsonschema.exceptions.best_match(validator_cls(schema).iter_errors(config))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        raise ConfigError(f"config key {where}: {error.message}")


def load_config(path: Path | str, schema_path: Path | str = SCHEMA_PATH) -> dict[str, Any]:
    """Read a YAML config, validate it against the schema and check it semantically."""
    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    if not isinstance(config, dict):
        raise ConfigError(f"config file {path} does not hold a mapping")
    schema_validate(config, schema_path)
    check_config(config)
    return config


def _need(section: Mapping[str, Any], name: str, key_path: str, what: str) -> None:
    if name not in section:
        known = ", ".join(sorted(section)) or "none"
        raise ConfigError(f"config key {key_path}: unknown {what} {name!r} (declared: {known})")


def check_config(config: Mapping[str, Any]) -> None:
    """Cross-reference checks the schema cannot express; raise ConfigError naming the key path."""
    from vhct.registry import algorithm_params

    settings = config["settings"]
    for name, setting in settings.items():
        accepted = set(algorithm_params(setting["algorithm"]))
        for param in setting.get("params", {}) or {}:
            if param not in accepted:
                raise ConfigError(
                    f"config key settings/{name}/params/{param}: {setting['algorithm']} does not accept "
                    f"parameter {param!r} (accepted: {', '.join(sorted(accepted)) or 'none'})"
                )
    data = _files(config)
    paths: dict[str, str] = {}
    for name, spec in data.items():
        if spec["path"] in paths:
            other = paths[spec["path"]]
            raise ConfigError(f"config key data/files/{name}/path: {spec['path']!r} already used by {other}")
        paths[spec["path"]] = name
    experiments = config["experiments"]
    for name, exp in experiments.items():
        _check_objective_params(exp["objective"], exp.get("objective_params"), f"experiments/{name}")
        for i, setting in enumerate(exp["settings"]):
            _need(settings, setting, f"experiments/{name}/settings/{i}", "setting")
        for i, item in enumerate(exp.get("data", [])):
            _need(data, item, f"experiments/{name}/data/{i}", "data file")
    for fig_name, fig in config["figures"].items():
        for i, panel in enumerate(fig["panels"]):
            _check_panel(config, fig["kind"], panel, f"figures/{fig_name}/panels/{i}")


def _check_objective_params(objective: str, params: Mapping[str, Any] | None, key: str) -> None:
    """Parameter names against the objective's constructor (skipped for lazily imported ones: torch)."""
    import inspect

    from vhct import objectives

    if objective in getattr(objectives, "_LAZY", {}):
        return
    accepted = set(inspect.signature(objectives.OBJECTIVES[objective]).parameters)
    for param in params or {}:
        if param not in accepted:
            raise ConfigError(
                f"config key {key}/objective_params/{param}: objective {objective!r} does not accept "
                f"parameter {param!r} (accepted: {', '.join(sorted(accepted)) or 'none'})"
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
                raise ConfigError(
                    f"config key {where}: setting {setting!r} is not run in experiment "
                    f"{panel['experiment']!r} (its settings: {', '.join(declared)})"
                )
    if kind == "osc":
        exp = experiments[panel["experiment"]]
        algorithm = config["settings"][panel["setting"]]["algorithm"]
        if algorithm not in OSC_ALGORITHMS:
            raise ConfigError(f"config key {key}/setting: the OSC figure needs VHCT or HCT, got {algorithm}")
        if panel["round"] > exp["horizon"]:
            raise ConfigError(
                f"config key {key}/round: {panel['round']} exceeds the horizon {exp['horizon']}"
            )


# ---------------------------------------------------------------- expansion into jobs


def seeds(config: Mapping[str, Any], experiment: str) -> list[int]:
    """Seeds of an experiment: ``0..n-1`` for a count, else the explicit list."""
    value = config["experiments"][experiment]["seeds"]
    return list(range(value)) if isinstance(value, int) else [int(s) for s in value]


def run_horizon(config: Mapping[str, Any], experiment: str, setting: str) -> int:
    """Rounds of one setting in one experiment: the experiment horizon capped by ``max_horizon``."""
    horizon = int(config["experiments"][experiment]["horizon"])
    cap = config["settings"][setting].get("max_horizon")
    return horizon if cap is None else min(horizon, int(cap))


def run_jobs(
    config: Mapping[str, Any], experiments: Iterable[str] | None = None
) -> list[tuple[str, str, int]]:
    """Every run job ``(experiment, setting, seed)``, in config order."""
    names = list(config["experiments"]) if experiments is None else list(experiments)
    return [
        (exp, setting, seed)
        for exp in names
        for setting in config["experiments"][exp]["settings"]
        for seed in seeds(config, exp)
    ]


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
    """Per setting of an experiment: algorithm, label, params and run horizon (for tables and legends)."""
    out = {}
    for setting in config["experiments"][experiment]["settings"]:
        algo = config["settings"][setting]
        out[setting] = {
            "algorithm": algo["algorithm"],
            "label": algo.get("label", setting),
            "params": copy.deepcopy(algo.get("params", {}) or {}),
            "horizon": run_horizon(config, experiment, setting),
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
    raise ConfigError(f"config key data/files: no data file declares path {path!r}")
