"""Data files of the real-data objectives: fetched to data/<path>, verified before every use.

rule data_file fetches a missing file. rule verify_data verifies the present file against
its checksums, fetches it again from the sources when it is corrupted, then writes its
stamp data/.verified/<path>.json (path, size, the sha256 of its bytes, checksums) and, beside
it, the file's stat when hashed (<stamp>.stat). Run jobs take the stamps as input
(run_data_inputs), so when a data file changes (e.g. is corrupted) Snakemake reruns
verify_data before any run reads it; the run job itself checks the file by content: it hashes
it again unless its stat (size, modification and change times, inode) is the one recorded with
the stamp's hash (vhct.pipeline.data).
"""

rule data_file:
    # first: the real-data runs, the longest of a run, wait for their files
    priority: 10
    output:
        "data/{path}",
    params:
        spec=lambda wc: CFG.data_spec(wc.path),
        mirror=CFG.data_mirror,
    log:
        f"{LOGS}/data/{{path}}.log",
    wildcard_constraints:
        path=_names(CFG.data_files()),
    threads: resource("data", "threads")
    resources:
        mem_mb=resource("data", "mem_mb"),
        runtime=resource("data", "runtime"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/data.py"


rule verify_data:
    """Local (no cluster job of its own): it hashes a file of a few MB."""
    priority: 10
    input:
        "data/{path}",
    output:
        DATA_STAMP,
    params:
        spec=lambda wc: CFG.data_spec(wc.path),
        mirror=CFG.data_mirror,
    log:
        f"{LOGS}/verify_data/{{path}}.log",
    wildcard_constraints:
        path=_names(CFG.data_files()),
    localrule: True
    conda:
        "../../environment.yml"
    script:
        "../scripts/verify_data.py"
