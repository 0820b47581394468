"""One job per declared figure, written as <the config's figures folder>/<name>.pdf and .png (FIGURE)."""

from vhct.reporting.styles import every_style


rule figure:
    input:
        figure_inputs,
    output:
        pdf=FIGURE.replace("{ext}", "pdf"),
        png=FIGURE.replace("{ext}", "png"),
    params:
        spec=lambda wc: CFG.figure_spec(wc.figure).model_dump(mode="json"),
        curves=lambda wc: figure_curves(wc.figure),
        # not read by the job (it draws with the same styles): a changed style redraws the figure
        styles=every_style(),
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
