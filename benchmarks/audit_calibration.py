"""The audit's false verdict rates on samples of known truth, per rule (vhct.reporting.audit.calibration).

    PYTHONPATH=src nice python benchmarks/audit_calibration.py --repetitions 2000

Prints a Markdown table (per rule, seeds and sample shape: the claim-level rate of a false
"not reproduced" at the refuting margin, of a false "reproduced" at the claimed margin, both
verdicts' rates for identical distributions, and the power for a planted effect), then
``max false reproduction rate: X`` and, last, ``max false refutation rate: X``.
"""

from __future__ import annotations

import argparse
import time

from vhct.reporting.audit.calibration import ALPHA, SEEDS, binomial_bound, calibrate, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=2000, help="made-up claims per scenario")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generator of the samples")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=list(SEEDS), help="runs per setting to simulate"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    rows = list(calibrate(args.repetitions, args.seed, seeds=tuple(args.seeds)))
    print(
        f"alpha = {ALPHA}, {args.repetitions} repetitions per scenario; Monte Carlo bound "
        f"(alpha + 3 binomial s.e.) = {binomial_bound(ALPHA, args.repetitions):.4f}; "
        f"{time.perf_counter() - start:.0f} s\n"
    )
    table(rows)


if __name__ == "__main__":
    main()
