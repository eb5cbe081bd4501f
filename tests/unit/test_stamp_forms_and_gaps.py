"""Stamps in the forms standard tools print, the interval and what gave it, gaps and a clock set
back, on real logs of ../shared (skipped where it is not beside the repo).

The inputs are real tegrastats lines re-stamped here: the benchlab logs (an Orin Nano Super at
about 9 lines a second, stamped by tegrastats ``--logfile``) and orinnanolab's (1 Hz), each line's
own stamp rewritten as ``date "+%F %T"``, python logging's ``%(asctime)s``, ``date -Iseconds`` with
an offset, ``date +%s`` and ``%s.%N`` would print it in front of the same line, or stripped."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from paths import REPO

from jtop_roof.formats.logfile import ReadStats, iter_parse_lines, iter_records, open_text
from jtop_roof.model.records import Sample
from jtop_roof.model.timeline import Timeline
from jtop_roof.outputs.report import report_file
from jtop_roof.runtime.config import Config
from jtop_roof.sources.fileindex import FileIndex

ROOT = REPO
SHARED_LOGS = ROOT.parent / "shared" / "tegrastats" / "logs"
BENCHLAB = SHARED_LOGS / "orinnano8gb-super_jp6.2.1_benchlab_resnet18_fp16_maxn_run1.log"
ONE_HZ = SHARED_LOGS / "orinnano8gb_jp6_orinnanolab_1.log"
needs_shared = pytest.mark.skipif(not SHARED_LOGS.is_dir(), reason="../shared logs not beside the repo")

TEGRA_STAMP = re.compile(r"(\d\d-\d\d-\d{4} \d\d:\d\d:\d\d) ")
VDD_IN = re.compile(r"VDD_IN (\d+)mW")


def restamped(source: Path, out: Path, stamp: Callable[[datetime, int], str]) -> Path:
    """``source``'s lines with their tegrastats stamp (read as UTC) rewritten by
    ``stamp(when, index)``; "" strips it."""
    lines = source.read_text().splitlines()
    written = []
    for index, line in enumerate(lines):
        m = TEGRA_STAMP.match(line)
        assert m is not None
        when = datetime.strptime(m.group(1), "%m-%d-%Y %H:%M:%S").replace(tzinfo=timezone.utc)
        new = stamp(when, index)
        written.append((new + " " if new else "") + line[m.end():])
    out.write_text("\n".join(written) + "\n")
    return out


def energy(report: dict[str, Any]) -> float:
    return float(report["whole"]["energy_j"]["total"])


def report(path: Path, interval_s: float | None = None, **kwargs: Any) -> dict[str, Any]:
    return report_file(str(path), tz=timezone.utc, interval_s=interval_s, config=Config(), **kwargs)


def placed_walls(path: Path) -> list[float | None]:
    with open_text(path) as lines:
        return [r.t_wall for r in iter_records(lines, tz="UTC") if isinstance(r, Sample) and r.is_sample]


# ---------------------------------------------------------------------------------- stamp forms

FORMS: dict[str, tuple[Callable[[datetime, int], str], str, str, str]] = {
    # form: (stamp, report's format, zone, zone_source) with --tz UTC given
    "ymd": (lambda when, _: when.strftime("%Y-%m-%d %H:%M:%S"), "ymd", "UTC", "given"),
    "iso_offset": (lambda when, _: (when + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00"),
                   "iso8601", "+02:00", "measured"),
    "iso_z": (lambda when, _: when.strftime("%Y-%m-%dT%H:%M:%SZ"), "iso8601", "UTC", "measured"),
    "epoch": (lambda when, _: str(int(when.timestamp())), "epoch", "UTC", "measured"),
}


@needs_shared
@pytest.mark.parametrize("form", sorted(FORMS))
def test_restamped_log_reads_as_the_original(tmp_path, form):
    """The same lines under another tool's stamps give the same duration and energy (within 1%,
    in fact equal), the interval measured from them, and the stamps' form and zone said."""
    stamp, name, zone, zone_source = FORMS[form]
    original = report(BENCHLAB, tz_given=True)
    got = report(restamped(BENCHLAB, tmp_path / f"{form}.log", stamp), tz_given=True)
    assert got["whole"]["duration_s"] == pytest.approx(original["whole"]["duration_s"], rel=0.01)
    assert energy(got) == pytest.approx(energy(original), rel=0.01)
    assert got["whole"]["samples"] == original["whole"]["samples"]
    source = got["source"]
    assert (source["interval_s"], source["interval_source"]) == (original["source"]["interval_s"], "measured")
    assert source["stamps"]["format"] == name
    assert (source["stamps"]["zone"], source["stamps"]["zone_source"]) == (zone, zone_source)
    assert got["whole"]["start"] == original["whole"]["start"]  # the offset read, not --tz


