"""A recording as fast to read as a plain log: decoding, ``report``, ``export`` and a replay's first
record of jroof's own JSON Lines recordings, against ``parse`` of the same day as a plain log.

Run from the repo root: ``.venv/bin/python benchmarks/recording.py [--runs N] [--million]``. Builds,
in a temporary folder, the day log of ``benchmarks/day.py`` (the real AGX Orin log of
../shared/tegrastats/logs re-stamped: 86,400 lines at 1 s) and the same day as a recording (each of
its records written by ``formats.recorder.Recorder``, as ``record`` would), and prints, each with
what it measured:

1. decoding, in this process (CPU time, best of N): ``iter_records`` of the day log and of the day
   recording, and the recording's lines by the typed decoder (``model.schema.decode_record``)
   against the lenient one alone (``json.loads`` + ``model.codec.record_from_json``, what every
   line took before the schema);
2. ``parse``'s text of the day log (``iter_parse_lines``, the hand-written ``formats.jsonout``)
   against the plain route through msgspec's encoder (``record_to_json`` of each record), in this
   process: whether the hand-written writer still pays;
3. whole processes, CPU time of the child (user + system), best of N, interleaved: ``jroof-tui
   parse DAY.log > /dev/null``, ``jroof-tui report DAY.jsonl --format json`` and ``jroof-tui export
   DAY.jsonl --out X.csv`` (and ``--format parquet``, with its peak RSS), with the ratios
   report/parse (goal <= 2x) and export/report (goal <= 1.5x);
4. ``--million``: a 1,000,000-sample recording (100 ms apart): its report as a whole process
   (goal <= 15 s CPU), a replay's first record in the pipeline (``day.py``'s replay child: open,
   ``Runtime.describe``/``apply``, first record; goal < 1 s wall), and its export to CSV and to
   Parquet (CPU against the report's, goal <= 1.5x; Parquet's peak RSS, goal <= 100 MB).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

import msgspec  # noqa: E402
from day import LOGS, ORIN_LOG, child_cpu, replay_child, spread, write_log  # noqa: E402

from jtop_roof.formats.logfile import iter_parse_lines, iter_records  # noqa: E402
from jtop_roof.formats.recorder import Recorder  # noqa: E402
from jtop_roof.model.codec import Tally, record_from_json, record_to_json  # noqa: E402
from jtop_roof.model.schema import decode_record  # noqa: E402


def write_recording(log: Path, out: Path) -> None:
    """The log's records as ``record`` writes them (one header, then one line a record)."""
    with Recorder(out, {"source": "replay"}, fsync_every_s=3600) as recorder:
        for record in iter_records(log.open(encoding="utf-8"), tz="UTC"):
            recorder.write(record)


def cpu_of(work: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return times


def drain(items: Iterable[object]) -> None:
    for _ in items:
        pass


def lines_of(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]


def decoding(log: Path, recording: Path, runs: int) -> None:
    print(f"\ndecoding in this process, CPU time, {runs} runs each:")
    plain = cpu_of(lambda: drain(iter_records(log.open(encoding="utf-8"), tz="UTC")), runs)
    recorded = cpu_of(lambda: drain(iter_records(recording.open(encoding="utf-8"), tz="UTC")), runs)
    print(f"  iter_records of the day log:        {spread(plain)}")
    print(f"  iter_records of the day recording:  {spread(recorded)} "
          f"({min(recorded) / min(plain):.2f}x the log)")
    lines = lines_of(recording)
    typed = cpu_of(lambda: drain(decode_record(line, Tally()) for line in lines), runs)
    lenient = cpu_of(lambda: drain(record_from_json(json.loads(line), Tally()) for line in lines), runs)
    print(f"  its {len(lines):,} lines, typed (model.schema):           {spread(typed)}")
    print(f"  the same lines, lenient only (json.loads + codec): {spread(lenient)} "
          f"({min(lenient) / min(typed):.1f}x the typed route)")


def parse_text(log: Path, runs: int) -> None:
    encode = msgspec.json.Encoder().encode

    def plain_route() -> None:
        for record in iter_records(log.open(encoding="utf-8"), tz="UTC"):
            encode(record_to_json(record))

    print(f"\nparse's text of the day log in this process, CPU time, {runs} runs each:")
    written = cpu_of(lambda: drain(iter_parse_lines(log.open(encoding="utf-8"), tz="UTC")), runs)
    plain = cpu_of(plain_route, runs)
    print(f"  formats.jsonout (hand-written, straight from the line): {spread(written)}")
    print(f"  record_to_json + msgspec's encoder of each record:      {spread(plain)} "
          f"({min(plain) / min(written):.2f}x)")


#: Runs its arguments as a child and prints that child's CPU seconds and peak RSS (KiB). A child
#: forked straight from this benchmark would start as a copy of it (the decoded day: ~300 MB), and
#: ``ru_maxrss`` keeps that high-water mark across ``exec``; a small fresh launcher's copy is ~10 MB.
LAUNCHER = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(u.ru_utime + u.ru_stime, u.ru_maxrss)\n"
)


