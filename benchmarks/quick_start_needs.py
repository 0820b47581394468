"""What the quick start runs and who reads it: per experiment and setting, its runs, rounds and
estimated run-seconds, and which figures, claims (hence the analysis plan), questions beyond the
paper and sensitivity rows read it.

    python3.11 benchmarks/quick_start_needs.py [--config config/config.yaml] [--costs costs.json]
    python3.11 benchmarks/quick_start_needs.py --measure costs.json   # one run per setting, timed

The analysis plan (``python -m vhct.reporting.audit.plan``) takes its comparisons from the pilot's
audit: the claims' comparisons only (``plan.pilot_comparisons``), a sensitivity variant running its
default's seeds in the confirmatory run without pilot data of its own. So an (experiment, setting)
that no figure, claim or question reads feeds the sensitivity section of the quick start's audit
alone ("sensitivity only" below), and one read by nothing is not needed at all.

``--measure`` times one run (seed 0, the setting's horizon) of each experiment and setting with the
pipeline's own run function (``vhct.pipeline.run.experiment_columns``) and writes its wall seconds
per round by experiment and setting; ``--costs`` reads such a file to estimate run-seconds (rounds x
seconds per round; settings not measured count as unknown).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping
from pathlib import Path

from vhct.pipeline.config import Config, load
from vhct.reporting.audit.claims import left_out, load_beyond, load_claims
from vhct.reporting.audit.claims_model import ClaimsFile
from vhct.reporting.audit.questions_model import BeyondFile

#: the claims and questions files of this checkout (the audit's, workflow/rules/audit.smk)
REPO = Path(__file__).resolve().parents[1]
CLAIMS = REPO / "config" / "claims.yaml"
BEYOND = REPO / "config" / "beyond.yaml"


Readers = dict[tuple[str, str], dict[str, list[str]]]


def readers(config: Config, claims: ClaimsFile, beyond: BeyondFile) -> Readers:
    """(experiment, setting) -> reader kind (figure, claim, question, sensitivity) -> reader names."""
    out: Readers = {
        (e, s): {"figure": [], "claim": [], "question": [], "sensitivity": []}
        for e, exp in config.experiments.items()
        for s in exp.settings
    }

    def add(e: str, s: str, kind: str, name: str) -> None:
        if (e, s) in out and name not in out[e, s][kind]:
            out[e, s][kind].append(name)

    for figure, fig in config.figures.items():
        for e, settings in config.figure_settings(figure).items():
            for s in settings:
                add(e, s, "figure", figure)
        if fig.kind == "osc":  # draws one run, not an aggregate
            for panel in fig.panels:
                add(panel.experiment, panel.setting, "figure", figure)
    skipped = left_out(claims, config)
    read_by_claims: dict[str, set[str]] = {}
    for claim in claims.claims:
        for e in claim.experiments_read:
            if e in skipped.get(claim.id, {}):
                continue
            for s in claim.settings:
                add(e, s, "claim", claim.id)
                read_by_claims.setdefault(e, set()).add(s)
    for q in beyond.questions:
        for e in q.experiments:
            for s in (q.a, q.b):
                add(e, s, "question", q.id)
    for choice in claims.sensitivity:
        pairs = list((choice.substitute or {}).items())
        pairs += [(d, c) for d, found in (choice.choose_best or {}).items() for c in found if c != d]
        for e, defaults in read_by_claims.items():
            for default, variant in pairs:
                if default in defaults:
                    add(e, variant, "sensitivity", choice.id)
    return out


def run_jobs(config: Config) -> int:
    """Run jobs Snakemake starts: the batches, and one per run of a setting run one run per job."""
    singles = sum(
        len(config.setting_seeds(e, s))
        for e, exp in config.experiments.items()
        for s in exp.settings
        if config.runs_per_job(e, s) == 1
    )
    return len(config.run_batches()) + singles


def measure(config: Config, out: Path) -> None:
    """Seconds per round of one run (seed 0) of each experiment and setting, written to ``out``."""
    from vhct.pipeline.run import experiment_columns

    costs: dict[str, dict[str, float]] = json.loads(out.read_text()) if out.is_file() else {}
    for e, exp in config.experiments.items():
        for s in exp.settings:
            if s in costs.get(e, {}):
                continue
            spec = config.run_spec(e, s, config.setting_seeds(e, s)[0])
            started = time.perf_counter()
            experiment_columns(spec)
            costs.setdefault(e, {})[s] = (time.perf_counter() - started) / spec.horizon
            out.write_text(json.dumps(costs, indent=1, sort_keys=True))
            print(f"{e} {s}: {costs[e][s] * 1e3:.3f} ms per round", flush=True)


def table(config: Config, found: Mapping, costs: Mapping[str, Mapping[str, float]]) -> str:
    """The Markdown table, one row per experiment and setting, and the totals."""
    lines = [
        "| experiment | setting | runs | rounds | est. run-s | figures | claims | questions | sensitivity "
        "| need |",
        "|---|---|---:|---:|---:|---|---|---|---|---|",
    ]
    totals = {"all": [0, 0, 0.0], "needed": [0, 0, 0.0]}
    for (e, s), by in found.items():
        runs = len(config.setting_seeds(e, s))
        rounds = runs * config.run_horizon(e, s)
        per_round = costs.get(e, {}).get(s)
        seconds = rounds * per_round if per_round is not None else float("nan")
        needed = bool(by["figure"] or by["claim"] or by["question"])
        need = "yes" if needed else ("sensitivity only" if by["sensitivity"] else "NO")
        for key in ("all", "needed") if needed else ("all",):
            totals[key][0] += runs
            totals[key][1] += rounds
            totals[key][2] += seconds if seconds == seconds else 0.0
        cells = [", ".join(by[k]) if len(by[k]) < 4 else f"{len(by[k])}" for k in by]
        lines.append(
            f"| {e} | {s} | {runs} | {rounds:,} | {seconds:.1f} | " + " | ".join(cells) + f" | {need} |"
        )
    for key, (runs, rounds, seconds) in totals.items():
        lines.append(f"\n{key}: {runs:,} runs, {rounds:,} rounds, {seconds:,.0f} est. run-seconds")
    lines.append(f"run jobs: {run_jobs(config)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--costs", type=Path, help="seconds per round by experiment and setting (JSON)")
    parser.add_argument("--measure", type=Path, help="time one run per setting, write the costs here")
    args = parser.parse_args()
    config, _ = load([args.config])
    if args.measure:
        measure(config, args.measure)
        return
    costs = json.loads(args.costs.read_text()) if args.costs else {}
    print(table(config, readers(config, load_claims(CLAIMS), load_beyond(BEYOND)), costs))


if __name__ == "__main__":
    main()