@needs_shared
def test_sub_second_stamps_are_used_as_they_are(tmp_path):
    """``%s.%N`` and python logging's ``,fff`` stamps of the original's own placed times give each
    line exactly that time: nothing is spread over them."""
    walls = placed_walls(BENCHLAB)
    assert all(wall is not None for wall in walls)
    nano = restamped(BENCHLAB, tmp_path / "nano.log", lambda _, i: f"{walls[i]:.9f}")
    logging_ms = restamped(BENCHLAB, tmp_path / "asctime.log", lambda _, i: datetime.fromtimestamp(
        walls[i] or 0.0, timezone.utc).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3])
    assert placed_walls(nano) == pytest.approx(walls, abs=1e-6)
    assert placed_walls(logging_ms) == pytest.approx(walls, abs=1e-3)
    original = report(BENCHLAB)
    for path in (nano, logging_ms):
        got = report(path)
        assert energy(got) == pytest.approx(energy(original), rel=1e-3)
        assert got["source"]["interval_source"] == "measured"


@needs_shared
def test_lines_sharing_a_ymd_second_are_spread_within_it(tmp_path):
    """Nine lines of one ``%F %T`` second take nine slots of that second, as tegrastats' own do."""
    walls = placed_walls(restamped(BENCHLAB, tmp_path / "ymd.log", FORMS["ymd"][0]))
    assert walls == placed_walls(BENCHLAB)
    seconds = [int(w or 0) for w in walls]
    second = seconds[5]
    inside = [w for w in walls if int(w or 0) == second]
    assert len(inside) >= 9 and len(set(inside)) == len(inside) and max(inside) - second < 1.0  # type: ignore[operator]


# ------------------------------------------------------------------------------------ interval

@needs_shared
def test_a_log_without_stamps_says_its_interval_is_assumed(tmp_path):
    stripped = report(restamped(BENCHLAB, tmp_path / "bare.log", lambda *_: ""))
    source = stripped["source"]
    assert (source["interval_s"], source["interval_source"]) == (1.0, "assumed")
    assert "no stamps" in source["interval_note"] and "--interval" in source["interval_note"]
    assert source["stamps"]["format"] is None
    assert stripped["whole"]["duration_s"] == pytest.approx(stripped["whole"]["samples"] - 1)


@needs_shared
def test_a_given_interval_is_given_and_wins_over_the_stamps(tmp_path):
    bare = restamped(BENCHLAB, tmp_path / "bare.log", lambda *_: "")
    given = report(bare, interval_s=0.25)
    assert (given["source"]["interval_s"], given["source"]["interval_source"]) == (0.25, "given")
    assert given["source"]["interval_note"] is None
    assert given["whole"]["duration_s"] == pytest.approx((given["whole"]["samples"] - 1) * 0.25)
    stamped = report(BENCHLAB, interval_s=0.25)
    assert (stamped["source"]["interval_s"], stamped["source"]["interval_source"]) == (0.25, "given")
    # the stamps still place the seconds: the run lasts what they say, not 0.25 s a line
    assert stamped["whole"]["duration_s"] == pytest.approx(report(BENCHLAB)["whole"]["duration_s"], abs=1.0)


