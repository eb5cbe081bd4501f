"""Timeline: tegrastats stamps (local wall time, 1 s) -> t_wall / t_mono, per the contract."""

from __future__ import annotations

import calendar
import itertools
import time
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from jtop_roof.model.timeline import Timeline, local_tz_name, parse_tz

UTC = timezone.utc


def utc_epoch(*fields: int) -> float:
    return float(calendar.timegm((*fields, 0, 0, 0)))


def run(timeline: Timeline, stamps: list[str | None]) -> list[tuple[float | None, float]]:
    return [timeline.place(stamp) for stamp in stamps]


# --- parse_tz / local_tz_name -----------------------------------------------------------------------


def test_parse_tz_accepts_names_utc_and_offsets():
    assert parse_tz("UTC") is UTC
    assert parse_tz("utc") is UTC
    assert parse_tz("+02:00").utcoffset(None) == timedelta(hours=2)
    assert parse_tz("-0530").utcoffset(None) == -timedelta(hours=5, minutes=30)
    assert parse_tz("UTC+1").utcoffset(None) == timedelta(hours=1)
    assert parse_tz("Europe/Warsaw") == ZoneInfo("Europe/Warsaw")


@pytest.mark.parametrize("bad", ["Mars/Olympus_Mons", "+25:00", "+02:75", "../etc/passwd", "Europe/", "12"])
def test_parse_tz_rejects_with_a_clear_message(bad):
    with pytest.raises(ValueError, match="time zone"):
        parse_tz(bad)


def test_machine_zone_follows_tz(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert local_tz_name() == "Asia/Tokyo"
    zone = parse_tz(None)
    assert zone.utcoffset(datetime(2025, 1, 1)) == timedelta(hours=9)
    assert parse_tz("local").utcoffset(datetime(2025, 7, 1)) == timedelta(hours=9)


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="needs time.tzset")
def test_machine_zone_from_a_zoneinfo_path_or_a_posix_tz(monkeypatch):
    monkeypatch.setenv("TZ", ":/usr/share/zoneinfo/America/New_York")
    assert local_tz_name() == "America/New_York"
    monkeypatch.setenv("TZ", "XYZ-3")  # POSIX form: no zone data, the C library's offset is used
    time.tzset()
    try:
        assert parse_tz(None).utcoffset(datetime.now()) == timedelta(hours=3)
        assert local_tz_name() == "+03:00"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_machine_zone_without_tz_still_gives_a_zone(monkeypatch):
    monkeypatch.delenv("TZ", raising=False)
    assert isinstance(local_tz_name(), str) and local_tz_name()
    assert parse_tz(None).utcoffset(datetime(2025, 1, 1)) is not None


# --- stamps --------------------------------------------------------------------------------------


def test_stamp_is_local_wall_time_in_the_given_zone():
    # 26 Oct 2025 05:31:28 in Warsaw is after the switch to CET (UTC+1)
    tl = Timeline(ZoneInfo("Europe/Warsaw"), 1.0)
    [(wall, mono)] = run(tl, ["10-26-2025 05:31:28"])
    assert wall == utc_epoch(2025, 10, 26, 4, 31, 28)
    assert mono == 0.0
    summer = Timeline(ZoneInfo("Europe/Warsaw"), 1.0).wall_of("07-09-2024 13:31:31")
    assert summer == utc_epoch(2024, 7, 9, 11, 31, 31)


def test_lines_sharing_a_stamp_are_spread_at_the_interval():
    tl = Timeline(UTC, 0.5)
    stamps = ["10-26-2025 05:31:28", "10-26-2025 05:31:28", "10-26-2025 05:31:29", "10-26-2025 05:31:29"]
    got = run(tl, stamps)
    base = utc_epoch(2025, 10, 26, 5, 31, 28)
    assert got == [(base, 0.0), (base + 0.5, 0.5), (base + 1, 1.0), (base + 1.5, 1.5)]


