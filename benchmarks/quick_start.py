"""The quick start as a new user runs it: ``make figures`` in a fresh clone, measured.

    python3.11 benchmarks/quick_start.py [--clone /tmp/vhct-quick-start] [--config config/config.yaml]

Clones the checkout's HEAD into ``--clone`` (``../shared`` beside it is the data mirror the Makefile
finds), runs ``make figures`` there (the install from pip's cache included) and prints, as a
Markdown table: the wall time of the whole command and of its install (``make venv``), the CPU
minutes of every process it started, the CPU seconds of Snakemake's own process (its share of the
CPU), the jobs Snakemake ran, the runs made (in the run store), how long ``make`` took to exit after
Snakemake's last job, the results folder's size and file count (and ``.snakemake/``'s), and the
exit code. The machine should be quiet: the numbers are its.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

#: the run store's folder in the clone (``vhct.pipeline.store.STORE``)
STORE = "results/runs"
#: a job's time stamp in Snakemake's log, "[Sat Nov 28 23:36:59 2026]", and its format
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", re.MULTILINE)
STAMP_FORMAT = "%a %b %d %H:%M:%S %Y"
#: how often Snakemake's own process is sampled for its CPU time (seconds)
SAMPLE_SECONDS = 1.0
#: the line of Snakemake's log (``.snakemake/log/``) that counts the jobs done: "488 of 488 steps (100%)"
STEPS = "steps ("


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` itself so far (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def snakemake_pids() -> list[int]:
    """The processes whose command line is Snakemake's main process (not its job scripts)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(part.endswith(b"bin/snakemake") for part in cmd[:2]) and b"--cores" in cmd:
            found.append(int(entry.name))
    return found


class SnakemakeCpu(threading.Thread):
    """Samples the CPU time of the Snakemake main processes while the command runs; the last sample
    of each is its own CPU (children excluded)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.last: dict[int, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(SAMPLE_SECONDS):
            for pid in snakemake_pids():
                seconds = cpu_seconds(pid)
                if seconds is not None:
                    self.last[pid] = seconds

    @property
    def seconds(self) -> float:
        return sum(self.last.values())


def count_runs(clone: Path) -> str:
    """The runs in the clone's run store (its batch files' records), counted by the clone's own
    package (this script runs outside its venv)."""
    code = (
        "import pathlib; from vhct.pipeline.store import STORE, read_batch; "
        "print(sum(len(read_batch(p).record.runs) for p in pathlib.Path(STORE).rglob('*.npz')))"
    )
    done = subprocess.run([".venv/bin/python", "-c", code], cwd=clone, capture_output=True, text=True)
    return done.stdout.strip() or "?"


def folder_size(path: Path) -> tuple[int, int]:
    """Bytes and files under ``path`` (0, 0 when absent)."""
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else []
    return sum(p.stat().st_size for p in files), len(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, default=Path("/tmp/vhct-quick-start"))
    parser.add_argument("--config", default="config/config.yaml")
    args = parser.parse_args(argv)
    repo = Path(__file__).resolve().parents[1]
    if args.clone.exists():
        shutil.rmtree(args.clone)
    subprocess.run(["git", "clone", "-q", str(repo), str(args.clone)], check=True)
    shared = repo.parent / "shared"
    if shared.is_dir() and not (args.clone.parent / "shared").exists():
        (args.clone.parent / "shared").symlink_to(shared)
    sampler = SnakemakeCpu()
    start = time.perf_counter()
    install = subprocess.run(["make", "venv"], cwd=args.clone, capture_output=True, text=True)
    installed = time.perf_counter() - start
    sampler.start()
    log = args.clone / "quick-start.log"
    with open(log, "w", encoding="utf-8") as out:
        code = subprocess.call(
            ["make", "figures", f"CONFIG={args.config}"], cwd=args.clone, stdout=out, stderr=subprocess.STDOUT
        )
    wall = time.perf_counter() - start
    ended = datetime.now()
    sampler.done.set()
    sampler.join()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    logs = sorted((args.clone / ".snakemake" / "log").glob("*.snakemake.log"))  # Snakemake's own log
    text = logs[-1].read_text(encoding="utf-8", errors="replace") if logs else ""
    steps = [line for line in text.splitlines() if STEPS in line]
    jobs = steps[-1].split(STEPS)[0].split()[-3:] if steps else ["?"]
    stamps = [datetime.strptime(m, STAMP_FORMAT) for m in STAMP.findall(text)]
    after_last = (ended - stamps[-1]).total_seconds() if stamps else float("nan")
    results = args.clone / "results"
    batches = len(list((args.clone / STORE).rglob("*.npz")))
    runs = count_runs(args.clone)
    size, files = folder_size(results)
    meta, meta_files = folder_size(args.clone / ".snakemake")
    rows = [
        ("exit code (make venv, make figures)", f"{install.returncode}, {code}"),
        ("wall time, install included", f"{wall / 60:.1f} min ({installed:.0f} s of it the install)"),
        ("CPU time of every process", f"{cpu / 60:.1f} CPU-min"),
        (
            "Snakemake's own process",
            f"{sampler.seconds:.0f} CPU-s ({100 * sampler.seconds / max(cpu, 1):.0f} %)",
        ),
        ("jobs done (Snakemake's last count)", " ".join(jobs)),
        ("runs (in the run store's batch files)", f"{runs} in {batches} files"),
        ("make's exit after Snakemake's last job", f"{after_last:.0f} s"),
        ("results/", f"{size / 1e6:.0f} MB in {files} files"),
        (".snakemake/", f"{meta / 1e6:.0f} MB in {meta_files} files"),
    ]
    print(f"`make figures CONFIG={args.config}` in a fresh clone ({os.cpu_count()} cores)\n")
    print("| what | measured |\n| --- | --- |")
    for what, value in rows:
        print(f"| {what} | {value} |")
    return 0 if install.returncode == code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
