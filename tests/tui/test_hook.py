"""The reporting hook: work reported by a benchmark over the per-user socket puts the phase on the
roof, with throughput, joules per iteration and a verdict, the same in the recording and report."""

from __future__ import annotations

import json
import threading
import time
from datetime import timezone
from pathlib import Path

import pytest
from cli_support import jroof as subprocess_run_cli
from paths import REPO

from jtop_roof import hook
from jtop_roof.analysis.ledger import COMMAND_ORIGIN, EnergyLedger
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.analysis.verdict import place
from jtop_roof.commands.recording import headless_runtime
from jtop_roof.formats.recorder import Recorder
from jtop_roof.formats.trtexec import read_trtexec
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Clocked, Gpu, Rail, Sample
from jtop_roof.model.timeline import parse_tz
from jtop_roof.outputs.report import build_report
from jtop_roof.roofline.board import resolve_board
from jtop_roof.roofline.devices import load_devices
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import MarkerListener, WorkReport
from jtop_roof.runtime.headless import run_headless

ROOT = REPO


def test_the_hook_reaches_a_monitor_through_its_socket(runtime_dir):
    got: list[WorkReport] = []
    listener = MarkerListener(lambda kind, name: None, on_work=got.append)
    listener.start()
    try:
        assert hook.work(iterations=3, flops=6e12, bytes=1.5e9, precision="bf16") == 1
        with pytest.raises(ValueError):
            hook.work(iterations=-1)
        with pytest.raises(ValueError):
            hook.work(iterations=1, flops=float("nan"))
    finally:
        listener.close()
    assert got == [WorkReport(3.0, 6e12, 1.5e9, "bf16")]
    assert hook.work(iterations=1) == 0  # no monitor: not an error


class PacedSource:
    """A live-looking H200 source: a sample every 10 ms of stream time 0.5 s apart, GPU busy."""

    kind = "host"

    def __init__(self, count: int) -> None:
        self.count = count
        self.stopped = threading.Event()
        self.emitted = 0

    def describe(self) -> SourceInfo:
        return SourceInfo.from_mapping({"source": "host", "model": "NVIDIA H200", "gpu": "NVIDIA H200",
                                        "interval_ms": 500})

    def records(self):
        for i in range(self.count):
            if self.stopped.wait(0.01):
                return
            self.emitted = i + 1
            yield Sample(t_wall=1000.0 + 0.5 * i, t_mono=0.5 * i, gpu=Gpu(99.0, (1980,)),
                         emc=Clocked(30.0, 3201), rails={"NVML_GPU": Rail(600_000.0)})
        self.stopped.wait()

    def stop(self) -> None:
        self.stopped.set()


def test_work_reported_to_a_headless_record_lands_in_the_recording_and_the_report(runtime_dir, tmp_path):
    path = tmp_path / "run.jsonl"
    source = PacedSource(200)
    info = source.describe()
    recorder = Recorder(path, dict(info.header))
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(run_headless(
        source, recorder, None, install_signal_handlers=False, config=Config(), listen_for_markers=True)))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not list(runtime_dir.glob("jroof/*.sock")) and time.monotonic() < deadline:
            time.sleep(0.01)
        while source.emitted < 20:
            time.sleep(0.01)
        assert hook.mark("gemm-bf16") == 1
        n = 8192
        for _ in range(5):
            assert hook.work(iterations=1, flops=2 * n**3, bytes=3 * n * n * 2, precision="bf16") == 1
            time.sleep(0.05)
        while source.emitted < 150:
            time.sleep(0.01)
        assert hook.end() == 1
    finally:
        source.stop()
        thread.join(10)
    assert result == [0]
    written = [json.loads(line) for line in path.read_text().splitlines()]
    works = [w for w in written if w["type"] == "work"]
    assert len(works) == 5 and all(w["flops"] == 2 * n**3 and w["precision"] == "bf16" for w in works)

    def lines():
        with open(path, encoding="utf-8") as f:
            yield from f

    report = build_report(lines, source={"file": str(path)}, tz=parse_tz("UTC"), interval_s=None,
                          info=SourceInfo.from_mapping(written[0]), config=Config())
    (phase,) = report["phases"]
    assert phase["name"] == "gemm-bf16" and report["device"] == "h200"
    workload = phase["workload"]
    assert workload["iterations"] == 5
    assert workload["throughput_per_s"] == pytest.approx(5 / phase["duration_s"])
    assert workload["j_per_iter"] == pytest.approx(phase["energy_j"]["rails"]["NVML_GPU"] / 5)
    assert workload["energy_measures"].startswith("NVML_GPU")
    roof = phase["roofline"]
    assert roof["verdict"] == "compute-bound" and roof["precision"] == "bf16_tensor"
    assert roof["intensity_flop_per_byte"] == pytest.approx(2 * n / 6)  # 2N^3 / (3 N^2 x 2 bytes)
    assert roof["achieved_flops_per_s"] == pytest.approx(5 * 2 * n**3 / phase["duration_s"])


