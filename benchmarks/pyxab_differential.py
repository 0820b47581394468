"""Differential check against the authors' library: PyXAB as released, PyXAB expanding leaves only, and ours.

Usage: python benchmarks/pyxab_differential.py [--rounds 5000] [--seeds 10] [--jobs 2]
           [--algorithms VHCT HCT T-HOO POO PCT] [--objectives garland doublesine]

PyXAB 0.3.0 is installed from the package registry into a throwaway virtual environment
(``pyxab_env.py``; when that fails the script says so and stops). For every algorithm and
objective it runs, with the paper's parameters and noise Uniform(-0.05, 0.05):

(a) PyXAB as released, with its own ``BinaryPartition`` and objective classes;
(b) PyXAB with expansion restricted to leaves: inside the PyXAB process, ``VHCT.expand`` and
    ``HCT.expand`` are wrapped to do nothing on a node that already has children (PyXAB expands
    the pulled node whenever its count reaches tau, even an internal one, which drops its
    subtree; the paper expands leaves only). T-HOO and POO over T-HOO only ever pull leaves,
    so for them (b) is (a) and is not run again;
(c) ours (``vhct.make_optimizer`` and ``vhct.objectives``), with its defaults and with each
    variant of an open choice that applies (T-HOO/POO truncation, PCT schedule and candidate,
    VHCT/HCT refresh and ``reexpand``, the last to be compared with (a), and VHCT's regret over
    HCT's printed for each);
    a variant this checkout does not accept is reported as unavailable.

The metric is the pseudo-regret at round n against the true maximum: n f* - sum_t f(x_t), with
f our exact objective (also for PyXAB's points; PyXAB's Garland uses f* = 1). Seeds drive both
libraries: the PyXAB process calls ``np.random.seed(seed)`` (PyXAB's partition draws from
numpy's global generator) and draws the noise from ``default_rng(seed)``; ours takes the seed
as the pipeline does. The table gives mean +- sd over seeds per cell, the difference ours minus
leaf-only PyXAB in standard errors of that difference (flagged beyond 2), the wall time per
run, and one line per remaining difference explaining it.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pyxab_env import PYXAB_VERSION, pyxab_python

from vhct.objectives import make_objective
from vhct.objectives.noise import LOW_NOISE
from vhct.optimizers.hoo import truncation_depth
from vhct.optimizers.registry import make_optimizer
from vhct.pipeline.records import RunSpec
from vhct.pipeline.run import run, seeded_run

ALGORITHMS = ("VHCT", "HCT", "T-HOO", "POO", "PCT")
OBJECTIVES = ("garland", "doublesine")
DEFAULT_ROUNDS = 5000
DEFAULT_SEEDS = 10
DEFAULT_JOBS = 2
#: a difference beyond this many standard errors is flagged
FLAG_SE = 2.0

#: the paper's parameters (Sec. 5 and appendix): OSC methods, T-HOO, and the parallel wrappers
OSC_RHO, OSC_NU, OSC_C, OSC_DELTA = 0.75, 1.0, 0.1, 0.01
THOO_RHO, THOO_NU = 0.25, 1.0
RHO_MAX, NU_MAX = 0.9, 1.0

#: our parameters, by registry name
OURS: dict[str, dict[str, float]] = {
    "VHCT": {"rho": OSC_RHO, "nu": OSC_NU, "c": OSC_C, "delta": OSC_DELTA},
    "HCT": {"rho": OSC_RHO, "nu": OSC_NU, "c": OSC_C, "delta": OSC_DELTA},
    "T-HOO": {"rho": THOO_RHO, "nu": THOO_NU},
    "POO": {"rho_max": RHO_MAX, "nu_max": NU_MAX},
    "PCT": {"rho_max": RHO_MAX, "nu_max": NU_MAX},
}
#: the same parameters under PyXAB's names (the horizon is added where PyXAB needs it)
PYXAB: dict[str, dict[str, float]] = {
    "VHCT": {"nu": OSC_NU, "rho": OSC_RHO, "c": OSC_C, "delta": OSC_DELTA},
    "HCT": {"nu": OSC_NU, "rho": OSC_RHO, "c": OSC_C, "delta": OSC_DELTA},
    "T-HOO": {"nu": THOO_NU, "rho": THOO_RHO},
    "POO": {"numax": NU_MAX, "rhomax": RHO_MAX},
    "PCT": {"numax": NU_MAX, "rhomax": RHO_MAX},
}
#: algorithms whose PyXAB code path the leaf-only patch changes (PCT runs HCT inside GPO)
PATCHED = ("VHCT", "HCT", "PCT")
#: variants of ours: the readings of each open choice (issue 10, point 2)
TRUNCATIONS = [{"truncation": "authors"}, {"truncation": "strict"}]
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "VHCT": [{"refresh": "current"}, {"reexpand": True}],
    "HCT": [{"refresh": "current"}, {"reexpand": True}],
    "T-HOO": TRUNCATIONS,
    "POO": TRUNCATIONS,
    "PCT": [
        {"schedule": schedule, "candidate": candidate}
        for schedule in ("fixed_budget", "anytime")
        for candidate in ("last_point", "recommendation")
    ],
}

RELEASED, LEAF_ONLY, OURS_DEFAULT = "PyXAB released", "PyXAB leaf-only", "ours"
UNAVAILABLE = "variant unavailable in this checkout"

# Runs inside the throwaway venv: one PyXAB run, its pulled points and a few counts on stdout (JSON).
PYXAB_DRIVER = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    from PyXAB.algos.HCT import HCT
    from PyXAB.algos.HOO import T_HOO
    from PyXAB.algos.PCT import PCT
    from PyXAB.algos.POO import POO
    from PyXAB.algos.VHCT import VHCT
    from PyXAB.partition.BinaryPartition import BinaryPartition
    from PyXAB.synthetic_obj.DoubleSine import DoubleSine
    from PyXAB.synthetic_obj.Garland import Garland

    spec = json.loads(sys.argv[1])
    counts = {"reexpansions": 0, "instances": 0}

    def guard_expand(cls):
        # count expansions of nodes that already have children; skip them when leaf_only
        expand = cls.expand
        def patched(self, parent):
            if parent.get_children() is not None:
                counts["reexpansions"] += 1
                if spec["leaf_only"]:
                    return
            expand(self, parent)
        cls.expand = patched

    def count_instances(cls):
        init = cls.__init__
        def counted(self, *args, **kwargs):
            counts["instances"] += 1
            init(self, *args, **kwargs)
        cls.__init__ = counted

    guard_expand(VHCT)
    guard_expand(HCT)
    count_instances(HCT)
    count_instances(T_HOO)

    name, n = spec["algorithm"], spec["rounds"]
    params = dict(spec["params"])
    if name in ("T-HOO", "POO", "PCT"):
        params["rounds"] = n
    if name == "POO":
        params["algo"] = T_HOO
    cls = {"VHCT": VHCT, "HCT": HCT, "T-HOO": T_HOO, "POO": POO, "PCT": PCT}[name]
    objective = {"garland": Garland, "doublesine": DoubleSine}[spec["objective"]]()
    np.random.seed(spec["seed"])
    noise = np.random.default_rng(spec["seed"])
    algo = cls(domain=spec["domain"], partition=BinaryPartition, **params)
    points = []
    start = time.perf_counter()
    for t in range(1, n + 1):
        x = algo.pull(t)
        points.append([float(v) for v in x])
        algo.receive_reward(t, objective.f(x) + noise.uniform(-spec["noise"], spec["noise"]))
    seconds = time.perf_counter() - start
    out = {"points": points, "seconds": seconds, **counts}
    if name == "PCT":
        out["phases"] = int(algo.algorithm.N)
    if name in ("VHCT", "HCT", "T-HOO"):
        out["depth"] = int(algo.partition.get_depth())
    print(json.dumps(out))
    """
)


