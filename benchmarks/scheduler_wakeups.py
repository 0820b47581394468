"""Snakemake's scheduler CPU while every core is busy, with its default job rate limit and with ours.

    .venv/bin/python benchmarks/scheduler_wakeups.py [--jobs 560] [--inputs 20] [--seconds 60]

A throwaway workflow in a temporary folder: ``--jobs`` jobs, each reading ``--inputs`` small files
and sleeping (so the cores are "busy" without using the CPU), run with ``--cores 2`` for
``--seconds``; prints the CPU seconds of Snakemake's own process (``/proc/<pid>/stat``) under
Snakemake's default ``--max-jobs-per-timespan`` (100/1s) and under the Makefile's (10000/1m). The
default re-runs the job selection every second, and each pass stats every input of every ready job.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SNAKEFILE = """
N, K = {jobs}, {inputs}
rule all:
    input: [f"out/{{j}}.txt" for j in range(N)]
rule job:
    input: [f"in/{{{{j}}}}_{{k}}.txt" for k in range(K)]
    output: "out/{{j}}.txt"
    shell: "sleep 3600; touch {{output}}"
"""
#: the limits compared: Snakemake's default and the Makefile's
LIMITS = (None, "10000/1m")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(folder: Path, limit: str | None, seconds: float) -> float:
    """Snakemake's CPU seconds over ``seconds`` of a run in ``folder`` (its jobs killed after)."""
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "--scheduler", "greedy", "--quiet"]
    if limit:
        command += ["--max-jobs-per-timespan", limit]
    proc = subprocess.Popen(
        command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    time.sleep(15)  # parse and start the first jobs
    start = cpu_seconds(proc.pid)
    time.sleep(seconds)
    used = cpu_seconds(proc.pid) - start
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=560, help="jobs (paper-local: about 560 ready)")
    parser.add_argument("--inputs", type=int, default=20, help="input files per job")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured seconds per limit")
    args = parser.parse_args()
    for limit in LIMITS:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "Snakefile").write_text(SNAKEFILE.format(jobs=args.jobs, inputs=args.inputs))
            (folder / "in").mkdir()
            for j in range(args.jobs):
                for k in range(args.inputs):
                    (folder / "in" / f"{j}_{k}.txt").touch()
            used = measure(folder, limit, args.seconds)
            name = limit or "100/1s (Snakemake's default)"
            print(
                f"--max-jobs-per-timespan {name}: Snakemake's process used {used:.1f} CPU s in "
                f"{args.seconds:.0f} s ({100 * used / args.seconds:.0f} % of a core), {args.jobs} jobs "
                f"x {args.inputs} inputs, 2 running"
            )


if __name__ == "__main__":
    main()