# ------------------------------------------------------------------------------------- verdicts

DB = load_devices()
H200 = resolve_board(SourceInfo("host"), DB, device_id="h200")


def span_with(flops, bytes_, precision="bf16", gpu_mhz=1980.0, seconds=10.0):
    ledger = EnergyLedger(0.5)
    ledger.start_phase("p", 0.0)
    for i in range(int(seconds / 0.5) + 1):
        ledger.add_sample(0.5 * i, None, None, {}, gpu_mhz=gpu_mhz, emc_mhz=3201.0)
        if i == 1:
            ledger.add_work(1, flops, bytes_, precision)
    return ledger.phases()[0]


def test_a_copy_with_no_flops_is_memory_bound_and_judged_on_bandwidth():
    span = span_with(0.0, 4.3e13, precision=None, seconds=10.0)  # 4.3 TB/s read + written
    placement = place(span, H200)
    assert placement.verdict == "memory-bound"
    bandwidth = 4.8e12  # H200 datasheet, at the 3201 MHz memory clock
    assert placement.efficiency_current == pytest.approx(4.3e12 / bandwidth, rel=0.01)


def test_a_big_gemm_is_compute_bound_and_a_throttle_of_the_gpu_makes_it_clock_bound():
    n = 8192
    span = span_with(100 * 2 * n**3, 100 * 3 * n * n * 2, gpu_mhz=1485.0)
    assert place(span, H200).verdict == "compute-bound"
    placed = place(span, H200, {"gpu"})  # the GPU throttled during it (ClockEvents says which)
    assert placed.verdict == "clock-bound"
    # against the roof at 1485 MHz vs at 1980 MHz: the max-clock efficiency is 1485/1980 of it
    assert placed.efficiency_max == pytest.approx(placed.efficiency_current * 1485 / 1980, rel=1e-6)


def test_unknown_without_a_device_or_without_flops_and_bytes():
    span = span_with(None, None)
    assert place(span, H200).verdict == "unknown"
    nobody = resolve_board(SourceInfo("replay"), DB)
    assert place(span_with(1e12, 1e9), nobody).verdict == "unknown"


def test_session_work_during_a_replay_is_in_the_file_ledger():
    """A work report made while replaying rebuilds the file's ledger with it (like a marker)."""
    records = [Sample(t_mono=float(t), gpu=Gpu(99.0, (1980,)), rails={"NVML_GPU": Rail(1000.0)})
               for t in range(10)]
    from jtop_roof.analysis.pipeline import build_ledger

    pipeline = Pipeline(history_s=60, interval_s=1.0)
    pipeline.load_ledger(lambda extra: build_ledger(records, 1.0, extra))
    pipeline.ingest(records[0])
    pipeline.mark("phase_start", "x", "key", None, 2.5)
    pipeline.work(4, 8e12, None, "fp32", None, 3.5)
    pipeline.finish()  # the rebuild runs off the caller's thread; the stream's end waits for it
    (phase,) = pipeline.ledger.phases()
    assert phase.iterations == 4 and phase.flops == 8e12 and phase.samples == 7


