"""One job per experiment: regret mean/std at every round, final-round summary, timings."""


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
