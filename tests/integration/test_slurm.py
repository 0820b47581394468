"""The tiny pipeline through Snakemake's SLURM executor on a one-node cluster on this machine.

scripts/slurm/local-cluster.sh starts the cluster (munge, MariaDB, slurmdbd, slurmctld,
slurmd, on 127.0.0.1) in a private state directory; the test runs the pipeline with the
workflow/profiles/slurm-local profile, interrupts it while cluster jobs are in flight,
runs it again, and checks that the second run completes every figure without redoing
the runs the first one finished and that sacct lists its jobs as COMPLETED. The cluster
is stopped afterwards whatever happened. The real-data experiments of the tiny config read
fixture data files, as in tests/integration/test_pipeline.py. Skipped where SLURM cannot be installed (not
root, no apt-get or no package access) or the machine has its own SLURM configuration.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import REPO, clean_env, fixture_config, interruptible  # the tiny config on fixture data files

from vhct.pipeline import config as vc
from vhct.pipeline.store import BATCH_SUFFIX, STORE, StoreError, read_batch

pytestmark = pytest.mark.slurm

CLUSTER = REPO / "scripts" / "slurm" / "local-cluster.sh"
PROFILE = REPO / "workflow" / "profiles" / "slurm-local"
DEFAULT_CONF = Path("/etc/slurm/slurm.conf")
#: ports of the test cluster, apart from the defaults a developer's own test cluster uses
PORTS = {
    "VHCT_SLURM_CTLD_PORT": "16817",
    "VHCT_SLURM_SLURMD_PORT": "16818",
    "VHCT_SLURM_DBD_PORT": "16819",
    "VHCT_SLURM_DB_PORT": "13316",
}
#: a guard against a hung pipeline (e.g. jobs the cluster can never schedule), not a speed limit
HANG_GUARD_SECONDS = 3600
#: how long cancelled jobs may take to leave the queue after an interrupt
CANCEL_GRACE_SECONDS = 60
#: seconds between looks at the first run's log while waiting for the moment to interrupt it
POLL_SECONDS = 1.0
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+)")
FINISHED_RUN = re.compile(r"Finished jobid: \d+ \(Rule: run(_first)?\)")
#: squeue reasons of a job that can never start on the cluster
UNSCHEDULABLE = {"PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit", "BadConstraints"}
PNG_MAGIC = b"\x89PNG"
PDF_MAGIC = b"%PDF"


def _cluster(command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run one local-cluster.sh command; the caller judges the outcome."""
    return subprocess.run(
        [str(CLUSTER), command],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )


