"""Opt-in progress output of a run: a tqdm bar when tqdm is installed, else log lines on stderr."""

from __future__ import annotations

import sys
import time

from vhct.optimizers.base import check_horizon


class Progress:
    """Opt-in progress: a tqdm bar when tqdm is installed and ``progress is True``, else log lines."""

    def __init__(self, progress: bool | int, budget: int, label: str):
        self.bar = None
        self.every = 0
        self.label = label
        self.budget = budget
        #: whether :meth:`update` does anything (checked by the loop, so a silent run pays nothing)
        self.active = bool(progress)
        if progress is True:
            try:
                from tqdm.auto import tqdm  # optional: no dependency, only used when installed
            except ImportError:
                self.every = max(1, budget // 10)
            else:
                self.bar = tqdm(total=budget, desc=label, unit="eval")
        elif progress:
            self.every = check_horizon("progress (evaluations between log lines)", progress)

    def update(self, n: int, best: float, start: float) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(best=f"{best:.6g}", refresh=False)
        elif self.every and (n % self.every == 0 or n == self.budget):
            print(
                f"{self.label}: {n}/{self.budget} evaluations, best {best:.6g}, "
                f"{time.perf_counter() - start:.1f} s",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
