"""A console a person can read: Snakemake's logger plugin of this project (``snakemake --logger vhct``).

Snakemake's own console prints every job's input, output and "reason" in full (single lines of
hundreds of kilobytes on the paper's configs) and its progress as "N of M steps". This plugin
prints, instead, one line per started job and one per finished job with the jobs done and an
estimate of the time left, every line cut to the terminal's width (``COLUMNS``, else the
terminal's, else 80); errors and warnings are wrapped, not cut, up to ``MAX_MESSAGE_LINES``
lines. A cut is marked "…", or "..." where the output's encoding cannot hold it
(``PYTHONIOENCODING=ascii``); any other character the encoding cannot hold is written as "?", so
no line is lost to an encoding error (:class:`Output`). The full detail stays where Snakemake
writes it: its log file ``.snakemake/log/<date>.snakemake.log`` (named on the console at the start
and at the end) and each job's own log under ``logs/``. Snakemake finds the plugin by its module name
(``snakemake_logger_plugin_<name>``); the Makefile passes ``--logger vhct``.
"""

from __future__ import annotations

import codecs
import logging
import re
import shutil
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent

from vhct import durations

#: width when neither COLUMNS nor a terminal says otherwise
DEFAULT_WIDTH = 80
#: lines of one error or warning shown before pointing to the full log
MAX_MESSAGE_LINES = 30
#: marks a line cut to the width
ELLIPSIS = "…"
#: marks a cut where the output's encoding cannot hold ELLIPSIS
ASCII_ELLIPSIS = "..."
#: the encoding assumed of a stream that names none (a text buffer holds any character)
DEFAULT_ENCODING = "utf-8"
#: Snakemake messages repeated at every scheduling round that say nothing to a person
NOISE = ("Select jobs to execute...",)
#: numbered rules of one family (run_garland_batch0, run_garland_batch1, ...) count together
FAMILY = re.compile(r"\d+$")
#: the logger Snakemake's own file handler (``.snakemake/log``) is attached to
SNAKEMAKE_LOGGER = "snakemake.logging"


def family(rule: str) -> str:
    """The rule's family: its name with a trailing number replaced by ``*`` (batches count together)."""
    return FAMILY.sub("*", rule)


def duration(seconds: float) -> str:
    """A short human duration, the project's one formatter (``vhct.durations``): ``45 s``,
    ``12 min``, ``2 h 05 min``; a negative one (clocks of two processes) is 0 s."""
    return durations.duration(max(seconds, 0.0))


def clip(line: str, width: int, mark: str = ELLIPSIS) -> str:
    """``line`` cut to ``width`` characters, the cut marked by ``mark``."""
    return line if len(line) <= width else line[: width - len(mark)] + mark


@dataclass(frozen=True)
class Output:
    """What a text stream's encoding can hold: the one place the console's characters are fitted to it.

    ``encoding`` is the codec of ``stream.encoding`` (``DEFAULT_ENCODING`` when it names none; an
    encoding Python does not know is taken for ASCII, which every encoding holds).
    """

    encoding: str

    @classmethod
    def of(cls, stream: TextIO) -> Output:
        name = getattr(stream, "encoding", None) or DEFAULT_ENCODING
        try:
            return cls(codecs.lookup(name).name)
        except LookupError:
            return cls("ascii")

    def holds(self, text: str) -> bool:
        """Whether the encoding can write every character of ``text``."""
        return self.fitted(text) == text

    def fitted(self, text: str) -> str:
        """``text`` with every character the encoding cannot write replaced by the codec's "?"."""
        return text.encode(self.encoding, errors="replace").decode(self.encoding, errors="replace")

    @property
    def ellipsis(self) -> str:
        """The mark of a cut line: ``ELLIPSIS`` if the encoding holds it, else ``ASCII_ELLIPSIS``."""
        return ELLIPSIS if self.holds(ELLIPSIS) else ASCII_ELLIPSIS


