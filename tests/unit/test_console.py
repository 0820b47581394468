"""The project's Snakemake console (``snakemake --logger vhct``): short lines, progress with time left.

The records are built as Snakemake builds them (``extra=`` attributes named by
``snakemake_interface_logger_plugins.common.LogEvent``), with their times set, so the estimate is
checked on known durations.
"""

from __future__ import annotations

import io
import logging
import types

import pytest
from snakemake_interface_logger_plugins.common import LogEvent

from snakemake_logger_plugin_vhct import (
    ASCII_ELLIPSIS,
    ELLIPSIS,
    MAX_MESSAGE_LINES,
    Console,
    LogHandler,
    Output,
    Progress,
    clip,
    duration,
    family,
)

WIDTH = 60
#: a "reason" of the size the paper config's aggregate jobs print (hundreds of kilobytes)
HUGE = ", ".join(f"results/runs/garland/VHCT/seed{i}.csv.gz" for i in range(5000))
#: Snakemake's common settings of a run writing to stdout
SETTINGS = types.SimpleNamespace(
    stdout=True,
    dryrun=False,
    printshellcmds=False,
    quiet=None,
    nocolor=True,
    debug_dag=False,
    verbose=False,
    show_failed_logs=False,
)


def record(event, when: float, msg: str | None = "", level: int = logging.INFO, **extra) -> logging.LogRecord:
    rec = logging.LogRecord("snakemake.logging", level, __file__, 1, msg, None, None)
    rec.created = when
    rec.event = event
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


def job_info(jobid: int, rule: str, when: float, **wildcards) -> logging.LogRecord:
    return record(
        LogEvent.JOB_INFO,
        when,
        " Rule: x",
        jobid=jobid,
        rule_name=rule,
        wildcards=wildcards,
        reason=f"Missing output files: {HUGE}",
        input=HUGE,
        output=HUGE,
    )


def finished(jobid: int, when: float) -> logging.LogRecord:
    return record(LogEvent.JOB_FINISHED, when, "Finished", job_id=jobid)


def progress(done: int, total: int, when: float) -> logging.LogRecord:
    return record(LogEvent.PROGRESS, when, None, done=done, total=total)


def test_no_line_is_wider_than_the_width_whatever_the_message():
    console = Console(WIDTH)
    out = []
    out += console.lines(record(LogEvent.RUN_INFO, 0.0, "Job stats", stats={"run": 2, "total": 2}))
    out += console.lines(job_info(1, "run_garland_batch0", 0.0, experiment="garland", batch=HUGE))
    out += console.lines(record(None, 1.0, f"Reasons:\n    output files have to be generated:\n  {HUGE}"))
    out += console.lines(record(LogEvent.ERROR, 2.0, f"WorkflowError: {HUGE}", level=logging.ERROR))
    out += console.lines(
        record(
            LogEvent.JOB_ERROR,
            3.0,
            "Error",
            level=logging.ERROR,
            rule_name="run",
            jobid=1,
            log=["logs/run/garland/batch0.log"],
            rule_msg=HUGE,
        )
    )
    assert out and all(len(line) <= WIDTH for line in out), max(out, key=len)
    assert any(line.endswith(ELLIPSIS) for line in out)  # an info line is cut ...
    errors = [line for line in out if "ERROR in run" in line]
    assert errors and "logs/run/garland/batch0.log" in "".join(out)  # ... an error names its log


def test_a_long_error_keeps_its_first_lines_and_points_to_the_full_log():
    console = Console(WIDTH)
    console.full_log = ".snakemake/log/x.snakemake.log"
    text = "\n".join(f"line {i}" for i in range(MAX_MESSAGE_LINES + 7))
    out = console.lines(record(LogEvent.ERROR, 0.0, text, level=logging.ERROR))
    assert out[:MAX_MESSAGE_LINES] == [f"line {i}" for i in range(MAX_MESSAGE_LINES)]
    assert out[MAX_MESSAGE_LINES:] == ["... 7 more lines in .snakemake/log/x.snakemake.log"]


def test_progress_shows_jobs_done_and_the_time_left_from_the_rules_durations():
    console = Console(200)
    console.lines(
        record(
            LogEvent.RUN_INFO,
            0.0,
            "",
            stats={"run_a_batch0": 1, "run_a_batch1": 1, "run_a_batch2": 1, "figure": 2, "total": 5},
        )
    )
    console.lines(job_info(1, "run_a_batch0", 0.0))
    console.lines(finished(1, 600.0))  # a batch takes 10 minutes, one job at a time
    line = console.lines(progress(1, 5, 600.0))[0]
    # 2 batches left at 10 min, 2 figures at the overall mean (10 min): 40 min
    assert "1/5 done (20%), about 40 min left, 10 min in: run_a_batch0 (10 min)" in line
    console.lines(job_info(2, "figure", 600.0))
    console.lines(finished(2, 660.0))  # a figure takes 1 minute
    line = console.lines(progress(2, 5, 660.0))[0]
    assert "2/5 done (40%), about 21 min left" in line  # 2 batches x 10 min + 1 figure x 1 min


