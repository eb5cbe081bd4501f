"""Inputs are used or refused, never dropped: ``--trtexec`` on a log without
stamps (``--log-start``), on another time span, into a ``record --replay`` recording; ``--workload``,
``--probe`` and ``--ncu`` that fit no board; ``report``'s inputs given to other commands.

The plain log is one real JetPack 4.6 Nano line (tests/data/tegrastats_lines.txt, case
``nano_log``) repeated; the trtexec output is the TensorRT 10 excerpt in tests/data/trtexec (its
run: 07/26/2026 20:43:55 to 20:45:30, read in UTC). The real pair in ../shared is used where present.
"""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from cli_support import jroof
from paths import OUTSIDE, TESTS

from jtop_roof.formats.trtexec import read_trtexec
from jtop_roof.formats.trtexec_span import LogSpan, LogStartError, parse_log_start, place_run
from jtop_roof.model.timeline import parse_tz
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.runtime import Runtime
from jtop_roof.sources.replay import ReplaySource

DATA = TESTS / "data"
TRTEXEC = DATA / "trtexec" / "trt10_resnet50_int8_15w_excerpt.log"
SHARED = OUTSIDE / "shared"
NANO_LOG = SHARED / "tegrastats" / "logs" / "nano_jp4.6_csc2231_1.log"
NANO_TRTEXEC = SHARED / "trtexec" / "nano_jp4.6_csc2231_1.log"
UTC = timezone.utc
#: The excerpt's run, read independently of the module: first stamp and the performance summary's.
RUN_START = datetime(2026, 7, 26, 20, 43, 55, tzinfo=UTC)
RUN_END = datetime(2026, 7, 26, 20, 45, 30, tzinfo=UTC)


def nano_line() -> str:
    lines = (DATA / "tegrastats_lines.txt").read_text().splitlines()
    return lines[lines.index(next(line for line in lines if line.startswith("## nano_log |"))) + 1]


def plain_log(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "plain.log"
    path.write_text((nano_line() + "\n") * count)
    return path


def refused(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The one line on stderr of a refusal (exit 2, no traceback), holding every needle."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S")


# -- --log-start --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["2023-03-29T17:56:40", "2023-03-29 17:56:40", "03-29-2023 17:56:40",
                                  "03/29/2023-17:56:40"])
def test_log_start_reads_iso_and_both_stamp_forms_in_the_zone(text):
    zone = parse_tz("+02:00")
    expected = datetime(2023, 3, 29, 15, 56, 40, tzinfo=UTC).timestamp()
    assert parse_log_start(text, zone) == expected


def test_log_start_with_its_own_offset_ignores_the_zone():
    assert parse_log_start("2023-03-29T17:56:40Z", parse_tz("+05:00")) == \
        datetime(2023, 3, 29, 17, 56, 40, tzinfo=UTC).timestamp()


@pytest.mark.parametrize("text", ["yesterday", "", "13-45-2023 10:00:00", "0001-01-01T00:00:00", "nan",
                                  "9999-12-31T23:59:59", "2023-03-29T25:00:00"])
def test_bad_log_start_is_a_user_error(text):
    with pytest.raises(LogStartError, match="--log-start"):
        parse_log_start(text, UTC)


# -- place_run, on its own ------------------------------------------------------------------------------
def span(first_wall: float | None, seconds: float) -> LogSpan:
    """A log of ``seconds``: stamped from ``first_wall``, else plain at a given 1 s (``--interval``)."""
    if first_wall is None:
        return LogSpan("log", 0.0, seconds, None, None, 1.0, "given")
    return LogSpan("log", 0.0, seconds, first_wall, first_wall + seconds)


def test_run_inside_the_log_is_placed_without_a_note():
    run = read_trtexec(TRTEXEC, UTC)
    start = (RUN_START - timedelta(seconds=10)).timestamp()
    assert place_run(run, "t.log", span(start, 200), UTC) == (start, None)
    assert place_run(run, "t.log", span(None, 200), UTC, log_start=start) == (start, None)


def test_partial_overlap_is_used_and_says_how_much():
    run = read_trtexec(TRTEXEC, UTC)
    start = RUN_START.timestamp() + 60  # the log starts a minute into the run's 95 s
    placed, note = place_run(run, "t.log", span(start, 300), UTC)
    assert placed == start and note is not None
    whole_s = (RUN_END - RUN_START).total_seconds()
    assert f"only {whole_s - 60:.0f} s of trtexec's {whole_s:.0f} s overlap" in note


