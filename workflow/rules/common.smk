"""Configuration loading and validation, file layout and input functions shared by the rules."""

import re
from pathlib import Path

from snakemake.exceptions import WorkflowError

import vhct.pipeline.aggregate as vagg
import vhct.pipeline.config as vc
import vhct.pipeline.stale as vstale
import vhct.pipeline.tables as vt
from vhct.pipeline.tables import sidecar_path
from vhct.pipeline.versions import package_versions, source_hash
from vhct.reporting.styles import every_style

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
# Each config's results, figures and job logs in a folder of its own, named by its key `output`
# (by default its file's name: config/paper-local.yaml -> results/paper-local/, figures/paper-local/,
# logs/paper-local/); the default config (config/config.yaml) writes to results/, figures/, logs/.
# data/ is shared: a data file is the same, verified, for every config.
RESULTS, FIGURES, LOGS = (CFG.folder(root) for root in vc.OUTPUT_ROOTS)
# One config per folder: a config that would write another config's folder differently is refused
# when the rules are read, naming both (vhct.pipeline.config.owner); the first to run jobs there owns
# it, recorded when jobs start (onstart: not on a dry run, nothing written while the rules are read).
if workflow.is_main_process:
    try:
        vc.check_owner(CFG.folder(vc.OWNER_ROOT), CONFIG_FILES, CFG.source)
    except vc.ConfigError as _error:
        raise WorkflowError(f"invalid config: {_error}") from None


onstart:
    vc.claim_owner(CFG.folder(vc.OWNER_ROOT), CONFIG_FILES, CFG.source)
RUN_TABLE = f"{RESULTS}/runs/{{experiment}}/{{setting}}/seed{{seed}}.csv.gz"
RUN_META = str(sidecar_path(RUN_TABLE))
REGRET = f"{RESULTS}/aggregates/{{experiment}}/regret.csv"
FINAL = f"{RESULTS}/aggregates/{{experiment}}/final.csv"
TIMING = f"{RESULTS}/aggregates/{{experiment}}/timing.csv"
#: one setting's aggregates (made by aggregate_setting): what the figures read (the layout is
#: vhct.pipeline.aggregate's, which `make findings` ships)
CURVE, SETTING_TIMING = (
    f"{RESULTS}/{vagg.SETTING_TABLE.format(experiment='{experiment}', setting='{setting}', table=table)}"
    for table in vagg.SETTING_TABLES
)
FIGURE = f"{FIGURES}/{{figure}}.{{ext}}"
FIGURE_EXTS = ["pdf", "png"]
DATA_DIR = "data"
#: verification stamp of data/<path> (rule verify_data); run jobs read the file only through it
DATA_STAMP = "data/.verified/{path}.json"

#: spec files: what each job is asked now (vhct.pipeline.stale), an input of the job
RUN_REQUEST = f"{RESULTS}/{vstale.SPEC_DIR}/runs/{{experiment}}/{{setting}}/seed{{seed}}.json"
AGGREGATE_SPEC = f"{RESULTS}/{vstale.SPEC_DIR}/aggregates/{{experiment}}.json"
SETTING_AGGREGATE_SPEC = f"{RESULTS}/{vstale.SPEC_DIR}/aggregates/{{experiment}}/{{setting}}.json"
FIGURE_SPEC = f"{RESULTS}/{vstale.SPEC_DIR}/figures/{{figure}}.json"

#: targets added to `all` by other rule files (e.g. an audit report)
EXTRA_TARGETS = []

# A result is current or it is rerun, whatever .snakemake/ holds and whichever --rerun-triggers:
# every job's spec file (what it is asked: config, source hash of its code, versions, data
# checksums, the runs it reads) is written by write_spec_files, rewritten only when it changes, and is
# an input of the job, so Snakemake's modification-time check reruns what changed and everything
# downstream. An existing run whose record differs from its request while its spec file is not
# newer (nothing would rerun it) fails the parse, before any job, one line per run with the command
# that fixes it. The Snakefile calls it after every rule file is read (so a config any
# rule file refuses writes none), in the main process only (not again in each cluster job).
#: spec file path -> its content (plain data), added by the rule files; the runs' are the requests
SPEC_FILES = {}