@needs_shared
def test_a_given_interval_the_stamps_disagree_with_is_used_and_said():
    """The 1 Hz log read at --interval 100: the flag wins (its gaps and observed time follow it),
    and the note says what the stamps say; within 2x of them, nothing is said. The replay's index
    says the same as report."""
    given = report(ONE_HZ, interval_s=0.1)["source"]
    assert (given["interval_s"], given["interval_source"]) == (0.1, "given")
    said = "the stamps space the lines 1000 ms apart: --interval 100 is used as given"
    assert given["interval_note"] == said
    assert report(ONE_HZ, interval_s=0.8)["source"]["interval_note"] is None
    stats = ReadStats()
    with open_text(ONE_HZ) as lines:
        for _ in iter_records(lines, tz="UTC", interval_s=0.1, stats=stats):
            pass
    index = FileIndex(str(ONE_HZ), tz=timezone.utc, interval_s=0.1)
    index.index_new_data(final=True)
    assert index.basis == stats.basis and index.basis.interval_note == given["interval_note"]


@needs_shared
def test_report_replay_index_and_parse_time_every_line_alike(tmp_path):
    """The replay's index and ``parse``'s direct route place each line of an ISO-stamped log
    where the reader does, and the index says the same interval and source."""
    path = restamped(BENCHLAB, tmp_path / "iso.log", FORMS["iso_offset"][0])
    stats = ReadStats()
    with open_text(path) as lines:
        records = [r for r in iter_records(lines, tz="UTC", stats=stats) if isinstance(r, Sample)]
    index = FileIndex(str(path), tz=timezone.utc, interval_s=None)
    index.index_new_data(final=True)
    assert list(index.monos) == [r.t_mono for r in records]
    assert index.basis == stats.basis and index.basis.interval_source == "measured"
    with open_text(path) as lines:
        parsed = [line for line in iter_parse_lines(lines, tz="UTC")]
    assert [float(re.match(r'\{"t":([0-9.]+)', line).group(1)) for line in parsed] == \
        pytest.approx([r.t_wall for r in records], abs=1e-6)  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------- gaps

def _trapezoid_j(lines: list[str]) -> float:
    """Joules of tegrastats' VDD_IN over consecutive 1 s lines (the trapezoid rule)."""
    mw = [float(VDD_IN.search(line).group(1)) for line in lines]  # type: ignore[union-attr]
    return sum((a + b) / 2 for a, b in zip(mw, mw[1:], strict=False)) / 1000


@needs_shared
def test_a_seven_second_hole_is_one_gap_outside_energy_and_observed_time(tmp_path):
    """7 lines cut from a 1 Hz log leave an 8 s step: one gap, its energy not bridged, its time
    not observed (the old rule, 10 intervals, bridged it)."""
    lines = ONE_HZ.read_text().splitlines()[:300]
    whole = tmp_path / "whole.log"
    whole.write_text("\n".join(lines) + "\n")
    holed = tmp_path / "holed.log"
    holed.write_text("\n".join(lines[:150] + lines[157:]) + "\n")
    before, after = report(whole)["whole"], report(holed)["whole"]
    step = (datetime.strptime(lines[157][:19], "%m-%d-%Y %H:%M:%S")
            - datetime.strptime(lines[149][:19], "%m-%d-%Y %H:%M:%S")).total_seconds()
    assert step == 8.0
    assert after["gaps"] == before["gaps"] + 1
    assert after["duration_s"] == before["duration_s"]
    assert after["observed_s"] == pytest.approx(before["observed_s"] - step)
    assert after["energy_j"]["total"] == pytest.approx(
        before["energy_j"]["total"] - _trapezoid_j(lines[149:158]), rel=1e-6)
    assert after["power_w"]["mean"] == pytest.approx(after["energy_j"]["total"] / after["observed_s"])


