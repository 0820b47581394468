"""Evaluations and seconds saved by memoizing a deterministic objective (Landmine), per tree method.

    python benchmarks/memo_savings.py [--data data/landmine/LandmineData.mat] [--rounds 500] [--seeds 1]

Runs each tree method on the real Landmine objective twice with the same seed, memoized (the
pipeline's default for a deterministic objective) and not, checks that the two run tables are
byte-identical (wall-time column aside) and prints the distinct evaluations and the run seconds.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from unittest import mock

from vhct.objectives.landmine import LandmineSVM
from vhct.pipeline.jobs import table_csv
from vhct.pipeline.records import RunSpec
from vhct.pipeline.run import experiment_columns

TREE = ("VHCT", "HCT", "T-HOO", "POO", "PCT")
#: the reward noise of the pipeline's runs (half-width of the uniform noise)
NOISE = 0.05


def timed_run(algorithm: str, params: dict, rounds: int, seed: int, memoized: bool):
    """One run's table bytes (without wall times), its evaluations and its seconds."""
    with mock.patch.object(LandmineSVM, "stochastic", not memoized):
        start = time.perf_counter()
        spec = RunSpec(
            experiment="landmine",
            setting=algorithm,
            algorithm=algorithm,
            params={},
            objective="landmine",
            objective_params=params,
            noise=NOISE,
            horizon=rounds,
            seed=seed,
            progress_every=0,
        )
        table, meta = experiment_columns(spec)
        seconds = time.perf_counter() - start
    data = table_csv({k: v for k, v in table.items() if k != "step_seconds"})
    return data, meta["evaluations"], seconds


def main() -> None:
    mirror = os.environ.get("VHCT_DATA_MIRROR", "../shared/data")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(mirror) / "landmine" / "LandmineData.mat")
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    params = {"data_path": str(args.data), "field": 0, "split_seed": 0}
    print(f"Landmine, {args.rounds} rounds, {args.seeds} seed(s) per algorithm")
    print(f"{'algorithm':<10}{'distinct evals':>16}{'saved':>8}{'s memoized':>12}{'s plain':>10}")
    for algorithm in TREE:
        evals = saved_s = plain_s = 0.0
        for seed in range(args.seeds):
            memo_table, n_memo, s_memo = timed_run(algorithm, params, args.rounds, seed, True)
            plain_table, n_plain, s_plain = timed_run(algorithm, params, args.rounds, seed, False)
            if memo_table != plain_table:
                raise SystemExit(f"{algorithm} seed {seed}: memoized table differs from the plain one")
            evals += n_memo / args.seeds
            saved_s += s_memo
            plain_s += s_plain
        saved = 1 - evals / args.rounds
        print(f"{algorithm:<10}{evals:>16.1f}{saved:>8.0%}{saved_s:>12.2f}{plain_s:>10.2f}")


if __name__ == "__main__":
    main()
