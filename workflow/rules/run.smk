"""Run jobs: one table and JSON sidecar per experiment x algorithm setting x seed.

Each run reads what it is asked from its spec file (RUN_REQUEST, written when the rules are read:
vhct.pipeline.stale), an input of its job, so a run whose request changed is rerun.

A run is one job (rule `run`) unless its setting or experiment declares `runs_per_job` > 1:
then one job runs that many of the setting's seeds one after the other, still writing one table
and sidecar per run (one rule per such batch, named by its setting, its files spelled out:
vhct.pipeline.config.Config.run_batches). Batching pays where starting a job costs
about as much as its run: short synthetic runs (a fraction of a second against about 1.3 s of
process start) and real-data runs (an MNIST job spends about 5 s importing torch).
"""


#: (experiment, setting) pairs run one seed per job; rule `run` matches only their files, so
#: the DAG does not weigh it against the batch rules for every batched file. These are the long
#: runs (BO), so they start first (priority) and the batches fill the cores at the end instead of
#: one long run finishing alone.
_SINGLE_RUNS = {(e, s) for e, s, _ in CFG.run_jobs() if CFG.runs_per_job(e, s) == 1}


rule run:
    wildcard_constraints:
        experiment=_names({e for e, _ in _SINGLE_RUNS}),
        setting=_names({s for _, s in _SINGLE_RUNS}),
    priority: 1
    input:
        verified=run_data_inputs,
        requests=[RUN_REQUEST],
    output:
        tables=[RUN_TABLE],
        metas=[RUN_META],
    log:
        f"{LOGS}/run/{{experiment}}/{{setting}}/seed{{seed}}.log",
    threads: lambda wc: resource("run", "threads", wc.experiment, wc.setting)
    resources:
        mem_mb=lambda wc: resource("run", "mem_mb", wc.experiment, wc.setting),
        runtime=lambda wc: resource("run", "runtime", wc.experiment, wc.setting),
    conda:
        "../../environment.yml"
    script:
        "../scripts/run.py"


for _batch in CFG.run_batches():
    _runs = [{"experiment": _batch.experiment, "setting": s, "seed": k} for s, k in _batch.runs]

    rule:
        name:
            _batch.rule
        # real-data batches (tens of seconds to minutes) before the synthetic ones (seconds)
        priority: 1 if CFG.data_files(_batch.experiment) else 0
        input:
            verified=[DATA_STAMP.format(path=p) for p in CFG.data_files(_batch.experiment)],
            requests=[RUN_REQUEST.format(**run) for run in _runs],
        output:
            tables=[RUN_TABLE.format(**run) for run in _runs],
            metas=[RUN_META.format(**run) for run in _runs],
        log:
            f"{LOGS}/run/{_batch.experiment}/{_batch.setting}/batch{_batch.index}.log",
        threads: max(resource("run", "threads", r["experiment"], r["setting"]) for r in _runs)
        resources:
            mem_mb=max(resource("run", "mem_mb", r["experiment"], r["setting"]) for r in _runs),
            runtime=sum(resource("run", "runtime", r["experiment"], r["setting"]) for r in _runs),
        conda:
            "../../environment.yml"
        script:
            "../scripts/run.py"

    # the batch, not rule `run`, makes these runs' tables
    workflow.ruleorder(_batch.rule, "run")
