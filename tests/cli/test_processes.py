"""Who else ran: process readings from a fake /proc, their JSON form against hostile lines, the
ledger's per-span tally, report's and compare's use of it; fans from a fake pwm-fan tree; I/O rates."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import psutil
import pytest

from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.analysis.processes import MAX_TRACKED, ProcessTally
from jtop_roof.model.codec import (
    MAX_PROCESS_ROWS,
    Tally,
    record_from_json,
    record_to_json,
    sample_from_json,
    sample_to_json,
)
from jtop_roof.model.records import Fan, IoRates, ProcessReading, ProcessRow, Sample
from jtop_roof.outputs.compare import item_from_report
from jtop_roof.sources.processes import (
    BenchmarkRoots,
    IoMeter,
    ProcessSampler,
    ProcIoCounters,
    io_counters,
    kept,
    read_stat,
)
from jtop_roof.sources.sysfs import BoardFiles, find_fans, read_fans

TICK = os.sysconf("SC_CLK_TCK")


def stat_line(pid: int, name: str, ppid: int, ticks: int, start: int, rss_pages: int) -> str:
    """A /proc/<pid>/stat line in the kernel's field order (fields 3..24 and a few more)."""
    rest = ["S", ppid, 0, 0, 0, -1, 0, 0, 0, 0, 0, ticks, 0, 0, 0, 20, 0, 1, 0, start, 0, rss_pages, 0, 0]
    return f"{pid} ({name}) " + " ".join(map(str, rest)) + "\n"


class FakeProc:
    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, pid: int, name: str, ppid: int, ticks: int, start: int = 0, rss_pages: int = 256) -> None:
        (self.root / str(pid)).mkdir(parents=True, exist_ok=True)
        (self.root / str(pid) / "stat").write_text(stat_line(pid, name, ppid, ticks, start, rss_pages))

    def drop(self, pid: int) -> None:
        (self.root / str(pid) / "stat").unlink()
        (self.root / str(pid)).rmdir()


def sampler_on(root: Path, roots: BenchmarkRoots | None = None, **kwargs):
    clock = {"boot": 1000.0}
    sampler = ProcessSampler(proc=str(root), roots=roots or BenchmarkRoots(), boottime=lambda: clock["boot"],
                             clock=lambda: 1.7e9, mono=lambda: clock["boot"], **kwargs)
    return sampler, clock


def test_a_stat_line_is_read_with_spaces_and_parentheses_in_its_name():
    found = read_stat(stat_line(7, "my (odd) name", 1, 42, 5, 10).encode())
    assert found is not None and found.name == "my (odd) name" and found.ticks == 42 and found.ppid == 1
    for bad in (b"", b"7 (x", b"7 (x) S 1 2", b"7 (x) " + b" ".join([b"z"] * 30)):
        assert read_stat(bad) is None


def test_cpu_is_percent_of_one_core_since_the_last_reading_and_the_first_only_primes(tmp_path):
    proc = FakeProc(tmp_path)
    proc.put(10, "yes", 1, ticks=0)
    proc.put(11, "idle", 1, ticks=0)
    sampler, clock = sampler_on(tmp_path)
    first = sampler.read_once()
    assert first.priming and all(row.cpu_pct is None for row in first.processes)
    clock["boot"] += 5.0
    proc.put(10, "yes", 1, ticks=5 * TICK)  # 5 s of CPU in 5 s: a whole core
    proc.put(11, "idle", 1, ticks=0)
    second = sampler.read_once()
    rows = {row.name: row for row in second.processes}
    assert not second.priming
    assert rows["yes"].cpu_pct == pytest.approx(100.0)
    assert rows["idle"].cpu_pct == 0.0  # kept: among the largest by RSS


