"""A day-long log: ``report`` against ``parse``, and a replay's first record, seek and memory.

Run from the repo root: ``.venv/bin/python benchmarks/day.py [--runs N] [--skip-million]``. Builds,
in a temporary folder, a day and a million lines from the real AGX Orin log in
../shared/tegrastats/logs (its lines re-stamped, as ``benchmarks/parse.py`` does): 86,400 lines at
1 s, and 1,000,000 lines at 100 ms. Prints, each with what it measured:

1. ``jroof-tui parse FILE > /dev/null`` and ``jroof-tui report FILE --format json`` of the day log
   as whole processes: CPU time (user + system of the child, so the other jobs of a shared machine
   count less than in wall time), best and worst of N runs, and their ratio (goal: report <= 2x
   parse);
2. replay of each log, in a fresh process per figure (``ReplaySource`` and the ``Runtime`` the TUI
   builds): opening it (the index's first step), the first record in the pipeline after
   ``Runtime.describe`` and ``apply`` (as the TUI's worker does before its first record), when
   the whole index is there (its own thread) and when the whole file's ledger (read in a thread
   of its own) is there; seeks to 1/2, 1/4 and 3/4 once the index is whole, until the played
   record is there (the seek event and the 120 s backfill) and a plot's first read has written
   the backfill's readings into the history's columns, while the ledger is still being read
   (as a user seeking at once meets it), in wall time and in CPU time of the thread that plays
   (a figure that a busy machine and the ledger's thread do not inflate); a seek to the end right
   after opening (it waits for the index); and the process's peak RSS with the source open and a
   TUI-sized history (24 h) filled by the backfill; goals: first record < 1 s, seek < 100 ms,
   RSS <= 100 MB. The TUI's own first draw (Textual), and its hand-over of a seek's records from
   the source's thread to the event loop's, are not in these figures (``Runtime.apply`` freezes
   start-up's objects out of the collector's sight, here as in the TUI).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO.parent / "shared" / "tegrastats" / "logs"
ORIN_LOG = "agxorin_jp6_abdeltegraparser_1.log"


def write_log(path: Path, lines: int, step_s: float) -> None:
    """The real AGX Orin lines re-stamped ``step_s`` apart (tegrastats stamps whole seconds)."""
    orin = [line[20:] for line in (LOGS / ORIN_LOG).read_text(encoding="utf-8").splitlines()
            if line[:2].isdigit()]
    start = datetime(2025, 10, 26)
    with path.open("w", encoding="utf-8") as out:
        for i in range(lines):
            stamp = (start + timedelta(seconds=i * step_s)).strftime("%m-%d-%Y %H:%M:%S ")
            out.write(stamp + orin[i % len(orin)] + "\n")


def child_cpu(command: list[str]) -> float:
    """User + system CPU seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def spread(values: list[float]) -> str:
    return f"best {min(values):.2f} s, worst {max(values):.2f} s"


def report_vs_parse(path: Path, runs: int) -> None:
    cli = [sys.executable, "-m", "jtop_roof"]
    parse, report = [], []
    for _ in range(runs):  # interleaved, so a busy spell of the machine hits both
        parse.append(child_cpu([*cli, "parse", str(path)]))
        report.append(child_cpu([*cli, "report", str(path), "--format", "json"]))
    ratios = [r / p for r, p in zip(report, parse, strict=True)]
    print(f"\nreport against parse, 86,400 lines at 1 s, whole processes, CPU time, {runs} runs each:")
    print(f"  jroof-tui parse FILE > /dev/null:          {spread(parse)}")
    print(f"  jroof-tui report FILE --format json:       {spread(report)}")
    best = min(report) / min(parse)
    print(f"  ratio of the best runs: {best:.2f}x (per run {min(ratios):.2f}-{max(ratios):.2f}x; "
          f"goal <= 2x: {'met' if best <= 2.0 else 'NOT met'})")