@pytest.mark.parametrize("gap_s", [-3600.0, 3600.0, 1e7])
def test_run_outside_the_log_is_refused_naming_both_spans(gap_s):
    run = read_trtexec(TRTEXEC, UTC)
    log_start = (RUN_END if gap_s > 0 else RUN_START).timestamp() + gap_s
    with pytest.raises(Exception, match="do not overlap") as info:
        place_run(run, "t.log", span(log_start, 60), UTC)
    assert RUN_START.strftime("%Y-%m-%d %H:%M:%S") in str(info.value)
    assert datetime.fromtimestamp(log_start, UTC).strftime("%Y-%m-%d %H:%M:%S") in str(info.value)


def test_log_without_stamps_needs_log_start_and_a_stamped_one_refuses_it():
    run = read_trtexec(TRTEXEC, UTC)
    with pytest.raises(Exception, match="no timestamps.*--log-start"):
        place_run(run, "t.log", span(None, 60), UTC)
    with pytest.raises(Exception, match="--log-start is for a log without timestamps"):
        place_run(run, "t.log", span(RUN_START.timestamp(), 60), UTC, log_start=RUN_START.timestamp())


def test_trtexec_log_without_stamps_is_refused(tmp_path):
    unstamped = tmp_path / "t.log"
    # As a build without stamps prints it (as test_trtexec does).
    unstamped.write_text(re.sub(r"^\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] ", "", TRTEXEC.read_text(), flags=re.M))
    run = read_trtexec(unstamped, UTC)
    assert run.iterations  # its counts are read, but nothing says when it ran
    with pytest.raises(Exception, match="has no timestamps: its phases cannot be placed"):
        place_run(run, str(unstamped), span(RUN_START.timestamp(), 200), UTC)


# -- report ---------------------------------------------------------------------------------------------
def test_report_refuses_trtexec_on_a_log_without_stamps_given_an_interval_but_no_start(tmp_path):
    """With --interval the user fixed the log's length but not where it lies: that is not guessed
    (with neither flag the log is fitted to trtexec's run: test_trtexec_placement)."""
    log = plain_log(tmp_path, 120)
    refused(jroof("report", log, "--trtexec", TRTEXEC, "--tz", "UTC", "--interval", "1000"), "trtexec",
            "--log-start", "no timestamps")