def test_a_process_started_since_is_measured_over_its_life_and_a_reused_pid_is_new(tmp_path):
    proc = FakeProc(tmp_path)
    proc.put(20, "old", 1, ticks=100, start=0)
    sampler, clock = sampler_on(tmp_path)
    sampler.read_once()
    clock["boot"] += 5.0
    proc.put(20, "new", 1, ticks=1 * TICK, start=int((clock["boot"] - 2.0) * TICK))  # same pid, born 2 s ago
    row = sampler.read_once().processes[0]
    assert row.name == "new" and row.cpu_pct == pytest.approx(50.0)


def test_the_benchmark_tree_is_marked_and_kept_though_idle(tmp_path):
    proc = FakeProc(tmp_path)
    proc.put(30, "bench", 1, ticks=0, rss_pages=1)
    proc.put(31, "worker", 30, ticks=0, rss_pages=1)
    proc.put(32, "other", 1, ticks=0, rss_pages=1)
    for pid in range(40, 48):  # larger processes push the small ones out of the RSS top
        proc.put(pid, f"big{pid}", 1, ticks=0, rss_pages=10_000)
    roots = BenchmarkRoots()
    roots.add(30)
    sampler, _ = sampler_on(tmp_path, roots)
    rows = {row.name: row for row in sampler.read_once().processes}
    assert rows["bench"].benchmark and rows["worker"].benchmark
    assert "other" not in rows


def test_a_fifo_or_a_vanished_process_is_left_out(tmp_path):
    proc = FakeProc(tmp_path)
    proc.put(50, "alive", 1, ticks=0)
    (tmp_path / "51").mkdir()
    os.mkfifo(tmp_path / "51" / "stat")
    (tmp_path / "52").mkdir()  # ended between the listing and the read
    sampler, _ = sampler_on(tmp_path)
    assert [row.name for row in sampler.read_once().processes] == ["alive"]


def test_a_reading_keeps_at_most_the_cap_busiest_first():
    rows = [ProcessRow(pid, f"p{pid}", float(pid), 1.0) for pid in range(1, 200)]
    chosen = kept(rows)
    assert len(chosen) <= 48 and chosen[0].pid == 199


def test_a_process_reading_comes_back_from_its_line_and_hostile_rows_are_dropped():
    reading = ProcessReading(1.7e9, 12.0, [ProcessRow(5, "yes", 99.5, 1.5, 300.0, True),
                                           ProcessRow(6, "sh", None, 2.0)], "/proc + NVML", 5.0, False, 1.0)
    assert record_from_json(record_to_json(reading)) == reading
    tally = Tally()
    hostile = {"type": "processes", "t": 1.7e9, "mono": 1.0, "period_s": 5,
               "processes": [{"pid": True, "name": "x"}, {"pid": -4}, {"pid": 2 ** 40}, "junk",
                             {"pid": 9, "name": "ok\ud800", "cpu_pct": math.nan, "rss_mb": -1,
                              "gpu_mem_mb": "lots", "benchmark": "yes"}]
               + [{"pid": 1}] * (MAX_PROCESS_ROWS + 10)}
    back = record_from_json(hostile, tally)
    assert isinstance(back, ProcessReading)
    row = back.processes[0]
    assert (row.pid, row.name, row.cpu_pct, row.rss_mb, row.gpu_mem_mb, row.benchmark) == \
        (9, "ok\ufffd", None, None, None, False)
    assert tally.nulled >= 5 and tally.dropped == 5 + MAX_PROCESS_ROWS + 10 - MAX_PROCESS_ROWS
    assert record_from_json({"type": "processes", "mono": 1.0, "processes": []}, Tally()) is None


def test_fans_and_io_come_back_from_a_samples_line_and_bad_values_are_none():
    sample = Sample(t_wall=1.7e9, t_mono=1.0, fans={"pwmfan": Fan(50.2, 1741.0)},
                    io=IoRates(1.5, 0.0, None, 2.0))
    assert sample_from_json(record_to_json(sample)) == sample
    obj = sample_to_json(sample)
    obj["fans"] = {"pwmfan": {"speed_pct": 300, "rpm": math.inf}}
    obj["io_mb_s"] = {"disk_read": -1}
    back = sample_from_json(obj)
    assert back.fans == {"pwmfan": Fan(None, None)} and back.io == IoRates(None, None, None, None)


