"""Captions of the figures in the Snakemake report: the paper figure each reproduces and the
settings behind every panel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vhct.pipeline.config import Config
from vhct.pipeline.figure_kinds import BAND_CAPTION, figure_kind
from vhct.pipeline.files import atomic_paths
from vhct.pipeline.jobs import setup_logging


def figure_caption(cfg: Config, figure: str, captions_dir: Path | str) -> str:
    """reStructuredText caption of a figure for the Snakemake report: the paper figure it reproduces
    (``<captions_dir>/<figure>.rst``, else a generic line), what its bands are (kinds that draw them,
    ``figure_kinds.BAND_CAPTION``) and the settings behind each panel, with each setting's seeds."""
    fig = cfg.figures[figure]
    source = Path(captions_dir) / f"{figure}.rst"
    generic = f"Figure ``{figure}`` ({fig.kind}); no paper caption is recorded for this name."
    head = source.read_text(encoding="utf-8").strip() if source.exists() else generic
    lines = [head, ""]
    band = figure_kind(fig.kind).band
    if band:
        lines += [BAND_CAPTION, ""]
    lines += ["**Settings behind it**", ""]
    for i, panel in enumerate(fig.panels):
        if panel.experiment is not None:
            exp = cfg.experiments[panel.experiment]
            chosen = panel.settings or ([panel.setting] if panel.setting is not None else exp.settings)
            algos = "; ".join(_setting_text(cfg, panel.experiment, s, band) for s in chosen)
            params = f" {dict(exp.objective_params)}" if exp.objective_params else ""
            extra = f", seed {panel.seed}, round {panel.round}" if panel.round is not None else ""
            lines.append(
                f"- panel {i + 1}: experiment ``{panel.experiment}``: "
                f"objective {exp.objective}{params}, noise Uniform(-{exp.noise}, {exp.noise}), "
                f"horizon {exp.horizon}{extra}; {algos}"
            )
        else:
            params = f" {dict(panel.objective_params)}" if panel.objective_params else ""
            lines.append(f"- panel {i + 1}: objective {panel.objective}{params} (no runs)")
    return "\n".join(lines) + "\n"


def _setting_text(cfg: Config, experiment: str, setting: str, seeds: bool) -> str:
    """A setting's algorithm, parameters, capped horizon and (``seeds``: a figure of mean curves) seeds."""
    s = cfg.settings[setting]
    params = ", ".join(f"{k}={v}" for k, v in s.params.items())
    horizon = cfg.run_horizon(experiment, setting)
    n_seeds = len(cfg.setting_seeds(experiment, setting))
    cap = f", max {horizon} rounds" if horizon < cfg.experiments[experiment].horizon else ""
    cap += f", {n_seeds} seed{'s' * (n_seeds != 1)}" if seeds else ""
    return f"{setting} ({s.algorithm}{': ' + params if params else ''}{cap})"


def caption_job(caption: str, out_path: Path | str, log_path: Path | str | None = None) -> None:
    """Write a figure's report caption atomically (the report embeds it beside the figure)."""
    setup_logging(log_path)
    with atomic_paths(out_path) as (tmp,):  # its folder made
        Path(tmp).write_text(caption, encoding="utf-8")


def from_snakemake(smk: Any) -> None:
    """Entry point of the caption rule's script: the caption its spec file holds
    (``vhct.reporting.job_specs.caption_job_spec``), written to the rule's output."""
    from vhct.pipeline.stale import CaptionJob, read_spec

    caption_job(read_spec(smk.input.spec, CaptionJob).caption, smk.output[0], smk.log[0])
