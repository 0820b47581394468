"""The two-sided question rule of the audit's "beyond the paper" part on samples of known truth.

    PYTHONPATH=src nice python benchmarks/beyond_calibration.py --repetitions 1000

Prints a Markdown table (per seeds and sample shape: the question-level rate of a false "A better"
with every experiment's ratio at A's margin, of a false "B better" at B's, of any answer for
identical distributions, and the power at a ratio of 0.9), then ``max false answer rate: X``.
"""

from __future__ import annotations

import argparse
import time

from calibration import DISTRIBUTIONS, SEEDS, binomial_bound, question_rates

from vhct.reporting.audit.claims import load_claims

#: the shipped claims' level and minimum seeds (``defaults``)
DEFAULTS = load_claims().defaults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=1000, help="made-up questions per scenario")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generator of the samples")
    args = parser.parse_args()
    start = time.perf_counter()
    rows = [(n, d, question_rates(n, d, args.repetitions, args.seed)) for n in SEEDS for d in DISTRIBUTIONS]
    print(
        f"alpha = {DEFAULTS.alpha}, {args.repetitions} repetitions per scenario, 4 experiments per question; "
        f"Monte Carlo bound {binomial_bound(DEFAULTS.alpha, args.repetitions):.4f}; "
        f"{time.perf_counter() - start:.0f} s\n"
    )
    print("| seeds | samples | false A better | false B better | identical: any answer | power (ratio 0.9) |")
    print("|---|---|---|---|---|---|")
    for n, d, r in rows:
        print(
            f"| {n} | {d} | {r['false A']:.3f} | {r['false B']:.3f} | {r['identical']:.3f} | "
            f"{r['power']:.3f} |"
        )
    print(f"max false answer rate: {max(max(r['false A'], r['false B']) for _, _, r in rows):.4f}")


if __name__ == "__main__":
    main()