@needs_shared
def test_steps_of_a_real_1hz_log_under_three_seconds_are_no_gaps():
    """orinnanolab's 1 Hz stamps skip a second now and then (2 s steps): no gap."""
    got = report(ONE_HZ)["whole"]
    assert got["gaps"] == 0 and got["observed_s"] == got["duration_s"]


@needs_shared
def test_a_clock_set_back_is_said_not_reordered(tmp_path):
    lines = ONE_HZ.read_text().splitlines()[:60]
    when = datetime.strptime(lines[30][:19], "%m-%d-%Y %H:%M:%S") - timedelta(seconds=10)
    lines[30] = when.strftime("%m-%d-%Y %H:%M:%S") + lines[30][19:]
    path = tmp_path / "back.log"
    path.write_text("\n".join(lines) + "\n")
    got = report(path)
    assert got["source"]["clock_backwards"] == 1
    assert "set back" in got["source"]["clock_backwards_note"]
    assert report(ONE_HZ)["source"]["clock_backwards"] == 0
    with open_text(path) as stream:
        monos = [r.t_mono for r in iter_records(stream, tz="UTC") if isinstance(r, Sample)]
    assert monos == sorted(monos) and len(monos) == 60  # in file order, none dropped


# ------------------------------------------------------------------------------ the timeline

def test_timeline_reads_each_stamp_form():
    line = Timeline(timezone.utc, 1.0)
    assert line.wall_of("2024-05-06 07:08:09") == 1714979289.0
    assert line.wall_of("2024-05-06 07:08:09.250") == pytest.approx(1714979289.25)
    assert line.wall_of("2024-05-06 07:08:09,5") == pytest.approx(1714979289.5)
    assert line.wall_of("2024-05-06T09:08:09+02:00") == 1714979289.0
    assert line.wall_of("2024-05-06T09:08:09,123456789+0200") == pytest.approx(1714979289.123456789)
    assert line.wall_of("2024-05-06T07:08:09Z") == 1714979289.0
    assert line.wall_of("1714979289") == 1714979289.0
    assert line.wall_of("1714979289.75") == 1714979289.75
    assert line.wall_of("99999999999") is None  # past the years a stamp may have


@pytest.mark.parametrize("offset", ["+24:00", "-99:00", "+02:61"])
def test_an_offset_no_clock_writes_is_no_stamp_not_a_crash(tmp_path, offset):
    """A garbled ISO offset (24 hours or more, 60 minutes or more) leaves the line unstamped, as a
    month 13 does; the line itself is read."""
    assert Timeline(timezone.utc, 1.0).wall_of(f"2024-05-06T09:08:09{offset}") is None
    sample = next(line for line in (ROOT / "tests" / "data" / "fake_tegrastats_orinnano_super.txt")
                  .read_text(encoding="utf-8").splitlines() if line and not line.startswith("#"))[20:]
    log = tmp_path / "garbled.log"
    log.write_text(f"2024-05-06T09:08:09{offset} {sample}\n" * 2, encoding="utf-8")
    got = report(log)
    assert got["whole"]["samples"] == 2 and got["source"]["stamps"]["format"] is None


@needs_shared
def test_a_replay_takes_the_stamps_interval_unless_the_user_set_one():
    """The monitor's replay: the config's default interval is no one's, so the stamps give it
    (measured); an interval the user set wins (given), as in ``report``."""
    from jtop_roof.runtime.session import make_source
    from jtop_roof.sources.replay import ReplaySource

    cases = [(Config(tz="UTC"), (0.111, "measured")), (Config(tz="UTC", interval_ms=250), (0.25, "given"))]
    for config, expected in cases:
        replay = make_source(config, "replay", str(BENCHLAB))
        assert isinstance(replay, ReplaySource)
        basis = replay.index.basis
        assert (basis.interval_s, basis.interval_source) == expected
        assert (basis.zone, basis.zone_source) == ("UTC", "given")
        replay.stop()