_REPLAY_CHILD = r"""
import json, resource, sys, time
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.runtime import Runtime
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.model.records import Sample
path, what = sys.argv[1], sys.argv[2]
out = {}

def play_to(records, pipeline, target_s):  # ingest up to the first sample at target_s or past
    for record in records:
        pipeline.ingest(record)
        if isinstance(record, Sample) and record.t_mono is not None \
                and record.t_mono >= (source.index.first_mono or 0.0) + target_s:
            return

def indexed():  # seconds from the start until the whole index is there
    while source.indexing:
        time.sleep(0.005)
    return time.perf_counter() - t0

t0 = time.perf_counter(); c0 = time.process_time()
source = ReplaySource(path, speed=64.0, tz="UTC", hold_at_end=True)
out["open_s"] = time.perf_counter() - t0
runtime = Runtime(source, Config(), history_s=86400.0)
records = source.records()
if what == "first":  # what the TUI's worker does before its first record: describe, then pump
    runtime.apply(runtime.describe())
    first = next(records)
    runtime.pipeline.ingest(first)
    out["first_record_s"] = time.perf_counter() - t0
    out["first_record_cpu_s"] = time.process_time() - c0
    out["index_s"] = indexed()
    pending = getattr(getattr(runtime.pipeline, "_replay", None), "_pending", None)  # the whole file's ledger
    while pending is not None and not pending.done():
        time.sleep(0.01)
    out["ledger_s"] = time.perf_counter() - t0
    out["samples"] = runtime.pipeline.ledger.whole.samples
elif what == "seek":
    runtime.apply(runtime.describe())
    runtime.pipeline.ingest(next(records))
    t1 = time.perf_counter()
    source.seek_to("end")  # past the part indexed: waits for the index
    indexed()
    play_to(records, runtime.pipeline, source.duration_s)
    out["seek_end_early_s"] = time.perf_counter() - t1
    times, cpu = [], []
    for target in (source.duration_s / 2, source.duration_s / 4, source.duration_s * 0.75):
        t1, c1 = time.perf_counter(), time.thread_time()
        source.seek(target, relative=False)
        play_to(records, runtime.pipeline, target)
        runtime.pipeline.history.series("power_mw", None, None, 1)  # a draw's first read (the columns)
        times.append(time.perf_counter() - t1)
        cpu.append(time.thread_time() - c1)
    out["seek_s"], out["seek_cpu_s"] = times, cpu
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
records.close()
print(json.dumps(out))
"""


def replay_child(path: Path, what: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _REPLAY_CHILD, str(path), what], cwd=REPO,
                          capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def replay(path: Path, label: str, runs: int) -> None:
    first = [replay_child(path, "first") for _ in range(runs)]
    seek = [replay_child(path, "seek") for _ in range(runs)]
    print(f"\nreplay of {label} (a fresh process per figure, {runs} runs each):")
    opened = [r["open_s"] for r in first]
    print(f"  open (the index's first step), wall:         {spread(opened)}")
    wall = [r["first_record_s"] for r in first]
    print(f"  open + Runtime.describe/apply + first record into the pipeline, wall: {spread(wall)} "
          f"(goal < 1 s: {'met' if max(wall) < 1.0 else 'NOT met'})")
    print(f"  the whole index there (its own thread), wall: {spread([r['index_s'] for r in first])}")
    ledger = [r["ledger_s"] for r in first]
    print(f"  the whole file's ledger there (read in its own thread), wall: {spread(ledger)}")
    seeks = [s * 1000 for r in seek for s in r["seek_s"]]
    print(f"  seek to 1/2, 1/4, 3/4 until the target sample is in the pipeline: best {min(seeks):.0f} ms, "
          f"worst {max(seeks):.0f} ms (goal < 100 ms: {'met' if max(seeks) < 100 else 'NOT met'})")
    cpu = [s * 1000 for r in seek for s in r["seek_cpu_s"]]
    print(f"    the same seeks in CPU time of the thread that plays (not slowed by other threads or "
          f"processes): best {min(cpu):.0f} ms, worst {max(cpu):.0f} ms")
    early = [r["seek_end_early_s"] for r in seek]
    print(f"  seek to the end right after opening (waits for the whole index), wall: {spread(early)}")
    rss = [r["rss_mb"] for r in seek]
    print(f"  peak RSS (source open, 24 h history, three seeks): {min(rss):.0f}-{max(rss):.0f} MB "
          f"(goal <= 100 MB: {'met' if max(rss) <= 100 else 'NOT met'})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-million", action="store_true", help="only the 86,400-line log")
    parser.add_argument("--part", choices=("all", "report", "replay"), default="all",
                        help="report against parse, or the replays, or both")
    args = parser.parse_args()
    if not (LOGS / ORIN_LOG).is_file():
        print(f"no real logs at {LOGS}: nothing to measure")
        return 1
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        day = Path(tmp) / "day.log"
        write_log(day, 86_400, 1.0)
        if args.part in ("all", "report"):
            report_vs_parse(day, args.runs)
        if args.part == "report":
            return 0
        replay(day, "86,400 lines at 1 s", args.runs)
        if not args.skip_million:
            million = Path(tmp) / "million.log"
            write_log(million, 1_000_000, 0.1)
            replay(million, "1,000,000 lines at 100 ms", args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
