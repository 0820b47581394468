"""One job per declared figure, written as <the config's figures folder>/<name>.pdf and .png
(FIGURE); its spec file (FIGURE_SPEC, common.smk) is what it is asked (its declaration with the
settings it draws, the curves, the styles, the drawing code's hash) and reruns it when that changes."""


rule figure:
    input:
        figure_inputs,
        spec=FIGURE_SPEC,
    output:
        pdf=FIGURE.replace("{ext}", "pdf"),
        png=FIGURE.replace("{ext}", "png"),
    log:
        LAYOUT.log("figure", "{figure}"),
    threads: resource("figure", "threads")
    resources:
        mem_mb=resource("figure", "mem_mb"),
        runtime=resource("figure", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/figure.py"
