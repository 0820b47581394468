"""Provenance of a whole pipeline run: what ran, on which commit and machine, and how long it took.

    python -m vhct.pipeline.provenance results/paper-local/provenance.json -- snakemake --cores 2 \
        --configfile config/paper-local.yaml

runs the command and, when it succeeds, writes a JSON record of it (``make paper-local`` does
this). The findings document (``vhct.reporting.findings``) prints the record; the wall time in
it is that of the command, data download included.

The record identifies the run, so that ``make findings`` ships the outputs of this run only: a run
id (also given to the command's jobs as ``$VHCT_RUN_ID``), its start and end, the config files it
read (bases first, as ``vhct.pipeline.config.load`` reads them) with the sha256 of each at the
start, and the figures the config declares; the versions of the packages that shape the numbers
(``vhct.pipeline.versions``); the peak resident memory of the command's largest process
(``max_rss_mb``: the largest ``ru_maxrss`` of the processes it waited for, jobs included,
``getrusage(RUSAGE_CHILDREN)``; one process's, not the sum of jobs that ran at once); and, when the
command has ended, the sha256 of every output it made (``output_sha256``: the audit JSON, its
verdict table and the aggregates under the results folder, the declared figures' PNGs, each only if
written after the command started), so ``ship`` ships exactly the content this run made, and refuses
an output the run did not make: a recorder wrapped around a rerun that had nothing to do records no
output, not the older run's.
The results folder is the record's; the figures folder the config's (``figures/paper-local`` for
``config/paper-local.yaml``, see ``Config.folder``).

The record is typed (:class:`Provenance`): :func:`record` is its one writer, :func:`read_provenance`
its one reader, which refuses a missing, unknown or malformed field in one line naming the file.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vhct.pipeline.config import DEFAULT_CONFIG, ConfigError, load
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.pipeline.files import atomic_paths, display_path, sha256
from vhct.pipeline.layout import AUDIT_JSON, FIGURES_ROOT, VERDICTS_CSV, ResultsFolder
from vhct.pipeline.versions import package_versions

#: environment variable carrying the run id to the command's jobs
RUN_ID_ENV = "VHCT_RUN_ID"
#: the outputs under the results folder whose content the record fixes
RESULT_OUTPUTS = (
    AUDIT_JSON,
    VERDICTS_CSV,
    ResultsFolder("").aggregate("*", "*.csv"),
    ResultsFolder("").setting_table("*", "*", "*.csv"),
)
#: what makes every recorded output again (aggregates, figures, the audit and its figures) without
#: redoing the runs, under the recorder, for a record that does not cover them (``ship`` says it)
REMAKE_OUTPUTS = (
    "make paper-local TARGETS='--forcerun aggregate aggregate_setting figure audit audit_forest "
    "audit_summary'"
)


#: a sha256 as the record writes it: 64 lowercase hex digits
SHA256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class ProvenanceError(ValueError):
    """A provenance record that cannot be read: the message names the file and the field."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Machine(_Record):
    """The machine a run ran on."""

    host: str
    cpus: int | None
    cpu_model: str
    system: str
    python: str


class Outputs(_Record):
    """The sha256 of every output the run made: under its results folder (path -> hash) and its
    figures' PNGs (file name -> hash)."""

    results: dict[str, SHA256]
    figures: dict[str, SHA256]


class Provenance(_Record):
    """The provenance record of a finished run (``provenance.json``)."""

    run_id: str
    command: str
    config_files: list[str]
    config_sha256: dict[str, SHA256]
    figures: list[str]
    commit: str | None
    uncommitted_changes: bool | None
    #: ISO 8601 times, to the second
    started_utc: str
    finished_utc: str
    wall_seconds: float = Field(ge=0, allow_inf_nan=False)
    machine: Machine
    versions: dict[str, str | None]
    #: the peak resident memory of the run's largest process, MB (None: not recorded)
    max_rss_mb: float | None = Field(ge=0, allow_inf_nan=False)
    output_sha256: Outputs

    @field_validator("config_sha256")
    @classmethod
    def _every_file_hashed(cls, value: dict[str, str], info: Any) -> dict[str, str]:
        files = info.data.get("config_files")
        if files is not None and sorted(value) != sorted(files):
            raise ValueError(f"hashes config files {sorted(value)}, the record names {files}")
        return value

    @field_validator("started_utc", "finished_utc")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        datetime.fromisoformat(value)  # a ValueError names what it cannot read
        return value

    def json_text(self) -> str:
        """The record as its file holds it."""
        return self.model_dump_json(indent=2) + "\n"


def read_provenance(path: Path | str) -> Provenance:
    """The one reader of a provenance record (validated; errors name the file and the field)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise ProvenanceError(f"{path}: cannot read the provenance record ({exc})") from exc
    try:
        return Provenance.model_validate_json(text)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'/'.join(str(p) for p in e['loc']) or 'record'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ProvenanceError(f"{path}: not a provenance record: {problems}") from exc


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def commit_state() -> tuple[str | None, bool | None]:
    """The checkout's commit (git HEAD) and whether tracked files differ from it (None outside git)."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return _git("rev-parse", "HEAD"), bool(status) if status is not None else None


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


def config_record(files: Sequence[Path | str]) -> dict[str, Any]:
    """The config files a run reads (bases first) with the sha256 of each, and the figures it declares.

    No file given: the default config, as the workflow reads it. Raises ``ConfigError`` for an
    invalid config (the command would fail on it too).
    """
    # (after the command: a confirmatory config's plan was checked when it ran; its figures need no seeds)
    cfg, paths = load(files or [DEFAULT_CONFIG], plan=False)
    return {
        "config_files": [display_path(p) for p in paths],
        "config_sha256": {display_path(p): sha256(p) for p in paths},
        "figures": [*cfg.figures, *AUDIT_FIGURES],
    }


