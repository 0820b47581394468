"""What a config asks of a SLURM cluster, from Snakemake's own dry run with the SLURM profile.

    .venv/bin/python scripts/slurm/plan.py                       # config/paper.yaml, prints the table
    .venv/bin/python scripts/slurm/plan.py --write docs/slurm.md # rewrites the table in the doc

Runs ``snakemake -n --profile workflow/profiles/slurm --configfile CONFIG`` in an empty
directory (so every job is planned, whatever this checkout has already made) and reads each
job's rule, its ``runtime`` (minutes) and whether it is in a bundle (a group job of the
profile). Prints, per rule family (the run jobs by their objective), the jobs, the time each asks
for and their sum, the cluster jobs once bundled, and the totals: the table of docs/slurm.md
between its markers, which ``--write`` replaces and tests/integration/test_slurm_plan.py checks.
Rules marked ``localrule: True`` (and ``all``) run on the login node and ask nothing.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "config" / "paper.yaml"
PROFILE = REPO / "workflow" / "profiles" / "slurm"
RULES = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
BEGIN = "<!-- slurm-plan:begin (written by scripts/slurm/plan.py --write docs/slurm.md) -->"
END = "<!-- slurm-plan:end -->"
MINUTES_PER_HOUR = 60
#: a job of the dry run: "rule NAME:" at the start of a line (in a group job: indented)
JOB = re.compile(r"^(?P<indent> *)(?:local)?rule (?P<rule>\S+):$")
GROUP = re.compile(r"^\[.*\] Group job (?P<group>\S+) \(")
RUNTIME = re.compile(r"^\s+resources: .*\bruntime=(?P<minutes>\d+)")
#: a run job's output line: its batch file in the run store (vhct.pipeline.store)
OUTPUT = re.compile(r"^\s+output: (?P<output>\S+)")
STORE_OUTPUT = re.compile(r"results/runs/(?P<objective>[^/]+)/")
#: bundles named in the table at most (more: counted)
NAMED_BUNDLES = 3
#: the run rules (workflow/rules/run.smk)
RUN_RULES = ("run", "run_first")
LOCAL_RULE = re.compile(r"^rule (?P<rule>\w+):(?P<body>(?:\n(?:[ \t].*)?)*)", re.MULTILINE)
#: rules without a job of their own on the cluster (the default target)
TARGET_RULES = {"all"}


def local_rules() -> set[str]:
    """Rules the workflow marks ``localrule: True``, and the default target."""
    found = set(TARGET_RULES)
    for path in RULES:
        for match in LOCAL_RULE.finditer(path.read_text(encoding="utf-8")):
            if re.search(r"^\s+localrule:\s*True\b", match["body"], re.MULTILINE):
                found.add(match["rule"])
    return found


def family(rule: str, output: str | None) -> str:
    """A job's family: ``run <objective>`` for a run job (its batch file's objective in the run store:
    an objective's batches count together), else its rule."""
    found = STORE_OUTPUT.match(output or "") if rule in RUN_RULES else None
    return f"run {found['objective']}" if found else rule


@dataclass
class Family:
    jobs: int = 0
    minutes: list[int] = field(default_factory=list)
    groups: set[str] = field(default_factory=set)  # the bundles its jobs are in
    alone: int = 0  # jobs submitted on their own


@dataclass
class Plan:
    families: dict[str, Family]
    local: dict[str, int]

    @property
    def jobs(self) -> int:
        return sum(f.jobs for f in self.families.values()) + sum(self.local.values())

    @property
    def cluster_jobs(self) -> int:
        bundles = set().union(*(f.groups for f in self.families.values()))
        return sum(f.alone for f in self.families.values()) + len(bundles)

    @property
    def hours(self) -> float:
        return sum(sum(f.minutes) for f in self.families.values()) / MINUTES_PER_HOUR


