"""Configuration loading and validation, file layout and input functions shared by the rules."""

import json
import re
import tempfile
from pathlib import Path

import yaml
from snakemake.utils import update_config, validate

import vhct.config as vc

REPO = Path(workflow.basedir)
DEFAULT_CONFIG = REPO / "config" / "config.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

# The default config is read only when no --configfile was given (Snakemake's `configfile:`
# directive would deep-merge it with the one given on the command line).
if "experiments" not in config:
    _cli = dict(config)
    config.clear()
    config.update(yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8")))
    update_config(config, _cli)

# Schema check (names pinned to the registries), then cross-reference checks; both fail
# before any job starts and name the offending key.
with tempfile.TemporaryDirectory() as _tmp:
    _schema_file = Path(_tmp, "config.schema.json")
    _schema_file.write_text(json.dumps(vc.resolved_schema(SCHEMA)), encoding="utf-8")
    validate(config, str(_schema_file))
vc.check_config(config)

# ---------------------------------------------------------------- layout
RUN_TABLE = "results/runs/{experiment}/{setting}/seed{seed}.csv.gz"
RUN_META = "results/runs/{experiment}/{setting}/seed{seed}.json"
REGRET = "results/aggregates/{experiment}/regret.csv"
FINAL = "results/aggregates/{experiment}/final.csv"
TIMING = "results/aggregates/{experiment}/timing.csv"
FIGURE = "figures/{figure}.{ext}"
FIGURE_EXTS = ["pdf", "png"]
DATA_DIR = "data"
#: verification stamp of data/<path> (rule verify_data); run jobs read the file only through it
DATA_STAMP = "data/.verified/{path}.json"

#: default resources per rule family (overridden by config `resources` and per experiment)
DEFAULT_RESOURCES = {
    "data": {"threads": 1, "mem_mb": 500, "runtime": 30},
    "run": {"threads": 1, "mem_mb": 1000, "runtime": 60},
    "aggregate": {"threads": 1, "mem_mb": 2000, "runtime": 10},
    "figure": {"threads": 1, "mem_mb": 2000, "runtime": 15},
}
#: targets added to `all` by other rule files (e.g. an audit report)
EXTRA_TARGETS = []


def _names(section):
    """A regex matching exactly the declared names of a config section."""
    names = sorted(section, key=len, reverse=True)
    return "|".join(map(re.escape, names)) if names else "(?!x)x"


wildcard_constraints:
    experiment=_names(config["experiments"]),
    setting=_names(config["settings"]),
    figure=_names(config["figures"]),
    seed=r"\d+",


def resource(family, key, experiment=None, setting=None):
    """Threads/mem_mb/runtime of a rule family, with config, per-experiment and per-setting overrides."""
    value = DEFAULT_RESOURCES[family][key]
    value = (config.get("resources", {}).get(family) or {}).get(key, value)
    if experiment is not None:
        value = (config["experiments"][experiment].get("resources") or {}).get(key, value)
    if setting is not None:
        value = (config["settings"][setting].get("resources") or {}).get(key, value)
    return value


def all_targets(wildcards):
    """Every run, aggregate and declared figure, plus targets other rule files registered.

    Runs and aggregates are targets themselves (not only intermediates), so that deleting
    one run's output reruns that run and everything downstream of it.
    """
    runs = [RUN_TABLE.format(experiment=e, setting=s, seed=k) for e, s, k in vc.run_jobs(config)]
    metas = [p.removesuffix(".csv.gz") + ".json" for p in runs]
    aggregates = expand([REGRET, FINAL, TIMING], experiment=list(config["experiments"]))
    figures = expand(FIGURE, figure=list(config["figures"]), ext=FIGURE_EXTS)
    return runs + metas + aggregates + figures + list(EXTRA_TARGETS)


def run_data_inputs(wildcards):
    """Verification stamps of the data files the experiment's objective reads (rule verify_data).

    The stamps, not the files, are the inputs: a corrupted file is re-verified (and fetched
    again) before a run reads it, and a file restored with the same bytes gives the same
    stamp, so the runs that used it are not redone.
    """
    return [DATA_STAMP.format(path=path) for path in vc.data_files(config, wildcards.experiment)]


def run_paths(experiment):
    """Run tables of an experiment, by setting."""
    paths = {}
    for exp, setting, seed in vc.run_jobs(config, [experiment]):
        paths.setdefault(setting, []).append(RUN_TABLE.format(experiment=exp, setting=setting, seed=seed))
    return paths


def aggregate_inputs(wildcards):
    """Every run table and sidecar of the experiment."""
    tables = [p for paths in run_paths(wildcards.experiment).values() for p in paths]
    return {"tables": tables, "metas": [p.removesuffix(".csv.gz") + ".json" for p in tables]}


def figure_inputs(wildcards):
    """Regret aggregates of the experiments the figure draws."""
    return [REGRET.format(experiment=e) for e in vc.figure_experiments(config, wildcards.figure)]


def audit_inputs(wildcards):
    """The claims file, the final aggregates and every run (table and sidecar) of the audited experiments."""
    tables = [p for e in AUDIT_EXPERIMENTS for paths in run_paths(e).values() for p in paths]
    return {
        "claims": CLAIMS,
        "finals": [FINAL.format(experiment=e) for e in AUDIT_EXPERIMENTS],
        "tables": tables,
        "metas": [p.removesuffix(".csv.gz") + ".json" for p in tables],
    }
