"""Memory a run job spends on its run table, per value: the basis of the config check that a
horizon fits the job's ``mem_mb`` (vhct.pipeline.config.TABLE_BYTES_PER_VALUE).

Usage: python benchmarks/run_table_memory.py [--rounds 200000] [--dim 2]

Builds a run table of the given rounds and dimension (random values, the columns of
vhct.pipeline.tables.run_table_columns) and writes it as a run job does (vhct.pipeline.jobs:
CSV text, then gzip), measuring with tracemalloc the peak memory allocated while writing. Prints
the table's own bytes (8 per value), the writing's peak, and both per value.
"""

from __future__ import annotations

import argparse
import gzip
import tracemalloc

import numpy as np

from vhct.pipeline.jobs import GZIP_LEVEL, table_csv
from vhct.pipeline.tables import run_table_columns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    columns = run_table_columns(args.dim)
    table = {c: np.arange(1, args.rounds + 1) if c == "t" else rng.random(args.rounds) for c in columns}
    values = args.rounds * len(columns)
    held = sum(v.nbytes for v in table.values())
    tracemalloc.start()
    gzip.compress(table_csv(table), compresslevel=GZIP_LEVEL)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{args.rounds} rounds x {len(columns)} columns = {values} values")
    print(f"table arrays: {held / 1e6:.1f} MB ({held / values:.0f} bytes per value)")
    print(f"writing peak: {peak / 1e6:.1f} MB ({peak / values:.0f} bytes per value)")
    print(f"together: {(held + peak) / values:.0f} bytes per value")


if __name__ == "__main__":
    main()
