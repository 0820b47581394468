"""Configuration loading and validation, the file layout and input functions shared by the rules."""

import re
from pathlib import Path

from snakemake.exceptions import WorkflowError

import vhct.pipeline.config as vc
import vhct.pipeline.layout as vl
import vhct.pipeline.stale as vstale
from vhct.reporting.job_specs import figure_job_spec

REPO = Path(workflow.basedir)

# The config is read once more by the package's loader (vhct.pipeline.config.load),
# which replaces what Snakemake read: it rejects a key given twice, reads each file's `base`
# first, applies the --config overrides, fills in the schema's defaults and checks every value
# (each setting's optimizer is built once). A mistake fails here, before any job starts, in one
# line naming the file, line and key. The default config is read only when no --configfile was
# given at all; a given file lacking sections is an error, not silently the default.
CONFIG_FILES = [Path(p) for p in workflow.overwrite_configfiles] or [REPO / vc.DEFAULT_CONFIG]
try:
    CFG, CONFIG_FILES = vc.load(CONFIG_FILES, dict(workflow.config_settings.config))
except vc.ConfigError as _error:
    raise WorkflowError(f"invalid config: {_error}") from None
# A confirmatory config (key `plan`, config/paper-local.yaml) runs its analysis plan's seeds: the loader
# above refused a plan that is missing or does not match the config, the claims or its own counts; in
# the main process, the rest of the check (each comparison's seeds computed again from the pilot's
# samples, the pilot's results hashed again) runs here too, before any job is planned.
if CFG.plan is not None and workflow.is_main_process:
    import vhct.reporting.audit.plan as vplan

    try:
        vplan.check(CONFIG_FILES[-1])
    except vc.ConfigError as _error:
        raise WorkflowError(f"invalid config: {_error}") from None
# Snakemake's `config` stays the plain dict (defaults filled in); the rules read the typed model CFG
config.clear()
config.update(CFG.source)

# ---------------------------------------------------------------- layout
# Every path from the config's layout (vhct.pipeline.layout): each config's results, figures and job
# logs in a folder of its own, named by its key `output` (by default its file's name:
# config/paper-local.yaml -> results/paper-local/, figures/paper-local/, logs/paper-local/); the
# default config (config/config.yaml) writes to results/, figures/, logs/. Every config's runs are
# in the one run store, results/runs/ (vhct.pipeline.store), found by what they are; data/ is
# shared: a data file is the same, verified, for every config.
LAYOUT = CFG.layout
RESULTS, FIGURES, LOGS = LAYOUT.results.root, LAYOUT.figures, LAYOUT.logs
# One config per folder: a config that would write another config's folder differently is refused
# when the rules are read, naming both (vhct.pipeline.config.owner); the first to run jobs there owns
# it, recorded when jobs start (onstart: not on a dry run, nothing written while the rules are read).
if workflow.is_main_process:
    try:
        vc.check_owner(RESULTS, CONFIG_FILES, CFG.source)
    except vc.ConfigError as _error:
        raise WorkflowError(f"invalid config: {_error}") from None


onstart:
    vc.claim_owner(RESULTS, CONFIG_FILES, CFG.source)


#: batch file of the run store -> what its run job is asked (vhct.pipeline.store.RunJob): the
#: file's name is what it is (its spec, the run code, the package versions, the data), so a run
#: another config made is found, and a change of what is asked names a missing file, which runs
RUN_JOBS = CFG.batch_jobs()
RUN_BATCH = f"{LAYOUT.store}/{{objective}}/{{key}}/{{seeds}}.npz"
REGRET, FINAL, TIMING = (LAYOUT.results.aggregate("{experiment}", t) for t in vl.EXPERIMENT_TABLES)
#: one setting's aggregates (made by aggregate_setting): what the figures read
CURVE, SETTING_TIMING = (LAYOUT.results.setting_table("{experiment}", "{setting}", t) for t in vl.SETTING_TABLES)
FIGURE = LAYOUT.figure("{figure}", "{ext}")
FIGURE_EXTS = list(vl.FIGURE_EXTS)
#: verification stamp of data/<path> (rule verify_data); run jobs read the file only through it
DATA_STAMP = "data/.verified/{path}.json"

#: spec files: what each aggregate and figure job is asked now (vhct.pipeline.stale), an input of
#: the job and the job's one channel for its parameters
AGGREGATE_SPEC = LAYOUT.results.spec("aggregates", "{experiment}")
SETTING_AGGREGATE_SPEC = LAYOUT.results.spec("aggregates", "{experiment}/{setting}")
FIGURE_SPEC = LAYOUT.results.spec("figures", "{figure}")

#: targets added to `all` by other rule files (e.g. an audit report)
EXTRA_TARGETS = []

