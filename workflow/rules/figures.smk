"""One job per declared figure, written as <the config's figures folder>/<name>.pdf and .png
(FIGURE); its spec file (FIGURE_SPEC, common.smk) reruns it when its declaration, its experiments,
the settings it draws, the styles or the drawing code change."""

rule figure:
    input:
        figure_inputs,
        spec=FIGURE_SPEC,
    output:
        pdf=FIGURE.replace("{ext}", "pdf"),
        png=FIGURE.replace("{ext}", "png"),
    params:
        spec=lambda wc: CFG.figure_spec(wc.figure).model_dump(mode="json"),
        curves=lambda wc: figure_curves(wc.figure),
    log:
        f"{LOGS}/figure/{{figure}}.log",
    threads: resource("figure", "threads")
    resources:
        mem_mb=resource("figure", "mem_mb"),
        runtime=resource("figure", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/figure.py"
