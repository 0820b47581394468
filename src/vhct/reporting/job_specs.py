"""The specs of the reporting layer's jobs (``vhct.pipeline.stale``'s records), built from the config
for the rules: a figure's, a figure caption's, the audit's and its figures'. The rules write them
when they are read; each job reads its own back (``stale.read_spec``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from vhct.pipeline.config import Config
from vhct.pipeline.files import sha256
from vhct.pipeline.layout import FINAL_TABLE
from vhct.pipeline.stale import AuditJob, CaptionJob, FigureJob, JobSpec
from vhct.pipeline.versions import package_versions, source_hash
from vhct.reporting.captions import figure_caption
from vhct.reporting.styles import every_style


def figure_job_spec(config: Config, figure: str, curves: Mapping[str, Mapping[str, str]]) -> FigureJob:
    """What a figure job is asked: its declaration (with the settings it draws only), the curve
    aggregates it draws, every algorithm's style, and the hash of the code that draws it (every
    module the figure job imports: the drawers, and the objectives and run code a panel evaluates or
    replays)."""
    return FigureJob(
        figure=config.figure_spec(figure),
        curves={e: dict(files) for e, files in curves.items()},
        styles=every_style(),
        source={"figure": source_hash("figure")},
        versions=package_versions(),
    )


def caption_job_spec(config: Config, figure: str, captions_dir: Path | str) -> CaptionJob:
    """What a figure caption's job is asked: the caption (``captions.figure_caption``)."""
    return CaptionJob(
        caption=figure_caption(config, figure, captions_dir), source={"caption": source_hash("caption")}
    )


def audit_job_spec(
    config: Config,
    config_files: Sequence[Path | str],
    experiments: Sequence[str],
) -> AuditJob:
    """What the audit is asked: the whole config, its files' sha256, a confirmatory config's plan's
    sha256, the batch files and final aggregates of the audited ``experiments``, and the hash of its
    code (every module its job imports: the objectives and run code among them)."""
    results = config.layout.results
    return AuditJob(
        config=config.source,
        configfiles={str(p): sha256(p) for p in config_files},
        plan=sha256(config.plan.file) if config.plan is not None else None,
        run_paths={e: config.run_paths(e) for e in experiments},
        final_paths={e: results.aggregate(e, FINAL_TABLE) for e in experiments},
        source={"audit": source_hash("audit")},
        versions=package_versions(),
    )


def audit_figure_spec(layer: str) -> JobSpec:
    """What one of the audit's figures (forest, summary) is asked: its code's hash (it reads the audit)."""
    return JobSpec(source={layer: source_hash(layer)})
