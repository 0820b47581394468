"""Run jobs: one batch file of the run store per job (vhct.pipeline.store), runs alike but for
their seeds: one setting's seeds of an experiment, cut into chunks of its `runs_per_job`.

Each job is asked its vhct.pipeline.store.RunJob (common.smk's RUN_JOBS, built by the config's
planning), which names its file: a run another config made is found and not run again. Batching
pays where starting a job costs about as much as its run: short synthetic runs (a fraction of a
second against about 1.3 s of process start) and real-data runs (an MNIST job spends about 5 s
importing torch). Two rules, one body: the long jobs (real data, one run per job such as BO) first,
so that the short batches fill the cores at the end instead of one long run finishing alone.
"""

#: the folder names (<algorithm>-<key>) of the batches that start first
_FIRST = {
    path.split("/")[3]
    for path, job in RUN_JOBS.items()
    if job.data or len(job.runs) == 1
}
_OTHERS = {path.split("/")[3] for path in RUN_JOBS} - _FIRST

for _name, _keys, _priority in (("run_first", _FIRST, 1), ("run", _OTHERS, 0)):

    rule:
        name:
            _name
        wildcard_constraints:
            key=_names(_keys),
        priority: _priority
        input:
            verified=run_data_inputs,
        output:
            RUN_BATCH,
        params:
            job=lambda wc: batch_job(wc).model_dump(mode="json"),
        log:
            LAYOUT.run_log(RUN_BATCH),
        threads: run_resource("threads")
        resources:
            mem_mb=run_resource("mem_mb"),
            runtime=run_resource("runtime"),
        conda:
            "../../environment.yml"
        script:
            "../scripts/run.py"