def terminal_width() -> int:
    """COLUMNS, else the terminal's width, else ``DEFAULT_WIDTH``."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


@dataclass
class Running:
    """A job under way: its rule and when it started (the record's time)."""

    rule: str
    label: str
    started: float


@dataclass
class Progress:
    """Jobs planned and done, the time each finished job took, and the estimate of the time left.

    The estimate: the remaining jobs of each rule family times that family's mean duration so far
    (a family with none finished yet: the mean of every finished job), less what the running jobs
    have already spent, divided by the mean number of jobs that ran at once.
    """

    planned: dict[str, int] = field(default_factory=dict)
    done: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    running: dict[int, Running] = field(default_factory=dict)
    first_start: float | None = None
    busy: float = 0.0  # integral of the number of running jobs over time
    last_change: float | None = None

    def _advance(self, now: float) -> None:
        if self.last_change is not None:
            self.busy += len(self.running) * (now - self.last_change)
        self.last_change = now

    def start(self, jobid: int, rule: str, label: str, now: float) -> None:
        self._advance(now)
        self.first_start = now if self.first_start is None else self.first_start
        self.running[jobid] = Running(rule, label, now)

    def finish(self, jobid: int, now: float) -> Running | None:
        self._advance(now)
        job = self.running.pop(jobid, None)
        if job is not None:
            key = family(job.rule)
            self.done[key] = self.done.get(key, 0) + 1
            self.seconds[key] = self.seconds.get(key, 0.0) + now - job.started
        return job

    def time_left(self, now: float) -> float | None:
        """Seconds left by the estimate, or None before the first job finished."""
        finished = sum(self.done.values())
        if not finished or self.first_start is None or now <= self.first_start:
            return None
        overall = sum(self.seconds.values()) / finished

        def mean(key: str) -> float:
            return self.seconds[key] / self.done[key] if self.done.get(key) else overall

        work = sum(max(count - self.done.get(key, 0), 0) * mean(key) for key, count in self.planned.items())
        work -= sum(min(now - job.started, mean(family(job.rule))) for job in self.running.values())
        busy = self.busy + len(self.running) * (now - (now if self.last_change is None else self.last_change))
        at_once = max(busy / (now - self.first_start), 1.0)
        return max(work, 0.0) / at_once


class Console:
    """Turns Snakemake's log records into the short lines of this console (pure: no I/O)."""

    def __init__(
        self, width: int, dryrun: bool = False, printshellcmds: bool = False, ellipsis: str = ELLIPSIS
    ) -> None:
        self.width = width
        self.ellipsis = ellipsis
        self.dryrun = dryrun
        self.printshellcmds = printshellcmds
        self.progress = Progress()
        self.full_log: str | None = None
        self.last_finished: str | None = None  # the job whose end the next progress line reports

    def _clip(self, *lines: str) -> list[str]:
        return [clip(line, self.width, self.ellipsis) for line in lines]

    def _wrapped(self, text: str) -> list[str]:
        """An error or warning in full, wrapped to the width, up to MAX_MESSAGE_LINES lines."""
        lines = [
            piece
            for line in text.rstrip().splitlines()
            for piece in (
                textwrap.wrap(line, self.width, subsequent_indent="  ", break_on_hyphens=False) or [""]
            )
        ]
        if len(lines) > MAX_MESSAGE_LINES:
            rest = len(lines) - MAX_MESSAGE_LINES
            where = self.full_log or "the log"
            lines = lines[:MAX_MESSAGE_LINES] + self._wrapped(f"... {rest} more lines in {where}")
        return lines

    @staticmethod
    def _stamp(record: logging.LogRecord) -> str:
        return time.strftime("%H:%M:%S", time.localtime(record.created))

    @staticmethod
    def _label(rule: str, wildcards: dict | None) -> str:
        values = "/".join(str(v) for v in (wildcards or {}).values())
        return f"{rule} {values}" if values else rule

    def lines(self, record: logging.LogRecord) -> list[str]:
        """The console lines of one record (none for what only the full log needs)."""
        event = getattr(record, "event", None)
        message = record.getMessage() if record.msg is not None else ""
        if event == LogEvent.WORKFLOW_STARTED:
            return self._clip(f"Full log: {self.full_log}") if self.full_log else []
        if event == LogEvent.RUN_INFO:
            return self._plan(getattr(record, "stats", {}) or {})
        if event == LogEvent.JOB_INFO:
            return self._job_info(record)
        if event == LogEvent.SHELLCMD:
            command = getattr(record, "shellcmd", None)
            return self._clip(f"  $ {command}") if self.printshellcmds and command else []
        if event == LogEvent.JOB_FINISHED:
            job = self.progress.finish(int(record.job_id), record.created)
            took = None if job is None else duration(record.created - job.started)
            self.last_finished = None if job is None else f"{job.label} ({took})"
            return []
        if event == LogEvent.PROGRESS:
            return self._progress(record)
        if event in (LogEvent.JOB_ERROR, LogEvent.GROUP_ERROR):
            return self._job_error(record)
        if event in (LogEvent.JOB_STARTED, LogEvent.RESOURCES_INFO, LogEvent.DEBUG_DAG, LogEvent.RULEGRAPH):
            return []
        if event == LogEvent.GROUP_INFO:
            return self._clip(f"{self._stamp(record)} {message.strip()}")
        if record.levelno >= logging.WARNING or event == LogEvent.ERROR:
            return self._wrapped(message)
        if record.levelno < logging.INFO or message.strip() in NOISE or not message.strip():
            return []
        if message.startswith("Complete log(s): ") and self.full_log:
            return self._clip(f"Full log: {self.full_log}")
        return self._clip(*message.rstrip().splitlines())

    def _plan(self, stats: dict[str, int]) -> list[str]:
        planned: dict[str, int] = {}
        for rule, count in stats.items():
            if rule != "total":
                planned[family(rule)] = planned.get(family(rule), 0) + int(count)
        self.progress.planned = planned
        total = stats.get("total", sum(planned.values()))
        parts = ", ".join(f"{count} {key}" for key, count in sorted(planned.items(), key=lambda kv: -kv[1]))
        return self._wrapped(f"{total} jobs: {parts}")

    def _job_info(self, record: logging.LogRecord) -> list[str]:
        rule = getattr(record, "rule_name", "?")
        label = self._label(rule, getattr(record, "wildcards", None))
        if self.dryrun:
            return self._clip(f"  {label}")
        self.progress.start(int(record.jobid), rule, label, record.created)
        return self._clip(f"{self._stamp(record)} start {label}")

    def _progress(self, record: logging.LogRecord) -> list[str]:
        done, total = int(record.done), int(record.total)
        now = record.created
        left = self.progress.time_left(now)
        first = self.progress.first_start
        elapsed = 0.0 if first is None else now - first
        percent = 100 * done // total if total else 100
        eta = "time left: estimating" if left is None else f"about {duration(left)} left"
        if done >= total:
            eta = "all done"
        head = f"{self._stamp(record)} {done}/{total} done ({percent}%), {eta}, {duration(elapsed)} in"
        return self._clip(head if self.last_finished is None else f"{head}: {self.last_finished}")

    def _job_error(self, record: logging.LogRecord) -> list[str]:
        rule = getattr(record, "rule_name", None) or getattr(record, "groupid", "group")
        logs = [str(p) for p in getattr(record, "log", None) or []]
        text = f"{self._stamp(record)} ERROR in {rule} (jobid {getattr(record, 'jobid', '?')})"
        text += f"; its log: {', '.join(logs)}" if logs else ""
        text += f"; details in {self.full_log}" if self.full_log else ""
        rule_msg = getattr(record, "rule_msg", None)
        return self._wrapped(text + (f"\n{rule_msg}" if rule_msg else ""))


def snakemake_log_file() -> str | None:
    """Where Snakemake writes the full log (its file handler's file), relative to here if inside."""
    for handler in logging.getLogger(SNAKEMAKE_LOGGER).handlers:
        if isinstance(handler, logging.FileHandler):
            path = Path(handler.baseFilename)
            try:
                return str(path.relative_to(Path.cwd()))
            except ValueError:
                return str(path)
    return None


class LogHandler(LogHandlerBase):
    """Snakemake's console handler: writes this project's short lines to stderr (stdout with --stdout),
    in what the stream's encoding can hold (:class:`Output`)."""

    def __post_init__(self) -> None:
        settings = self.common_settings
        self.stream: TextIO = sys.stdout if settings.stdout else sys.stderr
        self.output = Output.of(self.stream)
        self.console = Console(
            width=terminal_width(),
            dryrun=bool(settings.dryrun),
            printshellcmds=bool(settings.printshellcmds),
            ellipsis=self.output.ellipsis,
        )
        quiet = {str(q).lower() for q in settings.quiet or ()}
        self.silent = "all" in quiet and not settings.dryrun
        self.quiet = quiet

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self.console.full_log is None:
                self.console.full_log = snakemake_log_file()
            if self.silent and record.levelno < logging.ERROR:
                return
            event = getattr(record, "event", None)
            if "progress" in self.quiet and event in (LogEvent.PROGRESS, LogEvent.RUN_INFO):
                return
            if "rules" in self.quiet and event in (LogEvent.JOB_INFO, LogEvent.SHELLCMD):
                return
            lines = self.console.lines(record)
            if lines:
                self.stream.write(self.output.fitted("\n".join(lines) + "\n"))
                self.stream.flush()
        except Exception:  # noqa: BLE001 - a console must never stop the workflow
            self.handleError(record)

    @property
    def writes_to_stream(self) -> bool:
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False