def child_cpu_rss(command: list[str]) -> tuple[float, float]:
    """User + system CPU seconds and peak RSS (MB) of one child process, started from a small
    launcher (``LAUNCHER``) so that its peak is its own."""
    done = subprocess.run([sys.executable, "-I", "-c", LAUNCHER, *command], cwd=REPO, check=True,
                          capture_output=True, text=True)
    cpu, rss_kib = done.stdout.split()
    return float(cpu), int(rss_kib) / 1024


def exports(recording: Path, out: Path, runs: int) -> tuple[list[float], list[float], list[float]]:
    """CPU of ``export`` to CSV and to Parquet, and Parquet's peak RSS (MB), ``runs`` each."""
    cli = [sys.executable, "-m", "jtop_roof", "export", str(recording)]
    csv, parquet, rss = [], [], []
    for _ in range(runs):
        csv.append(child_cpu([*cli, "--out", str(out.with_suffix(".csv"))]))
        cpu, peak = child_cpu_rss([*cli, "--out", str(out.with_suffix(".parquet")), "--format", "parquet"])
        parquet.append(cpu)
        rss.append(peak)
    return csv, parquet, rss


def processes(log: Path, recording: Path, out: Path, runs: int) -> None:
    cli = [sys.executable, "-m", "jtop_roof"]
    parse, report, export, parquet, rss = [], [], [], [], []
    for _ in range(runs):  # interleaved, so a busy spell of the machine hits them all
        parse.append(child_cpu([*cli, "parse", str(log)]))
        report.append(child_cpu([*cli, "report", str(recording), "--format", "json"]))
        csv, table, peak = exports(recording, out, 1)
        export += csv
        parquet += table
        rss += peak
    print(f"\nwhole processes, CPU time (user + system), {runs} runs each:")
    print(f"  jroof-tui parse DAY.log > /dev/null:           {spread(parse)}")
    print(f"  jroof-tui report DAY.jsonl --format json:      {spread(report)}")
    print(f"  jroof-tui export DAY.jsonl --out X.csv:        {spread(export)}")
    print(f"  jroof-tui export DAY.jsonl --out X.parquet:    {spread(parquet)}; peak RSS "
          f"{min(rss):.0f}-{max(rss):.0f} MB")
    ratio = min(report) / min(parse)
    print(f"  report of the recording / parse of the log: {ratio:.2f}x (goal <= 2x: "
          f"{'met' if ratio <= 2.0 else 'NOT met'})")
    ratio = min(export) / min(report)
    print(f"  export / report of the recording: {ratio:.2f}x (goal <= 1.5x: "
          f"{'met' if ratio <= 1.5 else 'NOT met'})")


def million(tmp: Path, runs: int) -> None:
    log, recording = tmp / "million.log", tmp / "million.jsonl"
    write_log(log, 1_000_000, 0.1)
    write_recording(log, recording)
    log.unlink()
    cli = [sys.executable, "-m", "jtop_roof"]
    report = [child_cpu([*cli, "report", str(recording), "--format", "json"]) for _ in range(runs)]
    print(f"\n1,000,000-sample recording (100 ms), {recording.stat().st_size / 1e6:.0f} MB:")
    print(f"  jroof-tui report FILE --format json, CPU: {spread(report)} (goal <= 15 s: "
          f"{'met' if min(report) <= 15 else 'NOT met'})")
    first = [replay_child(recording, "first")["first_record_s"] for _ in range(runs)]
    print(f"  replay: open + Runtime.describe/apply + first record into the pipeline, wall: "
          f"{spread(first)} (goal < 1 s: {'met' if max(first) < 1.0 else 'NOT met'})")
    csv, parquet, rss = exports(recording, tmp / "million", runs)
    ratio = min(csv) / min(report)
    print(f"  jroof-tui export FILE --out X.csv, CPU: {spread(csv)} ({ratio:.2f}x the report; goal <= 1.5x: "
          f"{'met' if ratio <= 1.5 else 'NOT met'})")
    print(f"  jroof-tui export FILE --out X.parquet, CPU: {spread(parquet)}; peak RSS {min(rss):.0f}-"
          f"{max(rss):.0f} MB (goal <= 100 MB: {'met' if max(rss) <= 100 else 'NOT met'})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--million", action="store_true", help="also a 1,000,000-sample recording")
    parser.add_argument("--part", choices=("all", "decode", "processes", "none"), default="all",
                        help="none: only the million-sample recording (with --million)")
    args = parser.parse_args()
    if not (LOGS / ORIN_LOG).is_file():
        print(f"no real logs at {LOGS}: nothing to measure")
        return 1
    print(f"Python {sys.version.split()[0]}, msgspec {msgspec.__version__}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        log, recording = tmp / "day.log", tmp / "day.jsonl"
        if args.part == "none":
            if args.million:
                million(tmp, args.runs)
            return 0
        write_log(log, 86_400, 1.0)
        write_recording(log, recording)
        size = recording.stat().st_size / 1e6
        print(f"day log {log.stat().st_size / 1e6:.0f} MB, day recording {size:.0f} MB "
              f"({sum(1 for _ in itertools.islice(recording.open(), 1, None)):,} records)")
        if args.part in ("all", "decode"):
            decoding(log, recording, args.runs)
            parse_text(log, args.runs)
        if args.part in ("all", "processes"):
            processes(log, recording, tmp / "day.csv", args.runs)
        if args.million:
            million(tmp, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