def test_run_headless_records_a_workload_that_marks_and_reports_itself(runtime_dir, tmp_path):
    """`jroof-tui run --headless --record F -- python w.py`: the workload's first marker is taken
    (it starts once the listener is up), the run stops when it exits, with its exit status."""
    workload = tmp_path / "w.py"
    workload.write_text(
        "import sys, time\nfrom jtop_roof import hook\n"
        "assert hook.mark('idle') == 1\ntime.sleep(0.4)\nhook.mark('gemm')\n"
        "for _ in range(3):\n    time.sleep(0.1)\n"
        "    hook.work(iterations=2, flops=1e9, bytes=1e6, precision='fp32')\n"
        "hook.end()\ntime.sleep(0.2)\nsys.exit(3)\n")
    out = tmp_path / "run.jsonl"
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "jtop_roof", "run", "--headless", "--record", str(out),
                           "--source", "host", "--interval", "100", "--", sys.executable, str(workload)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 3, done.stderr  # the workload's
    written = [json.loads(line) for line in out.read_text().splitlines()]
    starts = [(w["name"], w["origin"]) for w in written
              if w["type"] == "marker" and w["kind"] == "phase_start"]
    assert starts == [(f"{Path(sys.executable).name} w.py", "run"), ("idle", "script"), ("gemm", "script")]
    assert sum(w["iterations"] for w in written if w["type"] == "work") == 6
    assert written[-1]["type"] == "event" and written[-1]["detail"] == "stopped: the workload ended"
    # The command marked its phases: its catch-all phase gives way to them, live and in the report.
    report = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(out), "--format", "json"],
                            capture_output=True, text=True, timeout=60, env=env)
    assert [p["name"] for p in json.loads(report.stdout)["phases"]] == ["idle", "gemm"]


def test_run_gives_a_command_that_marks_nothing_one_phase_named_after_it(runtime_dir, tmp_path):
    import os
    import subprocess
    import sys

    out = tmp_path / "run.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "jtop_roof", "run", "--headless", "--record", str(out),
                           "--source", "host", "--interval", "100", "--", "/bin/sleep", "1.5"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    report = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(out), "--format", "json"],
                            capture_output=True, text=True, timeout=60, env=env)
    got = json.loads(report.stdout)
    (phase,) = got["phases"]
    assert phase["name"] == "sleep 1.5" and not phase["open"]  # it ended with the command
    assert phase["samples"] >= 10
    assert phase["duration_s"] == pytest.approx(got["whole"]["duration_s"], abs=0.3)
    # The phase is marked at the command's start and at its exit (the stop), not at samples.
    start, end = (line["mono"] for line in map(json.loads, out.read_text().splitlines())
                  if line["type"] == "marker")
    assert end - start == pytest.approx(1.5, abs=0.25)


def test_the_command_phase_gives_way_to_the_first_phase_the_command_or_user_starts():
    ledger = EnergyLedger(interval_s=1.0)
    assert ledger.start_phase("bench.py", 0.0, origin=COMMAND_ORIGIN) == "bench.py"
    for t in range(3):
        ledger.add_sample(float(t), None, 1000.0, {})
    assert ledger.current_phase == "bench.py"
    assert ledger.start_phase(None, 2.5, origin="script") == "phase 1"  # not counted: not phase 2
    ledger.add_sample(3.0, None, 1000.0, {})
    ledger.add_sample(4.0, None, 1000.0, {})
    assert [p.name for p in ledger.phases()] == ["phase 1"]
    # phase 1 runs from its marker at 2.5 s to the last sample at 4 s: 1.5 s at 1 W
    assert ledger.whole.energy_j == pytest.approx(4.0) and ledger.phases()[0].energy_j == pytest.approx(1.5)
    # Kept when nothing else starts a phase; a resume of it continues it.
    alone = EnergyLedger(interval_s=1.0)
    alone.start_phase("sleep 2", 0.0, origin=COMMAND_ORIGIN)
    assert alone.start_phase("sleep 2", 1.0, origin="resume") == "sleep 2"
    alone.end_phase()
    assert [p.name for p in alone.phases()] == ["sleep 2"]


BENCHLAB = ROOT.parent / "shared"
BENCH_LOG = BENCHLAB / "tegrastats/logs/orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_maxn_run3.log"
BENCH_TRT = BENCHLAB / "trtexec/orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_maxn_run3.log"


