"""What one figure costs to regenerate from an empty results folder: the run jobs and runs its dry
run plans, and their run-seconds as measured by a finished run of the same config.

    .venv/bin/python benchmarks/figure_cost.py figures/paper-local/fig3b_landmine.pdf \\
        --configfile config/paper-local.yaml --timing docs/findings/aggregates/landmine/timing.csv

``--repo DIR`` plans with another checkout's workflow and package (e.g. a worktree of an older
commit, to compare before and after). The run-seconds are the ``wall_seconds`` of the planned runs
in ``--timing`` files (the aggregates' per-run wall times; shipped under docs/findings/), so the
numbers are measured ones, summed over what the plan would run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
#: a planned run table in the dry run's output (in the config's folder of results/, if it has one)
RUN = re.compile(r"results/(?:[^/\s,]+/)?runs/([^/\s,]+)/([^/\s,]+)/seed(\d+)\.csv\.gz")
#: a planned job in the dry run's output
JOB = re.compile(r"^(?:local)?rule (\w+):", re.MULTILINE)


def plan(target: str, configfile: Path, repo: Path) -> str:
    """The dry run's output of ``target`` in an empty working directory, with ``repo``'s workflow."""
    env = {**os.environ, "PYTHONPATH": str(repo / "src")}
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "-n",
                "--snakefile",
                str(repo / "Snakefile"),
                "--directory",
                work,
                "--configfile",
                str(configfile.resolve()),
                "--cores",
                "2",
                target,
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    if done.returncode:
        raise SystemExit(f"the dry run failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target")
    parser.add_argument("--configfile", type=Path, required=True)
    parser.add_argument("--timing", type=Path, nargs="+", required=True, help="timing.csv aggregates")
    parser.add_argument("--repo", type=Path, default=REPO)
    args = parser.parse_args(argv)
    text = plan(args.target, args.configfile, args.repo.resolve())
    runs = {(e, s, int(k)) for e, s, k in RUN.findall(text)}
    jobs = [r for r in JOB.findall(text) if r.startswith("run")]
    timing = pd.concat([pd.read_csv(p).assign(experiment=p.parent.name) for p in args.timing])
    seconds = timing.set_index(["experiment", "setting", "seed"])["wall_seconds"]
    known = [seconds[r] for r in runs if r in seconds.index]
    settings = sorted({(e, s) for e, s, _ in runs})
    print(f"{args.target} ({args.configfile}, workflow of {args.repo}):")
    print(f"  {len(jobs)} run jobs, {len(runs)} runs of {len(settings)} settings")
    missing = len(runs) - len(known)
    print(f"  {sum(known):.0f} run-seconds measured for {len(known)} of them ({missing} not in --timing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