def reading(t: float, rows: list[ProcessRow], priming: bool = False) -> ProcessReading:
    return ProcessReading(1.7e9 + t, t, rows, "/proc", 5.0, priming)


def test_a_spans_processes_are_the_ledgers_mean_over_the_readings_that_measured():
    ledger = EnergyLedger()
    ledger.add_processes(reading(0.0, [ProcessRow(1, "yes", None, 1.0)], priming=True))
    ledger.start_phase("bench", 1.0)
    ledger.add_processes(reading(5.0, [ProcessRow(1, "yes", 100.0, 1.0), ProcessRow(2, "bench", 80.0, 9.0,
                                                                                     benchmark=True)]))
    ledger.add_processes(reading(10.0, [ProcessRow(2, "bench", 40.0, 12.0, benchmark=True)]))
    whole = {p.name: p for p in ledger.whole.processes}
    assert whole["yes"].cpu_percent_mean == 50.0  # left out of the second reading: below its floor
    assert whole["bench"].rss_mb_max == 12.0 and whole["bench"].benchmark
    assert whole["yes"].foreign_and_busy and not whole["bench"].foreign_and_busy
    assert [p.name for p in ledger.phases()[0].processes] == ["bench", "yes"]


def test_a_span_tally_stays_bounded():
    tally = ProcessTally()
    for pid in range(1, MAX_TRACKED + 50):
        tally.add(reading(float(pid), [ProcessRow(pid, "p", float(pid), 1.0)]))
    assert len(tally.seen) == MAX_TRACKED and max(tally.seen) == MAX_TRACKED + 49


def test_compare_flags_an_item_whose_span_had_another_busy_process():
    span = {"name": "whole run", "processes": [
        {"name": "yes", "pid": 3, "cpu_percent_mean": 96.0, "benchmark": False},
        {"name": "bench", "pid": 4, "cpu_percent_mean": 99.0, "benchmark": True},
        {"name": "sshd", "pid": 5, "cpu_percent_mean": 1.0, "benchmark": False}]}
    report = {"whole": span, "phases": [], "events": [], "source": {}, "device": None, "power_mode": None}
    assert item_from_report(report, "a")["foreign_processes"] == ["yes (96%)"]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_pwm_fan_is_read_as_percent_of_255_with_its_tachometer(tmp_path):
    write(tmp_path / "sys/class/hwmon/hwmon3/name", "pwmfan\n")
    write(tmp_path / "sys/class/hwmon/hwmon3/pwm1", "128\n")
    write(tmp_path / "sys/class/hwmon/hwmon5/name", "pwm_tach\n")  # Jetson's own tachometer node
    write(tmp_path / "sys/class/hwmon/hwmon5/rpm", "1741\n")
    write(tmp_path / "sys/class/hwmon/hwmon1/name", "ina3221\n")
    fans = find_fans(tmp_path)
    assert read_fans(fans) == {"pwmfan": Fan(50.2, 1741.0)}
    sample = Sample(t_wall=1.0, t_mono=1.0)
    BoardFiles(tmp_path, run=lambda _c: None).fill(sample)
    assert sample.fans == {"pwmfan": Fan(50.2, 1741.0)}


def test_bad_fan_values_are_no_reading_and_a_fifo_is_never_read(tmp_path):
    write(tmp_path / "sys/class/hwmon/hwmon0/name", "pwmfan\n")
    write(tmp_path / "sys/class/hwmon/hwmon0/pwm1", "300\n")
    write(tmp_path / "sys/class/hwmon/hwmon0/fan1_input", "fast\n")
    assert read_fans(find_fans(tmp_path)) is None
    os.unlink(tmp_path / "sys/class/hwmon/hwmon0/pwm1")
    os.mkfifo(tmp_path / "sys/class/hwmon/hwmon0/pwm1")
    assert read_fans(find_fans(tmp_path)) is None
    assert find_fans(tmp_path / "absent") == []


