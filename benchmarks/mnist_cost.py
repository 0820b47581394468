"""Seconds per evaluation of the MNIST objective, against the training images and the batch size.

Usage: python benchmarks/mnist_cost.py [--data data/mnist] [--mode official] [--n-train 2000 5000 10000]
       [--n-valid 10000] [--batch 1 10 100] [--repeats 3]

For each training-subset size and validation-set size (``--n-valid`` takes several) builds the
objective (``vhct.objectives.mnist.MnistMLP``, one torch thread, one epoch) and times ``repeats``
evaluations at each mini-batch size (learning rate 0.1, weight decay 1e-4; the cost depends on the
batch size and the number of images, not on the other two hyper-parameters), each with its own seed.
It prints the mean wall and CPU seconds per evaluation and the load average: CPU time (the
process's) is the figure to quote on a shared machine. The data directory defaults to
``$VHCT_DATA_MIRROR/mnist`` when that variable is set, else ``data/mnist``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from vhct.objectives.mnist import MnistMLP

LEARNING_RATE = 0.1
WEIGHT_DECAY = 1e-4


def default_data_dir() -> Path:
    """The MNIST folder of the offline mirror if ``$VHCT_DATA_MIRROR`` is set, else the pipeline's."""
    mirror = os.environ.get("VHCT_DATA_MIRROR")
    return Path(mirror) / "mnist" if mirror else Path("data/mnist")


def time_evaluations(objective: MnistMLP, batch: int, repeats: int) -> tuple[float, float, list[float]]:
    """Mean wall and CPU seconds of ``repeats`` evaluations at ``batch``, and their accuracies."""
    point = [float(batch), LEARNING_RATE, WEIGHT_DECAY]
    wall = cpu = 0.0
    values = []
    for seed in range(repeats):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        values.append(objective(point, seed=(seed, 0)))
        wall += time.perf_counter() - start_wall
        cpu += time.process_time() - start_cpu
    return wall / repeats, cpu / repeats, values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data_dir())
    parser.add_argument("--mode", default="official", choices=("official", "test-split"))
    parser.add_argument("--n-train", type=int, nargs="+", default=[2000, 5000, 10000])
    parser.add_argument("--n-valid", type=int, nargs="+", default=[10000])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        f"MNIST objective, mode {args.mode}, one torch thread, one epoch, {args.repeats} evaluations "
        f"per cell; data {args.data}; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'n_train':>8}{'n_valid':>8}{'batch':>7}{'wall s/eval':>13}{'CPU s/eval':>12}{'accuracies':>12}")
    for n_train in args.n_train:
        for n_valid in args.n_valid:
            start = time.perf_counter()
            objective = MnistMLP(args.data, mode=args.mode, n_train=n_train, n_valid=n_valid, threads=1)
            print(f"{n_train:>8}{n_valid:>8}  (objective built in {time.perf_counter() - start:.2f} s)")
            for batch in args.batch:
                wall, cpu, values = time_evaluations(objective, batch, args.repeats)
                shown = " ".join(f"{v:.3f}" for v in values)
                print(f"{n_train:>8}{n_valid:>8}{batch:>7}{wall:>13.3f}{cpu:>12.3f}   {shown}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