def test_jobs_running_at_once_shorten_the_estimate():
    estimate = Progress(planned={"run": 6})
    for jobid in (1, 2):
        estimate.start(jobid, "run", "run", 0.0)
    estimate.finish(1, 100.0)
    estimate.finish(2, 100.0)
    assert estimate.time_left(100.0) == pytest.approx(4 * 100 / 2)  # 4 runs of 100 s, two at a time


def test_no_estimate_before_a_job_finished_and_none_left_at_the_end():
    console = Console(200)
    console.lines(record(LogEvent.RUN_INFO, 0.0, "", stats={"run": 1, "total": 1}))
    assert console.lines(job_info(1, "run", 0.0))[0].endswith(" start run")
    assert "time left: estimating" in console.lines(progress(0, 1, 5.0))[0]
    console.lines(finished(1, 9.0))
    assert "all done" in console.lines(progress(1, 1, 9.0))[0]


def test_batches_count_as_one_family_and_durations_read_as_people_write_them():
    assert family("run_mnist_batch17") == family("run_mnist_batch2") == "run_mnist_batch*"
    assert family("aggregate") == "aggregate"
    assert [duration(s) for s in (4, 59, 600, 7500)] == ["4 s", "59 s", "10 min", "2 h 05 min"]
    assert clip("abcdef", 4) == "abc" + ELLIPSIS and clip("abc", 4) == "abc"


def test_what_only_the_full_log_needs_is_not_printed():
    console = Console(WIDTH)
    assert console.lines(record(None, 0.0, "Select jobs to execute...")) == []
    assert console.lines(record(LogEvent.SHELLCMD, 0.0, "cmd", shellcmd="python x.py")) == []
    assert console.lines(record(None, 0.0, "debug detail", level=logging.DEBUG)) == []
    assert Console(WIDTH, printshellcmds=True).lines(
        record(LogEvent.SHELLCMD, 0.0, "cmd", shellcmd="python x.py")
    ) == ["  $ python x.py"]


def test_the_handler_writes_the_lines_to_snakemakes_stream_and_honours_quiet_all(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    settings = SETTINGS
    stream = io.StringIO()
    monkeypatch.setattr("sys.stdout", stream)
    handler = LogHandler(settings, None)
    handler.emit(record(None, 0.0, f"Building DAG of jobs... {HUGE}"))
    assert stream.getvalue().splitlines() == [clip(f"Building DAG of jobs... {HUGE}", WIDTH)]
    quiet = LogHandler(types.SimpleNamespace(**{**vars(settings), "quiet": {"all"}}), None)
    quiet.emit(record(None, 0.0, "Building DAG of jobs..."))
    quiet.emit(record(LogEvent.ERROR, 0.0, "it failed", level=logging.ERROR))
    assert stream.getvalue().splitlines()[1:] == ["it failed"]


def handler_writing_to(stream: io.TextIOWrapper, monkeypatch) -> LogHandler:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.setattr("sys.stdout", stream)
    return LogHandler(SETTINGS, None)


@pytest.mark.parametrize(("encoding", "mark"), [("ascii", ASCII_ELLIPSIS), ("utf-8", ELLIPSIS)])
def test_a_clipped_line_is_written_in_what_the_streams_encoding_holds(monkeypatch, encoding, mark):
    """Issue 48, item 5. Probe: ``COLUMNS=40 PYTHONIOENCODING=ascii snakemake -n --cores 1 --logger vhct
    --configfile config/tiny.yaml`` printed a ``UnicodeEncodeError`` traceback ("Logging error") for
    every clipped line and lost the line. On an ASCII stream the cut is marked "..." and any other
    character it cannot hold becomes "?"; on UTF-8 the "…" and the rest are kept."""
    buffer = io.BytesIO()
    stream = io.TextIOWrapper(buffer, encoding=encoding)  # errors="strict", as the probe's stdout
    handler = handler_writing_to(stream, monkeypatch)
    handle_error = []
    monkeypatch.setattr(handler, "handleError", handle_error.append)
    line = f"Building DAG of jobs... {HUGE}"
    handler.emit(record(None, 0.0, line))
    handler.emit(record(LogEvent.ERROR, 0.0, "ρ ≤ 1 fails", level=logging.ERROR))
    assert handle_error == []  # no record went to logging's error report
    written = buffer.getvalue().decode(encoding).splitlines()
    assert written[0] == clip(line, WIDTH, mark) and written[0].endswith(mark) and len(written[0]) == WIDTH
    assert written[1] == ("ρ ≤ 1 fails" if encoding == "utf-8" else "? ? 1 fails")


def test_the_output_takes_its_encoding_from_the_stream():
    """The one place the fallback is decided: the stream's own encoding, by its codec's name."""
    assert Output.of(io.TextIOWrapper(io.BytesIO(), encoding="US-ASCII")).ellipsis == ASCII_ELLIPSIS
    assert Output.of(io.TextIOWrapper(io.BytesIO(), encoding="latin-1")).fitted("… é") == "? é"
    assert Output.of(io.TextIOWrapper(io.BytesIO(), encoding="UTF8")).ellipsis == ELLIPSIS
    assert Output.of(io.StringIO()).ellipsis == ELLIPSIS  # a text buffer names no encoding: it holds all
