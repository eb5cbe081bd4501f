"""Parser and timeline speed on real logs.

Run from the repo root: ``.venv/bin/python benchmarks/parse.py``. Reads the real logs from
../shared/tegrastats/logs (beside the repo) and prints:

1. parse_line lines/s over all the real logs, looped to about 200,000 lines, and per log; then
   what ``parse`` prints per log (``iter_parse_lines``), and the share of lines its text route
   reads straight to JSON;
2. the time to load a synthetic 24-hour 1 Hz log (86,400 lines: the real AGX Orin log's lines
   re-stamped one per second) through parse_line + Timeline.place;
3. the time of a stamp-only index pass over the same log (stamp_of + Timeline.wall_of), which is
   what a replay seek needs;
4. the issue's yardstick, side by side on that log written to a file: ``python -m jtop_roof parse
   FILE > /dev/null`` as a whole process (start, read, parse, JSON out; wall time, best of 3) against
   jetson-stats 4.1's tegrastats decoding (``Tegrastats._decode``) plus ``json.dumps`` of each line,
   in this process (wall time, best of 3), and their ratio (goal: 5x). Needs jetson-stats in this
   environment (``pip install 'jetson-stats==4.1.*'``; not a dependency of jroof-tui).

The target is 110,000 lines/s (5x jetson-stats 4.1's ~22,000 lines/s measured on the dev machine).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jtop_roof.formats.jsonout import line_json  # noqa: E402
from jtop_roof.formats.logfile import ReadStats, iter_parse_lines  # noqa: E402
from jtop_roof.formats.parser import parse_line, stamp_of  # noqa: E402
from jtop_roof.model.timeline import Timeline, local_tz_name, parse_tz  # noqa: E402

LOGS = REPO.parent / "shared" / "tegrastats" / "logs"
ORIN_LOG = "agxorin_jp6_abdeltegraparser_1.log"
TARGET = 110_000
WHOLE_PROCESS_GOAL = 5.0
LOOP_LINES = 200_000


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def best_of(runs: int, fn, clock=time.process_time) -> float:
    """Least time of a few runs, by default CPU time of this process: the dev machine is shared (2
    cores, other jobs), and CPU time is what the parser costs (wall time also counts waiting for a
    core). The whole-process comparison uses wall time (``time.perf_counter``): a child's CPU is
    not this process's."""
    best = float("inf")
    for _ in range(runs):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def whole_process(day: list[str]) -> None:
    """`jroof-tui parse` as a whole process against jetson-stats' decoding plus json.dumps."""
    try:
        from jtop import __version__ as jtop_version
        from jtop.core.tegrastats import Tegrastats  # jetson-stats (AGPL): used here, never copied
    except ImportError:
        print("\nwhole process: jetson-stats not installed here (pip install 'jetson-stats==4.1.*'): skipped")
        return
    decode = Tegrastats._decode  # a method that does not use self

    def jtop_day() -> None:
        dumps = json.dumps
        for line in day:
            dumps(decode(None, line))

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "day.log"
        path.write_text("\n".join(day) + "\n", encoding="utf-8")
        command = [sys.executable, "-m", "jtop_roof", "parse", str(path)]

        def ours() -> None:
            subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, check=True)

        jroof = best_of(3, ours, time.perf_counter)
    jtop = best_of(3, jtop_day, time.perf_counter)
    ratio = jtop / jroof
    print("\nwhole process on the 86,400-line log (wall time, best of 3):")
    print(f"  jroof-tui parse FILE > /dev/null:                 {jroof:.2f} s "
          f"({86_400 / jroof:,.0f} lines/s)")
    print(f"  jetson-stats {jtop_version} decode + json.dumps, in-process: {jtop:.2f} s "
          f"({86_400 / jtop:,.0f} lines/s)")
    print(f"  ratio: {ratio:.2f}x (goal {WHOLE_PROCESS_GOAL:.0f}x: "
          f"{'met' if ratio >= WHOLE_PROCESS_GOAL else 'NOT met'})")


def parse_all(lines: list[str]) -> None:
    for line in lines:
        parse_line(line)


def main() -> int:
    if not LOGS.is_dir():
        print(f"no real logs at {LOGS}: nothing to measure")
        return 1
    logs = {path.name: read_lines(path) for path in sorted(LOGS.glob("*.log"))}
    every = [line for lines in logs.values() for line in lines]
    looped = (every * (LOOP_LINES // len(every) + 1))[:LOOP_LINES]

    print(f"Python {sys.version.split()[0]}; {len(logs)} real logs, {len(every):,} lines, "
          f"mean {sum(map(len, every)) / len(every):.0f} chars; rates from CPU time (best of runs)")
    seconds = best_of(3, lambda: parse_all(looped))
    rate = len(looped) / seconds
    print(f"\nparse_line over all real logs, {len(looped):,} lines: {rate:,.0f} lines/s "
          f"({seconds * 1e6 / len(looped):.2f} us/line; target {TARGET:,}: "
          f"{'met' if rate >= TARGET else 'NOT met'})")
    for name, lines in logs.items():
        seconds = best_of(3, lambda lines=lines: parse_all(lines))
        print(f"  {name:52s} {len(lines) / seconds:>9,.0f} lines/s  {len(lines):5d} lines")

    # What `parse` prints, per log: iter_parse_lines (read straight to JSON where the text route
    # takes a line, through the Sample otherwise), in this process, each log looped to 50,000 lines.
    print("\nparse's JSON lines per log (iter_parse_lines, 50,000 lines each; share read straight to JSON):")
    for name, lines in logs.items():
        some = (lines * (50_000 // len(lines) + 1))[:50_000]
        seconds = best_of(3, lambda some=some: list(iter_parse_lines(some, tz="UTC", stats=ReadStats())))
        taken = sum(line_json(line, lambda stamp: (0.0, 0.0)) is not None for line in lines) / len(lines)
        print(f"  {name:52s} {len(some) / seconds:>9,.0f} lines/s  text route {taken:6.1%}")

    # A synthetic 24 h log at 1 Hz: the real AGX Orin lines, re-stamped one per second.
    orin = [line[20:] for line in logs[ORIN_LOG] if line[:2].isdigit()]
    start = datetime(2025, 10, 26, 0, 0, 0)
    day = [
        (start + timedelta(seconds=s)).strftime("%m-%d-%Y %H:%M:%S ") + orin[s % len(orin)]
        for s in range(86_400)
    ]
    tz = parse_tz(None)

    def load_day() -> None:
        timeline = Timeline(tz, 1.0)
        for line in day:
            sample = parse_line(line)
            sample.t_wall, sample.t_mono = timeline.place(sample.stamp)

    def index_day() -> None:
        timeline = Timeline(tz, 1.0)
        [timeline.wall_of(stamp_of(line)) for line in day]

    seconds = best_of(2, load_day)
    print(f"\n24 h synthetic log (86,400 AGX Orin lines, zone {local_tz_name()}):")
    print(f"  parse_line + Timeline.place: {seconds:.2f} s ({86_400 / seconds:,.0f} lines/s)")
    seconds = best_of(3, index_day)
    print(f"  stamp-only index (stamp_of + Timeline.wall_of): {seconds:.3f} s "
          f"({86_400 / seconds:,.0f} lines/s)")
    whole_process(day)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