@pytest.mark.skipif(not BENCH_LOG.is_file(), reason="shared/ reference logs not beside the repo")
def test_report_with_trtexec_counts_only_the_timed_window():
    import re
    import subprocess
    import sys

    import numpy as np

    from jtop_roof.formats.logfile import iter_records as read

    out = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(BENCH_LOG), "--trtexec",
                          str(BENCH_TRT), "--tz", "UTC", "--device", "orin-nano-8gb-super", "--power-mode",
                          "MAXN_SUPER", "--format", "json"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    names = [p["name"] for p in report["phases"]]
    assert names == ["build", "warm-up", "timed"]
    timed = report["phases"][2]
    trt = BENCH_TRT.read_text()
    iterations = int(re.search(r"Timing trace has (\d+) queries", trt).group(1))
    throughput = float(re.search(r"Throughput: ([\d.]+) qps", trt).group(1))
    assert timed["workload"]["iterations"] == iterations
    assert timed["workload"]["throughput_per_s"] == throughput
    # Independently: the trapezoid of VDD_IN over the samples inside [summary - walltime, summary].
    stamp = r"\[(\d\d)/(\d\d)/(\d{4})-(\d\d):(\d\d):(\d\d)\]"
    summary = re.findall(stamp + r" \[I\] Total Host Walltime: ([\d.]+) s", trt)
    month, day, year, hh, mm, ss, walltime = summary[-1]
    import datetime as dt
    end = dt.datetime(int(year), int(month), int(day), int(hh), int(mm), int(ss),
                      tzinfo=dt.timezone.utc).timestamp()
    start = end - float(walltime)
    with open(BENCH_LOG, encoding="utf-8") as f:
        samples = [s for s in read(f, tz="UTC") if isinstance(s, Sample) and s.is_sample]
    inside = [s for s in samples if start <= s.t_wall <= end]
    # The trapezoid over exactly [start, end]: VDD_IN interpolated linearly at both edges.
    wall = np.array([s.t_wall for s in samples])
    mw = np.array([s.rails["VDD_IN"].now_mw for s in samples])
    t = np.concatenate(([start], wall[(wall > start) & (wall < end)], [end]))
    watts = np.interp(t, wall, mw) / 1000
    expected_j = float(np.sum((watts[1:] + watts[:-1]) / 2 * np.diff(t)))
    assert timed["samples"] == len(inside)
    assert timed["duration_s"] == pytest.approx(end - start, abs=1e-6)
    assert timed["energy_j"]["total"] == pytest.approx(expected_j, rel=1e-9)
    assert timed["workload"]["j_per_iter"] == pytest.approx(expected_j / iterations, rel=1e-9)


@pytest.mark.skipif(not BENCH_LOG.is_file(), reason="shared/ reference logs not beside the repo")
async def test_replaying_a_log_with_its_trtexec_puts_the_timed_phase_on_the_roof(tmp_path):
    from tui_support import make_config, wait_until

    from jtop_roof.sources.replay import ReplaySource
    from jtop_roof.tui.app import JroofApp

    source = ReplaySource(BENCH_LOG, tz="UTC", hold_at_end=True, speed=64)
    source.pause()
    config = make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER", trtexec=str(BENCH_TRT),
                         workload=str(ROOT / "examples" / "resnet50_int8.yaml"))
    app = JroofApp(source, config, user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: [p.name for p in app.pipeline.ledger.phases()][-1:] == ["timed"],
                         "trtexec's phases in the file's ledger")
        timed = app.pipeline.ledger.phases()[-1]
        assert timed.iterations == 2547 and not timed.is_open
        source.seek_to("end")
        await wait_until(pilot, lambda: app.phase is None and len(app.history) > 50, "the end")
        source.seek(timed.first_mono - app.pipeline.ledger.whole.first_mono + 1.0, relative=False)
        await wait_until(pilot, lambda: app.phase == "timed", "the timed phase")
        app.redraw_now()
        text = app.query_one("#roofline").readout.plain
        # INT8 ResNet-50 at 162 OP/B, under the 321 ridge, but the GPU 97% busy beside an EMC at
        # 27%: the loads say the GPU bounds it (``verdict.place``), and the pane says the same
        assert "timed: compute-bound" in text
    out = subprocess_run_cli("--trtexec", str(BENCH_TRT))
    assert out.returncode == 2 and "--trtexec goes with --replay" in out.stderr