# A result is current or it is rerun, whatever .snakemake/ holds and whichever --rerun-triggers: a
# run's batch file is named by what it is; every other job's spec file (what it is asked: its
# params, the source hash of its code, versions, the batch files it reads) is written by
# write_spec_files, rewritten only when it changes, and is an input of the job, so Snakemake's
# modification-time check reruns what changed and everything downstream. The Snakefile calls it
# after every rule file is read (so a config any rule file refuses writes none), in the main process
# only (not again in each cluster job).
#: spec file path -> its job spec (vhct.pipeline.stale.JobSpec), added by the rule files
SPEC_FILES = {}


def write_spec_files():
    """Write every spec file that changed."""
    for path, content in SPEC_FILES.items():
        vstale.write_spec(path, content)


def _names(section):
    """A regex matching exactly the declared names of a config section."""
    names = sorted(section, key=len, reverse=True)
    return "|".join(map(re.escape, names)) if names else "(?!x)x"


wildcard_constraints:
    experiment=_names(CFG.experiments),
    setting=_names(CFG.settings),
    figure=_names(CFG.figures),
    objective=_names({p.split("/")[2] for p in RUN_JOBS}),
    seeds=r"seeds\d+-\d+(-[0-9a-f]+)?",


def resource(family, key, experiment=None, setting=None):
    """Threads/mem_mb/runtime of a rule family, with config, per-experiment and per-setting overrides."""
    return CFG.resource(family, key, experiment, setting)


def all_targets(wildcards):
    """Every batch of runs, aggregate and declared figure, plus targets other rule files registered.

    Runs and aggregates are targets themselves (not only intermediates), so that deleting
    one batch file reruns that batch and everything downstream of it.
    """
    aggregates = expand([REGRET, FINAL, TIMING], experiment=list(CFG.experiments))
    figures = expand(FIGURE, figure=list(CFG.figures), ext=FIGURE_EXTS)
    return list(RUN_JOBS) + aggregates + figures + list(EXTRA_TARGETS)


def batch_job(wildcards):
    """What the run job of a batch file is asked (vhct.pipeline.store.RunJob)."""
    return RUN_JOBS[RUN_BATCH.format(**wildcards)]


def run_data_inputs(wildcards):
    """Verification stamps of the data files the batch's objective reads (rule verify_data).

    The stamps, not the files, are the inputs: a corrupted file is re-verified (and fetched
    again) before a run reads it, and a file restored with the same bytes gives the same
    stamp, so the runs that used it are not redone.
    """
    return [DATA_STAMP.format(path=path) for path in batch_job(wildcards).data]


def run_resource(key):
    """A run job's threads or mem_mb (its setting's), or runtime (the sum over its runs)."""

    def get(wildcards):
        spec = batch_job(wildcards).runs[0]
        value = resource("run", key, spec.experiment, spec.setting)
        return value * len(batch_job(wildcards).runs) if key == "runtime" else value

    return get


def aggregate_inputs(wildcards):
    """Every batch file of the experiment, and the aggregate's spec file."""
    paths = CFG.run_paths(wildcards.experiment)
    return {
        "batches": list(dict.fromkeys(p for files in paths.values() for p in files)),
        "spec": AGGREGATE_SPEC.format(experiment=wildcards.experiment),
    }


def setting_aggregate_inputs(wildcards):
    """The batch files of one setting of an experiment, and its aggregate's spec file."""
    return {
        "batches": CFG.run_paths(wildcards.experiment)[wildcards.setting],
        "spec": SETTING_AGGREGATE_SPEC.format(experiment=wildcards.experiment, setting=wildcards.setting),
    }


def figure_curves(figure):
    """Experiment -> setting -> the curve aggregate a figure draws (``Config.figure_settings``)."""
    return {
        e: {s: CURVE.format(experiment=e, setting=s) for s in settings}
        for e, settings in CFG.figure_settings(figure).items()
    }


def figure_inputs(wildcards):
    """The curve and timing aggregates (CURVE, SETTING_TIMING) of the settings the figure draws, and
    nothing else."""
    drawn = [(e, s) for e, settings in CFG.figure_settings(wildcards.figure).items() for s in settings]
    return [pattern.format(experiment=e, setting=s) for pattern in (CURVE, SETTING_TIMING) for e, s in drawn]


for _experiment in CFG.experiments:
    _info, _paths = CFG.setting_info(_experiment), CFG.run_paths(_experiment)
    SPEC_FILES[AGGREGATE_SPEC.format(experiment=_experiment)] = vstale.aggregate_spec(_info, _paths)
    for _setting in _paths:
        SPEC_FILES[SETTING_AGGREGATE_SPEC.format(experiment=_experiment, setting=_setting)] = (
            vstale.aggregate_spec({_setting: _info[_setting]}, {_setting: _paths[_setting]})
        )
for _figure in CFG.figures:
    SPEC_FILES[FIGURE_SPEC.format(figure=_figure)] = figure_job_spec(CFG, _figure, figure_curves(_figure))
