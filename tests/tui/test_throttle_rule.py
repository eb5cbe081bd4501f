"""The throttle rule (``analysis.detectors``): a clock held flat below its cap while the unit is
saturated is a throttle; a DVFS ramp or a governor hopping between clocks is not; a stated mode
whose caps were never reached says so once instead of reporting throttles.

Logs are real tegrastats lines (tests/data/tegrastats_lines.txt, sources named there) with their
stamp and clock/load fields varied, as the other detector tests do; the shared logs of
../shared/tegrastats/logs are read whole where they are beside the repo."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from paths import REPO
from tui_support import make_config, wait_until

from jtop_roof.analysis.detectors import MODE_CHECK
from jtop_roof.formats.logfile import iter_records
from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Sample
from jtop_roof.outputs.report import report_file, to_markdown

ROOT = REPO
LINES = ROOT / "tests" / "data" / "tegrastats_lines.txt"
SHARED_LOGS = ROOT.parent / "shared" / "tegrastats" / "logs"
UTC = timezone.utc
T0 = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC).timestamp()


def real_line(case: str) -> str:
    """The real line of ``case`` in tests/data/tegrastats_lines.txt."""
    lines = LINES.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"## {case} |"))
    return lines[at + 1]


ORIN_NANO_SUPER = real_line("orin_nano_super")  # 6 cores, GR3D_FREQ 0%@[1018], stamped
AGX_ORIN = real_line("agx_orin_jp6")  # 12 cores, GR3D_FREQ 86%@[305,305], stamped, 2 lines a second
NANO = real_line("nano_log")  # 4 cores, GR3D_FREQ 42%@76, no stamp


def varied(base: str, second: float | None = None, *, gpu: tuple[float, int] | None = None,
           cpus: Sequence[tuple[float, int]] | None = None, tj: float | None = None) -> str:
    """``base`` with its stamp at T0 + ``second`` (whole seconds, as tegrastats prints them), its
    GPU load and clock (every GPC), its CPU cores' load and clock and its tj temperature replaced."""
    line = base
    if second is not None:
        stamp = datetime.fromtimestamp(T0 + second, UTC).strftime("%m-%d-%Y %H:%M:%S")
        line = re.sub(r"^\d\d-\d\d-\d{4} \d\d:\d\d:\d\d", stamp, line)
    if gpu is not None:
        load, mhz = gpu

        def gr3d(m: re.Match[str]) -> str:
            gpcs = m.group(1)
            if gpcs.startswith("["):
                return f"GR3D_FREQ {load:.0f}%@[{','.join([str(mhz)] * (gpcs.count(',') + 1))}]"
            return f"GR3D_FREQ {load:.0f}%@{mhz}"

        line = re.sub(r"GR3D_FREQ \d+%@(\[[\d,]+\]|\d+)", gr3d, line)
    if cpus is not None:
        line = re.sub(r"CPU \[[^\]]*\]", "CPU [" + ",".join(f"{load:.0f}%@{mhz}" for load, mhz in cpus) + "]",
                      line)
    if tj is not None:
        line = re.sub(r"tj@[\d.]+C", f"tj@{tj}C", line)
    assert line != base or (gpu is None and cpus is None and tj is None)
    return line


