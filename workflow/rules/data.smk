"""Data files of the real-data objectives: one job per declared file, written to data/<path>."""


rule data_file:
    output:
        "data/{path}",
    params:
        spec=lambda wc: vc.data_spec(config, wc.path),
        mirror=vc.data_mirror(config),
    log:
        "logs/data/{path}.log",
    wildcard_constraints:
        path=_names(vc.data_files(config)),
    threads: resource("data", "threads")
    resources:
        mem_mb=resource("data", "mem_mb"),
        runtime=resource("data", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/data.py"
