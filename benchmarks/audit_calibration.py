"""The audit's false verdict rates and power curves on samples of known truth, per rule
(benchmarks/calibration.py).

    PYTHONPATH=src nice python benchmarks/audit_calibration.py --repetitions 200 \
        --figure docs/calibration/audit_power.png
    PYTHONPATH=src nice python benchmarks/audit_calibration.py --only-two-stage --two-stage 200

Prints a Markdown table (per rule, seeds and sample shape: the claim-level rate of a false
"reproduced" with one comparison at the claimed margin and the others far inside, of a false "not
reproduced" with every comparison at the claimed margin, of a false "the opposite" at the refuting
margin, and the verdicts of a true tie inside the margins), then the power at two true ratios per
rule, and draws the power curves (probability of each verdict against the true ratio) as a PNG;
then the two-stage design's table (``--two-stage REPS``: a pilot of 20 seeds, the analysis plan's
seeds, a fresh confirmatory sample, the verdict on it alone; per kind, each rate with its Monte Carlo
error); then ``max false reproduction rate: X`` and, last, ``max false refutation rate: X``. The normal
samples' spread is the 90th percentile of the coefficients of variation of the shipped audit's
per-seed values, measured at run time; the seeds are 20 and those the shipped configuration runs.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

# one BLAS thread per process: the processes are the parallelism (threads on top only contend)
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import calibration as cal  # noqa: E402 (after the thread limits, which numpy reads when imported)
import numpy as np  # noqa: E402

from vhct.reporting.audit.claims import load_claims  # noqa: E402

#: the shipped claims' level and minimum seeds (``defaults``)
DEFAULTS = load_claims().defaults


def power_figure(curves, path: str) -> None:
    """One panel per rule: probability of each claim-level verdict against the true ratio, at the
    median spread of the shipped samples (solid) and at their 90th percentile (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    cols = 4
    rows = -(-len(curves) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    colours = {
        "reproduced": "tab:green",
        "the opposite": "tab:red",
        "no effect of the claimed size": "tab:orange",
        "inconclusive": "tab:gray",
    }
    for ax, (rule, by_spread) in zip(axes.flat, curves, strict=False):
        claimed, refuting, _ = cal.margins(rule)
        for (label, (grid_, probs)), style in zip(by_spread.items(), ("-", "--"), strict=True):
            grid = grid_
            for key, y in probs.items():
                ax.plot(grid, y, style, marker=".", color=colours[key], label=f"{key} ({label})")
        for x, style in ((claimed, "--"), (refuting, ":")):
            ax.axvline(x, color="k", linestyle=style, linewidth=0.8)
        ax.axhline(DEFAULTS.alpha, color="k", linewidth=0.5)
        if rule.claim["kind"] != "sublinear":
            ax.set_xscale("log")
            ax.set_xticks(grid[::2])
            ax.xaxis.set_major_formatter(FormatStrFormatter("%.3g"))
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(rule.name, fontsize=8)
        ax.set_ylim(-0.02, 1.02)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("true slope" if rule.claim["kind"] == "sublinear" else "true ratio", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    for ax in list(axes.flat)[len(curves) :]:
        ax.axis("off")
    spare = list(axes.flat)[len(curves) :]
    (spare[0] if spare else fig).legend(handles, labels, fontsize=7, loc="center")
    fig.suptitle(
        "Claim-level verdict probabilities, 20 seeds (vertical: claimed margin dashed, refuting dotted)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def two_stage(repetitions: int, seed: int, workers: int) -> bool:
    """The two-stage design (issue 37): per kind (its rule of the fewest comparisons), a pilot of 20
    seeds drawn from the least favourable truth, the analysis plan's seeds per comparison (the audit's
    need at the claim's effect of interest, at least 20; past the synthetic cap 200, the cap), a
    fresh confirmatory sample of that many, the verdict on it alone; every rate printed with its Monte
    Carlo error (one binomial standard error), and whether each is within alpha + 3 Monte Carlo errors.
    The repetitions run in chunks of ``calibration.TWO_STAGE_CHUNK``, each from its own seeded
    generator, on ``workers`` processes (the numbers do not depend on how many)."""
    cv = cal.shipped_cv()
    first: dict[str, cal.Rule] = {}
    for rule in sorted(cal.rules(), key=lambda r: r.experiments * r.comparisons):
        first.setdefault(rule.claim.kind, rule)
    print(
        f"\ntwo-stage design: pilot 20 seeds, plan (80 % power at each claim's effect of interest, floor "
        f"{DEFAULTS.min_seeds}, cap {cal.TWO_STAGE_CAP}), confirmatory sample, verdict on it alone; "
        f"{repetitions} repetitions per scenario, normal samples' cv {cv:.3f}; bound alpha + 3 MC errors = "
        f"{cal.binomial_bound(DEFAULTS.alpha, repetitions):.3f}; {workers} processes\n"
    )
    jobs = [(rule, d) for rule in first.values() for d in cal.DISTRIBUTIONS]
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = {
            (i, name, c): pool.submit(
                cal.two_stage_chunk, rule, d, name, c, n, seed, cv, cal.TWO_STAGE_CAP, DEFAULTS.min_seeds
            )
            for i, (rule, d) in enumerate(jobs)
            for name, c, n in cal.two_stage_tasks(rule, d, repetitions)
        }
        rows = []
        lines: list[str] = []
        for i, (rule, d) in enumerate(jobs):
            results = [(name, f.result()) for (j, name, _), f in futures.items() if j == i]
            rows.append(cal.two_stage_row(rule, d, repetitions, results))
            lines.clear()
            cal.two_stage_table(rows[-1:], DEFAULTS.alpha, lines.append)
            print(lines[-1], flush=True)
    print()
    ok = cal.two_stage_table(rows, DEFAULTS.alpha)
    rep = max(max(r.false_reproduction for r in rows), 0.0)
    ref = max(max(r.false_refutation, r.false_opposite) for r in rows)
    print(f"two-stage max false reproduction rate: {rep:.4f}")
    print(f"two-stage max false refutation rate: {ref:.4f}")
    print(f"two-stage within alpha + 3 Monte Carlo errors: {ok}")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=200, help="made-up claims per scenario")
    parser.add_argument("--curve-repetitions", type=int, default=40, help="made-up claims per power point")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generator of the samples")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=None, help="runs per setting (default: 20 and shipped)"
    )
    parser.add_argument("--figure", default="", help="PNG of the power curves (none if empty)")
    parser.add_argument(
        "--two-stage",
        type=int,
        default=200,
        metavar="REPS",
        help="repetitions per scenario of the two-stage design (pilot, plan, confirmatory); 0: none",
    )
    parser.add_argument("--only-two-stage", action="store_true", help="the two-stage table alone")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes of the two-stage simulation"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    if args.only_two_stage:
        two_stage(args.two_stage, args.seed, args.workers)
        print(f"({time.perf_counter() - start:.0f} s)")
        return
    cv = cal.shipped_cv()
    seeds = tuple(args.seeds) if args.seeds else tuple(sorted({20, *cal.shipped_seeds()}, reverse=True))
    rules = cal.rules()
    rows = list(cal.calibrate(args.repetitions, args.seed, rules, seeds=seeds, cv=cv))
    print(
        f"alpha = {DEFAULTS.alpha}; {args.repetitions} repetitions per scenario; normal samples' "
        f"coefficient of variation {cv:.3f} (90th percentile of the shipped per-seed values; median "
        f"{cal.shipped_cv(0.5):.3f}); seeds {seeds}; Monte Carlo bound (alpha + 3 binomial s.e.) = "
        f"{cal.binomial_bound(DEFAULTS.alpha, args.repetitions):.4f}\n"
    )
    lines: list[str] = []
    cal.table(rows, lines.append)
    for line in lines[:-2]:
        print(line)
    # the audit decides only from the claims' minimum of seeds on; rows below it show why
    decided = [r for r in rows if r.seeds >= DEFAULTS.min_seeds]
    below = [r for r in rows if r.seeds < DEFAULTS.min_seeds]
    worst = cal.worst(decided)
    if below:
        rep, ref = cal.worst(below)
        print(
            f"\nbelow the claims' minimum of {DEFAULTS.min_seeds} seeds (not decided by the audit: "
            f"'too few seeds'): max false reproduction {rep:.4f}, max false refutation {ref:.4f}"
        )
    curves = []
    median_cv = cal.shipped_cv(0.5)
    print(
        f"\n| rule | power: P(reproduced), 20 seeds, normal, cv {cv:.3f} | the same at the median cv "
        f"{median_cv:.3f} |\n|---|---|---|"
    )
    for rule in rules:
        curves.append(
            (
                rule,
                {
                    f"cv {spread:.3f}": cal.power_curve(
                        rule, 20, "normal", spread, args.curve_repetitions, args.seed
                    )
                    for spread in (median_cv, cv)
                },
            )
        )
        cells = []
        for spread in (cv, median_cv):
            rng = np.random.default_rng([args.seed, 11])
            k = rule.experiments * rule.comparisons
            at = []
            for t in cal.power_points(rule):
                got = cal.outcomes(rule, [t] * k, 20, "normal", spread, args.curve_repetitions, rng)
                at.append(f"{t:.3g}: {got['reproduced']:.2f}")
            cells.append("; ".join(at))
        print(f"| {rule.name} | {cells[0]} | {cells[1]} |")
    if args.figure:
        power_figure(curves, args.figure)
        print(f"\npower curves: {args.figure}")
    if args.two_stage:
        two_stage(args.two_stage, args.seed, args.workers)
    print(f"({time.perf_counter() - start:.0f} s)\n")
    print(f"over the rows of at least {DEFAULTS.min_seeds} seeds, every rule and scenario:")
    print(f"max false reproduction rate: {worst[0]:.4f}")
    print(f"max false refutation rate: {worst[1]:.4f}")


if __name__ == "__main__":
    main()
