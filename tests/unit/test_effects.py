"""How an effect of the audit is printed (``vhct.reporting.audit.effects``): numbers without exponents
where a person reads them, and an effect in units of a threshold of seconds as durations (issue 50
item 5: "hours and minutes, not fractions of 3600 s")."""

from __future__ import annotations

import math

import pytest

from vhct.reporting.audit.effects import (
    EffectUnit,
    effect_text,
    effect_unit,
    format_number,
    per_threshold_name,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.2345, "1.234"),
        (0.000012345, "1.234e-05"),
        (9999.4, "9999"),
        (11067.3, "11067"),  # a factor of BO's cost: whole, not 1.107e+04
        (-12345.6, "-12346"),
        (1e20, "1e+20"),
        (math.nan, "nan"),
        (math.inf, "inf"),
        (3, "3"),
        (None, ""),
    ],
)
def test_a_number_reads_without_an_exponent_where_it_is_whole(value, text):
    assert format_number(value) == text


def test_the_writer_of_an_effect_per_threshold_meets_its_reader():
    """The wall-time kind's name of its effect (the writer) is read back as its name and unit."""
    name = per_threshold_name("mean wall time per run to t = 500", 86400.0)
    assert name == "mean wall time per run to t = 500 / 86400 s"
    assert effect_unit(name) == EffectUnit("mean wall time per run to t = 500", 86400.0)
    assert effect_unit("ratio of means") == EffectUnit("ratio of means")
    assert effect_unit(None) == EffectUnit("")


def test_an_effect_per_threshold_is_printed_as_durations_beside_its_threshold():
    wall = per_threshold_name("mean wall time per run to t = 100", 3600.0)
    assert effect_text(wall, 0.001854, 0.001672, 0.002005, 0.9) == (
        "mean wall time per run to t = 100 is 6.67 s, 90% CI [6.02 s, 7.22 s], against a threshold of 1 h"
    )
    minutes = "mean wall time per run to t = 100 is 6 min 46 s, against a threshold of 1 h"
    assert effect_text(wall, 0.1128) == minutes
    # another effect keeps its number
    assert effect_text("ratio of means", 1.0432, 1.0, 1.088, 0.9) == "ratio of means 1.043, 90% CI [1, 1.088]"
