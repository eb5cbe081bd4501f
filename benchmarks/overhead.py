"""How much the monitor costs: CPU per wall second at 1 Hz, and memory with a day of history.

    .venv/bin/python benchmarks/overhead.py            # 60 s runs + the 24 h history check
    .venv/bin/python benchmarks/overhead.py --seconds 40 --size 200x60 --tmux
    .venv/bin/python benchmarks/overhead.py --part tmux --seconds 40    # one part only

Part 1 runs the real app headless (Textual's test driver: layout, rendering and plots all run;
only the terminal write is skipped) on a replay of a long 1 Hz recording played at 1x, after a
seek that fills the plots, and reports process CPU seconds per wall second (all threads: source
worker, recorder, event loop) and peak RSS, with every pane visible, the roofline drawn (the demo's
board and mode are given). Target: <= 1 % of one core at 1 Hz at 120x40 and at 200x60 (headless
record: <= 0.5 %).

With ``--tmux`` (or ``--part tmux``), the same replay runs as the real ``jroof-tui --replay FILE
--device ... --power-mode ...`` in a tmux terminal of that size, seeked 150 s in with the right
arrow key, and its CPU is read from /proc (the process, its threads and its children). This one is
the figure that counts: the test driver's run never turns screen updates into escape sequences
and never writes them (``App._display`` returns early when headless), so it reads lower.

Then headless ``jroof-tui record`` of the same replay at 1x, CPU from /proc likewise.

Part "board" (``--part board``) runs the real ``jroof-tui`` live on a fake board, in tmux at
``--size`` and then as headless ``record``: a fake ``tegrastats`` at 1 s (real Orin Nano Super
lines), a fake INA3221 tree under ``--sysfs-root`` read at the default power rate, processes read
at their default period, board and mode given. It reports the jroof process's CPU (all threads;
the fake tegrastats apart). Targets: TUI <= 1 %, headless record <= 0.5 % of one core.

Part "power" (``--part power``) measures the power sampler (``--power-hz``): the CPU time of one
read of a fake INA3221 tree (3 rails, 6 value files), of writing its reading to a recording and of
the pipeline's ingest of it; then headless ``record --source host`` for ``--seconds`` each, under a
``--sysfs-root`` without monitors (no sampler), with the fake tree at the default rate, and at
50 Hz, CPU from /proc as above. Target: the sampler adds <= 0.3 % of one core at the default rate.

Part "processes" (``--part processes``) measures the process sampler: CPU per reading of this
machine's /proc, read, recorded and ingested, and the share of a core that makes at its period.
Target: <= 0.1 % of one core.

Part 2, in a fresh process, ingests 24 h of 1 Hz samples into the app's history, draws every pane
zoomed to "all", and reports the ingest cost per sample, the time of that redraw, and the RSS.
Target: <= 150 MB.

Samples are the shipped demo log (a real Orin Nano Super run) re-timed to 1 s apart and looped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jtop_roof.formats.logfile import iter_records  # noqa: E402
from jtop_roof.model.codec import record_to_json  # noqa: E402
from jtop_roof.model.records import Sample  # noqa: E402
from jtop_roof.model.timeline import parse_tz  # noqa: E402
from jtop_roof.runtime.config import Config  # noqa: E402

DEMO_LOG = REPO / "jtop_roof" / "sources" / "data" / "demo_orinnano_super.log"
#: The demo's board, so that the Roofline pane draws its roofs (and costs what it costs).
BENCH_CONFIG = Config(tz="UTC", device="orin-nano-8gb-super", power_mode="MAXN_SUPER")


def demo_samples() -> list[Sample]:
    with DEMO_LOG.open(encoding="utf-8") as stream:
        return [r for r in iter_records(stream, tz=parse_tz("UTC"), interval_s=None)
                if isinstance(r, Sample) and r.is_sample]


def looped(samples: list[Sample], count: int, start_wall: float = 1_776_000_000.0):
    """``count`` samples 1 s apart, cycling through the demo run."""
    for i in range(count):
        sample = samples[i % len(samples)]
        sample.t_mono = float(i)
        sample.t_wall = start_wall + i
        sample.raw = None
        yield sample


def write_recording(path: Path, seconds: int) -> None:
    header = {"type": "header", "schema": 1, "app": "jroof-tui", "version": "bench", "source": "tegrastats",
              "start_wall": 1_776_000_000.0, "start_mono": 0.0, "tz": "UTC", "interval_ms": 1000,
              "model": "benchmark (demo log re-timed to 1 Hz)"}
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for sample in looped(demo_samples(), seconds):
            out.write(json.dumps(record_to_json(sample), separators=(",", ":")) + "\n")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB


def current_rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def live_run(seconds: float, size: tuple[int, int]) -> None:
    from jtop_roof.sources.replay import ReplaySource
    from jtop_roof.tui.app import JroofApp

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long.jsonl"
        write_recording(path, 4 * 3600)
        source = ReplaySource(path, speed=1.0, tz="UTC", hold_at_end=True)
        app = JroofApp(source, BENCH_CONFIG, user_themes=Path(tmp) / "themes")
        async with app.run_test(size=size) as pilot:
            source.seek(3600.0, relative=False)  # 120 s of backfill fills the 2 min plots
            while app.history.last_t_mono is None or app.history.last_t_mono < 3599:
                await pilot.pause(0.1)
            await pilot.pause(3.0)  # settle: first full draws, caches
            samples_before = len(app.history)
            cpu0, wall0 = time.process_time(), time.monotonic()
            await pilot.pause(seconds)
            cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
            ingested = len(app.history) - samples_before
    print(f"live replay at 1 Hz, {size[0]}x{size[1]}, {wall:.1f} s: {ingested} samples, "
          f"CPU {cpu:.2f} s = {100 * cpu / wall:.2f} % of one core; peak RSS {peak_rss_mb():.0f} MB")


def stat_fields(path: str) -> list[str] | None:
    """The fields of a /proc ``stat`` file after the command name (None: the task is gone)."""
    try:
        return Path(path).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process (all its threads and waited children) and its living descendants,
    from /proc (what the process really costs, whatever its event loop and driver do)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := stat_fields(f"/proc/{entry}/stat")) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        if (fields := stat_fields(f"/proc/{current}/stat")) is not None:
            total += sum(int(v) for v in fields[11:15]) / tick  # utime stime cutime cstime
            todo += children.get(current, [])
    return total


def measure_pid(pid: int, seconds: float) -> tuple[float, float]:
    cpu0, wall0 = tree_cpu_s(pid), time.monotonic()
    time.sleep(seconds)
    return tree_cpu_s(pid) - cpu0, time.monotonic() - wall0


JROOF = Path(sys.executable).parent / "jroof-tui"
BOARD_ARGS = ["--device", str(BENCH_CONFIG.device), "--power-mode", str(BENCH_CONFIG.power_mode),
              "--tz", "UTC"]


def tmux_run(seconds: float, size: tuple[int, int], jroof: Path = JROOF) -> None:
    """The real ``jroof-tui --replay`` in a real terminal (tmux): the terminal writes included."""
    import shlex
    import shutil

    tmux = shutil.which("tmux")
    if tmux is None:
        print("tmux run: skipped (no tmux)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long.jsonl"
        write_recording(path, 4 * 3600)
        socket = f"jroof-bench-{os.getpid()}"
        pid_file = Path(tmp) / "pid"
        run_dir = Path(tmp) / "run"
        run_dir.mkdir(mode=0o700)
        command = " ".join(shlex.quote(a) for a in [str(jroof), "--replay", str(path), *BOARD_ARGS])
        script = (f"export TERM=xterm-256color XDG_CONFIG_HOME={tmp}/config XDG_RUNTIME_DIR={run_dir}; "
                  f"unset NO_COLOR JROOF_CONFIG COLUMNS LINES; echo $$ > {pid_file}; exec {command}")
        tmux_cmd = [tmux, "-L", socket]
        subprocess.run([*tmux_cmd, "new-session", "-d", "-s", "bench", "-x", str(size[0]), "-y", str(size[1]),
                        f"sh -c {shlex.quote(script)}"], check=True, timeout=20)
        try:
            time.sleep(3.0)
            pid = int(pid_file.read_text())
            for _ in range(15):  # +150 s: the 2 min plots are full, as in the headless run
                subprocess.run([*tmux_cmd, "send-keys", "-t", "bench", "Right"], check=True, timeout=20)
                time.sleep(0.2)
            time.sleep(5.0)  # settle
            cpu, wall = measure_pid(pid, seconds)
        finally:
            subprocess.run([*tmux_cmd, "kill-server"], timeout=20)
    print(f"tmux: jroof-tui --replay at 1 Hz, {size[0]}x{size[1]}, {wall:.1f} s: "
          f"CPU {cpu:.2f} s = {100 * cpu / wall:.2f} % of one core (process and children, /proc)")


def record_run(seconds: float, jroof: Path = JROOF) -> None:
    """Headless ``jroof-tui record`` of the same replay at 1x."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long.jsonl"
        write_recording(path, 4 * 3600)
        env = {**os.environ, "XDG_CONFIG_HOME": f"{tmp}/config", "XDG_RUNTIME_DIR": tmp}
        env.pop("JROOF_CONFIG", None)
        proc = subprocess.Popen([str(jroof), "record", "--replay", str(path), *BOARD_ARGS,
                                 str(Path(tmp) / "out.jsonl")], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(5.0)  # start-up and first samples
            cpu, wall = measure_pid(proc.pid, seconds)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    print(f"headless record of a replay at 1 Hz, {wall:.1f} s: CPU {cpu:.2f} s = "
          f"{100 * cpu / wall:.2f} % of one core (process and children, /proc)")


def power_run(seconds: float, jroof: Path = JROOF) -> None:
    """The power sampler's cost per reading, then headless record without it, at the default
    rate and at 50 Hz (``--part power``)."""
    sys.path.insert(0, str(REPO / "tests"))
    from power_tree import FakeIna3221

    from jtop_roof.formats.recorder import Recorder
    from jtop_roof.model.info import SourceInfo
    from jtop_roof.runtime.runtime import build_pipeline
    from jtop_roof.sources.power import DEFAULT_POWER_HZ, PowerSampler, board_meters

    rails = {"VDD_IN": (5048, 1432), "VDD_CPU_GPU_CV": (5040, 304), "VDD_SOC": (5032, 248)}
    with tempfile.TemporaryDirectory() as tmp:
        tree, empty = Path(tmp) / "sys_tree", Path(tmp) / "empty"
        empty.mkdir()
        FakeIna3221(tree, rails)
        found = board_meters(tree)
        sampler = PowerSampler(found.meters, DEFAULT_POWER_HZ)
        count = 20_000
        start = time.process_time()
        readings = [sampler.read_once()[0] for _ in range(count)]
        read_us = (time.process_time() - start) / count * 1e6
        with Recorder(Path(tmp) / "r.jsonl", {"tz": "UTC"}) as recorder:
            start = time.process_time()
            for reading in readings:
                recorder.write(reading)
            write_us = (time.process_time() - start) / count * 1e6
        pipeline = build_pipeline(BENCH_CONFIG, SourceInfo("tegrastats"))
        start = time.process_time()
        for reading in readings:
            pipeline.ingest(reading)
        ingest_us = (time.process_time() - start) / count * 1e6
        for meter in found.meters:
            meter.close()
        print(f"power sampler, per reading of 3 INA3221 rails: read {read_us:.1f} us, "
              f"recorded {write_us:.1f} us, ingested {ingest_us:.1f} us of CPU")
        env = {**os.environ, "XDG_CONFIG_HOME": f"{tmp}/config", "XDG_RUNTIME_DIR": tmp}
        env.pop("JROOF_CONFIG", None)
        runs = (("no power monitor (no sampler)", empty, DEFAULT_POWER_HZ),
                (f"INA3221 tree at the default {DEFAULT_POWER_HZ:g} Hz", tree, DEFAULT_POWER_HZ),
                ("INA3221 tree at 50 Hz", tree, 50.0))
        for label, root, hz in runs:
            out = Path(tmp) / f"out-{hz:g}-{root.name}.jsonl"
            proc = subprocess.Popen([str(jroof), "record", str(out), "--source", "host", "--sysfs-root",
                                     str(root), "--power-hz", str(hz)], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                time.sleep(3.0)  # start-up
                cpu, wall = measure_pid(proc.pid, seconds)
            finally:
                proc.terminate()
                proc.wait(timeout=20)
            print(f"headless record --source host, {label}, {wall:.1f} s: CPU {cpu:.2f} s = "
                  f"{100 * cpu / wall:.2f} % of one core (process and children, /proc)")


def task_cpu_s(pid: int) -> dict[int, float]:
    """CPU seconds of each thread of one process (its children not counted), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        if (fields := stat_fields(f"/proc/{pid}/task/{tid}/stat")) is not None:
            out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick  # utime stime
    return out


def board_run(seconds: float, size: tuple[int, int], jroof: Path = JROOF) -> None:
    """The real ``jroof-tui`` live on a fake board (``--part board``): a fake ``tegrastats`` at 1 s
    playing real Orin Nano Super lines, a fake INA3221 tree under ``--sysfs-root`` read at the
    default power rate, processes at their default period, board and mode given (roofline and
    detectors on); in tmux at ``size``, then headless ``record``. The jroof process's CPU only
    (all its threads), from /proc: the fake tegrastats stands for a C program that is not ours and
    is shown apart."""
    import shlex
    import shutil

    sys.path.insert(0, str(REPO / "tests"))
    from power_tree import FakeIna3221

    tmux = shutil.which("tmux")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        FakeIna3221(base / "sys", {"VDD_IN": (5048, 1432), "VDD_CPU_GPU_CV": (5040, 304),
                                   "VDD_SOC": (5032, 248)})
        bin_dir = base / "bin"
        bin_dir.mkdir()
        shutil.copy(REPO / "tests" / "fake_tegrastats", bin_dir / "tegrastats")
        (bin_dir / "tegrastats").chmod(0o755)
        run_dir = base / "run"
        run_dir.mkdir(mode=0o700)
        lines = REPO / "tests" / "data" / "fake_tegrastats_orinnano_super.txt"
        env = (f"export TERM=xterm-256color PATH={shlex.quote(str(bin_dir))}:$PATH "
               f"XDG_CONFIG_HOME={tmp}/config XDG_RUNTIME_DIR={run_dir} FAKE_TEGRASTATS_LINES={lines}; "
               "unset NO_COLOR JROOF_CONFIG COLUMNS LINES")
        live = [str(jroof), "--source", "tegrastats", "--sysfs-root", str(base / "sys"), *BOARD_ARGS]
        runs = [("record", None, [*live[:1], "record", str(base / "out.jsonl"), *live[1:]])]
        if tmux is not None:
            runs.insert(0, ("TUI", size, live))
        else:
            print("board run in tmux: skipped (no tmux)")
        for label, tui_size, argv in runs:
            pid_file = base / f"pid-{label}"
            script = f"{env}; echo $$ > {pid_file}; exec {shlex.join(argv)}"
            if tui_size is not None:
                server = [tmux, "-L", f"jroof-board-{os.getpid()}"]
                subprocess.run([*server, "new-session", "-d", "-s", "b", "-x", str(tui_size[0]), "-y",
                                str(tui_size[1]), f"sh -c {shlex.quote(script)}"], check=True, timeout=20)
                stop = [*server, "kill-server"]
            else:
                proc = subprocess.Popen(["sh", "-c", script], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
            try:
                time.sleep(10.0)  # start-up, the first process reading, the plots' first draws
                pid = int(pid_file.read_text())
                child_cpu0 = tree_cpu_s(pid) - sum(task_cpu_s(pid).values())
                before, wall0 = task_cpu_s(pid), time.monotonic()
                time.sleep(seconds)
                after, wall = task_cpu_s(pid), time.monotonic() - wall0
                children = tree_cpu_s(pid) - sum(after.values()) - child_cpu0
            finally:
                if tui_size is not None:
                    subprocess.run(stop, timeout=20)
                else:
                    proc.terminate()
                    proc.wait(timeout=20)
            spent = {tid: cpu - before.get(tid, 0.0) for tid, cpu in after.items()}
            total, main_thread = sum(spent.values()), spent.get(pid, 0.0)
            where = f"{tui_size[0]}x{tui_size[1]} in tmux" if tui_size is not None else "headless"
            print(f"live on a fake board, {label} {where}, {wall:.1f} s: jroof {100 * total / wall:.2f} % "
                  f"of one core (main thread {100 * main_thread / wall:.2f} %, other threads "
                  f"{100 * (total - main_thread) / wall:.2f} %); fake tegrastats, not counted: "
                  f"{max(0.0, 100 * children / wall):.2f} %")


def processes_run(readings: int = 200) -> None:
    """The process sampler's CPU per reading of this machine's /proc (read, recorded, ingested), and
    what it adds to headless record at its period (``--part processes``)."""
    from jtop_roof.formats.recorder import Recorder
    from jtop_roof.model.info import SourceInfo
    from jtop_roof.runtime.runtime import build_pipeline
    from jtop_roof.sources.processes import PROCESS_PERIOD_S, ProcessSampler

    sampler = ProcessSampler()
    sampler.read_once()
    count = len([name for name in os.listdir("/proc") if name.isdigit()])
    start = time.process_time()
    taken = [sampler.read_once() for _ in range(readings)]
    read_ms = (time.process_time() - start) / readings * 1e3
    pipeline = build_pipeline(BENCH_CONFIG, SourceInfo("host"))
    with tempfile.TemporaryDirectory() as tmp, Recorder(Path(tmp) / "r.jsonl", {"tz": "UTC"}) as recorder:
        start = time.process_time()
        for reading in taken:
            recorder.write(reading)
            pipeline.ingest(reading)
        rest_ms = (time.process_time() - start) / readings * 1e3
    per_reading_ms = read_ms + rest_ms
    print(f"process sampler, {count} processes: read {read_ms:.2f} ms, recorded and ingested "
          f"{rest_ms:.2f} ms "
          f"of CPU per reading; every {PROCESS_PERIOD_S:g} s: {per_reading_ms / 10 / PROCESS_PERIOD_S:.3f} % "
          f"of one core ({per_reading_ms / count * 1e3:.0f} us per process)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the measured live run")
    parser.add_argument("--size", default="120x40", help="terminal size, e.g. 120x40")
    parser.add_argument("--part", default="all",
                        choices=("all", "live", "tmux", "record", "board", "power", "processes", "day"))
    parser.add_argument("--tmux", action="store_true", help="also run the real jroof-tui in tmux (part all)")
    parser.add_argument("--jroof", type=Path, default=JROOF,
                        help="the jroof-tui to run in tmux and record (e.g. another tree's, to compare)")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if args.part in ("all", "live"):
        asyncio.run(live_run(args.seconds, (width, height)))
    if args.part == "tmux" or (args.part == "all" and args.tmux):
        tmux_run(args.seconds, (width, height), args.jroof)
    if args.part in ("all", "record"):
        record_run(args.seconds, args.jroof)
    if args.part in ("all", "board"):
        board_run(args.seconds, (width, height), args.jroof)
    if args.part in ("all", "power"):
        power_run(args.seconds, args.jroof)
    if args.part in ("all", "processes"):
        processes_run()
    if args.part in ("all", "day"):
        if args.part == "all":
            # A fresh process, so the RSS is that of a day of history and not of part 1 as well.
            return subprocess.call([sys.executable, __file__, "--part", "day", "--size", args.size])
        asyncio.run(day_run((width, height)))
    return 0


async def day_run(size: tuple[int, int]) -> None:
    import threading

    from jtop_roof.sources.base import Source
    from jtop_roof.tui.app import JroofApp

    class IdleSource(Source):
        """Says nothing: history is filled directly."""

        kind = "tegrastats"

        def __init__(self) -> None:
            self._stop = threading.Event()

        def records(self):
            self._stop.wait()
            return iter(())

        def stop(self) -> None:
            self._stop.set()

    samples = demo_samples()
    with tempfile.TemporaryDirectory() as tmp:
        app = JroofApp(IdleSource(), BENCH_CONFIG, user_themes=Path(tmp))
        async with app.run_test(size=size) as pilot:
            await pilot.pause(0.5)
            base_rss = current_rss_mb()
            started = time.perf_counter()
            for sample in looped(samples, 86400):
                app.pipeline.ingest(sample)  # history and ledger, as the app's handler does
            ingest_s = time.perf_counter() - started
            app.window_s = None  # zoom: all
            started = time.perf_counter()
            app.redraw_now()
            await pilot.pause()
            redraw_s = time.perf_counter() - started
            rss = current_rss_mb()
            history_mb = app.history.memory_bytes() / 2**20
    print(f"24 h of 1 Hz history: ingest {1e6 * ingest_s / 86400:.1f} µs/sample; ring buffers "
          f"{history_mb:.1f} MB; full redraw zoomed to all {1000 * redraw_s:.0f} ms; RSS {rss:.0f} MB "
          f"(app running with empty history: {base_rss:.0f} MB; peak {peak_rss_mb():.0f} MB)")


if __name__ == "__main__":
    sys.exit(main())