def test_io_rates_are_the_counters_steps_over_time_and_a_step_back_is_none():
    values = iter([(0.0, 0.0, 0.0, None), (2 * 2**20, 4 * 2**20, 2**20, None), (0.0, 8 * 2**20, 2**20, None)])
    now = iter([0.0, 2.0, 4.0])
    meter = IoMeter(counters=lambda: next(values), mono=lambda: next(now))
    assert meter.read() is None
    assert meter.read() == IoRates(1.0, 2.0, 0.5, None)
    assert meter.read() == IoRates(None, 2.0, 0.0, None)  # a counter reset: no rate


def test_the_real_proc_has_this_process_in_it():
    sampler = ProcessSampler(roots=BenchmarkRoots())
    sampler.read_once()
    time.sleep(0.2)
    rows = ProcessSampler(roots=BenchmarkRoots()).read_once().processes
    assert rows and all(row.rss_mb is not None and row.rss_mb >= 0 for row in rows)


def test_prometheus_has_the_fans_ratio_and_rpm():
    from jtop_roof.outputs.serve import Snapshot, render

    fans = {"pwmfan": Fan(50.0, 1741.0), "pwmfan_2": Fan(None)}
    text = render(Snapshot(Sample(t_wall=1.0, t_mono=1.0, fans=fans)))
    assert 'jroof_fan_speed_ratio{fan="pwmfan"} 0.5' in text
    assert 'jroof_fan_speed_rpm{fan="pwmfan"} 1741.0' in text
    assert 'jroof_fan_speed_rpm{fan="pwmfan_2"}' not in text and 'ratio{fan="pwmfan_2"}' not in text


def test_the_pane_marks_the_benchmark_and_a_busy_stranger():
    from types import SimpleNamespace

    from jtop_roof.tui.panes.processes import BENCHMARK_MARK, ProcessesPane

    ledger = EnergyLedger()
    ledger.add_processes(reading(5.0, [ProcessRow(1, "yes", 90.0, 1.0), ProcessRow(2, "bench", 50.0, 9.0,
                                                                                     benchmark=True)]))
    view = SimpleNamespace(phase=None, whole=ledger.whole)
    lines = ProcessesPane(id="processes").lines(view, 80)  # type: ignore[arg-type]
    texts = ["".join(chunk[0] for chunk in line) for line in lines]
    yes = next(line for line in lines if "yes" in "".join(c[0] for c in line))
    assert any(text.startswith(BENCHMARK_MARK) and "bench" in text for text in texts)
    assert ("  90.0", "crit") in yes
    empty = ProcessesPane(id="processes").lines(SimpleNamespace(phase=None, whole=None), 80)  # type: ignore[arg-type]
    assert "no process readings" in empty[0][0][0]


def test_record_of_the_host_lists_a_busy_yes_in_the_whole_run(tmp_path):
    """`yes > /dev/null` runs beside `record --source host --duration 8`: the whole run lists it by
    name, with the share of a core that its own ticks in /proc say it got meanwhile. That share is
    measured, not assumed, so the machine's load changes the figure but not the verdict."""
    import json
    import shutil
    import subprocess
    import sys
    import time

    jroof = Path(sys.executable).parent / "jroof-tui"
    yes = shutil.which("yes")
    if yes is None or not jroof.exists():
        pytest.skip("needs yes and the installed jroof-tui")
    tick_s = 1 / os.sysconf("SC_CLK_TCK")

    def cpu_s(pid: int) -> float:
        """utime + stime (fields 14 and 15 of /proc/PID/stat; the name may hold spaces)."""
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * tick_s

    out = tmp_path / "r.jsonl"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(tmp_path)}
    with open(os.devnull, "wb") as null:
        busy = subprocess.Popen([yes], stdout=null)
        try:
            cpu, wall = cpu_s(busy.pid), time.monotonic()
            subprocess.run([str(jroof), "record", str(out), "--source", "host", "--duration", "8",
                            "--sysfs-root", str(tmp_path)],
                           env=env, check=True, timeout=60, capture_output=True)
            share = (cpu_s(busy.pid) - cpu) / (time.monotonic() - wall) * 100
        finally:
            busy.kill()
            busy.wait()
    report = json.loads(subprocess.run([str(jroof), "report", str(out), "--format", "json"], env=env,
                                       check=True, capture_output=True, timeout=60).stdout)
    found = [p for p in report["whole"]["processes"] if p["pid"] == busy.pid]
    assert found and found[0]["name"] == "yes", report["whole"]["processes"]
    # jroof reads a 5 s window of the run, /proc's share is over all of it: under a changing load
    # the two differ, but not threefold (an unread process is 0, a whole core is 100).
    assert share / 3 <= found[0]["cpu_percent_mean"] <= share * 3, (found[0], share)


