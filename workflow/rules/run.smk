"""One job per experiment x algorithm setting x seed: the per-round table and its JSON sidecar."""


rule run:
    input:
        data=run_data_inputs,
    output:
        table=RUN_TABLE,
        meta=RUN_META,
    params:
        spec=lambda wc: vc.run_spec(config, wc.experiment, wc.setting, int(wc.seed)),
    log:
        "logs/run/{experiment}/{setting}/seed{seed}.log",
    threads: lambda wc: resource("run", "threads", wc.experiment)
    resources:
        mem_mb=lambda wc: resource("run", "mem_mb", wc.experiment),
        runtime=lambda wc: resource("run", "runtime", wc.experiment),
    conda:
        "../../environment.yml"
    script:
        "../scripts/run.py"
