"""How long ``make figures`` takes to exit after Snakemake's last job, and Snakemake's own CPU share.

    python benchmarks/make_exit.py [--scratch /tmp/vhct-make-exit] [--config config/tiny.yaml] [--keep]

Clones the checkout's HEAD into ``--scratch`` (the data mirror ``../shared/data`` beside it links to
the checkout's, as the Makefile looks for it), copies ``--config`` there and runs ``make figures
CONFIG=<the copy>`` twice with this interpreter's environment (``BIN``, no install): a complete run,
then after a one-line change of the copy (one setting's parameter: :data:`CHANGE`). For each it
prints, as a Markdown table: make's wall time, the seconds from Snakemake's last job (the last time
stamp of its log, "[Sat Nov 28 23:36:59 2026]", second resolution: ``benchmarks/quick_start.py``'s
``STAMP``) to make's exit, the jobs done, the CPU time of every process make started and that of
Snakemake's own process (sampled, children excluded) with its share, and the load average (the
machine may be shared: the wall times are its, the share and the exit delay much less so).
A test is no place for a wall-clock limit (issue 49 asks make to end within 10 s of the last job).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import psutil
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quick_start import SAMPLE_SECONDS, STAMP, STAMP_FORMAT, STEPS  # noqa: E402 (a script beside this one)

REPO = Path(__file__).resolve().parents[1]
#: the one-line change of the second run: a parameter of one setting (tiny.yaml's VHCT-rho0.25)
CHANGE = ("VHCT-rho0.25", "rho", 0.3)


class OwnSnakemakeCpu(threading.Thread):
    """Samples the CPU time (user + system, children excluded) of the Snakemake main processes that
    ``root`` started, not another user's: the last sample of each is its own CPU."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root, self.last, self.done = root, {}, threading.Event()

    def run(self) -> None:
        while not self.done.wait(SAMPLE_SECONDS):
            try:
                children = psutil.Process(self.root).children(recursive=True)
            except psutil.NoSuchProcess:
                return
            for proc in children:
                try:
                    cmd = proc.cmdline()
                    if any(part.endswith("bin/snakemake") for part in cmd[:2]) and "--cores" in cmd:
                        times = proc.cpu_times()
                        self.last[proc.pid] = times.user + times.system
                except psutil.Error:
                    continue

    @property
    def seconds(self) -> float:
        return sum(self.last.values())


def make_figures(clone: Path, config: Path, stamp: Path, log: Path) -> dict[str, str]:
    """``make figures CONFIG=config`` in ``clone``, measured."""
    env = {**os.environ, "PYTHONPATH": str(clone / "src")}
    env.pop("VHCT_DATA_MIRROR", None)  # the Makefile's ../shared/data
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        cmd = ["make", "figures", f"CONFIG={config}", f"BIN={Path(sys.executable).parent}", f"STAMP={stamp}"]
        proc = subprocess.Popen(cmd, cwd=clone, stdout=out, stderr=subprocess.STDOUT, env=env)
        sampler = OwnSnakemakeCpu(proc.pid)
        sampler.start()
        code = proc.wait()
    wall, ended = time.perf_counter() - start, datetime.now()
    sampler.done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    logs = sorted((clone / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime)
    text = logs[-1].read_text(encoding="utf-8", errors="replace") if logs else ""
    stamps = [datetime.strptime(m, STAMP_FORMAT) for m in STAMP.findall(text)]
    steps = [line for line in text.splitlines() if STEPS in line]
    return {
        "exit code": str(code),
        "wall time of make": f"{wall:.0f} s",
        "make's exit after Snakemake's last job": (
            f"{(ended - stamps[-1]).total_seconds():.0f} s" if stamps else "? (no job stamp)"
        ),
        "jobs done": " ".join(steps[-1].split(STEPS)[0].split()[-3:]) if steps else "0",
        "CPU time of every process": f"{cpu:.0f} CPU-s",
        "Snakemake's own process": f"{sampler.seconds:.0f} CPU-s ({100 * sampler.seconds / cpu:.0f} %)",
        "load average (1 min) at the start": f"{load:.1f} on {os.cpu_count()} cores",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/vhct-make-exit"))
    parser.add_argument("--config", type=Path, default=REPO / "config" / "tiny.yaml")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.scratch.exists():
        shutil.rmtree(args.scratch)
    args.scratch.mkdir(parents=True)
    clone = args.scratch / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (args.scratch / "shared").symlink_to(shared)
    config = clone / f"{args.config.stem}-copy.yaml"
    shutil.copyfile(args.config, config)
    stamp = args.scratch / "venv.stamp"
    stamp.touch()
    first = make_figures(clone, config, stamp, args.scratch / "first.log")
    setting, key, value = CHANGE
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["settings"][setting]["params"][key] = value
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    second = make_figures(clone, config, stamp, args.scratch / "second.log")
    print(f"`make figures CONFIG={args.config.name} copy` in a clone of HEAD, twice\n")
    print(f"| what | complete run | after `{setting}: {key}: {value}` |\n| --- | --- | --- |")
    for what in first:
        print(f"| {what} | {first[what]} | {second[what]} |")
    if not args.keep:
        shutil.rmtree(args.scratch)
    return 0 if first["exit code"] == second["exit code"] == "0" else 1


if __name__ == "__main__":
    sys.exit(main())
