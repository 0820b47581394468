"""Minimal reproductions of the defects this project found in PyXAB 0.3.0, the authors' library.

Usage: python benchmarks/upstream_defects.py [--defect NAME ...] [--jobs 2] [--python PATH]
           [--save-evidence DIR] [--show-driver]

Each defect has a report ready to file upstream in ``docs/upstream/NAME.md``; this script prints
the evidence pasted there. PyXAB 0.3.0 is installed from the package registry into a throwaway
virtual environment (``pyxab_env.py``, as the differential benchmark does; ``--python`` reuses an
interpreter that already has it). A driver of this project's own, run by that interpreter, uses
PyXAB's public classes and wraps a few of their methods at run time to count what happens (no
PyXAB code in this project); it prints its observations as one JSON line. This script then sets
them beside what correct behaviour gives, computed by this project's code
(``vhct.optimizers.parallel``, ``vhct.objectives``), and says whether the defect is present.

Defects (``--defect``): ``reexpansion`` (VHCT and HCT expand internal nodes again),
``gpo-one-phase`` (GPO, hence PCT, builds only its first phase's HCT), ``poo-bookkeeping``
(POO's instances and counts differ from Grill et al.'s Algorithm 1). Runs are seeded and
the printed output is deterministic (wall times go to stderr). ``--save-evidence DIR`` writes
the driver's observations as ``DIR/NAME.json`` (``docs/upstream/evidence/`` holds those of the
run pasted in the reports); ``--show-driver`` prints the driver, which needs only PyXAB and numpy.
Exit status 0 when every selected reproduction ran (whether or not it found the defect), 1 with
a one-line message when PyXAB could not be installed or a driver failed.
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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from pyxab_differential import text_table
from pyxab_env import PYXAB_VERSION, pyxab_python

from vhct.objectives import make_objective
from vhct.objectives.noise import LOW_NOISE
from vhct.optimizers.parallel import GPO, POO

#: the objective of every reproduction (PyXAB's Garland and ours are the same function)
OBJECTIVE = "garland"
#: the paper's horizon for the synthetic functions
ROUNDS = 5000
#: seeds of the re-expansion runs (each runs PyXAB's VHCT and HCT twice)
REEXPANSION_SEEDS = (0, 1, 2)
#: seed of the GPO and POO runs (their bookkeeping does not depend on it)
SEED = 0
DEFAULT_JOBS = 2
#: the paper's parameters (Sec. 5 and appendix), under PyXAB's names
OSC_PARAMS = {"nu": 1.0, "rho": 0.75, "c": 0.1, "delta": 0.01}
RHO_MAX, NU_MAX = 0.9, 1.0
#: how many characters of a failed driver's stderr to show
ERROR_CHARS = 300
#: tolerance for "V_reward equals the mean of the instance's rewards"
MEAN_TOLERANCE = 1e-9

PRESENT, ABSENT = "DEFECT PRESENT", "not reproduced"

# Runs inside the throwaway venv: argv[1] is a JSON spec, stdout's last line the observations (JSON).
DRIVER = textwrap.dedent(
    '''
    """Observe PyXAB as released: python driver.py '{"defect": ..., ...}' (needs PyXAB and numpy)."""
    import json
    import sys

    import numpy as np
    from PyXAB.algos.HCT import HCT
    from PyXAB.algos.HOO import T_HOO
    from PyXAB.algos.PCT import PCT
    from PyXAB.algos.POO import POO
    from PyXAB.algos.VHCT import VHCT
    from PyXAB.partition.BinaryPartition import BinaryPartition
    from PyXAB.synthetic_obj.Garland import Garland

    DOMAIN = [[0.0, 1.0]]


    def play(algo, spec, rng, after_pull=None, after_reward=None):
        """Run spec["rounds"] rounds on Garland with uniform noise; the sum of the noiseless values."""
        objective, total = Garland(), 0.0
        for t in range(1, spec["rounds"] + 1):
            x = algo.pull(t)
            if after_pull:
                after_pull(t)
            value = float(objective.f(x))
            total += value
            algo.receive_reward(t, value + rng.uniform(-spec["noise"], spec["noise"]))
            if after_reward:
                after_reward(t)
        return total


    def below(node):
        """Every node under node (its children, their children, ...)."""
        found, stack = [], list(node.get_children() or [])
        while stack:
            child = stack.pop()
            found.append(child)
            stack.extend(child.get_children() or [])
        return found


    def reexpansion(spec):
        """VHCT or HCT: every call of expand() on a node that already has children."""
        cls = {"VHCT": VHCT, "HCT": HCT}[spec["algorithm"]]
        clock = {"t": 0}
        first = {}  # id(node) -> (round, visits, tau) of its first expansion
        events = []
        expand = cls.expand

        def observed(self, parent):
            depth = parent.get_depth()
            tau = parent.get_tau_hi_value() if cls is VHCT else self.tau_h[depth]
            now = (clock["t"], int(parent.get_visited_times()), float(tau))
            if parent.get_children() is None:
                first[id(parent)] = now
                return expand(self, parent)
            dropped = [] if spec["leaf_only"] else below(parent)
            events.append({
                "round": now[0], "depth": depth, "index": int(parent.get_index()),
                "visits": now[1], "tau": now[2], "first_expansion": first[id(parent)],
                "blocked": spec["leaf_only"],
                "dropped_nodes": len(dropped),
                "dropped_evaluations": int(sum(node.get_visited_times() for node in dropped)),
            })
            if not spec["leaf_only"]:
                expand(self, parent)

        cls.expand = observed
        np.random.seed(spec["seed"])  # BinaryPartition draws from numpy's global generator
        algo = cls(domain=DOMAIN, partition=BinaryPartition, **spec["params"])

        def tick(t):
            clock["t"] = t

        total = play(algo, spec, np.random.default_rng(spec["seed"]), after_pull=tick)
        root = algo.partition.get_root()
        return {
            "sum_f": total,
            "reexpansions": sum(not e["blocked"] for e in events),
            "blocked": sum(e["blocked"] for e in events),
            "dropped_evaluations": sum(e["dropped_evaluations"] for e in events),
            "first_event": events[0] if events else None,
            "largest_event": max(events, key=lambda e: e["dropped_evaluations"]) if events else None,
            "nodes_listed": sum(len(layer) for layer in algo.partition.get_node_list()),
            "nodes_reachable": 1 + len(below(root)),
        }


    def gpo_one_phase(spec):
        """PCT (GPO over HCT): the HCT instances built and where each round's reward goes."""
        built, to_hct = [], {"n": 0}
        init, receive = HCT.__init__, HCT.receive_reward

        def counted_init(self, *args, **kwargs):
            built.append(float(kwargs["rho"]))
            self.serial = len(built)
            init(self, *args, **kwargs)

        def counted_receive(self, time, reward):
            to_hct["n"] += 1
            to_hct["last"] = self.serial
            receive(self, time, reward)

        HCT.__init__, HCT.receive_reward = counted_init, counted_receive
        np.random.seed(spec["seed"])
        pct = PCT(numax=spec["nu_max"], rhomax=spec["rho_max"], rounds=spec["rounds"],
                  domain=DOMAIN, partition=BinaryPartition)
        gpo = pct.algorithm
        rounds = {}  # phase at reward time -> [rounds, to an HCT (by serial), to cross-validation]
        seen = {}

        def before(t):
            seen["phase"], seen["hct"] = int(gpo.phase), to_hct["n"]
            seen["cv"] = list(gpo.V_reward)

        def after(t):
            row = rounds.setdefault(seen["phase"], {"rounds": 0, "hct": {}, "cv": 0})
            row["rounds"] += 1
            if to_hct["n"] > seen["hct"]:
                serial = str(to_hct["last"])
                row["hct"][serial] = row["hct"].get(serial, 0) + 1
            if list(gpo.V_reward) != seen["cv"]:
                row["cv"] += 1

        total = play(pct, spec, np.random.default_rng(spec["seed"]), before, after)
        return {
            "sum_f": total,
            "N": int(gpo.N),
            "half_phase_length": int(gpo.half_phase_length),
            "hct_rhos": built,
            "phases": {str(k): v for k, v in sorted(rounds.items())},
            "candidates": len(gpo.V_x),
            "cv_rewards": [float(v) for v in gpo.V_reward],
        }


    def poo_bookkeeping(spec):
        """POO over T_HOO: the instances made, their rho, and POO's n and N against the evaluations."""
        made, rewards, holder = [], {}, {}
        init, receive = T_HOO.__init__, T_HOO.receive_reward

        def counted_init(self, *args, **kwargs):
            poo = holder["poo"]  # POO makes its instances in pull(), after its own __init__
            made.append({"rho": float(kwargs["rho"]), "N": int(poo.N), "i": int(poo.phase)})
            self.serial = len(made) - 1
            init(self, *args, **kwargs)

        def counted_receive(self, time, reward):
            rewards.setdefault(self.serial, []).append(float(reward))
            receive(self, time, reward)

        T_HOO.__init__, T_HOO.receive_reward = counted_init, counted_receive
        np.random.seed(spec["seed"])
        poo = POO(numax=spec["nu_max"], rhomax=spec["rho_max"], rounds=spec["rounds"],
                  domain=DOMAIN, partition=BinaryPartition, algo=T_HOO)
        holder["poo"] = poo
        counts = []  # (evaluations made, n, N, instances) whenever n or N changes

        def track(t):
            now = (t, int(poo.n), int(poo.N), len(poo.V_algo))
            if not counts or now[1:3] != counts[-1][1:3]:
                counts.append(now)

        counts.append((0, int(poo.n), int(poo.N), 0))
        total = play(poo, spec, np.random.default_rng(spec["seed"]), after_reward=track)
        means = [float(np.mean(rewards.get(i, [0.0]))) for i in range(len(made))]
        return {
            "sum_f": total,
            "instances": made,
            "evaluations": [len(rewards.get(i, [])) for i in range(len(made))],
            "reward_means": means,
            "V_reward": [float(v) for v in poo.V_reward],
            "counts": counts,
        }


    if __name__ == "__main__":
        spec = json.loads(sys.argv[1])
        run = {"reexpansion": reexpansion, "gpo-one-phase": gpo_one_phase,
               "poo-bookkeeping": poo_bookkeeping}[spec["defect"]]
        print(json.dumps(run(spec)))
    '''
).lstrip()


class DriverError(RuntimeError):
    """A driver run failed or printed no observations."""


def parse_observations(stdout: str, what: str) -> dict[str, Any]:
    """The driver's observations: the JSON object on the last line of its stdout."""
    lines = stdout.strip().splitlines()
    try:
        out = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        out = None
    if not isinstance(out, dict):
        raise DriverError(f"{what}: the driver printed no JSON object on its last line")
    return out


def call_driver(python: str, driver: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """Run the driver on ``spec`` with PyXAB's interpreter; its observations."""
    what = f"{spec['defect']} {spec.get('algorithm', '')}".strip()
    result = subprocess.run([python, str(driver), json.dumps(spec)], capture_output=True, text=True)
    if result.returncode != 0:
        message = " ".join(result.stderr.split())[-ERROR_CHARS:]
        raise DriverError(f"{what}: the driver failed: {message}")
    return parse_observations(result.stdout, what)


def regret(sum_f: float, rounds: int) -> float:
    """Pseudo-regret ``n f* - sum f(x_t)`` with the exact maximum of our objective."""
    return rounds * make_objective(OBJECTIVE).f_star - sum_f


def table(header: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns under ``header`` (the differential benchmark's layout)."""
    return text_table([dict(zip(header, row, strict=True)) for row in rows])


def verdict(present: bool, why: str) -> str:
    return f"Verdict: {PRESENT if present else ABSENT} ({why})"


# -- re-expansion of internal nodes (VHCT, HCT) ------------------------------------------------
def reexpansion_specs(rounds: int, seeds: tuple[int, ...]) -> list[dict[str, Any]]:
    return [
        {
            "defect": "reexpansion",
            "algorithm": a,
            "leaf_only": leaf,
            "seed": s,
            "rounds": rounds,
            "noise": LOW_NOISE,
            "params": OSC_PARAMS,
        }
        for a in ("VHCT", "HCT")
        for leaf in (False, True)
        for s in seeds
    ]


def describe_event(label: str, e: dict[str, Any]) -> list[str]:
    """Three lines on one re-expansion: when the node was first expanded, when again, what it lost."""
    f_round, f_visits, f_tau = e["first_expansion"]
    return [
        f"{label}: node (depth {e['depth']}, index {e['index']}), expanded at round {f_round} "
        f"(visits {f_visits} >= tau {f_tau:g});",
        f"  at round {e['round']} tau was {e['tau']:g}: the traversal stopped at this internal node until "
        f"its visits reached {e['visits']}, then expand() was called on it again:",
        f"  its children were replaced by two fresh leaves, and the {e['dropped_nodes']} nodes under it, "
        f"holding {e['dropped_evaluations']} evaluations, left the tree.",
    ]


def render_reexpansion(evidence: dict[str, Any]) -> str:
    """Per algorithm: internal nodes expanded, evaluations dropped, unreachable nodes, regret both ways."""
    runs = evidence["runs"]
    rounds = runs[0]["spec"]["rounds"]
    seeds = sorted({r["spec"]["seed"] for r in runs})
    lines = [
        f"PyXAB {evidence['version']}: VHCT and HCT (nu = 1, rho = 0.75, c = 0.1, delta = 0.01) on Garland, "
        f"noise Uniform(-{LOW_NOISE}, {LOW_NOISE}), n = {rounds}, seeds {', '.join(map(str, seeds))}.",
        "'leaves only' = the same run with expand() wrapped to do nothing on a node that has children.",
        "",
    ]
    released = [r for r in runs if not r["spec"]["leaf_only"]]
    for algorithm in ("VHCT", "HCT"):
        mine = [r for r in released if r["spec"]["algorithm"] == algorithm and r["out"]["first_event"]]
        run = mine[0] if mine else None
        if run is not None:
            where = f"{algorithm}, seed {run['spec']['seed']}"
            lines += describe_event(f"First re-expansion ({where})", run["out"]["first_event"])
            lines += describe_event(f"Largest re-expansion ({where})", run["out"]["largest_event"])
    rows, present = [], False
    lines.append("")
    for algorithm in ("VHCT", "HCT"):
        for leaf in (False, True):
            mine = [r for r in runs if r["spec"]["algorithm"] == algorithm and r["spec"]["leaf_only"] == leaf]
            if not mine:
                continue
            outs = [r["out"] for r in mine]
            regrets = [regret(o["sum_f"], rounds) for o in outs]
            unreachable = [o["nodes_listed"] - o["nodes_reachable"] for o in outs]
            if not leaf:
                present = present or any(o["reexpansions"] > 0 for o in outs)
            rows.append(
                [
                    algorithm,
                    "leaves only" if leaf else "as released",
                    " ".join(str(o["reexpansions"]) for o in outs)
                    + (f" ({' '.join(str(o['blocked']) for o in outs)} blocked)" if leaf else ""),
                    " ".join(str(o["dropped_evaluations"]) for o in outs),
                    " ".join(str(u) for u in unreachable),
                    " ".join(f"{g:.1f}" for g in regrets),
                    f"{np.mean(regrets):.1f}",
                ]
            )
    header = [
        "algorithm",
        "expand()",
        "internal nodes expanded",
        "evaluations dropped",
        "nodes listed, unreachable",
        "regret per seed",
        "mean",
    ]
    lines += [table(header, rows), ""]
    lines.append(
        "Correct (the paper's Algorithm 1 expands a leaf only): 0 internal nodes expanded, no evaluation "
        "dropped, every listed node reachable; the 'leaves only' rows show the regret that gives."
    )
    lines.append(verdict(present, "internal nodes expanded as released" if present else "none expanded"))
    return "\n".join(lines)


# -- GPO (hence PCT) builds only its first phase -----------------------------------------------
@dataclass(frozen=True)
class GpoSchedule:
    """What GPO should do with a budget (Shang et al. 2019, Algorithm 1), per this project's GPO."""

    phases: int
    phase_length: int
    rhos: list[float]
    candidates: int
    cv_evaluations: list[int]


@cache  # a pure function of its arguments; each rendering asks for it
def expected_gpo(rounds: int, rho_max: float = RHO_MAX, nu_max: float = NU_MAX) -> GpoSchedule:
    """Drive ``vhct.optimizers.parallel.GPO`` over ``rounds`` (rewards 0: the schedule ignores them)."""
    gpo = GPO([[0.0, 1.0]], rounds, rho_max=rho_max, nu_max=nu_max, seed=SEED)
    for _ in range(rounds):
        gpo.tell(gpo.ask(), 0.0)
    return GpoSchedule(
        gpo.n_phases,
        gpo.phase_length,
        list(gpo.rhos),
        len(gpo.candidates),
        [inst.pulls for _, inst in gpo.candidates],
    )


def render_gpo(evidence: dict[str, Any]) -> str:
    """HCT instances built and where each phase's rewards went, beside GPO's schedule."""
    (run,) = evidence["runs"]
    spec, out = run["spec"], run["out"]
    want = expected_gpo(spec["rounds"], spec["rho_max"], spec["nu_max"])
    n_phases = out["N"]
    rhos = ", ".join(f"{r:.4f}" for r in out["hct_rhos"])
    lines = [
        f"PyXAB {evidence['version']}: PCT (GPO over HCT, rho_max = {spec['rho_max']}, nu_max = "
        f"{spec['nu_max']}) on Garland, n = {spec['rounds']}, seed {spec['seed']}.",
        f"GPO's schedule: N = {n_phases} phases of 2 x {out['half_phase_length']} rounds "
        f"(this project's GPO: {want.phases} of 2 x {want.phase_length}).",
        "",
        f"HCT instances built: {len(out['hct_rhos'])} (rho = {rhos}).",
        f"Correct: {want.phases}, one per phase, rho_i = rho_max^(2N/(2i+1)), i = 1..{want.phases}: "
        + ", ".join(f"{r:.4f}" for r in want.rhos)
        + ".",
        "",
        "Where the rewards went, by GPO's phase at the time of the reward (phase > N: after the last phase):",
    ]
    rows = []
    for phase, row in out["phases"].items():
        to_hct = ", ".join(f"#{k}: {v}" for k, v in sorted(row["hct"].items())) or "-"
        rows.append(
            [
                phase,
                str(row["rounds"]),
                to_hct,
                str(row["cv"]),
                str(row["rounds"] - sum(row["hct"].values()) - row["cv"]),
            ]
        )
    header = ["phase", "rounds", "to HCT instance", "to cross-validation", "to neither"]
    lines += [table(header, rows), ""]
    cv = ", ".join(f"{v:.4f}" for v in out["cv_rewards"])
    lines += [
        f"Candidates cross-validated: {out['candidates']}, V_reward = [{cv}].",
        f"Correct: phase i gives its {want.phase_length} base rewards to its own HCT (rho_i) and "
        f"{want.phase_length} to its candidate: {want.candidates} candidates with "
        + ", ".join(str(v) for v in sorted(set(want.cv_evaluations)))
        + " evaluations each.",
    ]
    present = len(out["hct_rhos"]) < n_phases
    why = f"{len(out['hct_rhos'])} HCT instance(s) for {n_phases} phases"
    lines.append(verdict(present, why))
    return "\n".join(lines)


# -- POO's bookkeeping -------------------------------------------------------------------------
@dataclass(frozen=True)
class PooBookkeeping:
    """POO after ``rounds`` evaluations by Grill et al.'s Algorithm 1, per this project's POO."""

    rhos: list[float]
    batches: list[int]
    n_instances: int
    #: (evaluations made, n) at the end of the last complete pass: equal, as n counts evaluations
    last_pass: tuple[int, int]


@cache  # a pure function of its arguments; each rendering asks for it
def expected_poo(rounds: int, rho_max: float = RHO_MAX, nu_max: float = NU_MAX) -> PooBookkeeping:
    """Drive ``vhct.optimizers.parallel.POO`` for ``rounds`` evaluations (rewards 0: counts ignore them)."""
    poo = POO([[0.0, 1.0]], rounds, rho_max=rho_max, nu_max=nu_max, seed=SEED)
    last_pass = (0, 0)
    for t in range(1, rounds + 1):
        poo.tell(poo.ask(), 0.0)
        if poo.queued == 0:
            last_pass = (t, poo.n)
    batches = [1] + [n_instances for _, n_instances in poo.doublings]
    return PooBookkeeping([inst.rho for inst in poo.instances], batches, poo.N, last_pass)


def batches_of(instances: list[dict[str, Any]]) -> list[int]:
    """Sizes of the runs of consecutive instances made with the same N (one batch per doubling)."""
    sizes: list[int] = []
    last = None
    for inst in instances:
        if inst["N"] == last:
            sizes[-1] += 1
        else:
            sizes.append(1)
        last = inst["N"]
    return sizes


def index_ranges(instances: list[dict[str, Any]]) -> list[str]:
    """Per batch (same N), the grid indices i the instances used: ``"N=4: i=0..3"``."""
    ranges: dict[int, list[int]] = {}
    for inst in instances:
        ranges.setdefault(inst["N"], []).append(inst["i"])
    return [f"N={n}: i={min(i)}..{max(i)}" if len(i) > 1 else f"N={n}: i={i[0]}" for n, i in ranges.items()]


def render_poo(evidence: dict[str, Any]) -> str:
    """Instances, their rho and POO's counters, beside Grill et al.'s Algorithm 1."""
    (run,) = evidence["runs"]
    spec, out = run["spec"], run["out"]
    rho_max, rounds = spec["rho_max"], spec["rounds"]
    want = expected_poo(rounds, rho_max, spec["nu_max"])
    rhos = [inst["rho"] for inst in out["instances"]]
    made = sum(out["evaluations"])
    last_t, last_n, last_N, _ = out["counts"][-1]  # noqa: N806 - the paper's name
    means, weighted = np.asarray(out["reward_means"]), np.asarray(out["V_reward"])
    worst = int(np.argmax(np.abs(means - weighted)))
    gap = float(abs(means[worst] - weighted[worst]))
    chosen, best = int(np.argmax(weighted)), int(np.argmax(means))
    has_rho_max = any(math.isclose(r, rho_max) for r in rhos)
    want_t, want_n = want.last_pass
    rows = [
        ["instances (T_HOO runs) made", str(len(rhos)), str(len(want.rhos))],
        [
            "instances per batch",
            " ".join(map(str, batches_of(out["instances"]))),
            " ".join(map(str, want.batches)),
        ],
        ["grid index i per batch", "; ".join(index_ranges(out["instances"])), "i = 1..N in every batch"],
        ["an instance at rho_max", "yes" if has_rho_max else "no", "yes (the first)"],
        ["rho of the first instance", f"{rhos[0]:.4f}", f"{want.rhos[0]:.4f}"],
        ["N at the end", str(last_N), str(want.n_instances)],
        ["evaluations made", str(made), str(rounds)],
        [
            "n at the last pass end",
            f"{last_n} after {last_t} evaluations",
            f"{want_n} after {want_t} evaluations",
        ],
        [
            "V_reward against the mean of the instance's rewards",
            f"largest gap {gap:.2e} (#{worst}: {weighted[worst]:.6f} vs {means[worst]:.6f})",
            "equal",
        ],
        [
            "instance chosen by V_reward / by its rewards' mean",
            f"#{chosen} (rho {rhos[chosen]:.4f}) / #{best} (rho {rhos[best]:.4f})",
            "the same",
        ],
    ]
    lines = [
        f"PyXAB {evidence['version']}: POO over T_HOO (rho_max = {rho_max}, nu_max = {spec['nu_max']}) on "
        f"Garland, n = {rounds} evaluations, seed {spec['seed']}.",
        "",
        table(["", f"PyXAB {evidence['version']}", "Grill et al., Algorithm 1 (this project's POO)"], rows),
        "",
        "POO's counters (evaluations made, n, N, instances) at its last five changes: "
        + "; ".join(str(tuple(c)) for c in out["counts"][-5:])
        + ".",
    ]
    present = len(rhos) != len(want.rhos) or last_n != last_t or not has_rho_max or gap > MEAN_TOLERANCE
    why = (
        f"{len(rhos)} instances against {len(want.rhos)}, rho_max {'present' if has_rho_max else 'absent'}, "
        f"n = {last_n} after {last_t} evaluations"
    )
    lines.append(verdict(present, why))
    return "\n".join(lines)


# -- the catalogue -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Defect:
    """A defect: its report's title, the driver specs of its reproduction, and how to print the evidence."""

    title: str
    specs: Callable[[int], list[dict[str, Any]]]
    render: Callable[[dict[str, Any]], str]


def _single(defect: str) -> Callable[[int], list[dict[str, Any]]]:
    def specs(rounds: int) -> list[dict[str, Any]]:
        return [
            {
                "defect": defect,
                "seed": SEED,
                "rounds": rounds,
                "noise": LOW_NOISE,
                "rho_max": RHO_MAX,
                "nu_max": NU_MAX,
            }
        ]

    return specs


DEFECTS: dict[str, Defect] = {
    "reexpansion": Defect(
        "VHCT and HCT expand internal nodes again, dropping their subtrees",
        lambda rounds: reexpansion_specs(rounds, REEXPANSION_SEEDS),
        render_reexpansion,
    ),
    "gpo-one-phase": Defect(
        "GPO (and so PCT) builds only its first phase's base algorithm", _single("gpo-one-phase"), render_gpo
    ),
    "poo-bookkeeping": Defect(
        "POO's instances, rho grid and counters differ from Grill et al.'s Algorithm 1",
        _single("poo-bookkeeping"),
        render_poo,
    ),
}


def report(name: str, evidence: dict[str, Any]) -> str:
    """The text printed for one defect (what ``docs/upstream/NAME.md`` pastes)."""
    return f"== {name}: {DEFECTS[name].title} ==\n{DEFECTS[name].render(evidence)}"


def collect(name: str, python: str, driver: Path, jobs: int, rounds: int) -> dict[str, Any]:
    """Run every driver spec of a defect; the evidence (specs and observations)."""
    specs = DEFECTS[name].specs(rounds)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outs = list(pool.map(lambda spec: call_driver(python, driver, spec), specs))
    runs = [{"spec": spec, "out": out} for spec, out in zip(specs, outs, strict=True)]
    return {"version": PYXAB_VERSION, "runs": runs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--defect", nargs="+", choices=list(DEFECTS), default=list(DEFECTS))
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="horizon n (the reports use the default)")
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS, help="driver runs in parallel")
    parser.add_argument("--python", help="an interpreter with PyXAB installed (skips the throwaway venv)")
    parser.add_argument(
        "--save-evidence", type=Path, help="write each defect's observations to DIR/NAME.json"
    )
    parser.add_argument("--show-driver", action="store_true", help="print the driver and exit")
    args = parser.parse_args(argv)
    if args.show_driver:
        print(DRIVER, end="")
        return 0
    for option in ("jobs", "rounds"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be >= 1")
    with tempfile.TemporaryDirectory() as tmp:
        python = args.python or pyxab_python(Path(tmp))
        if python is None:
            print(f"Reproductions not run: PyXAB {PYXAB_VERSION} could not be installed (reason above).")
            return 1
        driver = Path(tmp) / "driver.py"
        driver.write_text(DRIVER, encoding="utf-8")
        for i, name in enumerate(args.defect):
            started = time.perf_counter()
            try:
                evidence = collect(name, str(python), driver, args.jobs, args.rounds)
            except DriverError as exc:
                print(f"Reproduction of {name} failed: {exc}")
                return 1
            if args.save_evidence is not None:
                args.save_evidence.mkdir(parents=True, exist_ok=True)
                path = args.save_evidence / f"{name}.json"
                path.write_text(json.dumps(evidence, indent=1) + "\n", encoding="utf-8")
            print(("\n" if i else "") + report(name, evidence), flush=True)
            print(f"[{name}: {time.perf_counter() - started:.0f} s]", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
