"""Pipeline configuration: schema with the registries' names, semantic checks, expansion into jobs.

The JSON schema (``vhct/resources/config.schema.yaml``) checks structure and ranges; this
module adds what a schema cannot express (cross references between sections, parameter names
per algorithm) and turns experiments into the run jobs of the Snakemake DAG.
"""

from __future__ import annotations

import argparse
import copy
import difflib
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
CURVE_KINDS = frozenset({"regret", "average_regret"})
#: algorithms that expose the OSC traversal report (fig. 2)
OSC_ALGORITHMS = frozenset({"VHCT", "HCT"})


#: the keys a config must have (also the schema's ``required``); named when the whole file is off
REQUIRED_SECTIONS = ("settings", "experiments", "figures")
#: said when a config file lacks a section: users may expect the default config to fill it in
#: key of a config file naming the config file it extends (its keys are read first)
BASE_KEY = "base"
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


def read_config_file(path: Path | str) -> dict[str, Any]:
    """Parse one YAML config file; an empty file, a syntax error or a non-mapping names the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from exc
    try:
        config = yaml.safe_load(text)
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
        schema_validate(config, schema_path)
        check_config(config)
    except ConfigError as exc:
        raise located(exc, files) from None


def load_config(path: Path | str, schema_path: Path | str = SCHEMA_PATH) -> dict[str, Any]:
    """Read a YAML config (and the file it extends), check it against the schema and semantically."""
    config = merged_config([path])
    validate_config(config, with_bases([path]), schema_path)
    return config


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
            raise _key_error(
                f"{key}/objective_params/{param}",
                f"objective {objective!r} does not accept "
                f"parameter {param!r} (accepted: {', '.join(sorted(accepted)) or 'none'})",
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
        exp = experiments[panel["experiment"]]
        algorithm = config["settings"][panel["setting"]]["algorithm"]
        if algorithm not in OSC_ALGORITHMS:
            raise _key_error(f"{key}/setting", f"the OSC figure needs VHCT or HCT, got {algorithm}")
        if panel["round"] > exp["horizon"]:
            raise _key_error(f"{key}/round", f"{panel['round']} exceeds the horizon {exp['horizon']}")


# ---------------------------------------------------------------- expansion into jobs


def seeds(config: Mapping[str, Any], experiment: str) -> list[int]:
    """Seeds of an experiment: ``0..n-1`` for a count, else the explicit list."""
    value = config["experiments"][experiment]["seeds"]
    return list(range(value)) if isinstance(value, int) else [int(s) for s in value]


def setting_seeds(config: Mapping[str, Any], experiment: str, setting: str) -> list[int]:
    """Seeds of one setting in one experiment: the experiment's, the first ``max_seeds`` of them
    when the setting caps them (e.g. BO, whose runs cost minutes)."""
    chosen = seeds(config, experiment)
    cap = config["settings"][setting].get("max_seeds")
    return chosen if cap is None else chosen[: int(cap)]


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
        return re.sub(r"\W", "_", f"run_{self.experiment}_batch{self.index}")


def run_batches(config: Mapping[str, Any]) -> list[RunBatch]:
    """The jobs of more than one run: per experiment, its runs in config order (setting by
    setting, seeds in order), cut into chunks of ``runs_per_job``.

    Runs of settings with ``runs_per_job`` 1 (e.g. BO) are left to the one-run rule. Batches are
    numbered per experiment, so adding a setting at the end of an experiment's list keeps the
    existing batches.
    """
    batches = []
    for experiment, exp in config["experiments"].items():
        size = 0
        runs: list[tuple[str, int]] = []
        for setting in exp["settings"]:
            per_job = runs_per_job(config, experiment, setting)
            if per_job > 1:
                size = max(size, per_job)
                runs += [(setting, seed) for seed in setting_seeds(config, experiment, setting)]
        for index, start in enumerate(range(0, len(runs), max(size, 1))):
            batches.append(RunBatch(experiment, index, tuple(runs[start : start + size])))
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


def with_bases(files: Sequence[Path | str]) -> list[Path]:
    """The config files with the files they extend (key ``base``, relative to the file) before them.

    A file's base comes before the file, its base's base before that, and every file appears
    once; a base chain that loops is an error naming the files.
    """
    out: list[Path] = []

    def visit(path: Path, chain: tuple[Path, ...]) -> None:
        if path in chain:
            raise ConfigError(
                f"{path}: 'base' chain loops: {' -> '.join(map(str, (*chain, path)))}", ("base",)
            )
        base = read_config_file(path).get(BASE_KEY)
        if base is not None:
            if not isinstance(base, str):
                raise located(_key_error(BASE_KEY, f"must be a file path, got {base!r}"), [path])
            visit((path.parent / base).resolve(), (*chain, path))
        if path not in out:
            out.append(path)

    for path in files:
        visit(Path(path).resolve(), ())
    return out


def merged_config(files: Sequence[Path | str]) -> dict[str, Any]:
    """The config Snakemake builds from several ``--configfile`` files: later files update earlier ones.

    Each file's ``base`` (the file it extends) is read first (``with_bases``); the result has no
    ``base`` key.
    """
    paths = with_bases(files)
    if len(paths) == 1:  # nothing to merge: a lone config needs no Snakemake (an optional extra)
        config = dict(read_config_file(paths[0]))
    else:
        from snakemake.utils import update_config

        config = {}
        for path in paths:
            update_config(config, read_config_file(path))
    config.pop(BASE_KEY, None)
    return config


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
        config = merged_config(args.files)
        validate_config(config, with_bases(args.files))
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    names = ", ".join(map(str, args.files))
    print(f"{names}: valid ({len(config['experiments'])} experiments, {len(run_jobs(config))} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
