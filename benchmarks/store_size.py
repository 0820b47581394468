"""The run store's size and cost by compression: bytes per round, write and read CPU time.

    python benchmarks/store_size.py [results/runs] [--sample 40]

Reads a sample of a store's batch files (``vhct.pipeline.store.read_batch``), writes each again to
memory with numpy's deflate (``np.savez_compressed``'s) and with bzip2 and LZMA (``archive_bytes``, the
store's writer, under each compression), reads each back with ``np.load``, and prints per compression
the bytes per stored round, the CPU seconds per raw MB written and read, and the size the whole store
would take. The store's choice is ``vhct.pipeline.store.COMPRESSION``.
"""

from __future__ import annotations

import argparse
import io
import random
import time
import zipfile
from pathlib import Path

import numpy as np

from vhct.pipeline.store import BATCH_SUFFIX, RECORDS, STORE, archive_bytes, read_batch

COMPRESSIONS = {"deflate": zipfile.ZIP_DEFLATED, "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}
SEED = 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", nargs="?", default=STORE)
    parser.add_argument("--sample", type=int, default=40, help="batch files read (at random, seeded)")
    args = parser.parse_args()
    files = sorted(Path(args.store).rglob(f"*{BATCH_SUFFIX}"))
    if not files:
        raise SystemExit(f"no batch files under {args.store}: run `make figures` first")
    sample = random.Random(SEED).sample(files, min(args.sample, len(files)))
    batches = []
    for path in sample:
        batch = read_batch(path)
        batches.append({**batch.columns, RECORDS: np.array(batch.record.model_dump_json())})
    rounds = sum(b["value"].size for b in batches)
    raw_mb = sum(a.nbytes for b in batches for a in b.values()) / 1e6
    on_disk = sum(p.stat().st_size for p in files)
    stored_rounds = sum(read_batch(p).columns["value"].size for p in files)
    print(f"{len(files)} batch files, {on_disk / 1e6:.1f} MB, {stored_rounds:,} rounds")
    print(f"sample: {len(sample)} files, {rounds:,} rounds, {raw_mb:.1f} raw MB")
    print(f"{'compression':<12}{'B/round':>9}{'write s/MB':>12}{'read s/MB':>11}{'store MB':>10}")
    for name, compression in COMPRESSIONS.items():
        start = time.process_time()
        written = [archive_bytes(b, compression) for b in batches]
        write = time.process_time() - start
        start = time.process_time()
        for data in written:
            with np.load(io.BytesIO(data)) as archive:
                for member in archive.files:
                    archive[member]
        read = time.process_time() - start
        per_round = sum(len(d) for d in written) / rounds
        print(
            f"{name:<12}{per_round:>9.2f}{write / raw_mb:>12.4f}{read / raw_mb:>11.4f}"
            f"{per_round * stored_rounds / 1e6:>10.1f}"
        )


if __name__ == "__main__":
    main()