def stamped(base: str, gpu_series: Sequence[tuple[float, int]], per_second: int = 1,
            cpus: Sequence[tuple[float, int]] | None = None) -> list[str]:
    """One line per GPU reading, ``per_second`` lines under each stamp (the AGX log's 500 ms)."""
    return [varied(base, i // per_second, gpu=reading, cpus=cpus) for i, reading in enumerate(gpu_series)]


def report_of(tmp_path: Path, lines: list[str], device: str, mode: str | None,
              interval_s: float | None = None, name: str = "run.log") -> dict[str, Any]:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report_file(str(path), tz=UTC, interval_s=interval_s,
                       config=make_config(device=device, power_mode=mode))


def idle_cpus(n: int, mhz: int) -> list[tuple[float, int]]:
    return [(3.0, mhz)] * n


# ------------------------------------------------------------------------- moving clocks: none


def test_a_dvfs_ramp_is_no_throttle_even_with_the_gpu_saturated(tmp_path):
    """AGX Orin at MAXN (GPU cap 1300 MHz), two lines a second as the real log: at its cap, idle,
    then a ramp from 305 MHz back up at 99 % load, one and then two samples a DVFS step."""
    steps = [305, 407, 508, 611, 713, 815, 918, 1019, 1122, 1224]
    series = ([(99.0, 1300)] * 4 + [(0.0, 305)] * 4 + [(99.0, mhz) for mhz in steps] + [(99.0, 1300)] * 4
              + [(0.0, 305)] * 4 + [(99.0, mhz) for mhz in steps for _ in range(2)] + [(99.0, 1300)] * 4)
    report = report_of(tmp_path, stamped(AGX_ORIN, series, per_second=2), "agx-orin-64gb", "MAXN")
    assert [e["kind"] for e in report["events"]] == []
    assert report["whole"]["throttled_s"] == 0.0 and report["power_mode_check"] is None


def test_the_same_clocks_held_flat_at_saturation_are_a_throttle(tmp_path):
    """The ramp's first step, held: 611 MHz at 99 % for 6 samples (3 s) is one throttle."""
    series = [(99.0, 1300)] * 4 + [(99.0, 611)] * 6 + [(99.0, 1300)] * 4
    report = report_of(tmp_path, stamped(AGX_ORIN, series, per_second=2), "agx-orin-64gb", "MAXN")
    (event,) = report["events"]
    assert (event["kind"], event["unit"]) == ("throttle", "gpu")
    assert event["reason"] == "clock below the mode's cap while busy; cause not seen (GPU 611 MHz of 1300)"
    assert event["cause_source"] is None
    assert event["start_s"] == pytest.approx(2.0) and event["end_s"] == pytest.approx(4.5)
    assert report["whole"]["throttled_s"] == pytest.approx(2.5)


def test_a_cpu_governor_hopping_between_its_lowest_and_highest_clock_is_no_throttle(tmp_path):
    """A Nano (MAXN: CPU cap 1479 MHz) with one core at 100 % whose cluster hops 102 <-> 1479 MHz
    from one sample to the next, or stays at 102 for two samples; the busy core moves."""
    hops = [102, 1479, 102, 102, 1479] * 4
    lines = []
    for i, mhz in enumerate(hops):
        cores = [(3.0, mhz)] * 4
        cores[i % 4] = (100.0, mhz)
        lines.append(varied(NANO, cpus=cores))
    report = report_of(tmp_path, lines, "nano", "MAXN", interval_s=1.0)
    assert report["events"] == [] and report["whole"]["throttled_s"] == 0.0


def test_a_cpu_governor_hopping_between_middle_clocks_is_no_throttle(tmp_path):
    """AGX Orin 64GB at MODE_50W (CPU cap 1497.6 MHz; its MAXN caps no CPU clock), one core at
    100 %, its cluster's clock hopping among 729-1190 MHz as the real log's do, never near the
    cap: each hop up ends the hold."""
    clocks = [729, 1036, 883, 1190, 729, 960, 806, 1113, 729, 1036, 883, 1190] * 2
    lines = []
    for i, mhz in enumerate(clocks):
        cores = idle_cpus(12, 729)
        cores[0:4] = [(100.0, mhz)] + [(5.0, mhz)] * 3
        lines.append(varied(AGX_ORIN, 4 + i // 2, gpu=(0.0, 305), cpus=cores))
    at_cap = [varied(AGX_ORIN, i // 2, gpu=(0.0, 305), cpus=[(100.0, 1497)] * 4 + idle_cpus(8, 729))
              for i in range(8)]
    report = report_of(tmp_path, at_cap + lines, "agx-orin-64gb", "MODE_50W")
    assert report["events"] == []
    held = [varied(AGX_ORIN, 4 + i // 2, gpu=(0.0, 305), cpus=[(100.0, 1036)] * 4 + idle_cpus(8, 729))
            for i in range(len(clocks))]  # the same core held at one of those clocks: a throttle
    report = report_of(tmp_path, at_cap + held, "agx-orin-64gb", "MODE_50W", name="held.log")
    assert [(e["kind"], e["unit"]) for e in report["events"]] == [("throttle", "cpu")]


# ------------------------------------------------------------------------- held clocks: throttles


def test_a_3_s_gpu_hold_at_saturation_is_a_throttle(tmp_path):
    """Orin Nano Super at MAXN_SUPER (GPU cap 1020 MHz), a line a second: at its cap, then 612 MHz
    at 99 % for three samples (3 s), then at its cap again."""
    series = [(99.0, 1020)] * 3 + [(99.0, 612)] * 3 + [(99.0, 1020)] * 3
    report = report_of(tmp_path, stamped(ORIN_NANO_SUPER, series), "orin-nano-8gb-super", "MAXN_SUPER")
    (event,) = report["events"]
    assert (event["kind"], event["unit"], event["start_s"], event["end_s"]) == ("throttle", "gpu", 3.0, 5.0)
    assert "GPU 612 MHz of 1020" in event["reason"]
    assert report["whole"]["throttled_s"] == 2.0 and report["power_mode_check"] is None


def test_a_hold_is_no_throttle_below_saturation_or_under_two_seconds(tmp_path):
    """The same hold at 70 % load (the GPU does not want more), or for two samples (1 s)."""
    unsaturated = [(99.0, 1020)] * 3 + [(70.0, 612)] * 5 + [(99.0, 1020)] * 3
    short = [(99.0, 1020)] * 3 + [(99.0, 612)] * 2 + [(99.0, 1020)] * 3
    for series in (unsaturated, short):
        report = report_of(tmp_path, stamped(ORIN_NANO_SUPER, series), "orin-nano-8gb-super", "MAXN_SUPER")
        assert report["events"] == []


def test_a_clock_stepped_down_while_saturated_is_one_throttle_to_its_lowest(tmp_path):
    """A thermal-style staircase down (918, 816, 714 MHz, two samples each) is one hold: a throttle
    steps the clock down, never up."""
    series = [(99.0, 1020)] * 3 + [(99.0, mhz) for mhz in (918, 918, 816, 816, 714, 714)] + [(99.0, 1020)] * 2
    report = report_of(tmp_path, stamped(ORIN_NANO_SUPER, series), "orin-nano-8gb-super", "MAXN_SUPER")
    (event,) = report["events"]
    assert (event["start_s"], event["end_s"]) == (3.0, 8.0) and "GPU 714 MHz of 1020" in event["reason"]


def test_hostile_clocks_and_loads_make_no_event_and_no_error():
    """NaN, infinite, negative and huge loads and clocks (a hostile recording's) are never held,
    never a cap reached, and never an exception; a real hold after them is still found."""
    from jtop_roof.analysis.detectors import ThrottleDetector
    from jtop_roof.model.info import SourceInfo
    from jtop_roof.model.records import Gpu
    from jtop_roof.runtime.runtime import build_pipeline

    nan, inf = float("nan"), float("inf")
    hostile = [(nan, 612), (99.0, -5), (inf, 612), (-inf, 612), (99.0, 10**15), (99.0, 0), (nan, 0)] * 3
    series = hostile + [(99.0, 1020)] * 2 + [(99.0, 612)] * 4
    pipeline = build_pipeline(make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER"),
                              SourceInfo("replay"), interval_s=1.0)
    pipeline.detectors = [ThrottleDetector()]
    found = []
    for i, (load, mhz) in enumerate(series):
        found += pipeline.ingest(Sample(t_wall=T0 + i, t_mono=float(i), gpu=Gpu(load, (mhz,))))
    found += pipeline.finish()
    assert [(e.kind, e.start_mono, e.t_mono) for e in found] == [("throttle", 23.0, 26.0)]


# ------------------------------------------------------------------------------- mode sanity


def wrong_mode_lines() -> list[str]:
    """A 15W-like run (GPU 612 MHz, CPU 1497 MHz, both saturated) in two bursts with idle between."""
    busy = [(100.0, 1497)] * 6
    idle = idle_cpus(6, 729)
    series = [((99.0, 612), busy)] * 6 + [((0.0, 306), idle)] * 3 + [((99.0, 612), busy)] * 6
    return [varied(ORIN_NANO_SUPER, i, gpu=gpu, cpus=cpus) for i, (gpu, cpus) in enumerate(series)]


def test_a_mode_whose_caps_are_never_reached_says_so_once_instead_of_throttles(tmp_path):
    report = report_of(tmp_path, wrong_mode_lines(), "orin-nano-8gb-super", "MAXN_SUPER")
    (event,) = report["events"]  # four holds (GPU and CPU, two bursts): one note
    assert event["kind"] == "mode_check" and event["reason"].startswith(MODE_CHECK)
    assert report["power_mode_check"] == event["reason"]
    assert report["whole"]["throttled_s"] == 0.0
    text = to_markdown(report)
    assert text.count(f"Power mode check: {MODE_CHECK}") == 1 and "mode_check" in text
    # The mode the run was in: its caps are reached, nothing to say.
    right = report_of(tmp_path, wrong_mode_lines(), "orin-nano-8gb-super", "15W", name="15w.log")
    assert right["events"] == [] and right["power_mode_check"] is None
    assert "Power mode check" not in to_markdown(right)


def test_once_a_cap_is_reached_a_later_hold_is_a_throttle_again(tmp_path):
    lines = wrong_mode_lines()
    later = [varied(ORIN_NANO_SUPER, len(lines) + i, gpu=reading, cpus=idle_cpus(6, 729))
             for i, reading in enumerate([(0.0, 306)] * 3 + [(99.0, 1020)] * 2 + [(99.0, 612)] * 4)]
    report = report_of(tmp_path, lines + later, "orin-nano-8gb-super", "MAXN_SUPER")
    assert [e["kind"] for e in report["events"]] == ["mode_check", "throttle"]
    assert report["whole"]["throttled_s"] == 3.0


def test_evidence_names_the_cause_where_the_caps_were_never_reached(tmp_path):
    """The same wrong-mode run as a recording whose header gives tj's trip point (99 °C), at 97 °C:
    the heat explains the hold, so it is a throttle, named thermal."""
    lines = [varied(line, tj=97.0) for line in wrong_mode_lines()]
    header = {"type": "header", "app": "jroof-tui", "schema": 1, "interval_ms": 1000,
              "device": "orin-nano-8gb-super", "power_mode": "MAXN_SUPER",
              "thermal_trips": {"tj": [{"type": "passive", "temp_c": 99.0}]}}
    samples = [r for r in iter_records(lines, tz="UTC") if isinstance(r, Sample)]
    path = tmp_path / "hot.jsonl"
    path.write_text(json_line(header) + "".join(json_line(record_to_json(s)) for s in samples))
    report = report_file(str(path), tz=UTC, interval_s=None, config=make_config())
    assert {e["kind"] for e in report["events"]} == {"throttle"} and report["power_mode_check"] is None
    assert all("thermal: tj within 5 °C of its 99 °C trip" in e["reason"] for e in report["events"])


async def test_the_mode_check_reaches_the_monitors_events(tmp_path):
    from jtop_roof.sources.replay import ReplaySource
    from jtop_roof.tui.app import JroofApp

    log = tmp_path / "run.log"
    log.write_text("\n".join(wrong_mode_lines()) + "\n", encoding="utf-8")
    source = ReplaySource(log, tz="UTC", hold_at_end=True, speed=64)
    config = make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")
    app = JroofApp(source, config, user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:

        def events() -> str:
            app.redraw_now()
            return str(app.query_one("#events").readout.plain)

        await wait_until(pilot, lambda: "end of replay" in events(), "the end of the log")
        # Once, and whole: the pane wraps the question under its text.
        assert " ".join(events().split()).count(
            "mode_check gpu 5 s: the stated mode's caps were never reached: is the power mode right?") == 1
        assert [e.detail for e in app.history.events if e.unit] == [f"{MODE_CHECK} (GPU 612 MHz of 1020)"]
        assert "throttle" not in events() and "THROTTLED" not in app.query_one("#header").plain


# ------------------------------------------------------------------------------ shared logs

needs_shared = pytest.mark.skipif(not SHARED_LOGS.is_dir(), reason="../shared logs not beside the repo")


def shared_report(name: str, device: str, mode: str) -> dict[str, Any]:
    return report_file(str(SHARED_LOGS / f"{name}.log"), tz=UTC, interval_s=None,
                       config=make_config(device=device, power_mode=mode))


@needs_shared
def test_the_agx_orin_ramp_at_05_31_30_is_no_throttle():
    report = shared_report("agxorin_jp6_abdeltegraparser_1", "agx-orin-64gb", "MAXN")
    assert report["events"] == [] and report["whole"]["throttled_s"] == 0.0
    assert report["power_mode_check"] is None


@needs_shared
@pytest.mark.parametrize("mode", ["MAXN", "5W"])
def test_the_nano_cpu_hopping_between_102_and_1479_mhz_is_no_throttle(mode):
    report = shared_report("nano4gb_jp4-ubuntu20-image_nightvisionllie_2", "nano", mode)
    assert report["events"] == []


@needs_shared
@pytest.mark.parametrize(("run", "mode"), [("resnet50_int8_maxn_run3", "MAXN_SUPER"),
                                           ("resnet50_int8_15w_run3", "15W"), ("resnet50_int8_7w_run3", "7W"),
                                           ("resnet18_fp16_maxn_run1", "MAXN_SUPER")])
def test_the_benchlab_runs_in_their_own_modes_have_no_event(run, mode):
    report = shared_report(f"orinnano8gb-super_jp6.2.1_benchlab_{run}", "orin-nano-8gb-super", mode)
    assert report["events"] == [] and report["power_mode_check"] is None


@needs_shared
def test_a_benchlab_15w_run_stated_as_maxn_super_gets_the_mode_check():
    report = shared_report("orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_15w_run3", "orin-nano-8gb-super",
                           "MAXN_SUPER")
    assert [e["kind"] for e in report["events"]] == ["mode_check"]
    assert report["whole"]["throttled_s"] == 0.0


@needs_shared
def test_the_xavier_nx_held_at_1190_mhz_all_run_is_its_10w_mode_not_a_throttle():
    """4 cores at 100 % and 1190 MHz all run: MODE_10W_4CORE's cap. Stated as MODE_20W_6CORE (cap
    1420.8 MHz), the report asks about the mode instead of calling 105 s a throttle."""
    right = shared_report("xaviernx_jp5_tegraburn_1", "xavier-nx", "MODE_10W_4CORE")
    assert right["events"] == []
    wrong = shared_report("xaviernx_jp5_tegraburn_1", "xavier-nx", "MODE_20W_6CORE")
    assert [(e["kind"], e["unit"]) for e in wrong["events"]] == [("mode_check", "cpu")]
    assert wrong["whole"]["throttled_s"] == 0.0
    assert json.loads(json.dumps(wrong))["power_mode_check"].startswith(MODE_CHECK)