def _proc_tree(root: Path, diskstats: str, net_dev: str, disks: list[str]) -> ProcIoCounters:
    (root / "proc" / "net").mkdir(parents=True)
    (root / "proc" / "diskstats").write_text(diskstats)
    (root / "proc" / "net" / "dev").write_text(net_dev)
    (root / "block").mkdir()
    for disk in disks:
        (root / "block" / disk).mkdir()
    return ProcIoCounters(str(root / "proc"), str(root / "block"), mono=lambda: 0.0)


NET_DEV = "".join(line + "\n" for line in (
    "Inter-|   Receive                                                |  Transmit",
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls",
    "    lo: 9000      10    0    0    0     0          0         0     9000      10    0    0    0     0",
    "  eth0: 1000       5    0    0    0     0          0         0      300       3    0    0    0     0",
    " wlan0:   24       1    0    0    0     0          0         0       76       1    0    0    0     0",
))


def test_proc_counters_sum_whole_disks_and_interfaces_but_loopback(tmp_path):
    """As psutil's: sectors of the disks /sys/block lists (a partition would count twice) at 512
    bytes, bytes of every interface but lo; a disk name with a slash is listed with a '!'."""
    diskstats = ("   7       0 loop0 10 0 80 1 0 0 0 0 0 1 1\n"
                 " 179       0 mmcblk0 100 5 2000 50 40 2 800 30 0 60 80\n"
                 " 179       1 mmcblk0p1 90 5 1900 45 40 2 800 30 0 55 75\n"
                 " 104       0 cciss/c0d0 1 0 8 1 1 0 16 1 0 1 2\n")
    counters = _proc_tree(tmp_path, diskstats, NET_DEV, ["loop0", "mmcblk0", "cciss!c0d0"])
    assert counters.readable()
    assert counters() == ((80 + 2000 + 8) * 512.0, (0 + 800 + 16) * 512.0, 1024.0, 376.0)


def test_proc_counters_say_none_for_what_they_cannot_read(tmp_path):
    counters = _proc_tree(tmp_path, " 179 1 mmcblk0p1 1 0 8 1 1 0 8 1 0 1 1\n",
                          "h1\nh2\n    lo: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n", ["mmcblk0"])
    assert counters() == (None, None, None, None)  # no whole disk, no interface but loopback
    (tmp_path / "proc" / "diskstats").write_text(" 179 0 mmcblk0 x y z\n")
    (tmp_path / "proc" / "net" / "dev").unlink()
    assert counters() == (None, None, None, None)
    assert not counters.readable()


@pytest.mark.skipif(not ProcIoCounters().readable(), reason="no /proc/diskstats here")
def test_proc_counters_read_what_psutil_reads_on_this_machine():
    """Counters only grow: ours, read between two psutil reads, lie between them."""
    before = io_counters(psutil)
    ours = ProcIoCounters()()
    after = io_counters(psutil)
    for low, mine, high in zip(before, ours, after, strict=True):
        assert (low is None) == (mine is None) == (high is None)
        if mine is not None:
            assert low <= mine <= high
