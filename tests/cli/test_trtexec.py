"""trtexec logs: runs, phases on the wall clock, iterations and throughput.

Real logs: ../shared/trtexec (skipped when absent) and short excerpts in tests/data/trtexec (see its
SOURCES.md). The timed windows of the benchlab pairs are checked against their tegrastats twins in
../shared/tegrastats/logs with arithmetic written here, independent of the module.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from paths import REPO, TESTS

from jtop_roof.formats.trtexec import (
    BUILD,
    TIMED,
    WARM_UP,
    TrtexecError,
    TrtexecReader,
    parse_trtexec,
    parse_trtexec_runs,
    read_trtexec,
)

ROOT = REPO
DATA = TESTS / "data" / "trtexec"
SHARED = ROOT.parent / "shared"
SHARED_TRTEXEC = SHARED / "trtexec"
SHARED_TEGRASTATS = SHARED / "tegrastats" / "logs"
ALL_LOGS = sorted(SHARED_TRTEXEC.glob("*.log")) if SHARED_TRTEXEC.is_dir() else []
BENCHLAB = [p for p in ALL_LOGS if "_benchlab_" in p.name]
needs_shared = pytest.mark.skipif(not ALL_LOGS, reason="../shared/trtexec not beside the repo")
UTC = timezone.utc

TRT10 = DATA / "trt10_resnet50_int8_15w_excerpt.log"
TRT7 = DATA / "trt7_resnet50_int8_b4_excerpt.log"


def utc(text: str) -> float:
    """``MM/DD/YYYY-HH:MM:SS`` read in UTC, the start of its second (independent of the module)."""
    return datetime.strptime(text, "%m/%d/%Y-%H:%M:%S").replace(tzinfo=UTC).timestamp()


# -- excerpts (always run) --------------------------------------------------------------------------
def test_trt10_excerpt_timed_window_is_summary_minus_walltime():
    run = read_trtexec(TRT10, UTC)
    assert [p.name for p in run.phases] == [BUILD, WARM_UP, TIMED]
    timed = run.timed
    assert timed is not None
    # Summary at 20:45:30, Total Host Walltime 3.007 s: the timed run began 3.007 s before.
    assert timed.end_wall == utc("07/26/2026-20:45:30")
    assert timed.start_wall == pytest.approx(utc("07/26/2026-20:45:30") - 3.007, abs=1e-9)
    # Not the stamp of "Warmup completed"/"Timing trace" (20:45:30 too: printed after the run).
    assert timed.start_wall < utc("07/26/2026-20:45:27")
    assert run.iterations == 1656
    assert run.throughput_per_s == 550.715
    assert run.throughput_source == "Throughput line"
    assert run.host_walltime_s == 3.007
    assert run.gpu_compute_mean_s == pytest.approx(1.81154e-3)
    assert run.gpu_compute_total_s == pytest.approx(2.9999)
    assert run.warmup_queries == 1102 and run.warmup_s == 2.0
    assert run.precision == "fp32+int8"
    assert run.precision_flags == ("int8",)
    assert run.model == "/home/zain/models/resnet50.onnx"
    assert run.engine is None
    assert run.batch is None  # Batch: Explicit
    assert run.tensorrt_version == "100300"
    assert run.passed is True
    build, warm = run.phase(BUILD), run.phase(WARM_UP)
    assert build is not None and warm is not None
    assert build.start_wall == utc("07/26/2026-20:43:55")
    # "Starting inference" at 20:45:25 is later than the timed start minus the 2 s warm-up
    # (20:45:24.993): the earlier of the two is the warm-up's start, the build's end.
    assert warm.start_wall == pytest.approx(timed.start_wall - 2.0)
    assert build.end_wall == warm.start_wall
    assert warm.end_wall == timed.start_wall


def test_trt7_excerpt_has_no_throughput_line_so_queries_over_walltime():
    text = TRT7.read_text()
    assert "Throughput:" not in text  # TensorRT <= 7
    run = parse_trtexec(text, UTC)
    assert run.iterations == 1792
    assert run.host_walltime_s == 3.01049  # the "walltime:" line
    assert run.throughput_source == "queries / walltime"
    assert run.throughput_per_s == pytest.approx(1792 / 3.01049)
    # The legacy block's own lower-case "throughput: 595.253 qps" is the same N / walltime.
    assert run.throughput_per_s == pytest.approx(595.253, rel=1e-5)
    assert run.batch == 4
    assert run.gpu_compute_mean_s == pytest.approx(6.53921e-3)
    assert run.gpu_compute_total_s == pytest.approx(2.92957)
    assert run.tensorrt_version is None
    assert run.precision == "fp32+int8" and run.precision_flags == ("int8",)
    assert run.model == "/usr/src/tensorrt/data/resnet50/ResNet50_N2.prototxt"
    timed = run.timed
    assert timed is not None and timed.end_wall == utc("02/22/2021-15:15:27")
    assert timed.duration_s == pytest.approx(3.01049)


def test_unstamped_log_reads_counts_and_rates_without_times():
    # The TensorRT 10 excerpt with its stamps removed, as a build without stamps prints it.
    text = re.sub(r"^\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] ", "", TRT10.read_text(), flags=re.M)
    assert "[07/" not in text
    run = parse_trtexec(text)
    assert run.iterations == 1656 and run.throughput_per_s == 550.715 and run.host_walltime_s == 3.007
    assert [p.name for p in run.phases] == [BUILD, WARM_UP, TIMED]
    assert all(p.start_wall is None and p.end_wall is None for p in run.phases)


def test_zone_and_offset_move_every_phase():
    base = read_trtexec(TRT10, UTC)
    warsaw = read_trtexec(TRT10, ZoneInfo("Europe/Warsaw"))  # CEST (UTC+2) in July
    shifted = read_trtexec(TRT10, "UTC", offset_s=-1.5)
    for b, w, s in zip(base.phases, warsaw.phases, shifted.phases, strict=True):
        assert b.start_wall is not None and w.start_wall is not None and s.start_wall is not None
        assert w.start_wall == pytest.approx(b.start_wall - 7200)
        assert s.start_wall == pytest.approx(b.start_wall - 1.5)
    assert read_trtexec(TRT10, "+02:00").phases == warsaw.phases


def test_live_reader_gives_the_same_run_line_by_line():
    reader = TrtexecReader(UTC)
    lines = TRT10.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        reader.feed(line)
        if i == 12:  # "Starting inference" read: build, then warm-up open
            (partial,) = reader.runs()
            assert partial.iterations is None and partial.passed is None
            assert [p.name for p in partial.phases] == [BUILD, WARM_UP]
            assert partial.phases[1].end_wall is None
    assert reader.runs() == (read_trtexec(TRT10, UTC),)


def test_several_runs_without_banners_are_split():
    text = TRT10.read_text()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("&&&&"))
    runs = parse_trtexec_runs(body + "\n" + body, UTC)
    assert [r.iterations for r in runs] == [1656, 1656]
    with pytest.raises(TrtexecError, match="2 timed trtexec runs"):
        parse_trtexec(body + "\n" + body, UTC)


def test_run_that_failed_before_timing():
    head = "\n".join(TRT10.read_text().splitlines()[:6])
    text = head + "\n&&&& FAILED TensorRT.trtexec [TensorRT v100300] # x\n"
    (run,) = parse_trtexec_runs(text, UTC)
    assert run.passed is False and run.iterations is None and run.throughput_per_s is None
    assert [p.name for p in run.phases] == [BUILD]
    with pytest.raises(TrtexecError, match="no trtexec timing summary"):
        parse_trtexec(text, UTC)


@pytest.mark.parametrize(
    "text",
    [
        "", "\n\n", "garbage\x00\x01 line\n" * 50,
        "[99/99/9999-99:99:99] [I] Timing trace has 5 queries over 1 s\n",
        "&&&& PASSED TensorRT.trtexec\n", "[I] Timing trace has x queries\n",
        "[I] Timing trace has 3 queries over 0 s\n[I] Total Host Walltime: 0 s\n",
        "[I] Timing trace has 99999999999999999999999 queries over 1e308 s\n",
    ],
)
def test_hostile_text_never_raises_anything_but_trtexec_error(text):
    try:
        runs = parse_trtexec_runs(text, UTC)
    except TrtexecError as exc:  # a count past MAX_COUNT
        assert "\n" not in str(exc)
        runs = ()
    for run in runs:
        for phase in run.phases:
            assert phase.start_wall is None or phase.start_wall > 0
    try:
        parse_trtexec(text, UTC)
    except TrtexecError as exc:
        assert "\n" not in str(exc)


def test_invalid_stamp_gives_no_time_but_counts():
    run = parse_trtexec("[02/30/2021-10:00:00] [I] Timing trace has 5 queries over 1 s\n", UTC)
    assert run.iterations == 5 and run.throughput_per_s == 5.0
    timed = run.timed
    assert timed is not None and timed.end_wall is None and timed.start_wall is None


@pytest.mark.parametrize("offset", [float("nan"), float("inf"), 1e9, "3"])
def test_bad_offset_is_one_line(offset):
    with pytest.raises(TrtexecError, match="trtexec offset") as info:
        TrtexecReader(UTC, offset)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_bad_zone_is_one_line():
    with pytest.raises(TrtexecError, match="unknown time zone"):
        TrtexecReader("Mars/Olympus")


def test_unreadable_files_are_one_line(tmp_path):
    with pytest.raises(TrtexecError, match="cannot read trtexec log .*missing"):
        read_trtexec(tmp_path / "missing.log")
    with pytest.raises(TrtexecError, match="a directory"):
        read_trtexec(tmp_path)
    binary = tmp_path / "binary.log"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(TrtexecError, match="not UTF-8"):
        read_trtexec(binary)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(TrtexecError, match="not a regular file"):
        read_trtexec(fifo)


def test_module_imports_no_ui():
    code = ("import sys, jtop_roof.formats.trtexec, jtop_roof.roofline.workload, jtop_roof.formats.ncu\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'textual_plotext', 'plotext')]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# -- every real log (skipped without ../shared) -----------------------------------------------------
@needs_shared
@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name)
def test_every_shared_log(path):
    text = path.read_text()
    runs = [r for r in parse_trtexec_runs(text, UTC) if r.iterations is not None]
    # Independent reads of what each run printed.
    traces = re.findall(r"^\[([\d/:-]+)\] \[I\] Timing trace has (\d+) queries over ([\d.]+) s", text, re.M)
    walltimes = re.findall(r"^\[([\d/:-]+)\] \[I\] (?:Total Host Walltime|walltime): ([\d.]+) s", text, re.M)
    printed = re.findall(r"\[I\] Throughput: ([\d.]+) qps", text)
    legacy = re.findall(r"\[I\] throughput: ([\d.]+) qps", text)
    assert len(runs) == len(traces) == len(walltimes) >= 1
    assert [r.iterations for r in runs] == [int(n) for _, n, _ in traces]
    assert [r.host_walltime_s for r in runs] == [float(w) for _, w in walltimes]
    if printed:
        assert [r.throughput_per_s for r in runs] == [float(x) for x in printed]
    else:  # TensorRT <= 7: N / walltime, which the legacy lower-case line agrees with
        assert len(legacy) == len(runs)
        for run, x in zip(runs, legacy, strict=True):
            assert run.throughput_source == "queries / walltime"
            assert run.throughput_per_s == pytest.approx(float(x), rel=1e-5)
    for run, (stamp, _), in zip(runs, walltimes, strict=True):
        timed = run.timed
        assert timed is not None and timed.end_wall == utc(stamp)
        assert timed.duration_s == pytest.approx(run.host_walltime_s)
        walls = [w for p in run.phases for w in (p.start_wall, p.end_wall)]
        assert all(w is not None for w in walls)
        assert walls == sorted(walls)  # build <= warm-up <= timed, each start <= end
        assert run.passed is True
        assert run.precision is not None and run.model or run.engine


# -- benchlab pairs: the window against the tegrastats twin -----------------------------------------
_TEGRA = re.compile(r"^(\d\d)-(\d\d)-(\d{4}) (\d\d):(\d\d):(\d\d) .*?GR3D_FREQ (\d+)%")


def tegrastats_seconds(path: Path) -> dict[float, list[int]]:
    """Unix second -> the GR3D load % of every tegrastats line stamped in it (UTC, like the run)."""
    out: dict[float, list[int]] = {}
    for line in path.read_text().splitlines():
        m = _TEGRA.match(line)
        if m is None:
            continue
        mo, d, y, hh, mi, ss, gr3d = m.groups()
        second = datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss), tzinfo=UTC).timestamp()
        out.setdefault(second, []).append(int(gr3d))
    return out


@needs_shared
@pytest.mark.parametrize("path", BENCHLAB, ids=lambda p: p.name)
def test_benchlab_timed_window_against_tegrastats(path):
    twin = SHARED_TEGRASTATS / path.name
    if not twin.is_file():
        pytest.skip(f"no tegrastats twin for {path.name}")
    text = path.read_text()
    summary = re.search(r"^\[([\d/:-]+)\] \[I\] === Performance summary ===", text, re.M)
    walltime = re.search(r"Total Host Walltime: ([\d.]+) s", text)
    queries = re.search(r"Timing trace has (\d+) queries", text)
    throughput = re.search(r"Throughput: ([\d.]+) qps", text)
    assert summary and walltime and queries and throughput
    end, wall_s, n = utc(summary.group(1)), float(walltime.group(1)), int(queries.group(1))

    run = read_trtexec(path, UTC)
    timed = run.timed
    assert timed is not None and timed.start_wall is not None
    assert timed.end_wall == end
    assert timed.start_wall == pytest.approx(end - wall_s, abs=1e-6)
    assert run.iterations == n
    assert run.throughput_per_s == float(throughput.group(1))
    assert run.throughput_per_s == pytest.approx(n / wall_s, rel=2e-3)  # trtexec's own N / walltime

    seconds = tegrastats_seconds(twin)
    # The benchmark script stopped tegrastats when trtexec ended: its last second is the summary's,
    # and it started at most two seconds before trtexec's first line.
    assert max(seconds) == end
    build = run.phase(BUILD)
    assert build is not None and build.start_wall is not None
    assert build.start_wall - 2 <= min(seconds) <= build.start_wall
    # Every second wholly inside the timed window has the GPU busy (GR3D >= 90 % on every line) ...
    inside = [s for s in seconds if s >= timed.start_wall and s + 1 <= end]
    assert len(inside) >= int(wall_s) - 1
    for s in inside:
        assert min(seconds[s]) >= 90, (s, seconds[s])
    # ... and the window holds as many tegrastats lines as its length at the log's rate (about 9 a
    # second at the 100 ms interval these logs use, minus jitter), counted from the start's second.
    lines_in = sum(len(v) for s, v in seconds.items() if timed.start_wall - 1 < s < end)
    assert 8 * (wall_s - 1) <= lines_in <= 11 * (wall_s + 1)


def test_overflowing_numbers_are_read_as_missing():
    run = parse_trtexec(
        "[01/01/2024-00:00:10] [I] Timing trace has 7 queries over 1e999 s\n"
        "[01/01/2024-00:00:10] [I] Throughput: 1e999 qps\n", UTC
    )
    assert run.iterations == 7 and run.host_walltime_s is None and run.throughput_per_s is None
    timed = run.timed
    assert timed is not None and timed.end_wall == utc("01/01/2024-00:00:10") and timed.start_wall is None
