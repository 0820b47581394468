"""One job per experiment (regret mean/std at every round, final-round summary, timings: for the
audit and the findings) and one per setting (its curve and timings: what a figure reads, so that a
figure waits only for the settings it draws); each job's spec file (common.smk: settings, batch
files, code) is what it is asked, and reruns it when that changes."""


rule aggregate:
    input:
        unpack(aggregate_inputs),
    output:
        regret=REGRET,
        final=FINAL,
        timing=TIMING,
    log:
        LAYOUT.log("aggregate", "{experiment}"),
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
    log:
        LAYOUT.log("aggregate", "{experiment}/{setting}"),
    threads: resource("aggregate", "threads")
    resources:
        mem_mb=resource("aggregate", "mem_mb"),
        runtime=resource("aggregate", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/aggregate.py"