@dataclass
class Task:
    """One run: which implementation (column), algorithm, objective, seed, and ours' extra params."""

    column: str
    algorithm: str
    objective: str
    seed: int
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    task: Task
    regret: float | None
    seconds: float
    info: dict[str, Any]
    error: str | None = None


def variant_label(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def pseudo_regret(objective: str, points: np.ndarray) -> float:
    """``n f* - sum f(x_t)`` with our exact objective."""
    f = make_objective(objective)
    return float(len(points) * f.f_star - f.values(points).sum())


def run_pyxab(task: Task, python: str, driver: str, rounds: int, noise: float) -> Result:
    """One PyXAB run in the venv's python; the regret is computed here from the pulled points."""
    spec = {
        "algorithm": task.algorithm,
        "objective": task.objective,
        "rounds": rounds,
        "seed": task.seed,
        "noise": noise,
        "leaf_only": task.column == LEAF_ONLY,
        "params": PYXAB[task.algorithm],
        "domain": make_objective(task.objective).domain.tolist(),
    }
    result = subprocess.run([python, driver, json.dumps(spec)], capture_output=True, text=True)
    if result.returncode != 0:
        return Result(task, None, 0.0, {}, error=result.stderr.strip()[-400:])
    out = json.loads(result.stdout.strip().splitlines()[-1])
    points = np.asarray(out.pop("points"), dtype=float)
    return Result(task, pseudo_regret(task.objective, points), out.pop("seconds"), out)


def run_ours(task: Task, rounds: int, noise: float) -> Result:
    """One run of ours, seeded as the pipeline seeds it (``vhct.pipeline.run.seeded_run``)."""
    spec = RunSpec(
        experiment=task.objective,
        setting=task.column,
        algorithm=task.algorithm,
        params={**OURS[task.algorithm], **task.params},
        objective=task.objective,
        objective_params={},
        noise=noise,
        horizon=rounds,
        seed=task.seed,
        progress_every=0,
    )
    f, optimizer, source = seeded_run(spec)
    start = time.perf_counter()
    table = run(optimizer, f, spec.horizon, source, spec.seed)
    seconds = time.perf_counter() - start
    info = {"depth": getattr(optimizer, "tree_depth", None)}
    if hasattr(optimizer, "instances"):
        info["instances"] = len(optimizer.instances)
    return Result(task, float(table["cumulative_regret"].iloc[-1]), seconds, info)


def cache_file(cache: Path, task: Task, rounds: int, noise: float) -> Path:
    """Where a PyXAB result is kept between invocations (it does not depend on this project's code)."""
    leaf = "leaf" if task.column == LEAF_ONLY else "released"
    name = f"{PYXAB_VERSION}-{task.algorithm}-{task.objective}-{leaf}-n{rounds}-noise{noise:g}"
    name += f"-seed{task.seed}"
    return cache / f"{name}.json"


def execute(task: Task, python: str, driver: str, rounds: int, noise: float, cache: Path | None) -> Result:
    if task.column not in (RELEASED, LEAF_ONLY):
        return run_ours(task, rounds, noise)
    path = None if cache is None else cache_file(cache, task, rounds, noise)
    if path is not None and path.exists():
        kept = json.loads(path.read_text(encoding="utf-8"))
        return Result(task, kept["regret"], kept["seconds"], kept["info"])
    result = run_pyxab(task, python, driver, rounds, noise)
    if path is not None and result.error is None:
        record = {"regret": result.regret, "seconds": result.seconds, "info": result.info}
        path.write_text(json.dumps(record), encoding="utf-8")
    return result


def variant_available(algorithm: str, params: Mapping[str, Any], rounds: int) -> bool:
    """Whether this checkout's ``make_optimizer`` accepts ``params`` for ``algorithm``."""
    try:
        make_optimizer(algorithm, [[0.0, 1.0]], rounds, 0, **OURS[algorithm], **params)
    except (TypeError, ValueError) as exc:
        if any(key in str(exc) for key in params):
            return False
        raise
    return True


# -- statistics and printing -----------------------------------------------------------------
def summary(values: list[float]) -> tuple[float, float, int]:
    """Mean, sample sd and count."""
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.std(ddof=1)) if len(arr) > 1 else 0.0, len(arr)


