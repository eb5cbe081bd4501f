"""The monitor's CPU on the fast paint and on Textual's stock paint, live at 1 Hz on a fake board.

    .venv/bin/python benchmarks/paint.py                      # 60 s a run, best of 2, both sizes
    .venv/bin/python benchmarks/paint.py --seconds 90 --runs 3 --sizes 200x60 --paints stock

Each run starts the real monitor (``python -m jtop_roof``, this tree) in a tmux terminal of the size
given, with ``JROOF_PAINT`` set to the paint measured, live on a fake board: a fake ``tegrastats``
on PATH at 1 s playing real Orin Nano Super lines (tests/fake_tegrastats), a fake INA3221 tree
under ``--sysfs-root`` read by the power sampler at its default rate, processes at their default
period, board and mode given (the roofline drawn, the detectors on). After 10 s of start-up it reads
the monitor process's own CPU ticks (psutil ``cpu_times``: user and system of all its threads, not
of the fake tegrastats) over ``--seconds``. Runs alternate between the paints, so that load from
other work falls on both; the figure is the best of ``--runs``. Goal: ≤ 1 % of one core.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from power_tree import FakeIna3221  # noqa: E402

BOARD_ARGS = ["--device", "orin-nano-8gb-super", "--power-mode", "MAXN_SUPER", "--tz", "UTC"]
RAILS = {"VDD_IN": (5048, 1432), "VDD_CPU_GPU_CV": (5040, 304), "VDD_SOC": (5032, 248)}
START_S = 10.0  # start-up, the first process reading, the plots' first draws


def own_cpu_s(process: psutil.Process) -> float:
    """CPU seconds of the process itself, all threads (children not counted)."""
    times = process.cpu_times()
    return float(times.user + times.system)


def one_run(base: Path, tmux: str, paint: str, size: tuple[int, int], seconds: float) -> float:
    """The monitor's share of one core (%) over ``seconds``, on ``paint`` at ``size``."""
    pid_file = base / f"pid-{paint}-{size[0]}x{size[1]}"
    pid_file.unlink(missing_ok=True)
    lines = REPO / "tests" / "data" / "fake_tegrastats_orinnano_super.txt"
    env = (f"export TERM=xterm-256color PATH={shlex.quote(str(base / 'bin'))}:$PATH "
           f"PYTHONPATH={shlex.quote(str(REPO))} JROOF_PAINT={paint} "
           f"XDG_CONFIG_HOME={base}/config XDG_RUNTIME_DIR={base / 'run'} FAKE_TEGRASTATS_LINES={lines}; "
           "unset NO_COLOR JROOF_CONFIG COLUMNS LINES")
    argv = [sys.executable, "-m", "jtop_roof", "--source", "tegrastats", "--sysfs-root", str(base / "sys"),
            *BOARD_ARGS]
    script = f"{env}; cd {shlex.quote(str(REPO))}; echo $$ > {pid_file}; exec {shlex.join(argv)}"
    server = [tmux, "-L", f"jroof-paint-{os.getpid()}-{pid_file.name}"]
    started = subprocess.run([*server, "new-session", "-d", "-s", "p", "-x", str(size[0]), "-y",
                              str(size[1]), f"sh -c {shlex.quote(script)}"], capture_output=True, text=True,
                             timeout=20)
    if started.returncode:
        raise SystemExit(f"tmux did not start ({paint}, {size}): {started.stderr.strip()}")
    try:
        time.sleep(START_S)
        process = psutil.Process(int(pid_file.read_text()))
        shown = subprocess.run([*server, "capture-pane", "-p", "-t", "p"], capture_output=True,
                               text=True, timeout=20).stdout
        if "Orin" not in shown:
            raise SystemExit(f"the monitor did not start ({paint}, {size}):\n{shown}")
        cpu0, wall0 = own_cpu_s(process), time.monotonic()
        time.sleep(seconds)
        cpu, wall = own_cpu_s(process) - cpu0, time.monotonic() - wall0
        if not process.is_running():
            raise SystemExit(f"the monitor ended during the run ({paint}, {size})")
    finally:
        subprocess.run([*server, "kill-server"], timeout=20)
    return 100.0 * cpu / wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each measured run")
    parser.add_argument("--runs", type=int, default=2, help="runs per paint and size (the best counts)")
    parser.add_argument("--sizes", default="120x40,200x60", help="terminal sizes, e.g. 120x40,200x60")
    parser.add_argument("--paints", default="fast,stock", help="paints to measure: fast, stock or both")
    args = parser.parse_args()
    tmux = shutil.which("tmux")
    if tmux is None:
        print("paint: skipped (no tmux)")
        return 1
    sizes = [tuple(int(v) for v in size.lower().split("x")) for size in args.sizes.split(",")]
    paints = args.paints.split(",")
    figures: dict[tuple[str, tuple[int, ...]], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        FakeIna3221(base / "sys", RAILS)
        (base / "bin").mkdir()
        (base / "run").mkdir(mode=0o700)
        shutil.copy(REPO / "tests" / "fake_tegrastats", base / "bin" / "tegrastats")
        (base / "bin" / "tegrastats").chmod(0o755)
        for run in range(args.runs):
            for size in sizes:
                for paint in paints:
                    share = one_run(base, tmux, paint, size, args.seconds)  # type: ignore[arg-type]
                    figures.setdefault((paint, size), []).append(share)
                    print(f"run {run + 1}: {paint} paint, {size[0]}x{size[1]}: {share:.2f} % of one core",
                          flush=True)
    print(f"\nlive at 1 Hz on a fake board with the power sampler on, {args.seconds:g} s a run, "
          f"the monitor process's own CPU (psutil), best of {args.runs}:")
    for (paint, size), shares in figures.items():
        print(f"{paint:>5} paint {size[0]}x{size[1]}: {min(shares):.2f} % of one core "
              f"(runs: {', '.join(f'{s:.2f}' for s in shares)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
