"""Measure what run jobs cost (wall time, peak memory), to size cluster requests and job bundles.

    .venv/bin/python scripts/slurm/run_costs.py config/paper.yaml --experiments garland rastrigin10d

Runs one seed of every (experiment, setting) asked for, each in a fresh process so that the
peak resident memory includes the imports every cluster job pays, and prints one line per
run plus, per experiment, the total over all its seeds (what a bundle of them costs).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from vhct.pipeline.config import load
from vhct.pipeline.jobs import run_job
from vhct.pipeline.records import RunSpec

KIB_PER_MIB = 1024  # ru_maxrss is in KiB on Linux


def measure(spec: RunSpec) -> tuple[float, float]:
    """Run one job in this (fresh) process; return (wall seconds, peak RSS in MiB)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run_job(spec, Path(tmp, "table.csv.gz"), Path(tmp, "meta.json"))
        wall = time.perf_counter() - start
    return wall, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / KIB_PER_MIB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path, help="pipeline config (YAML)")
    parser.add_argument("--experiments", nargs="+", help="experiments to sample (default: all)")
    parser.add_argument("--settings", nargs="+", help="settings to sample (default: all of each experiment)")
    parser.add_argument("--seed", type=int, default=0, help="the seed each sample runs")
    args = parser.parse_args(argv)

    cfg, _ = load([args.config])
    experiments = args.experiments or list(cfg.experiments)
    unknown = sorted(set(experiments) - set(cfg.experiments))
    if unknown:
        raise ValueError(f"--experiments: not in {args.config}: {', '.join(unknown)}")
    print(f"{'experiment':24s} {'setting':16s} {'horizon':>7s} {'wall_s':>8s} {'peak_MiB':>8s}")
    context = get_context("spawn")
    for experiment in experiments:
        n_seeds = len(cfg.seeds(experiment))
        total = 0.0
        chosen = args.settings or cfg.experiments[experiment].settings
        settings = [s for s in cfg.experiments[experiment].settings if s in chosen]
        for setting in settings:
            spec = cfg.run_spec(experiment, setting, args.seed)
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                wall, peak = pool.submit(measure, spec).result()
            total += wall * n_seeds
            print(f"{experiment:24s} {setting:16s} {spec.horizon:7d} {wall:8.2f} {peak:8.0f}", flush=True)
        print(f"{experiment:24s} {'all x ' + str(n_seeds) + ' seeds':16s} {'':7s} {total:8.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
