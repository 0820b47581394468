"""Snakemake script: write a figure's report caption (all work is in vhct.reporting.captions)."""

from vhct.pipeline.stale import CaptionJob, read_spec
from vhct.reporting.captions import caption_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
# the caption text, from the job's spec file (audit.smk's CAPTION_SPEC)
caption_job(read_spec(smk.input.spec, CaptionJob).caption, smk.output[0], smk.log[0])
