"""Configuration loading and validation, file layout and input functions shared by the rules."""

import re
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import update_config

import vhct.pipeline.config as vc
from vhct.pipeline.tables import sidecar_path

REPO = Path(workflow.basedir)
DEFAULT_CONFIG = REPO / "config" / "config.yaml"

# The default config is read only when no --configfile was given at all (Snakemake's
# `configfile:` directive would deep-merge it with the one given on the command line); a
# given file lacking sections is an error below, not silently the default.
CONFIG_FILES = [Path(p) for p in workflow.overwrite_configfiles] or [DEFAULT_CONFIG]
if not workflow.overwrite_configfiles:
    _cli = dict(config)  # --config key=value overrides
    config.clear()
    config.update(vc.read_config_file(DEFAULT_CONFIG))
    update_config(config, _cli)

# Schema check (names pinned to the registries, defaults filled in), then cross-reference
# checks; both fail before any job starts, in one line naming the file, line and key path.
try:
    if vc.BASE_KEY in config:  # a file extends another (key `base`): the base's keys first, then the files'
        _given = dict(config)
        config.clear()
        config.update(vc.merged_config(CONFIG_FILES))
        update_config(config, _given)  # the files and --config overrides again, over the bases
        config.pop(vc.BASE_KEY)
        CONFIG_FILES = vc.with_bases(CONFIG_FILES)
    vc.validate_config(config, CONFIG_FILES)
except vc.ConfigError as _error:
    raise WorkflowError(f"invalid config: {_error}") from None

# ---------------------------------------------------------------- layout
RUN_TABLE = "results/runs/{experiment}/{setting}/seed{seed}.csv.gz"
RUN_META = str(sidecar_path(RUN_TABLE))
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
    metas = [str(sidecar_path(p)) for p in runs]
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
    return {"tables": tables, "metas": [str(sidecar_path(p)) for p in tables]}


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
        "metas": [str(sidecar_path(p)) for p in tables],
    }