def write_spec_files():
    """Write every spec file that changed (the runs' requests first, checking the existing runs)."""
    try:
        vstale.check_current_runs(CFG, RUN_TABLE, RUN_REQUEST)
    except vt.StaleRunError as _error:
        raise WorkflowError(str(_error)) from None
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
    seed=r"\d+",


def resource(family, key, experiment=None, setting=None):
    """Threads/mem_mb/runtime of a rule family, with config, per-experiment and per-setting overrides."""
    return CFG.resource(family, key, experiment, setting)


def all_targets(wildcards):
    """Every run, aggregate and declared figure, plus targets other rule files registered.

    Runs and aggregates are targets themselves (not only intermediates), so that deleting
    one run's output reruns that run and everything downstream of it.
    """
    runs = [RUN_TABLE.format(experiment=e, setting=s, seed=k) for e, s, k in CFG.run_jobs()]
    metas = [str(sidecar_path(p)) for p in runs]
    aggregates = expand([REGRET, FINAL, TIMING], experiment=list(CFG.experiments))
    figures = expand(FIGURE, figure=list(CFG.figures), ext=FIGURE_EXTS)
    return runs + metas + aggregates + figures + list(EXTRA_TARGETS)


def run_data_inputs(wildcards):
    """Verification stamps of the data files the experiment's objective reads (rule verify_data).

    The stamps, not the files, are the inputs: a corrupted file is re-verified (and fetched
    again) before a run reads it, and a file restored with the same bytes gives the same
    stamp, so the runs that used it are not redone.
    """
    return [DATA_STAMP.format(path=path) for path in CFG.data_files(wildcards.experiment)]


def run_paths(experiment):
    """Run tables of an experiment, by setting."""
    paths = {}
    for exp, setting, seed in CFG.run_jobs([experiment]):
        paths.setdefault(setting, []).append(RUN_TABLE.format(experiment=exp, setting=setting, seed=seed))
    return paths


def aggregate_inputs(wildcards):
    """Every run table and sidecar of the experiment, and the aggregate's spec file."""
    tables = [p for paths in run_paths(wildcards.experiment).values() for p in paths]
    return {
        "tables": tables,
        "metas": [str(sidecar_path(p)) for p in tables],
        "spec": AGGREGATE_SPEC.format(experiment=wildcards.experiment),
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


def setting_aggregate_inputs(wildcards):
    """Every run table and sidecar of one setting of an experiment, and its aggregate's spec file."""
    tables = run_paths(wildcards.experiment)[wildcards.setting]
    return {
        "tables": tables,
        "metas": [str(sidecar_path(p)) for p in tables],
        "spec": SETTING_AGGREGATE_SPEC.format(experiment=wildcards.experiment, setting=wildcards.setting),
    }


def figure_spec(figure):
    """What a figure job is asked (its params), every algorithm's style (a plugin's moves when another
    is installed) and the source hash of the code that draws it (every module the figure job
    imports: the drawers, and the objectives and run code a panel evaluates or replays)."""
    return {
        "figure": CFG.figure_spec(figure).model_dump(mode="json"),
        "curves": figure_curves(figure),
        "styles": every_style(),
        "source": {"figure": source_hash("figure")},
        "versions": package_versions(),
    }


for _experiment in CFG.experiments:
    _info, _paths = CFG.setting_info(_experiment), run_paths(_experiment)
    SPEC_FILES[AGGREGATE_SPEC.format(experiment=_experiment)] = vstale.aggregate_spec(_info, _paths)
    for _setting in _paths:
        SPEC_FILES[SETTING_AGGREGATE_SPEC.format(experiment=_experiment, setting=_setting)] = (
            vstale.aggregate_spec({_setting: _info[_setting]}, {_setting: _paths[_setting]})
        )
for _figure in CFG.figures:
    SPEC_FILES[FIGURE_SPEC.format(figure=_figure)] = figure_spec(_figure)