def test_ten_lines_per_stamp_at_100_ms():
    tl = Timeline(UTC, 0.1)
    got = run(tl, ["04-19-2026 01:31:10"] * 10 + ["04-19-2026 01:31:11"])
    base = utc_epoch(2026, 4, 19, 1, 31, 10)
    assert [round(w - base, 6) for w, _ in got] == [round(k * 0.1, 6) for k in range(10)] + [1.0]


def test_more_lines_than_fit_in_a_second_stay_before_the_next_stamp():
    """48 lines share a stamp at an interval made for 46: the tail closes in on the end of the
    second (halfway each time) instead of running past the next stamp."""
    tl = Timeline(UTC, 0.022)
    got = run(tl, ["05-06-2024 20:29:53"] * 48 + ["05-06-2024 20:29:54"])
    base = utc_epoch(2024, 5, 6, 20, 29, 53)
    walls = [w for w, _ in got]
    assert walls[:45] == [base + k * 0.022 for k in range(45)]  # the interval while it fits
    assert all(b > a for a, b in itertools.pairwise(walls))
    assert all(w < base + 1 for w in walls[:48]) and walls[48] == base + 1
    monos = [m for _, m in got]
    assert all(b > a for a, b in itertools.pairwise(monos))


def test_two_lines_of_a_one_second_log_sharing_a_stamp_do_not_reach_the_next_one():
    tl = Timeline(UTC, 1.0)
    got = run(tl, ["05-06-2024 20:29:53"] + ["05-06-2024 20:29:54"] * 2 + ["05-06-2024 20:29:55"])
    base = utc_epoch(2024, 5, 6, 20, 29, 53)
    assert [w for w, _ in got] == [base, base + 1, base + 1.5, base + 2]


def test_without_stamps_t_mono_is_index_times_interval():
    tl = Timeline(UTC, 0.25)
    assert run(tl, [None, None, None]) == [(None, 0.0), (None, 0.25), (None, 0.5)]


def test_gaps_are_kept():
    tl = Timeline(UTC, 1.0)
    got = run(tl, ["10-04-2024 17:51:16", "10-04-2024 17:51:17", "10-04-2024 17:51:24"])
    assert [mono for _, mono in got] == [0.0, 1.0, 8.0]


def test_wall_clock_stepping_back_keeps_t_mono_running_forward():
    tl = Timeline(UTC, 1.0)
    stamps = ["01-01-2025 10:00:00", "01-01-2025 10:00:01", "01-01-2025 09:59:00", "01-01-2025 09:59:01"]
    got = run(tl, stamps)
    assert [wall for wall, _ in got] == [
        utc_epoch(2025, 1, 1, 10, 0, 0),
        utc_epoch(2025, 1, 1, 10, 0, 1),
        utc_epoch(2025, 1, 1, 9, 59, 0),
        utc_epoch(2025, 1, 1, 9, 59, 1),
    ]
    assert [mono for _, mono in got] == [0.0, 1.0, 2.0, 3.0]


def test_unstamped_lines_in_a_stamped_log_follow_the_previous_sample():
    tl = Timeline(UTC, 1.0)
    got = run(tl, ["01-01-2025 10:00:00", None, "01-01-2025 10:00:02"])
    base = utc_epoch(2025, 1, 1, 10, 0, 0)
    assert got == [(base, 0.0), (base + 1, 1.0), (base + 2, 2.0)]


def test_stamps_starting_mid_stream_continue_the_index_timeline():
    tl = Timeline(UTC, 1.0)
    got = run(tl, [None, None, "01-01-2025 10:00:00", "01-01-2025 10:00:01"])
    assert [mono for _, mono in got] == [0.0, 1.0, 2.0, 3.0]
    assert got[0][0] is None and got[2][0] == utc_epoch(2025, 1, 1, 10, 0, 0)


@pytest.mark.parametrize("bad", ["13-45-2025 10:00:00", "02-30-2025 10:00:00", "01-01-2025 24:00:00",
                                 "01-01-2025 10:61:00", "01-01-2025 10:00:60", "garbage"])