def test_report_places_trtexec_by_log_start(tmp_path):
    log = plain_log(tmp_path, 120)
    start = RUN_START - timedelta(seconds=5)
    result = jroof("report", log, "--trtexec", TRTEXEC, "--log-start", stamp(start), "--interval", "1000",
                   "--tz", "UTC", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    phases = {p["name"]: p for p in report["phases"]}
    assert set(phases) >= {"build", "warm-up", "timed"}
    assert all(p["samples"] > 0 for p in phases.values())
    run = read_trtexec(TRTEXEC, UTC)
    assert phases["timed"]["workload"]["iterations"] == run.iterations
    timed = run.timed
    assert timed is not None and timed.start_wall is not None
    # 1 s lines from the given start: the timed phase starts where its stamp falls on the log.
    assert phases["timed"]["start_s"] == pytest.approx(timed.start_wall - start.timestamp(), abs=1.0)
    assert report["source"]["log_start"].startswith(stamp(start))
    assert "trtexec_note" not in report["source"]


def test_report_uses_a_partial_overlap_and_says_so(tmp_path):
    log = plain_log(tmp_path, 40)  # 39 s from 5 s before the run: its first 34 s of 95
    result = jroof("report", log, "--trtexec", TRTEXEC, "--log-start",
                   stamp(RUN_START - timedelta(seconds=5)), "--tz", "UTC", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "only 34 s of trtexec's 95 s overlap" in result.stderr
    assert "only 34 s" in json.loads(result.stdout)["source"]["trtexec_note"]


def test_report_refuses_trtexec_of_another_span(tmp_path):
    log = plain_log(tmp_path, 40)
    line = refused(jroof("report", log, "--trtexec", TRTEXEC, "--log-start", "2020-01-01T00:00:00",
                         "--tz", "UTC"), "do not overlap", str(TRTEXEC))
    assert "2020-01-01 00:00:00" in line and "2026-07-26 20:43:55" in line


def test_report_refuses_log_start_without_trtexec_or_on_a_stamped_log(tmp_path):
    refused(jroof("report", plain_log(tmp_path, 5), "--log-start", "2020-01-01T00:00:00"),
            "--log-start", "--trtexec")
    stamped = DATA / "logfile" / "agxorin_jp6_500ms.log"
    refused(jroof("report", stamped, "--trtexec", TRTEXEC, "--log-start", "2020-01-01T00:00:00"),
            "--log-start is for a log without timestamps")


def test_report_refuses_a_workload_with_no_work_to_put_it_on(tmp_path):
    refused(jroof("report", plain_log(tmp_path, 5), "--workload", "examples/resnet50_int8.yaml"),
            "--workload", "no work")


def test_report_refuses_a_workload_whose_precision_the_device_lacks(tmp_path):
    start = RUN_START - timedelta(seconds=5)
    refused(jroof("report", plain_log(tmp_path, 120), "--device", "nano", "--trtexec", TRTEXEC,
                  "--log-start", stamp(start), "--tz", "UTC", "--workload", "examples/resnet50_int8.yaml"),
            "--workload", "no rate for nano")


def test_report_refuses_a_probe_and_kernels_of_another_device(tmp_path):
    log = plain_log(tmp_path, 5)
    refused(jroof("report", log, "--device", "orin-nano-8gb-super", "--probe", DATA / "h200_probe.json"),
            "--probe", "measured on h200")
    refused(jroof("report", log, "--device", "orin-nano-8gb-super", "--ncu", DATA / "h200_ncu_gemm_bf16.csv"),
            "--ncu", "SM clock of 1587 MHz")


def test_report_keeps_a_probe_and_kernels_of_its_own_device():
    result = jroof("report", DATA / "h200_phases.jsonl", "--probe", DATA / "h200_probe.json", "--ncu",
                   DATA / "h200_ncu_gemm_bf16.csv", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["probe"]["datasheet"] is not None and report["ncu"][0]["verdict"] != "unknown"


@pytest.mark.parametrize(("command", "flag"), [
    *(("compare", flag) for flag in ("--trtexec", "--workload", "--ncu", "--probe", "--log-start")),
    *(("export", flag) for flag in ("--workload", "--ncu", "--probe")),  # plot takes them all
])
def test_commands_that_would_drop_reports_inputs_refuse_them(tmp_path, command, flag):
    log = plain_log(tmp_path, 5)
    files = [log, log] if command == "compare" else [log]
    refused(jroof(command, *files, flag, "x"), f"{flag} is not used by `{command}`", "report")


# -- the runtime: record, the monitor, serve ------------------------------------------------------------
def test_record_replay_writes_trtexecs_phases_and_work_into_the_recording(tmp_path):
    log, out = plain_log(tmp_path, 120), tmp_path / "r.jsonl"
    start = RUN_START - timedelta(seconds=5)
    result = jroof("record", out, "--replay", log, "--trtexec", TRTEXEC, "--log-start", stamp(start),
                   "--tz", "UTC", "--speed", "64")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    extras = [r for r in records if r.get("origin") == "trtexec"]
    assert [r.get("name") for r in extras if r["type"] == "marker" and r["kind"] == "phase_start"] == \
        ["build", "warm-up", "timed"]
    assert [r["iterations"] for r in extras if r["type"] == "work"] == [read_trtexec(TRTEXEC, UTC).iterations]
    # In stream order among the samples: each extra after the samples before it, before those after.
    monos = [r["mono"] for r in records if r["type"] in ("sample", "marker", "work") and "mono" in r]
    assert monos == sorted(monos)
    report = json.loads(jroof("report", out, "--format", "json").stdout)
    assert {p["name"] for p in report["phases"]} >= {"build", "warm-up", "timed"}
    assert all(p["samples"] > 0 for p in report["phases"])


@pytest.mark.parametrize("command", [(), ("record", "OUT"), ("serve",)])
def test_trtexec_that_cannot_be_placed_is_refused_before_anything_starts(tmp_path, command):
    """A plain log given --interval but no --log-start (with neither it is fitted, as report fits it)."""
    log = plain_log(tmp_path, 20)
    command = tuple(str(tmp_path / "out.jsonl") if arg == "OUT" else arg for arg in command)
    args = [*command, "--replay", log, "--trtexec", TRTEXEC, "--tz", "UTC", "--interval", "500"]
    refused(jroof(*args), "no timestamps", "--log-start", "leave out --interval")
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("command", [("record", "OUT", "--duration", "1"), ("serve",),
                                     ("run", "--headless", "--record", "OUT", "--", "true")])
def test_trtexec_on_a_live_source_is_refused(tmp_path, command):
    command = tuple(str(tmp_path / "out.jsonl") if arg == "OUT" else arg for arg in command)
    refused(jroof("--source", "demo", "--trtexec", TRTEXEC, *command), "--trtexec goes with --replay")
    assert not (tmp_path / "out.jsonl").exists()


def test_runtime_notes_trtexec_it_cannot_use_instead_of_raising(tmp_path):
    """The monitor's describe runs in a worker: an unplaceable output is a note (Events), not an error."""
    log = plain_log(tmp_path, 20)  # given an interval but no start: not placed
    runtime = Runtime(ReplaySource(log, tz="UTC", interval_ms=500),
                      Config(trtexec=str(TRTEXEC), tz="UTC", interval_ms=500))
    described = runtime.describe()
    assert described.extras == ()
    assert len(described.notes) == 1 and "--log-start" in described.notes[0]
    partial = Runtime(ReplaySource(log, tz="UTC"), Config(trtexec=str(TRTEXEC), tz="UTC",
                                                          log_start=stamp(RUN_START)))
    described = partial.describe()
    assert described.extras and "only 19 s of trtexec's 95 s overlap" in described.notes[0]


# -- the real pair (../shared) --------------------------------------------------------------------------
@pytest.mark.skipif(not NANO_LOG.is_file(), reason="../shared not beside the repo")
def test_real_nano_pair_refused_with_an_interval_alone_and_used_with_log_start():
    refused(jroof("report", NANO_LOG, "--trtexec", NANO_TRTEXEC, "--interval", "250"), "trtexec",
            "--log-start")
    result = jroof("report", NANO_LOG, "--trtexec", NANO_TRTEXEC, "--interval", "250", "--tz", "UTC",
                   "--log-start", "2023-03-29T17:56:46", "--format", "json")
    assert result.returncode == 0, result.stderr
    timed = next(p for p in json.loads(result.stdout)["phases"] if p["name"] == "timed")
    assert timed["samples"] > 0 and timed["workload"]["iterations"] == 10


def test_serve_says_when_trtexec_overlaps_the_replay_only_in_part(tmp_path):
    """serve uses the part of trtexec's run that the log covers and says how much, as record does."""
    import threading

    from jtop_roof.outputs.serve import run_serve

    said: list[str] = []
    stop = threading.Event()
    config = Config(trtexec=str(TRTEXEC), tz="UTC", log_start=stamp(RUN_START))
    status = run_serve(ReplaySource(plain_log(tmp_path, 20), tz="UTC", speed=1000.0), config, port=0,
                       install_signal_handlers=False, stop=stop, on_ready=lambda _: stop.set(),
                       say=said.append)
    assert status == 0
    assert any("only 19 s of trtexec's 95 s overlap" in line for line in said), said


def test_a_phase_that_starts_before_the_replayed_log_survives_its_recording(tmp_path):
    """trtexec's build starts a second before the log's first line: its marker is recorded before the
    stream's first sample (a negative mono) and read back, so the recording's report has the phase
    the log's own report has."""
    log = plain_log(tmp_path, 120)
    start = stamp(RUN_START + timedelta(seconds=1))
    flags = ("--trtexec", TRTEXEC, "--log-start", start, "--tz", "UTC")
    out = tmp_path / "r.jsonl"
    recorded = jroof("record", out, "--replay", log, "--speed", "64", *flags)
    assert recorded.returncode == 0, recorded.stderr
    first = next(json.loads(line) for line in out.read_text().splitlines() if '"marker"' in line)
    assert first["name"] == "build" and first["mono"] < 0
    direct = jroof("report", log, *flags, "--format", "json")
    again = jroof("report", out, "--format", "json")
    assert again.returncode == 0 and "skipped" not in again.stderr, again.stderr
    phases = [(p["name"], p["samples"]) for p in json.loads(again.stdout)["phases"]]
    assert phases == [(p["name"], p["samples"]) for p in json.loads(direct.stdout)["phases"]]
    assert phases[0][0] == "build"


def test_report_refuses_a_workload_the_reported_work_leaves_nothing_to(tmp_path):
    """The hook reported FLOPs, bytes and precision for every piece of work: the spec would be read and
    used for nothing, so it is refused; where the work lacks the precision, the spec gives it."""
    lines = [json.loads(line) for line in (DATA / "h200_phases.jsonl").read_text().splitlines()]
    complete = tmp_path / "complete.jsonl"
    complete.write_text("".join(json.dumps({**r, "precision": "bf16"} if r["type"] == "work" else r) + "\n"
                                for r in lines))
    refused(jroof("report", complete, "--workload", "examples/resnet50_int8.yaml"),
            "--workload", "used for nothing")
    used = jroof("report", DATA / "h200_phases.jsonl", "--workload", "examples/resnet50_int8.yaml",
                 "--format", "json")
    assert used.returncode == 0, used.stderr
    phases = json.loads(used.stdout)["phases"]
    given = {p["name"]: p["roofline"]["from_workload"] for p in phases if p["roofline"]}
    assert given == {"copy": ["precision"], "gemm-bf16": []}  # the copy reported no precision
