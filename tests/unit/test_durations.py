"""The project's one duration formatter (``vhct.durations``): hours and minutes, not fractions of
3600 s; the findings, the article, the figures and the console print durations through it."""

from __future__ import annotations

import math

import pytest

from snakemake_logger_plugin_vhct import duration as console_duration
from vhct.article.typeset import environment
from vhct.durations import duration
from vhct.reporting.plots import regret


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (7.04e-5, "0.0704 ms"),
        (0.0123, "12.3 ms"),
        (2.5, "2.5 s"),
        (59, "59 s"),
        (600, "10 min"),
        (3599, "1 h"),
        (86400, "24 h"),
        (7500, "2 h 05 min"),
        (None, "-"),
        (math.nan, "-"),
        (math.inf, "-"),
    ],
)
def test_a_duration_reads_in_hours_and_minutes(seconds, text):
    assert duration(seconds) == text


def test_to_the_second_with_its_total():
    assert duration(3725, finest="s", total=True) == "1 h 02 min 05 s (3725 s)"
    assert duration(725, finest="s", total=True) == "12 min 05 s (725 s)"
    assert duration(45, finest="s", total=True) == "45 s"  # under a minute: said once
    with pytest.raises(ValueError, match="finest unit 'h': one of min, s"):
        duration(10, finest="h")


def test_every_output_uses_the_one_formatter():
    assert console_duration(7500) == duration(7500) and console_duration(-3) == "0 s"
    assert environment().filters["duration"] is duration
    assert regret.duration is duration