def output_hashes(
    results: Path | str, figures: Path | str, names: Sequence[str], since_ns: int | None = None
) -> dict[str, dict[str, str]]:
    """The sha256 of a run's outputs that exist: ``{"results": {path under results: hash},
    "figures": {"<name>.png": hash}}`` for the audit JSON and verdict table, the aggregates and the
    figures ``names``; with ``since_ns`` (a modification time, :func:`start_mark`), only those written
    since."""
    results, figures = Path(results), Path(figures)

    def made(path: Path) -> bool:
        return path.is_file() and (since_ns is None or path.stat().st_mtime_ns >= since_ns)

    found = sorted({p for pattern in RESULT_OUTPUTS for p in results.glob(pattern) if made(p)})
    pngs = [figures / f"{name}.png" for name in names if made(figures / f"{name}.png")]
    return {
        "results": {p.relative_to(results).as_posix(): sha256(p) for p in found},
        "figures": {p.name: sha256(p) for p in pngs},
    }


def start_mark(folder: Path | str) -> int:
    """The modification time a file written in ``folder`` now gets (the file system's clock, which
    may lag the system's by a tick): outputs with a time at or after it were written after now."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=".provenance-start-", dir=folder)
    try:
        os.close(handle)
        return os.stat(name).st_mtime_ns
    finally:
        os.unlink(name)


def figures_folder(files: Sequence[Path | str]) -> Path:
    """The folder the config of ``files`` (the command's; none: the default) writes its figures to."""
    return Path(load(files or [DEFAULT_CONFIG], plan=False)[0].folder(FIGURES_ROOT))


def run_id(started: datetime) -> str:
    """The run's identity: its start to the microsecond and the recorder's process id."""
    return f"{started:%Y%m%dT%H%M%S.%fZ}-{os.getpid()}"


def record(
    command: Sequence[str],
    started: datetime,
    wall_seconds: float,
    config: Mapping[str, Any] | None = None,
    run: str | None = None,
    outputs: Mapping[str, Mapping[str, str]] | None = None,
    max_rss_mb: float | None = None,
    checkout: tuple[str | None, bool | None] | None = None,
) -> Provenance:
    """The provenance record of a finished command (``config``: its :func:`config_record`;
    ``outputs``: its :func:`output_hashes`, none when not given; ``max_rss_mb``: its largest
    process's peak resident memory, :func:`children_peak_mb`; ``checkout``: the
    :func:`commit_state` as the command started, read now when not given)."""
    commit, dirty = checkout if checkout is not None else commit_state()
    config = dict(config) if config is not None else config_record(config_files(command))
    return Provenance(
        run_id=run or run_id(started),
        command=shlex.join(command),
        **config,
        commit=commit,
        uncommitted_changes=dirty,
        started_utc=started.isoformat(timespec="seconds"),
        finished_utc=(started + timedelta(seconds=wall_seconds)).isoformat(timespec="seconds"),
        wall_seconds=round(wall_seconds, 1),
        machine=Machine(
            host=platform.node(),
            cpus=os.cpu_count(),
            cpu_model=cpu_model(),
            system=f"{platform.system()} {platform.release()}",
            python=platform.python_version(),
        ),
        versions=package_versions(),
        max_rss_mb=None if max_rss_mb is None else round(max_rss_mb, 1),
        output_sha256=Outputs(**outputs) if outputs is not None else Outputs(results={}, figures={}),
    )


def children_peak_mb() -> float:
    """The largest peak resident memory, in MB, of the processes this one has waited for (each
    waited-for process's own includes the processes it waited for): Linux gives KiB, macOS bytes."""
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak / (2**20 if sys.platform == "darwin" else 2**10)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command after ``--``; on success write its provenance record to OUT."""
    parser = argparse.ArgumentParser(prog="python -m vhct.pipeline.provenance", description=main.__doc__)
    parser.add_argument("out", type=Path, help="provenance JSON to write")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given after --")
    try:  # the config as the run starts (an edit during the run does not change the record)
        config = config_record(config_files(command))
        figures = figures_folder(config_files(command))
    except ConfigError as exc:
        print(f"provenance: {exc}", file=sys.stderr)
        return 1
    checkout = commit_state()  # the commit the run starts on (a commit during the run is not it)
    since = start_mark(args.out.parent)
    started = datetime.now(UTC)
    run = run_id(started)
    start = time.perf_counter()
    code = subprocess.call(command, env={**os.environ, RUN_ID_ENV: run})
    wall = time.perf_counter() - start
    if code != 0:
        print(f"provenance: the command failed (exit {code}); {args.out} not written", file=sys.stderr)
        return code
    args.out.parent.mkdir(parents=True, exist_ok=True)
    outputs = output_hashes(args.out.parent, figures, config["figures"], since)
    prov = record(command, started, wall, config, run, outputs, children_peak_mb(), checkout)
    with atomic_paths(args.out) as (tmp,):
        tmp.write_text(prov.json_text(), encoding="utf-8")
    made = sum(map(len, outputs.values()))
    print(f"provenance: {wall:.0f} s; record in {args.out}, of the {made} output(s) the command made")
    if not made:
        print(
            "provenance: the command made no audit, aggregate or figure (nothing to do?): `ship` "
            f"refuses this record; to make them again under the recorder: `{REMAKE_OUTPUTS}`",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
