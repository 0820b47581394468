"""``python -m vhct.article.redraw --findings docs/findings --out figures/findings`` (``make
findings-figures``): every figure of a shipped run drawn again from the shipped findings alone (the
results cache: each setting's per-round curve and timing aggregates), with no run, from the config
files as the run read them (their sha256 checked against its record). Every input is read and
checked before the first figure is drawn; each figure is reported as it starts.

Regret figures are drawn by the pipeline's own figure job from the shipped curves, the others (the
functions, the OSC illustration) from the config, the forest and summary from the shipped audit. A
figure whose curves are not in the input is refused, naming how many are missing; nothing is drawn then.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from vhct.article.build import report
from vhct.article.record import regret_figures, run_config
from vhct.article.sources import ArticleError, command, read_sources
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.reporting.plots import figure_job
from vhct.reporting.plots.forest import audit_forest
from vhct.reporting.plots.summary import audit_summary
from vhct.reporting.view import PAPER_CONFIG, paper_scale

DEFAULT_FINDINGS = Path("docs") / "findings"
DEFAULT_OUT = Path("figures") / "findings"
#: the audit's figures among those a run records (drawn from the audit, not from the config)
FOREST, SUMMARY = AUDIT_FIGURES


def redraw(
    inputs: Path | str, out: Path | str, checkout: Path | str = ".", progress: Callable[[str], None] = report
) -> list[Path]:
    """Draw every figure the shipped run made into ``out`` (PDF and PNG), from the config as the run
    read it; return the PNGs. Every input is read and checked first."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ArticleError(f"{out}: not a folder; --out names the folder to draw the figures into")
    progress(f"reading and checking {inputs}")
    sources = read_sources(inputs, checkout)
    cfg = run_config(sources)
    regret = {f.name: f for f in regret_figures(sources, cfg)}
    absent = {f.name: f.missing for f in regret.values() if not f.present}
    if absent:
        named = ", ".join(f"{name} ({n} curve files)" for name, n in absent.items())
        raise ArticleError(f"{sources.folder}: the per-round curves of {named} are not in the input")
    out.mkdir(parents=True, exist_ok=True)
    drawn = []
    names = sources.provenance.figures
    for k, name in enumerate(names, 1):
        progress(f"drawing {name} ({k} of {len(names)})")
        if name == FOREST:
            drawn.append(next(p for p in audit_forest(sources.audit, out / FOREST) if p.suffix == ".png"))
        elif name == SUMMARY:
            summary = audit_summary(
                sources.audit, out / SUMMARY, paper_scale(sources.checkout / PAPER_CONFIG)
            )
            drawn.append(next(p for p in summary if p.suffix == ".png"))
        elif name in regret:  # as the run drew it (the article's own layout is draw_regret's)
            curves = {e: {s: str(p) for s, p in by.items()} for e, by in regret[name].curves.items()}
            figure_job(regret[name].spec, curves, out / f"{name}.pdf", out / f"{name}.png")
            drawn.append(out / f"{name}.png")
        elif name in cfg.figures:
            figure_job(cfg.figure_spec(name), {}, out / f"{name}.pdf", out / f"{name}.png")
            drawn.append(out / f"{name}.png")
    return drawn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vhct.article.redraw", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--findings", type=Path, default=DEFAULT_FINDINGS, help=f"default {DEFAULT_FINDINGS}")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"the figures' folder (default {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--checkout", type=Path, default=Path("."), help="the checkout whose config/ it reads"
    )
    args = parser.parse_args(argv)
    return command(
        lambda: (
            f"drew {len(redraw(args.findings, args.out, args.checkout))} figures into {args.out} "
            f"from {args.findings}"
        )
    )


if __name__ == "__main__":
    sys.exit(main())
