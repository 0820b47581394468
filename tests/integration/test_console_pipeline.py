"""`make figures`' console on the tiny pipeline: no line wider than the terminal, progress with the
time left, and the detail (each job's reason, input and output) in Snakemake's full log.

The Snakemake command is the Makefile's (``make -n figures TARGETS=...``), run on one aggregate of the tiny
config (its job's reason lists every batch file of runs it reads: a line far wider than a terminal), and
compared with Snakemake's own console (the same command with ``CONSOLE=``).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from support import REPO, SNAKEMAKE, TINY, clean_env, set_umask

from vhct.pipeline import config as vc
from vhct.pipeline.store import STORE

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")

WIDTH = 80
TARGET = "results/tiny/aggregates/garland/regret.csv"  # config/tiny.yaml's folder
PROGRESS = re.compile(r"\d+/\d+ done \(\d+%\), (about .+ left|all done|time left: estimating)")
FULL_LOG = re.compile(r"^Full log: (\S+\.snakemake\.log)$", re.MULTILINE)


def makefile_snakemake(*make_args: str) -> list[str]:
    """The arguments `make figures TARGETS=...` passes Snakemake (its run, not the --unlock), the binary
    dropped: the target stays a target (an option taking several words before it would eat it)."""
    done = subprocess.run(
        ["make", "-C", str(REPO), "-n", "figures", f"CONFIG={TINY}", f"TARGETS={TARGET}", *make_args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    calls = [shlex.split(line) for line in done.stdout.splitlines()]
    calls = [call for call in calls if call and call[0].endswith("snakemake")]
    (call,) = [c for c in calls if "--unlock" not in c]
    return call[1:]


def console_of(workdir: Path, options: list[str]) -> str:
    """Everything the run printed (stdout and stderr), with a terminal WIDTH columns wide."""
    command = [SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *options]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=set_umask,
        env={**clean_env(), "COLUMNS": str(WIDTH)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_the_default_console_fits_the_terminal_and_the_full_log_keeps_the_detail(tmp_path):
    options = makefile_snakemake()
    assert "--logger" in options
    console = console_of(tmp_path / "ours", options)
    lines = console.splitlines()
    assert max(map(len, lines)) <= WIDTH, max(lines, key=len)
    progress = [line for line in lines if PROGRESS.search(line)]
    assert any("left" in line and "estimating" not in line for line in progress), console
    done = re.search(r"(\d+)/(\d+) done \(100%\), all done", progress[-1])
    assert done and done[1] == done[2], progress[-1]

    work = tmp_path / "ours"
    (log,) = set(FULL_LOG.findall(console))
    detail = (work / log).read_text().splitlines()
    reasons = [line for line in detail if line.strip().startswith("reason:")]
    assert len(reasons) == int(done[2]) and max(map(len, reasons)) > WIDTH  # every job's reason, in full
    # the aggregate's input: every batch file of Garland in the run store, and its spec file
    (inputs,) = [line for line in detail if line.strip().startswith(f"input: {STORE}/garland/")]
    batches = sorted({p for paths in vc.load([TINY])[0].run_paths("garland").values() for p in paths})
    assert batches and all(path in inputs and (work / path).is_file() for path in batches)


def test_snakemakes_own_console_prints_the_lines_ours_keeps_in_the_log(tmp_path):
    """The probe: without the plugin (CONSOLE=) the same run prints lines far wider than a terminal."""
    options = makefile_snakemake("CONSOLE=")
    assert "--logger" not in options
    console = console_of(tmp_path / "theirs", options)
    assert max(map(len, console.splitlines())) > WIDTH
    assert not PROGRESS.search(console)
