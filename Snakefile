"""VHCT replication pipeline: config -> data files -> runs -> aggregates -> figures.

    snakemake --cores 2                               # default config, every figure
    snakemake --cores 2 --configfile config/paper.yaml
    snakemake --cores 2 figures/fig3a_garland.pdf      # one figure and only what it needs
    snakemake --cores 2 figures/paper-local/fig3b_landmine.pdf --configfile config/paper-local.yaml
                                                      # another config's figure, in its own folder

Each config's results, figures and logs are in a folder of its own (common.smk's layout): the
default config's in results/, figures/, logs/; config/<name>.yaml's in results/<name>/, ...

Rule files under workflow/rules/ are included in sorted order after common.smk. A new rule
family is a new .smk file that may append to EXTRA_TARGETS and holds its own names (as the audit's
`AUDIT_TABLES`, in audit.smk; a function goes to common.smk or the package, as Snakemake's lint asks):
a rule file reads the names of common.smk and its own, never another rule file's.
"""

from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


include: "workflow/rules/common.smk"


rule all:
    default_target: True
    input:
        all_targets,


for _rule_file in sorted(Path(workflow.basedir, "workflow", "rules").glob("*.smk")):
    if _rule_file.name != "common.smk":

        include: str(_rule_file)


# every rule file read and every check passed: each job's spec file (vhct.pipeline.stale), by the
# main process only (not again in each cluster job)
if workflow.is_main_process:
    write_spec_files()
