"""One job per declared figure, written as figures/<name>.pdf and .png."""


rule figure:
    input:
        figure_inputs,
    output:
        pdf=FIGURE.replace("{ext}", "pdf"),
        png=FIGURE.replace("{ext}", "png"),
    params:
        spec=lambda wc: vc.figure_spec(config, wc.figure),
        regret_paths=lambda wc: {
            e: REGRET.format(experiment=e) for e in vc.figure_experiments(config, wc.figure)
        },
    log:
        "logs/figure/{figure}.log",
    threads: resource("figure", "threads")
    resources:
        mem_mb=resource("figure", "mem_mb"),
        runtime=resource("figure", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/figure.py"
