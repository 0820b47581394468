"""Is Snakemake's lock on a working directory stale, i.e. left by a killed Snakemake?

Snakemake locks its working directory (``.snakemake/locks``) while it runs and removes the
lock when it ends, also after Ctrl-C. A Snakemake killed outright (SIGKILL, out of memory,
a lost session) leaves the lock, and every later run stops with ``LockException`` until
``snakemake --unlock``. Unlocking is safe only if no Snakemake works in the directory any
more; this module checks that on this machine, so that ``make figures`` can clear a stale
lock by itself::

    python -m vhct.pipeline.workdir_lock [DIR]
    # exit 0: stale lock (clear it), 1: no lock, 2: in use or unknown

It cannot see processes on other machines: when another machine may run the pipeline in the
same directory (a shared file system), run Snakemake directly and unlock by hand.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

#: where Snakemake's (file-based) persistence keeps its locks, relative to the working directory
LOCK_DIR = Path(".snakemake") / "locks"
#: a process belongs to a Snakemake run if one of its command-line words contains this
#: (Snakemake itself and the job scripts it starts, ``.snakemake/scripts/...``)
SNAKEMAKE_WORD = "snakemake"
#: exit codes of the command line
STALE, NO_LOCK, IN_USE = 0, 1, 2


def lock_files(workdir: Path | str) -> list[Path]:
    """Snakemake's lock files in ``workdir`` (empty: not locked)."""
    folder = Path(workdir) / LOCK_DIR
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def snakemake_processes(workdir: Path | str) -> list[tuple[int, str]]:
    """Processes of this machine that may be a Snakemake run in ``workdir``: ``(pid, command line)``.

    A process counts if its command line mentions Snakemake and its working directory is
    ``workdir``, or cannot be read (another user's process: assumed to be in ``workdir``).
    This process and its ancestors (``make``, the shell) are left out.
    """
    import psutil  # a dependency of Snakemake

    target = Path(workdir).resolve()
    me = psutil.Process()
    skip = {me.pid, *(p.pid for p in me.parents())}
    found = []
    for proc in psutil.process_iter():
        if proc.pid in skip:
            continue
        try:
            cmdline = proc.cmdline()
            if not any(SNAKEMAKE_WORD in word for word in cmdline) or proc.status() == psutil.STATUS_ZOMBIE:
                continue
            try:
                cwd = Path(proc.cwd()).resolve()
            except psutil.AccessDenied:
                cwd = target
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        except psutil.AccessDenied:
            cmdline, cwd = ["<command line not readable>"], target
        if cwd == target:
            found.append((proc.pid, " ".join(cmdline)))
    return found


def check(workdir: Path | str) -> tuple[int, str]:
    """The exit code (STALE, NO_LOCK or IN_USE) and a message for the user."""
    locks = lock_files(workdir)
    if not locks:
        return NO_LOCK, f"{workdir}: not locked"
    try:
        alive = snakemake_processes(workdir)
    except Exception as exc:  # noqa: BLE001 - cannot tell, so the lock stays
        return IN_USE, f"{workdir}: locked; could not list processes ({exc}), leaving the lock"
    if alive:
        listed = "; ".join(f"pid {pid}: {cmd[:120]}" for pid, cmd in alive)
        return IN_USE, (
            f"{workdir}: locked by a Snakemake run still working here ({listed}); "
            "wait for it to end or stop it (Ctrl-C)"
        )
    return STALE, (
        f"{workdir}: stale Snakemake lock ({len(locks)} lock files) and no Snakemake process of this "
        "machine works here: a killed run left it"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: report on the lock of a working directory (default: the current one)."""
    parser = argparse.ArgumentParser(
        prog="python -m vhct.pipeline.workdir_lock", description=__doc__.splitlines()[0]
    )
    parser.add_argument("workdir", nargs="?", default=os.curdir, type=Path)
    code, message = check(parser.parse_args(argv).workdir)
    if code != NO_LOCK:
        print(message, file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