def restamped_now(log: Path, tmp_path: Path) -> Path:
    """A real trtexec log moved in time to start now (local time, as trtexec stamps): a fake
    trtexec printing it runs within the recording that ``run`` makes of it."""
    import re
    from datetime import datetime

    stamp = re.compile(r"\[(\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d)\]")
    text = log.read_text()
    first = datetime.strptime(stamp.search(text).group(1), "%m/%d/%Y-%H:%M:%S")
    shift = datetime.now().replace(microsecond=0) - first
    moved = stamp.sub(lambda m: (datetime.strptime(m.group(1), "%m/%d/%Y-%H:%M:%S") + shift)
                      .strftime("[%m/%d/%Y-%H:%M:%S]"), text)
    out = tmp_path / log.name
    out.write_text(moved)
    return out


def test_run_keeps_trtexecs_output_for_report(runtime_dir, tmp_path):
    """`run -- trtexec ...`: its output is shown and kept beside the recording, and `report` of the
    recording reads it with no --trtexec (saying so), as an explicit --trtexec would."""
    import os
    import stat
    import subprocess
    import sys

    excerpt = restamped_now(sorted((ROOT / "tests" / "data" / "trtexec").glob("*.log"))[0], tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "trtexec"
    # It runs for a second: a recording of a workload gone before the first sample has no sample.
    fake.write_text(f"#!/bin/sh\ncat {excerpt}\nsleep 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "r.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "jtop_roof", "run", "--headless", "--record", str(out),
                           "--source", "host", "--interval", "100", "--", "trtexec", "--int8"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    kept = Path(f"{out}.trtexec.log")
    assert kept.read_text() == excerpt.read_text() == done.stdout
    assert f"trtexec's output in {kept}" in done.stderr and f"`jroof-tui report {out}`" in done.stderr
    found = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(out), "--format", "json"],
                           capture_output=True, text=True, timeout=60, env=env)
    given = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(out), "--format", "json",
                            "--trtexec", str(kept)], capture_output=True, text=True, timeout=60, env=env)
    assert found.returncode == given.returncode == 0, found.stderr + given.stderr
    assert f"kept beside it by `run`: {kept}" in found.stderr and "kept beside" not in given.stderr
    auto, explicit = json.loads(found.stdout), json.loads(given.stdout)
    assert auto["source"]["trtexec"] == str(kept) and "trtexec" not in explicit["source"]
    assert auto["trtexec"] == explicit["trtexec"] and auto["trtexec"]["iterations"] > 0
    assert auto["phases"] == explicit["phases"]


