"""Captions of the figures in the Snakemake report: the paper figure each reproduces and the
settings behind every panel."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vhct.pipeline.config import run_horizon, seeds, setting_seeds
from vhct.pipeline.files import atomic_paths
from vhct.pipeline.jobs import setup_logging


def figure_caption(config: Mapping[str, Any], figure: str, captions_dir: Path | str) -> str:
    """reStructuredText caption of a figure for the Snakemake report: the paper figure it reproduces
    (``<captions_dir>/<figure>.rst``, else a generic line) and the settings behind each panel."""
    fig = config["figures"][figure]
    source = Path(captions_dir) / f"{figure}.rst"
    head = (
        source.read_text(encoding="utf-8").strip()
        if source.exists()
        else (f"Figure ``{figure}`` ({fig['kind']}); no paper caption is recorded for this name.")
    )
    lines = [head, "", "**Settings behind it**", ""]
    for i, panel in enumerate(fig["panels"]):
        if "experiment" in panel:
            exp = config["experiments"][panel["experiment"]]
            n_seeds = len(seeds(config, panel["experiment"]))
            chosen = panel.get("settings") or ([panel["setting"]] if "setting" in panel else exp["settings"])
            algos = "; ".join(_setting_text(config, panel["experiment"], s) for s in chosen)
            params = f" {dict(exp['objective_params'])}" if exp.get("objective_params") else ""
            extra = f", seed {panel.get('seed', 0)}, round {panel['round']}" if "round" in panel else ""
            lines.append(
                f"- panel {i + 1}: experiment ``{panel['experiment']}``: "
                f"objective {exp['objective']}{params}, noise Uniform(-{exp['noise']}, {exp['noise']}), "
                f"horizon {exp['horizon']}, {n_seeds} seeds"
                f"{extra}; {algos}"
            )
        else:
            params = f" {dict(panel['objective_params'])}" if panel.get("objective_params") else ""
            lines.append(f"- panel {i + 1}: objective {panel['objective']}{params} (no runs)")
    return "\n".join(lines) + "\n"


def _setting_text(config: Mapping[str, Any], experiment: str, setting: str) -> str:
    s = config["settings"][setting]
    params = ", ".join(f"{k}={v}" for k, v in (s.get("params") or {}).items())
    horizon = run_horizon(config, experiment, setting)
    n_seeds = len(setting_seeds(config, experiment, setting))
    cap = f", max {horizon} rounds" if horizon < config["experiments"][experiment]["horizon"] else ""
    cap += f", {n_seeds} seeds" if n_seeds < len(seeds(config, experiment)) else ""
    return f"{setting} ({s['algorithm']}{': ' + params if params else ''}{cap})"


def caption_job(caption: str, out_path: Path | str, log_path: Path | str | None = None) -> None:
    """Write a figure's report caption atomically (the report embeds it beside the figure)."""
    setup_logging(log_path)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_paths(out) as (tmp,):
        Path(tmp).write_text(caption, encoding="utf-8")
