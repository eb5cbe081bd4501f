"""Formatting, temperature classification, bars, sparklines and time ticks."""

from datetime import timezone

import pytest

from jtop_roof.model.metrics import (
    ago_label,
    ago_ticks,
    bar_parts,
    clock_ticks,
    fmt_duration,
    fmt_energy,
    fmt_memory,
    fmt_power,
    sparkline,
    tick_step,
)
from jtop_roof.model.settings import Thresholds
from jtop_roof.model.thermal import classify_temp, trip_points

LEVELS = Thresholds(temp_warn_c=70, temp_crit_c=85, load_warn_pct=80, load_crit_pct=95)


@pytest.mark.parametrize(
    ("mw", "text"), [(640, "640 mW"), (12480, "12.48 W"), (None, "—")]
)
def test_power(mw, text):
    assert fmt_power(mw) == text


@pytest.mark.parametrize(
    ("joules", "text"), [(12.34, "12.3 J"), (410, "410 J"), (1234, "1.23 kJ"), (2.5e6, "2.50 MJ")]
)
def test_energy(joules, text):
    assert fmt_energy(joules) == text


def test_memory_and_duration():
    assert fmt_memory(6348, 7782) == "6.2/7.6 GB"
    assert fmt_memory(300, 952) == "300/952 MB"
    assert fmt_duration(751) == "00:12:31"
    assert fmt_duration(90061) == "1d 01:01:01"


@pytest.mark.parametrize("value", [100.0, 50.0])
def test_pmic_placeholder_is_fixed_never_hot(value):
    reading = classify_temp("PMIC", value, {}, LEVELS)
    assert reading.state == "fixed"


def test_a_real_pmic_reading_is_classified():
    assert classify_temp("PMIC", 88.5, {}, LEVELS).state == "crit"


@pytest.mark.parametrize("value", [None, -256.0, float("nan")])
def test_off_sensor(value):
    assert classify_temp("GPU", value, {}, LEVELS).state == "off"


def test_headroom_to_trip_point_wins_over_levels():
    trips = trip_points({
        "tj-thermal": [{"type": "active", "temp_c": 50.0}, {"type": "passive", "temp_c": 99.0},
                       {"type": "critical", "temp_c": 104.5}],
        "cpu": [{"type": "critical", "temp_c": 95}],
    })
    assert trips == {"tj": 99.0, "cpu": 95.0}
    near = classify_temp("tj", 96.1, trips, LEVELS)
    assert (near.state, near.trip_c) == ("crit", 99.0)
    assert near.headroom_c == pytest.approx(2.9)
    assert classify_temp("TJ", 80.0, trips, LEVELS).state == "ok"  # 19 °C headroom; levels say crit
    assert classify_temp("tj", 88.0, trips, LEVELS).state == "warn"
    assert classify_temp("soc0", 72.0, trips, LEVELS).state == "warn"  # no trip: the levels


def test_unreadable_trips_are_dropped():
    only_fan = [{"type": "active", "temp_c": 45.0}]
    assert trip_points({"a": "hot", "b": [80, 70], 3: 50, "c": True, "d": only_fan}) == {"b": 70.0}
    assert trip_points(None) == {}


def test_bar_parts_use_eighths():
    assert bar_parts(100, 4) == ("████", "")
    assert bar_parts(0, 4) == ("", "░░░░")
    filled, empty = bar_parts(56.25, 4)  # 18 eighths: 2 full + a quarter block
    assert filled == "██▎" and empty == "░"
    assert bar_parts(None, 3) == ("", "░░░")


def test_sparkline_scales_and_blanks_nan():
    assert sparkline([0, 50, 100], 3, 0, 100) == "▁▅█"
    assert sparkline([1, float("nan"), 1], 3) == "▁ ▁"
    assert sparkline([5, 6, 7, 8], 2, 0, 8) == "▇█"


def test_a_steady_sparkline_reads_as_steady_not_as_maximum():
    assert sparkline([6250.0] * 4, 4, 0, None) == "████"  # scaled to its own maximum
    assert sparkline([6250.0] * 4, 4, 0, None, min_span=1250) == "▅▅▅▅"
    assert sparkline([6250, 6250, 6900], 3, 0, None, min_span=1250) == "▃▃▆"  # a small step shows
    assert sparkline([100, 200, 12000], 3, 0, None, min_span=1250) == "▁▁█"  # wide range: from 0
    assert sparkline([10.0, 10.0], 2, 0, None, min_span=100) == "▂▂"  # widened from low, not below it


def test_tick_steps_and_labels():
    assert tick_step(120, 6) == 30
    assert tick_step(3600, 5) == 900
    xs, labels = ago_ticks(120, 6)
    assert xs == [-120.0, -90.0, -60.0, -30.0, 0.0]
    assert labels == ["-2m", "-1m30s", "-1m", "-30s", "now"]
    assert ago_label(5400) == "-1h30m"


def test_clock_ticks_land_on_round_wall_times():
    # newest sample at 12:03:40 UTC; a 2-minute window with 30 s steps
    wall_now = 1_700_000_000 - 1_700_000_000 % 86400 + 12 * 3600 + 3 * 60 + 40
    xs, labels = clock_ticks(120, 5, wall_now, timezone.utc)
    assert labels == ["12:02:00", "12:02:30", "12:03:00", "12:03:30"]
    assert xs == [-100.0, -70.0, -40.0, -10.0]


def test_printable_neutralises_escape_sequences_and_cuts():
    from jtop_roof.model.metrics import printable

    assert printable("a\x1b[31mb\n") == "a\ufffd[31mb\ufffd"
    assert printable("resnet50-int8", 8) == "resnet5…"
    assert printable("[b]x[/b]") == "[b]x[/b]"  # markup is plain text here


def test_nice_ticks():
    from jtop_roof.model.metrics import nice_ticks

    assert nice_ticks(0, 100, 5) == ([0, 25, 50, 75, 100], ["0", "25", "50", "75", "100"])
    assert nice_ticks(0, 1020, 4) == ([0, 500, 1000], ["0", "500", "1000"])
    ticks, labels = nice_ticks(48, 62, 4)
    assert ticks == [50, 55, 60] and labels == ["50", "55", "60"]
    assert nice_ticks(0, 0.9, 4)[1] == ["0.0", "0.5"]