def parse(text: str, local: set[str]) -> Plan:
    """The plan of a dry run's output; an output without jobs is an error naming what was expected."""
    families: dict[str, Family] = defaultdict(Family)
    local_jobs: dict[str, int] = defaultdict(int)
    group, rule, output = None, None, None
    missing: list[str] = []
    for line in [*text.splitlines(), "rule end:"]:  # a last rule line closes the last job
        if match := GROUP.match(line):
            group = match["group"]
        elif match := JOB.match(line):
            if rule is not None:  # the job before had no runtime
                missing.append(family(rule, output))
            rule, output = match["rule"], None
            group = group if match["indent"] else None
            if rule in local:
                local_jobs[rule] += 1
                rule = None
        elif rule is not None and (match := OUTPUT.match(line)):
            output = match["output"]
        elif rule is not None and (match := RUNTIME.match(line)):
            current = families[family(rule, output)]
            current.jobs += 1
            if group is None:
                current.alone += 1
            else:
                current.groups.add(group)
            current.minutes.append(int(match["minutes"]))
            rule = None
    missing = [m for m in missing if m != "end"]
    if not families and not missing:
        raise SystemExit("plan.py: the dry run listed no job (expected lines 'rule NAME:'):\n" + text[-2000:])
    if missing:
        raise SystemExit(f"plan.py: jobs without a 'runtime' resource in the dry run: {missing}")
    return Plan(dict(families), dict(local_jobs))


def dry_run(config: Path, profile: Path) -> str:
    with tempfile.TemporaryDirectory() as workdir:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "-n",
                "--snakefile",
                str(REPO / "Snakefile"),
                "--profile",
                str(profile),
                "--configfile",
                str(config),
                "--directory",
                workdir,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"plan.py: the dry run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout + done.stderr


def limit(minutes: int) -> str:
    """A time limit as SLURM users read it: ``10 min``, ``2 h``, ``48 h``."""
    if minutes < MINUTES_PER_HOUR:
        return f"{minutes} min"
    whole, rest = divmod(minutes, MINUTES_PER_HOUR)
    return f"{whole} h" if not rest else f"{whole} h {rest:02d} min"


def hours(minutes: float) -> str:
    value = minutes / MINUTES_PER_HOUR
    return f"{value:,.0f}" if value >= 10 else f"{value:,.1f}".rstrip("0").rstrip(".")


def table(plan: Plan, config: str) -> str:
    """The markdown table of docs/slurm.md."""
    rows = [
        f"Planned by `snakemake -n --profile workflow/profiles/slurm --configfile {config}` in an empty",
        "directory (`scripts/slurm/plan.py`): per rule, the jobs, the time limit each asks for (`runtime`)",
        "and their sum; how they reach the cluster with the profile's bundling.",
        "",
        "| rule | jobs | time limit per job | requested hours | cluster jobs (bundled) |",
        "|---|---:|---:|---:|---|",
    ]
    by_hours = sorted(plan.families.items(), key=lambda kv: (-sum(kv[1].minutes), kv[0]))
    for name, f in by_hours:
        low, high = min(f.minutes), max(f.minutes)
        asked = limit(low) if low == high else f"{limit(low)} to {limit(high)}"
        if not f.groups:
            bundled = f"{f.alone} (one each)"
        elif len(f.groups) > NAMED_BUNDLES:  # the run store's folders: one bundle per curve
            bundled = f"in {len(f.groups)} bundles (one per curve)"
        else:
            bundled = f"in {len(f.groups)} bundle{'s' if len(f.groups) > 1 else ''}: " + ", ".join(
                sorted(f.groups)
            )
        rows.append(f"| `{name}` | {f.jobs} | {asked} | {hours(sum(f.minutes))} | {bundled} |")
    for name, count in sorted(plan.local.items()):
        rows.append(f"| `{name}` (login node) | {count} | - | - | none |")
    rows.append(
        f"| **total** | **{plan.jobs}** | | **{hours(plan.hours * MINUTES_PER_HOUR)}** "
        f"| **{plan.cluster_jobs}** |"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--profile", type=Path, default=PROFILE)
    parser.add_argument("--write", type=Path, help="replace the table between the markers of this file")
    args = parser.parse_args(argv)
    config = args.config.resolve()
    shown = str(config.relative_to(REPO)) if config.is_relative_to(REPO) else str(config)
    text = table(parse(dry_run(config, args.profile), local_rules()), shown)
    if args.write is None:
        print(text)
        return 0
    doc = args.write.read_text(encoding="utf-8")
    if doc.count(BEGIN) != 1 or doc.count(END) != 1:
        raise SystemExit(f"plan.py: {args.write} needs one '{BEGIN}' and one '{END}'")
    head, rest = doc.split(BEGIN)
    args.write.write_text(f"{head}{BEGIN}\n{text}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
