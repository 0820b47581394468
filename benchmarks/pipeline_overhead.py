"""Pipeline overhead: wall time of the run stage against its compute bound.

Usage: python benchmarks/pipeline_overhead.py [--config config/paper.yaml] [--cores 2]
       [--scratch DIR] [--max-horizon BO=50] [--experiments NAME ...] [--all-experiments] [--keep]

Runs the named config's runs and aggregates (``snakemake --until aggregate``) into a scratch
directory and prints the wall time, the sum of the runs' own compute (the ``wall_seconds`` of
their records: the optimization loop, nothing of the process around it), the compute bound
(that sum divided by the cores) and the ratio wall / bound. A ratio of 1 means the pipeline
costs nothing beyond the optimization itself.

By default only the synthetic part of the config runs (experiments that read no data file) and
BO stops at 50 rounds (``--max-horizon SETTING=N``, repeatable; GPyOpt's cubic cost would
otherwise dominate the measurement). The derived config is written into the scratch directory
and its path printed, so the run can be repeated by hand. ``--experiments`` keeps only the
named experiments (a quicker measurement). The load average before and after is
printed since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from vhct.pipeline.store import BATCH_SUFFIX, STORE, read_batch

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = REPO / "config" / "paper.yaml"
DEFAULT_MAX_HORIZON = ["BO=50"]


def synthetic_part(config: dict[str, Any]) -> dict[str, Any]:
    """The config without the experiments that read data files, and without figures that draw them."""
    kept = {name: exp for name, exp in config["experiments"].items() if not exp.get("data")}
    if not kept:
        raise SystemExit("no synthetic experiment left (use --all-experiments)")
    figures = {}
    for name, figure in config["figures"].items():
        if {panel["experiment"] for panel in figure["panels"] if "experiment" in panel} <= set(kept):
            figures[name] = figure
    return {**config, "experiments": kept, "figures": figures}


def cap_horizons(config: dict[str, Any], caps: list[str]) -> dict[str, Any]:
    """Set ``max_horizon`` of the named settings (``SETTING=N``)."""
    settings = dict(config["settings"])
    for cap in caps:
        name, _, value = cap.partition("=")
        if name not in settings:
            raise SystemExit(f"--max-horizon: no setting {name!r} in the config")
        settings[name] = {**settings[name], "max_horizon": int(value)}
    return {**config, "settings": settings}


def run_compute(workdir: Path) -> tuple[int, float]:
    """Number of runs in ``workdir``'s run store and the sum of their records' ``wall_seconds``
    (read by the store's one reader)."""
    records = [
        r for p in sorted((workdir / STORE).rglob(f"*{BATCH_SUFFIX}")) for r in read_batch(p).record.runs
    ]
    return len(records), sum(r.wall_seconds for r in records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--scratch", type=Path, help="scratch directory (default: a new temporary one)")
    parser.add_argument("--max-horizon", action="append", help="SETTING=N (default: BO=50)")
    parser.add_argument("--experiments", nargs="+", help="only these experiments")
    parser.add_argument("--all-experiments", action="store_true", help="keep the real-data experiments")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)

    config = yaml.safe_load(args.config.read_text())
    if args.experiments:
        unknown = set(args.experiments) - set(config["experiments"])
        if unknown:
            raise SystemExit(f"--experiments: not in {args.config}: {', '.join(sorted(unknown))}")
        config["experiments"] = {e: config["experiments"][e] for e in args.experiments}
    if not args.all_experiments:
        config = synthetic_part(config)
    config = cap_horizons(config, args.max_horizon or DEFAULT_MAX_HORIZON)
    workdir = args.scratch or Path(tempfile.mkdtemp(prefix="vhct-overhead-"))
    workdir.mkdir(parents=True, exist_ok=True)
    derived = workdir / "config.yaml"
    derived.write_text(yaml.safe_dump(config, sort_keys=False))
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        str(args.cores),
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(derived),
        "--until",
        "aggregate",
        "--quiet",
        "all",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])),
    }
    print(f"config: {args.config} -> {derived} ({len(config['experiments'])} experiments)", flush=True)
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=workdir)
    wall = time.perf_counter() - start
    runs, compute = run_compute(workdir)
    bound = compute / args.cores
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"runs: {runs}")
    print(f"wall time: {wall:.1f} s")
    print(f"sum of run compute: {compute:.1f} s")
    print(f"compute bound on {args.cores} cores: {bound:.1f} s")
    print(f"ratio wall / bound: {wall / bound:.2f}")
    if not args.keep and args.scratch is None:
        shutil.rmtree(workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
