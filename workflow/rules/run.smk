"""One job per experiment x algorithm setting x seed: the per-round table and its JSON sidecar."""


rule run:
    input:
        verified=run_data_inputs,
    output:
        table=RUN_TABLE,
        meta=RUN_META,
    params:
        spec=lambda wc: vc.run_spec(config, wc.experiment, wc.setting, int(wc.seed)),
    log:
        "logs/run/{experiment}/{setting}/seed{seed}.log",
    threads: lambda wc: resource("run", "threads", wc.experiment, wc.setting)
    resources:
        mem_mb=lambda wc: resource("run", "mem_mb", wc.experiment, wc.setting),
        runtime=lambda wc: resource("run", "runtime", wc.experiment, wc.setting),
    conda:
        "../../environment.yml"
    script:
        "../scripts/run.py"