def _checked(command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run one local-cluster.sh command and fail the test, with its output, if it fails."""
    done = _cluster(command, env)
    if done.returncode != 0:
        pytest.fail(f"local-cluster.sh {command} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def _steps_of(state: Path) -> list[int]:
    """slurmstepd processes whose working directory or open files are in the cluster's spool."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if proc.joinpath("comm").read_text().strip() != "slurmstepd":
                continue
            links = [os.readlink(proc / "cwd")] + [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            continue
        if any(link.startswith(str(state)) for link in links):
            pids.append(int(proc.name))
    return pids


def _remove_link_of_a_killed_test_run() -> None:
    """A test run killed before its teardown leaves the cluster's /etc/slurm/slurm.conf link into its
    pytest folder; with no SLURM daemon running, that link is ours and goes (else every later run of
    this test would skip, taking it for the machine's own SLURM)."""
    if not DEFAULT_CONF.is_symlink() or "/pytest-of-" not in os.readlink(DEFAULT_CONF):
        return
    daemons = {"slurmctld", "slurmd", "slurmdbd"}
    running = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            running += [comm] if comm.read_text().strip() in daemons else []
        except OSError:
            continue
    if not running:
        DEFAULT_CONF.unlink()


@pytest.fixture(scope="module")
def slurm_env(tmp_path_factory):
    """Environment of a running one-node cluster; the cluster is stopped at the end, always."""
    if os.geteuid() != 0:
        pytest.skip("the local SLURM cluster needs root (it runs munge, MariaDB and the SLURM daemons)")
    _remove_link_of_a_killed_test_run()
    if DEFAULT_CONF.exists() or DEFAULT_CONF.is_symlink():
        pytest.skip(
            f"{DEFAULT_CONF} exists: this machine has its own SLURM configuration (or a test "
            "cluster is running: scripts/slurm/local-cluster.sh stop)"
        )
    state = tmp_path_factory.mktemp("slurm")
    env = {
        **clean_env(),
        **PORTS,
        "VHCT_SLURM_DIR": str(state),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    install = _cluster("install", env)
    if install.returncode != 0:
        pytest.skip(f"cannot install SLURM here (no package access?): {install.stderr.strip()[-500:]}")
    try:
        _checked("start", env)
        env["SLURM_CONF"] = str(state / "etc" / "slurm.conf")
        yield env
    finally:
        stop = _cluster("stop", env)
        status = _cluster("status", env)
        leftovers = _steps_of(state)
        for pid in leftovers:
            os.kill(pid, signal.SIGKILL)
        assert stop.returncode == 0, stop.stderr
        assert "running" not in status.stdout, status.stdout
        assert not leftovers, f"slurmstepd processes survived the cluster: {leftovers}"
        assert not DEFAULT_CONF.is_symlink(), f"{DEFAULT_CONF} was left behind"


def _snakemake(workdir: Path, configfile: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--profile",
        str(PROFILE),
        "--configfile",
        str(configfile),
        "--directory",
        str(workdir),
    ]


def _sacct_states(env: dict[str, str], job_ids: list[str]) -> dict[str, str]:
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-o", "JobID,State", "-j", ",".join(job_ids)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(line.split("|", 1) for line in out.splitlines() if line.strip())


def _queue(env: dict[str, str]) -> list[tuple[str, str]]:
    """(job id, pending reason or state) of the cluster's queued and running jobs."""
    out = subprocess.run(
        ["squeue", "-h", "-o", "%i|%r"], env=env, capture_output=True, text=True, check=True
    ).stdout
    return [tuple(line.split("|", 1)) for line in out.splitlines() if line.strip()]


def _pipeline(command: list[str], env: dict[str, str], log: Path, interrupt: bool) -> tuple[int, str]:
    """Run the pipeline to its end, or SIGINT it once a run job finished while others are queued.

    Fails at once if the cluster holds a job it can never start (it would wait forever).
    """
    with log.open("w") as out:
        proc = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=interruptible
        )
        try:
            deadline = time.monotonic() + HANG_GUARD_SECONDS
            while proc.poll() is None and time.monotonic() < deadline:
                queue = _queue(env)
                stuck = [job for job, reason in queue if reason in UNSCHEDULABLE]
                assert not stuck, f"jobs the cluster cannot run: {queue}\n{log.read_text()[-3000:]}"
                if interrupt and queue and FINISHED_RUN.search(log.read_text()):
                    proc.send_signal(signal.SIGINT)
                    interrupt = False
                time.sleep(POLL_SECONDS)
            proc.wait(timeout=HANG_GUARD_SECONDS)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return proc.returncode, log.read_text()


def _complete(batch: Path) -> bool:
    """A batch file of runs is complete when its reader takes it (records and arrays whole, the arrays
    the ones its record hashes)."""
    try:
        read_batch(batch)
    except StoreError:
        return False
    return True


def test_tiny_pipeline_on_slurm_resumes_after_interrupt(slurm_env, tmp_path):
    if shutil.which("sacct", path=slurm_env["PATH"]) is None:
        pytest.fail("sacct is missing although the cluster started")
    workdir = tmp_path / "work"
    tiny = fixture_config(tmp_path / "fixtures")
    command = _snakemake(workdir, tiny)

    code, first = _pipeline(command, slurm_env, tmp_path / "first.log", interrupt=True)
    first_ids = SUBMITTED.findall(first)
    assert first_ids, f"the first run submitted no cluster job:\n{first[-3000:]}"
    assert code != 0 and "Terminating processes on user request" in first, "the first run was not interrupted"
    deadline = time.monotonic() + CANCEL_GRACE_SECONDS
    while (pending := _queue(slurm_env)) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    assert not pending, f"cluster jobs outlived the interrupted run: {pending}"
    kept = {p: p.stat().st_mtime_ns for p in workdir.glob(f"{STORE}/**/*{BATCH_SUFFIX}")}
    assert kept, "no run finished before the interrupt"
    partial = [str(p) for p in kept if not _complete(p)]
    assert not partial, f"partial outputs after the interrupt: {partial}"

    code, log = _pipeline(command, slurm_env, tmp_path / "second.log", interrupt=False)
    assert code == 0, log[-5000:]
    redone = [str(p) for p, mtime in kept.items() if p.stat().st_mtime_ns != mtime]
    assert not redone, f"the second run redid finished runs: {redone}"

    cfg, _ = vc.load([tiny])
    for figure in cfg.figures:
        for ext, magic in (("pdf", PDF_MAGIC), ("png", PNG_MAGIC)):
            path = workdir / "figures" / f"{figure}.{ext}"
            assert path.is_file(), f"missing figure {path}"
            assert path.read_bytes()[: len(magic)] == magic, f"{path} is not a {ext.upper()} file"
    batches = list(workdir.glob(f"{STORE}/**/*{BATCH_SUFFIX}"))
    assert sorted(str(p.relative_to(workdir)) for p in batches) == sorted(cfg.batch_jobs())
    assert all(_complete(p) for p in batches)

    second_ids = SUBMITTED.findall(log)
    assert second_ids, "the second run submitted no cluster job"
    states = _sacct_states(slurm_env, second_ids)
    assert set(states) == set(second_ids), f"sacct misses jobs: {set(second_ids) - set(states)}"
    assert all(state == "COMPLETED" for state in states.values()), states
    first_states = _sacct_states(slurm_env, first_ids)
    assert all(state == "COMPLETED" or state.startswith("CANCELLED") for state in first_states.values()), (
        first_states
    )
