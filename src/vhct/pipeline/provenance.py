"""Provenance of a whole pipeline run: what ran, on which commit and machine, and how long it took.

    python -m vhct.pipeline.provenance results/provenance.json -- snakemake --cores 2 --configfile ...

runs the command and, when it succeeds, writes a JSON record of it (``make paper-local`` does
this). The findings document (``vhct.reporting.findings``) prints the record; the wall time in
it is that of the command, data download included.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vhct.pipeline.files import atomic_paths


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def cpu_model() -> str:
    """The processor's model name (Linux), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def config_files(command: Sequence[str]) -> list[str]:
    """The ``--configfile`` arguments of a Snakemake command line."""
    files: list[str] = []
    taking = False
    for arg in command:
        if arg.startswith("--configfile="):
            files.append(arg.split("=", 1)[1])
        elif arg in ("--configfile", "--configfiles"):
            taking = True
        elif taking and not arg.startswith("-"):
            files.append(arg)
        else:
            taking = False
    return files


def record(command: Sequence[str], started: datetime, wall_seconds: float) -> dict[str, Any]:
    """The provenance record of a finished command."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "command": shlex.join(command),
        "config_files": config_files(command),
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_changes": bool(status) if status is not None else None,
        "started_utc": started.isoformat(timespec="seconds"),
        "wall_seconds": round(wall_seconds, 1),
        "machine": {
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "cpu_model": cpu_model(),
            "system": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(),
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command after ``--``; on success write its provenance record to OUT."""
    parser = argparse.ArgumentParser(prog="python -m vhct.pipeline.provenance", description=main.__doc__)
    parser.add_argument("out", type=Path, help="provenance JSON to write")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given after --")
    started = datetime.now(UTC)
    start = time.perf_counter()
    code = subprocess.call(command)
    wall = time.perf_counter() - start
    if code != 0:
        print(f"provenance: the command failed (exit {code}); {args.out} not written", file=sys.stderr)
        return code
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_paths(args.out) as (tmp,):
        tmp.write_text(json.dumps(record(command, started, wall), indent=2) + "\n", encoding="utf-8")
    print(f"provenance: {wall:.0f} s; record in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