def test_invalid_stamps_count_as_unstamped(bad):
    tl = Timeline(UTC, 1.0)
    assert tl.wall_of(bad) is None
    got = run(tl, ["01-01-2025 10:00:00", bad])
    assert got[1] == (utc_epoch(2025, 1, 1, 10, 0, 1), 1.0)


# --- DST ------------------------------------------------------------------------------------------


def test_ambiguous_time_reads_as_the_first_occurrence():
    berlin = Timeline(ZoneInfo("Europe/Berlin"), 1.0)
    # 26 Oct 2025 02:30 happens twice in Berlin; fold=0 is the first (CEST, UTC+2)
    assert berlin.wall_of("10-26-2025 02:30:00") == utc_epoch(2025, 10, 26, 0, 30, 0)


def test_log_running_through_the_fall_back_stays_continuous():
    tl = Timeline(ZoneInfo("Europe/Berlin"), 1.0)
    stamps = ["10-26-2025 02:59:58", "10-26-2025 02:59:59", "10-26-2025 02:00:00", "10-26-2025 02:00:01",
              "10-26-2025 02:59:59", "10-26-2025 03:00:00"]
    got = run(tl, stamps)
    first = utc_epoch(2025, 10, 26, 0, 59, 58)
    assert [wall - first for wall, _ in got] == [0, 1, 2, 3, 3601, 3602]
    assert [mono for _, mono in got] == [0, 1, 2, 3, 3601, 3602]


def test_log_running_through_the_spring_forward_is_one_second_apart():
    tl = Timeline(ZoneInfo("Europe/Berlin"), 1.0)
    got = run(tl, ["03-30-2025 01:59:59", "03-30-2025 03:00:00"])
    assert got[1][0] - got[0][0] == 1.0 and got[1][1] == 1.0


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"])
def test_cached_conversion_matches_datetime_around_transitions(zone):
    """The per-hour cache must agree with a direct conversion, also where DST moves by 30 minutes."""
    tz = ZoneInfo(zone)
    tl = Timeline(tz, 1.0)
    starts = [datetime(2025, 3, 8), datetime(2025, 3, 29), datetime(2025, 4, 5), datetime(2025, 10, 4),
              datetime(2025, 10, 25), datetime(2025, 11, 1)]
    for start in starts:
        for step in range(0, 3 * 24 * 3600, 7 * 60 + 13):
            local = start + timedelta(seconds=step)
            stamp = local.strftime("%m-%d-%Y %H:%M:%S")
            expected = local.replace(tzinfo=tz).timestamp()
            assert tl.wall_of(stamp) == expected, stamp
            assert tl.wall_of(stamp) == expected, stamp  # second read from the cache


def test_a_day_of_distinct_stamps_is_converted_exactly():
    tl = Timeline(ZoneInfo("Europe/Berlin"), 1.0)
    start = datetime(2025, 10, 26, 0, 0, 0)
    stamps = [(start + timedelta(seconds=s)).strftime("%m-%d-%Y %H:%M:%S") for s in range(0, 86400, 1)]
    got = run(tl, stamps)
    monos = [mono for _, mono in got]
    # the naive stamps pass 02:xx once (read as summer time), so 03:00 CET comes 1 h 1 s after 02:59:59
    assert monos[-1] == 86399 + 3600
    assert all(b > a for a, b in zip(monos, monos[1:], strict=False))


def test_a_partial_first_second_takes_the_last_slots_of_it():
    """The log started at .7 of its first second: its 3 lines of that stamp go at .7, .8, .9."""
    timeline = Timeline(timezone.utc, 0.1, first_group_lines=3)
    stamps = ("01-01-2026 00:00:00",) * 3 + ("01-01-2026 00:00:01",) * 2
    walls = [wall for wall, _ in run(timeline, list(stamps))]
    start = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()
    assert walls == pytest.approx([start + 0.7, start + 0.8, start + 0.9, start + 1.0, start + 1.1])


def test_a_one_hertz_log_keeps_its_first_line_at_its_stamp():
    timeline = Timeline(timezone.utc, 1.0, first_group_lines=1)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()
    assert timeline.place("01-01-2026 00:00:00") == (start, 0.0)