def z_score(a: list[float], b: list[float]) -> float:
    """``(mean a - mean b) / SE`` of that difference (independent samples)."""
    (ma, sa, na), (mb, sb, nb) = summary(a), summary(b)
    se = math.sqrt(sa**2 / na + sb**2 / nb)
    if se == 0.0:
        return 0.0 if ma == mb else math.copysign(math.inf, ma - mb)
    return (ma - mb) / se


def cell(values: list[float] | None) -> str:
    if not values:
        return "-"
    mean, sd, _ = summary(values)
    return f"{mean:.1f} ± {sd:.1f}"


def z_cell(a: list[float] | None, b: list[float] | None) -> str:
    if not a or not b:
        return "-"
    z = z_score(a, b)
    return f"{z:+.1f}" + ("  <-- beyond 2 SE" if abs(z) > FLAG_SE else "")


def text_table(rows: list[dict[str, str]]) -> str:
    """Left-aligned columns separated by two spaces, headed by the keys of the first row."""
    header = list(rows[0])
    widths = [max(len(h), *(len(r[h]) for r in rows)) for h in header]
    lines = [[h for h in header]] + [[r[h] for h in header] for r in rows]
    padded = ("  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in lines)
    return "\n".join(padded)


def print_tables(
    regrets: dict[tuple[str, str, str], list[float]],
    seconds: dict[tuple[str, str, str], list[float]],
    columns: dict[str, list[str]],
    unavailable: set[tuple[str, str]],
    algorithms: list[str],
    objectives: list[str],
) -> None:
    """The main table (PyXAB released, leaf-only, ours) and the table of our variants, with s/run."""

    def baseline(a: str, o: str) -> list[float] | None:
        return regrets.get((a, o, LEAF_ONLY if a in PATCHED else RELEASED))

    def per_run(a: str, o: str, label: str) -> str:
        times = seconds.get((a, o, label))
        return f"{np.mean(times):.2f}" if times else "-"

    main, variants = [], []
    for a in algorithms:
        for o in objectives:
            ours = regrets.get((a, o, OURS_DEFAULT))
            main.append(
                {
                    "algorithm": a,
                    "objective": o,
                    RELEASED: cell(regrets.get((a, o, RELEASED))),
                    LEAF_ONLY: cell(regrets.get((a, o, LEAF_ONLY))) if a in PATCHED else "= released",
                    OURS_DEFAULT: cell(ours),
                    "(ours - leaf-only)/SE": z_cell(ours, baseline(a, o)),
                    "s/run released|leaf|ours": " | ".join(per_run(a, o, c) for c in columns[a][:3]),
                }
            )
            for label in columns[a][3:]:
                missing = (a, label) in unavailable
                values, released = regrets.get((a, o, label)), regrets.get((a, o, RELEASED))
                variants.append(
                    {
                        "algorithm": a,
                        "objective": o,
                        "ours with": label,
                        "regret": UNAVAILABLE if missing else cell(values),
                        "(variant - leaf-only)/SE": "" if missing else z_cell(values, baseline(a, o)),
                        "(variant - released)/SE": "" if missing else z_cell(values, released),
                        "s/run": "" if missing else per_run(a, o, label),
                    }
                )
    print(text_table(main))
    if variants:
        print("\nOurs under each reading of an open choice (for T-HOO and POO, leaf-only PyXAB = released):")
        print(text_table(variants))
    print_vhct_over_hct(regrets, objectives)


def print_vhct_over_hct(regrets: dict[tuple[str, str, str], list[float]], objectives: list[str]) -> None:
    """VHCT's mean regret over HCT's, per column both ran: PyXAB's re-expansion (released) against
    ours with ``reexpand`` (the audit's sensitivity row reexpand), and leaf-only against ours."""
    pairs = [
        (RELEASED, RELEASED),
        (variant_label({"reexpand": True}), "ours, reexpand=True"),
        (LEAF_ONLY, LEAF_ONLY),
        (OURS_DEFAULT, OURS_DEFAULT),
    ]
    lines = []
    for o in objectives:
        for column, name in pairs:
            v, h = regrets.get(("VHCT", o, column)), regrets.get(("HCT", o, column))
            if v and h:
                lines.append(f"  {o:<11} {name:<20} {np.mean(v) / np.mean(h):.2f}")
    if lines:
        print("\nVHCT's mean regret / HCT's:")
        print("\n".join(lines))


def mean_info(results: list[Result], algorithm: str, column: str, key: str) -> float | None:
    values = [
        r.info[key]
        for r in results
        if r.task.algorithm == algorithm and r.task.column == column and r.info.get(key) is not None
    ]
    return float(np.mean(values)) if values else None


def print_explanations(
    results: list[Result], algorithms: list[str], objectives: list[str], rounds: int
) -> None:
    """One line per remaining difference, from reading PyXAB 0.3.0's code, with the counts measured here."""

    def fmt(value: float | None, spec: str = ".1f") -> str:
        return "?" if value is None else format(value, spec)

    print("\nExplanations:")
    if "garland" in objectives:
        garland = make_objective("garland")
        print(
            f"- f*: all columns use our exact f* (Garland {garland.f_star:.7f}, DoubleSine 0); "
            f"PyXAB's Garland.fmax = 1 would add n (1 - f*) = {rounds * (1 - garland.f_star):.1f} "
            "to every Garland cell."
        )
    for a in ("VHCT", "HCT"):
        if a in algorithms:
            print(
                f"- {a} released vs leaf-only: PyXAB's {a}.updateAllTree calls expand(end_node) once "
                "T >= tau without checking for a leaf, so an internal node where the traversal stopped "
                "(tau rose above its count) gets fresh children and loses its subtree: "
                f"{fmt(mean_info(results, a, RELEASED, 'reexpansions'))} re-expansions per run. "
                "The paper (Algorithm 1) and ours expand leaves only."
            )
            print(
                f"- {a} ours with refresh=current: every U recomputed whenever the log term changes "
                "(t = 2^k + 1); the default refresh=paper recomputes them at t = t+ = 2^k, as the complete "
                "VHCT and PyXAB (which does it after that round's pull) do, so U of nodes not pulled lags "
                "one doubling behind and the tree explores less."
            )
    if "T-HOO" in algorithms:
        h = truncation_depth(rounds, THOO_NU, THOO_RHO)
        print(
            f"- T-HOO: PyXAB's T_HOO.updateAllTree splits a pulled leaf while depth <= H = "
            f"ceil((ln n / 2 - ln(1/nu)) / ln(1/rho)) = {h}, so leaves reach depth {h + 1} "
            f"(measured {fmt(mean_info(results, 'T-HOO', RELEASED, 'depth'), '.0f')}); "
            f"truncation='strict' stops at H (ours reached "
            f"{fmt(mean_info(results, 'T-HOO', variant_label(TRUNCATIONS[1]), 'depth'), '.0f')})."
        )
    if "POO" in algorithms:
        print(
            "- POO: PyXAB's POO starts with N = 2, n = 2 and no instance at rho_max, creates N new T_HOO "
            "instances with rho_i = rho_max^(2N/(2i+1)) (i = 1 in the first batch, i = 0..N-1 later) at "
            "each doubling and keeps the old ones, weights the averages by ceil(n/N), "
            "each T_HOO truncated with the full horizon n: "
            f"{fmt(mean_info(results, 'POO', RELEASED, 'instances'), '.0f')} instances at n = {rounds} "
            f"(ours: {fmt(mean_info(results, 'POO', OURS_DEFAULT, 'instances'), '.0f')})."
        )
    if "PCT" in algorithms:
        phases = fmt(mean_info(results, "PCT", RELEASED, "phases"), ".0f")
        instances = fmt(mean_info(results, "PCT", RELEASED, "instances"), ".0f")
        print(
            f"- PCT: PyXAB's PCT is GPO over HCT for the known horizon, "
            f"N = ceil(Dmax/2 ln((n/2)/ln(n/2))) = {phases} "
            "phases; GPO.pull sets counter = 0 at a phase's end and receive_reward increments it before the "
            "next pull, so counter == 0 never recurs and only the first phase's HCT "
            f"(rho = rho_max^(2N/3)) is built: {instances} "
            "HCT instance(s) per run, trained across the phases; the last phase gives it no reward "
            "(the phase == N branch), then one point is replayed. It cross-validates the last pulled point."
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help="horizon n")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="seeds 0..S-1 per cell")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument("--objectives", nargs="+", default=list(OBJECTIVES), choices=OBJECTIVES)
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS, help="parallel processes")
    parser.add_argument("--noise", type=float, default=LOW_NOISE, help="half-width of the uniform noise")
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="directory keeping PyXAB's results between invocations (they do not depend on this "
        "project's code), so that rerunning after a change of ours reruns only ours",
    )
    args = parser.parse_args()
    for name in ("rounds", "seeds", "jobs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    started = time.perf_counter()
    if args.cache is not None:
        args.cache.mkdir(parents=True, exist_ok=True)

    columns: dict[str, list[str]] = {}
    unavailable: set[tuple[str, str]] = set()
    ours_params: dict[tuple[str, str], dict[str, Any]] = {}
    for a in args.algorithms:
        columns[a] = [RELEASED, LEAF_ONLY, OURS_DEFAULT]
        ours_params[(a, OURS_DEFAULT)] = {}
        for params in VARIANTS.get(a, []):
            label = variant_label(params)
            columns[a].append(label)
            if variant_available(a, params, args.rounds):
                ours_params[(a, label)] = params
            else:
                unavailable.add((a, label))

    with tempfile.TemporaryDirectory() as tmp:
        python = pyxab_python(Path(tmp))
        if python is None:
            print("Differential check skipped: PyXAB could not be installed (see the message above).")
            return
        driver = Path(tmp) / "pyxab_driver.py"
        driver.write_text(PYXAB_DRIVER)
        tasks = [
            Task(column, a, o, seed)
            for a in args.algorithms
            for column in (RELEASED, LEAF_ONLY)[: 1 + (a in PATCHED)]
            for o in args.objectives
            for seed in range(args.seeds)
        ] + [
            Task(label, a, o, seed, params)
            for (a, label), params in ours_params.items()
            for o in args.objectives
            for seed in range(args.seeds)
        ]
        results: list[Result] = []
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = [
                pool.submit(execute, t, str(python), str(driver), args.rounds, args.noise, args.cache)
                for t in tasks
            ]
            for done, future in enumerate(as_completed(futures), 1):
                r = future.result()
                results.append(r)
                t = r.task
                status = f"failed: {r.error}" if r.error else f"regret {r.regret:.1f}, {r.seconds:.1f} s"
                where = f"{t.column} {t.params or ''} {t.algorithm} {t.objective} seed {t.seed}"
                print(f"  [{done}/{len(tasks)}] {where}: {status}", file=sys.stderr, flush=True)

    regrets: dict[tuple[str, str, str], list[float]] = {}
    seconds: dict[tuple[str, str, str], list[float]] = {}
    for r in sorted(results, key=lambda r: r.task.seed):
        if r.regret is not None:
            key = (r.task.algorithm, r.task.objective, r.task.column)
            regrets.setdefault(key, []).append(r.regret)
            seconds.setdefault(key, []).append(r.seconds)

    print(
        f"PyXAB {PYXAB_VERSION} against ours: pseudo-regret at n = {args.rounds} against the true f*, "
        f"noise Uniform(-{args.noise}, {args.noise}), mean ± sd over {args.seeds} seeds"
    )
    print(
        f"(VHCT/HCT rho = {OSC_RHO}, nu = {OSC_NU}, c = {OSC_C}, delta = {OSC_DELTA}; "
        f"T-HOO rho = {THOO_RHO}; POO/PCT rho_max = {RHO_MAX}, nu_max = {NU_MAX}; "
        f"flagged: beyond {FLAG_SE:g} SE)\n"
    )
    print_tables(regrets, seconds, columns, unavailable, args.algorithms, args.objectives)
    print_explanations(results, args.algorithms, args.objectives, args.rounds)
    print(f"\nTotal wall time: {time.perf_counter() - started:.0f} s with --jobs {args.jobs}")


if __name__ == "__main__":
    main()
