"""Snakemake script: write a figure's report caption (all work is in vhct.reporting.captions)."""

from vhct.reporting.captions import caption_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
caption_job(smk.params.caption, smk.output[0], smk.log[0])
