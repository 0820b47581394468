"""One job per experiment (regret mean/std at every round, final-round summary, timings: for the
audit and the findings) and one per setting (its curve and timings: what a figure reads, so that a
figure waits only for the settings it draws); each job's spec file (common.smk: settings, runs,
code) reruns it when the runs it reads change."""


rule aggregate:
    input:
        unpack(aggregate_inputs),
    output:
        regret=REGRET,
        final=FINAL,
        timing=TIMING,
    params:
        info=lambda wc: {s: i.model_dump(mode="json") for s, i in CFG.setting_info(wc.experiment).items()},
        run_paths=lambda wc: run_paths(wc.experiment),
    log:
        f"{LOGS}/aggregate/{{experiment}}.log",
    threads: resource("aggregate", "threads")
    resources:
        mem_mb=resource("aggregate", "mem_mb"),
        runtime=resource("aggregate", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/aggregate.py"


rule aggregate_setting:
    input:
        unpack(setting_aggregate_inputs),
    output:
        curve=CURVE,
        timing=SETTING_TIMING,
    params:
        info=lambda wc: {wc.setting: CFG.setting_info(wc.experiment)[wc.setting].model_dump(mode="json")},
        run_paths=lambda wc: {wc.setting: run_paths(wc.experiment)[wc.setting]},
    log:
        f"{LOGS}/aggregate/{{experiment}}/{{setting}}.log",
    threads: resource("aggregate", "threads")
    resources:
        mem_mb=resource("aggregate", "mem_mb"),
        runtime=resource("aggregate", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/aggregate.py"