def test_record_serves_metrics_when_asked(runtime_dir, tmp_path):
    """`record ... --prometheus=PORT`: the same pipeline's numbers on /metrics, on loopback."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = PacedSource(400)
    path = tmp_path / "m.jsonl"
    recorder = Recorder(path, dict(source.describe().header))
    result: list[int] = []
    runtime, exporter = headless_runtime(source, recorder, Config(prometheus=str(port)))
    assert exporter is not None
    thread = threading.Thread(target=lambda: result.append(run_headless(
        source, recorder, None, install_signal_handlers=False, runtime=runtime)))
    thread.start()
    try:
        while source.emitted < 10:
            time.sleep(0.01)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        source.stop()
        thread.join(10)
        exporter.close()
    assert result == [0]
    assert "jroof_gpu_clock_hertz 1.98e+09" in body or "jroof_gpu_clock_hertz 1980000000" in body
    assert 'jroof_rail_power_watts{rail="NVML_GPU"} 600' in body


@pytest.mark.skipif(not BENCH_LOG.is_file(), reason="shared/ reference logs not beside the repo")
async def test_trtexecs_output_kept_beside_a_log_is_read_by_replay_and_report(tmp_path):
    """What `run -- trtexec` leaves (FILE and FILE.trtexec.log) replays and reports with trtexec's
    phases and no --trtexec; a kept output without its summary (trtexec stopped) is skipped, the
    run still reported."""
    import shutil

    from tui_support import make_config, wait_until

    from jtop_roof.outputs.report import report_file
    from jtop_roof.sources.replay import ReplaySource
    from jtop_roof.tui.app import JroofApp

    log = tmp_path / "r50.log"
    shutil.copy(BENCH_LOG, log)
    shutil.copy(BENCH_TRT, tmp_path / "r50.log.trtexec.log")
    source = ReplaySource(log, tz="UTC", hold_at_end=True, speed=64)
    source.pause()
    app = JroofApp(source, make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER"),
                   user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: [p.name for p in app.pipeline.ledger.phases()][-1:] == ["timed"],
                         "trtexec's phases from the kept output")
        assert app.pipeline.ledger.phases()[-1].iterations == 2547
    config = make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")
    kept = report_file(str(log), tz=timezone.utc, interval_s=None, config=config)
    given = report_file(str(log), tz=timezone.utc, interval_s=None, config=config,
                        trtexec=read_trtexec(BENCH_TRT, "UTC"))
    assert kept["phases"] == given["phases"] and kept["source"]["trtexec"].endswith("r50.log.trtexec.log")
    (tmp_path / "r50.log.trtexec.log").write_text("&&&& RUNNING TensorRT.trtexec\n")  # stopped early
    without = report_file(str(log), tz=timezone.utc, interval_s=None, config=config)
    assert "timing summary" in without["source"]["trtexec_unread"]
    assert "timed" not in [p["name"] for p in without["phases"]]
    assert without["whole"]["energy_j"] == kept["whole"]["energy_j"]


async def test_the_monitor_under_run_shows_the_command_phase_until_the_command_marks(tmp_path):
    from factories import synthetic_sample
    from tui_support import ScriptedSource, make_config, wait_until

    from jtop_roof.tui.app import JroofApp

    app = JroofApp(ScriptedSource([synthetic_sample(i) for i in range(5)]), make_config(),
                   user_themes=tmp_path, command_phase="python3 bench.py")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.phase == "python3 bench.py", "the command's phase")
        app.request_marker("phase_start", "warmup")
        await wait_until(pilot, lambda: app.phase == "warmup", "the command's own phase")
        assert [p.name for p in app.pipeline.ledger.phases()] == ["warmup"]
        app.end_command_phase()  # the command ended: its own phase is not the run's to end
        assert app.phase == "warmup"
    alone = JroofApp(ScriptedSource([synthetic_sample(i) for i in range(5)]), make_config(),
                     user_themes=tmp_path, command_phase="sleep 2")
    async with alone.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: alone.phase == "sleep 2", "the command's phase")
        alone.end_command_phase()
        assert alone.phase is None and [(p.name, p.is_open) for p in alone.pipeline.ledger.phases()] \
            == [("sleep 2", False)]


def test_the_command_phase_name_is_the_command_short_and_printable():
    from jtop_roof.commands.run import command_phase_name as name

    assert name(["/usr/bin/python3", "/work/b/bench.py", "-n", "3"]) == "python3 bench.py -n 3"
    assert name(["trtexec", "--loadEngine=/x/r.engine", "--int8"]) == "trtexec --loadEngine=r.engine --int8"
    assert name(["./run.sh", "data/in.txt"]) == "run.sh data/in.txt"  # only paths are shortened
    assert name(["py", "a\nb", "[red]x[/]"]) == "py 'a b' '[red]x[/]'"  # one line, markup kept as text
    long = name(["python3", "x" * 100])
    assert len(long) == 60 and long.endswith("…")


@pytest.mark.parametrize("source", [("--source", "demo"),
                                    ("--replay", "tests/data/fake_tegrastats_orinnano_super.txt")])
def test_run_on_a_stream_without_a_clock_of_its_own_keeps_the_commands_phase(tmp_path, source):
    """The demo's and a replay's times are their stream's: there is no "now" before the first sample,
    so the command's phase starts at that sample (it was written without a time and lost)."""
    import os
    import subprocess
    import sys

    out = tmp_path / "run.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_RUNTIME_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "jtop_roof", "run", "--headless", "--record", str(out),
                           *source, "--", "/bin/sleep", "1.5"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    markers = [line for line in map(json.loads, out.read_text().splitlines()) if line["type"] == "marker"]
    assert [(m["kind"], m["origin"]) for m in markers] == [("phase_start", "run"), ("phase_end", "run")]
    assert all(m["mono"] is not None for m in markers)
    report = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(out), "--format", "json"],
                            capture_output=True, text=True, timeout=60, env=env)
    (phase,) = json.loads(report.stdout)["phases"]
    assert phase["name"] == "sleep 1.5" and not phase["open"] and phase["samples"] > 0
