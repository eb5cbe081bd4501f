"""trtexec logs -> the runs they hold: phases on the wall clock, iterations and throughput.

What is read (TensorRT 7 to 10, ``samples/common/sampleReporting.cpp``; real logs in ``../shared/trtexec``):

* A run starts at ``&&&& RUNNING TensorRT.trtexec ... # COMMAND`` (or at ``=== Model Options ===`` when
  the banner is missing) and ends at ``&&&& PASSED``/``FAILED``/``WAIVED``. A file may hold several
  runs (a sweep appends one invocation after another): ``parse_trtexec_runs`` returns them all.
* Phases, in order: ``build`` (from the run's first stamp to ``Starting inference``: parsing, engine
  build or deserialisation, context set-up), ``warm-up`` (``Starting inference``, or the configured
  warm-up before the timed start when that is earlier, to the timed start) and ``timed``. Only
  ``timed`` counts for throughput and energy.
* The timed window is ``[summary stamp - Total Host Walltime, summary stamp]``. trtexec prints
  ``Warmup completed`` and ``Timing trace has N queries`` once the timed run has ended, with that
  moment's stamp, so neither stamp is the start of anything. The summary stamp is the stamp of
  ``=== Performance summary ===`` (TensorRT >= 8), else of the ``walltime:`` line (TensorRT <= 7),
  else of ``Timing trace``.
* Stamps ``[MM/DD/YYYY-HH:MM:SS]`` are local wall time in the zone given (the tegrastats log's zone),
  read as the start of their second exactly as tegrastats stamps are (``timeline.Timeline.wall_of``),
  plus ``offset_s`` for clocks that disagree. A printed time is therefore up to one second later
  than its stamp says; every phase edge carries that same resolution. Without stamps (very old
  builds) every time is None; counts and rates are still read.
* ``iterations`` = N from ``Timing trace has N queries``. ``host_walltime_s`` = ``Total Host
  Walltime`` (TensorRT >= 8), else ``walltime:`` (TensorRT <= 7), else the ``over T s`` of the timing
  trace line. ``throughput_per_s`` = the ``Throughput: X qps`` line; TensorRT <= 7 prints none (its
  lower-case ``throughput:`` inside the ``Host Latency`` block is N / walltime, queries per second
  whatever the batch), so there it is N / walltime. trtexec's own ``Throughput`` is batch x queries
  / walltime: with an implicit-batch engine run at ``--batch=B`` > 1 it counts inferences, not
  queries; ``batch`` says when that is the case.

This module imports no UI code.
"""

from __future__ import annotations

import math
import os
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path

from jtop_roof.formats.userfiles import read_small_file
from jtop_roof.model.errors import UserError
from jtop_roof.model.records import MAX_WORK_ITERATIONS, Marker, Record, Sample, Work
from jtop_roof.model.timeline import Timeline, parse_tz

#: Phase names, in the order a run goes through them.
BUILD, WARM_UP, TIMED = "build", "warm-up", "timed"
PHASES = (BUILD, WARM_UP, TIMED)
#: What ``run`` appends to a recording's name for trtexec's output kept beside it.
KEPT_SUFFIX = ".trtexec.log"
#: A verbose trtexec log (``--verbose``, every tactic) runs to tens of MB; more is not one.
MAX_LOG_BYTES = 256 << 20
#: Offsets beyond a day are a mistake, not a clock disagreement.
MAX_OFFSET_S = 86_400.0
#: The largest query count, warm-up count or batch read (a work report's bound): more digits are
#: no count, and would overflow a float or pass Python's 4,300-digit limit.
MAX_COUNT = int(MAX_WORK_ITERATIONS)
#: Flags that pick the precisions TensorRT may use, as printed on the command line.
PRECISION_FLAGS = ("fp16", "bf16", "fp8", "int8", "int4", "best", "noTF32", "stronglyTyped")

_LINE = re.compile(
    r"\[(\d\d)/(\d\d)/(\d{4})-(\d\d):(\d\d):(\d\d)\]\s*\[([IWEVF])\]\s?(.*)|\[([IWEVF])\]\s?(.*)",
    re.ASCII,
)
_BANNER = re.compile(
    r"&&&& (RUNNING|PASSED|FAILED|WAIVED) TensorRT\.trtexec(?: \[TensorRT v(\d+)\])?(?: # (.*))?"
)
_NUM = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"
_TIME_UNITS = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_UNIT = r"\s*(s|sec|ms|us|ns)\b"
_TIMING_TRACE = re.compile(rf"Timing trace has (\d+) queries over {_NUM}{_UNIT}")
_WARMUP = re.compile(rf"Warmup completed (\d+) queries over {_NUM}{_UNIT}")
_THROUGHPUT = re.compile(rf"Throughput: {_NUM} qps")
_WALLTIME = re.compile(rf"Total Host Walltime: {_NUM}{_UNIT}")
_LEGACY_WALLTIME = re.compile(rf"walltime: {_NUM}{_UNIT}")
_GPU_TOTAL = re.compile(rf"(?:Total GPU Compute Time|total compute time): {_NUM}{_UNIT}")
_GPU_MEAN = re.compile(rf"GPU Compute Time: .*?\bmean = {_NUM}{_UNIT}")
_LEGACY_MEAN = re.compile(rf"mean: {_NUM}{_UNIT}")
_ENQUEUE_MEAN = re.compile(rf"Enqueue Time: .*?\bmean = {_NUM}{_UNIT}")
_OPTION = re.compile(r"(Precision|Model|Prototxt|Load engine|Save engine|Batch|TensorRT version): ?(.*)")
_CMD_MODEL = ("--onnx=", "--uff=", "--deploy=", "--model=")
_CMD_ENGINE = ("--loadEngine=", "--saveEngine=")


class TrtexecError(UserError):
    """A trtexec log that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True, slots=True)
class Phase:
    """One phase of a run on the wall clock (unix seconds); None where the log does not tell."""

    name: str
    start_wall: float | None
    end_wall: float | None

    @property
    def duration_s(self) -> float | None:
        if self.start_wall is None or self.end_wall is None:
            return None
        return self.end_wall - self.start_wall


@dataclass(frozen=True, slots=True)
class TrtexecRun:
    """One trtexec invocation. ``phases`` holds build, warm-up and timed in that order once the run
    reached its timing summary (times None where unknown), fewer when it stopped earlier."""

    phases: tuple[Phase, ...]
    #: Queries timed (``Timing trace has N queries``); None when the run never finished timing.
    iterations: int | None
    throughput_per_s: float | None
    #: ``"Throughput line"`` or ``"queries / walltime"`` (TensorRT <= 7 prints no Throughput line).
    throughput_source: str | None
    host_walltime_s: float | None
    #: Mean GPU compute time of one query (the GPU-active rate is 1 / this) and its total.
    gpu_compute_mean_s: float | None
    gpu_compute_total_s: float | None
    warmup_queries: int | None
    warmup_s: float | None
    #: ``fp32+int8`` from the ``Precision:`` line, lower case; else from the flags; None if unknown.
    precision: str | None
    #: Precision flags on the command line without dashes: ``("int8",)``, ``("best",)``.
    precision_flags: tuple[str, ...]
    #: The model file (ONNX, UFF, Caffe prototxt) and the engine file loaded or saved, as printed.
    model: str | None
    engine: str | None
    #: ``--batch`` of an implicit-batch run (trtexec's Throughput is batch x queries / walltime);
    #: None for explicit-batch engines (``Batch: Explicit``) or when not printed.
    batch: int | None
    #: ``100300`` from ``[TensorRT v100300]``, else the ``TensorRT version:`` line; None for TRT <= 7.
    tensorrt_version: str | None
    command: str | None
    #: True for ``&&&& PASSED``, False for FAILED/WAIVED, None when the log ends first.
    passed: bool | None
    #: Mean host time to enqueue one query (``Enqueue Time: ... mean``): the launch cost per query.
    enqueue_mean_s: float | None = None

    def phase(self, name: str) -> Phase | None:
        for p in self.phases:
            if p.name == name:
                return p
        return None

    @property
    def timed(self) -> Phase | None:
        """The timed window, the only phase that counts for throughput and energy."""
        return self.phase(TIMED)

    @property
    def unmeasured(self) -> str | None:
        """Why a finished run's timed window measured nothing per query (no queries, or no time),
        else None. Its queries are then not reported as work: energy over no time, or over no
        query, is no per-inference figure, and 0 J would read as one."""
        if self.iterations == 0:
            return "trtexec timed 0 queries"
        if self.iterations is not None and self.host_walltime_s is not None and self.host_walltime_s <= 0:
            return f"trtexec's timed run took {self.host_walltime_s:g} s (Total Host Walltime)"
        return None


def _seconds(value: str, unit: str) -> float | None:
    """Seconds of a printed time; None for one that overflows (``1e999 s``)."""
    return _finite(float(value) * _TIME_UNITS[unit])


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _count(digits: str, what: str) -> int:
    """A printed count; TrtexecError for one past MAX_COUNT (the log is refused, not misread)."""
    if len(digits) > len(str(MAX_COUNT)) or int(digits) > MAX_COUNT:
        shown = digits if len(digits) <= 20 else f"{digits[:8]}... ({len(digits)} digits)"
        raise TrtexecError(f"{what} {shown} is past {MAX_COUNT:.0e}: not a count")
    return int(digits)


@dataclass
class _Draft:
    """What has been read of one run so far."""

    first_wall: float | None = None
    inference_wall: float | None = None
    summary_wall: float | None = None
    walltime_wall: float | None = None
    trace_wall: float | None = None
    iterations: int | None = None
    trace_s: float | None = None
    throughput: float | None = None
    walltime_s: float | None = None
    legacy_walltime_s: float | None = None
    gpu_mean_s: float | None = None
    enqueue_mean_s: float | None = None
    gpu_total_s: float | None = None
    warmup_queries: int | None = None
    warmup_s: float | None = None
    precision_line: str | None = None
    flags: list[str] = field(default_factory=list)
    model: str | None = None
    engine: str | None = None
    option_model: str | None = None
    option_engine: str | None = None
    batch: int | None = None
    version: str | None = None
    command: str | None = None
    passed: bool | None = None
    saw_options: bool = False
    seen: bool = False  # a trtexec message line was read
    legacy_block: str | None = None  # "Host Latency" / "GPU Compute" of the TensorRT 7 summary

    def started(self) -> bool:
        return self.command is not None or self.seen


class TrtexecReader:
    """Reads a trtexec log line by line (a file, or a live command's output as it comes).

    ``tz``: the zone of the stamps (a ``tzinfo``, a name for ``timeline.parse_tz``, or None for this
    machine's); ``offset_s`` is added to every stamp (``--trtexec-offset``)."""

    def __init__(self, tz: tzinfo | str | None = None, offset_s: float = 0.0) -> None:
        if isinstance(tz, tzinfo):
            zone = tz
        else:
            try:
                zone = parse_tz(tz)
            except ValueError as exc:
                raise TrtexecError(str(exc)) from None
        if (isinstance(offset_s, bool) or not isinstance(offset_s, (int, float))
                or not math.isfinite(offset_s)):
            raise TrtexecError(f"trtexec offset: expected a number of seconds, got {offset_s!r}")
        if abs(offset_s) > MAX_OFFSET_S:
            raise TrtexecError(f"trtexec offset: {offset_s:g} s is more than a day ({MAX_OFFSET_S:g} s)")
        self._timeline = Timeline(zone, 1.0)
        self._offset = float(offset_s)
        self._done: list[TrtexecRun] = []
        self._draft = _Draft()

    # -- input ---------------------------------------------------------------------------------------
    def feed(self, line: str) -> None:
        """Take one line of output (with or without its newline)."""
        text = line.strip()
        if not text:
            return
        banner = _BANNER.match(text)
        if banner is not None:
            self._on_banner(banner)
            return
        m = _LINE.match(text)
        if m is None:
            return
        if m.group(7) is not None:
            stamp = f"{m.group(1)}-{m.group(2)}-{m.group(3)} {m.group(4)}:{m.group(5)}:{m.group(6)}"
            wall = self._timeline.wall_of(stamp)
            wall = None if wall is None else wall + self._offset
            body = m.group(8)
        else:
            wall = None
            body = m.group(10)
        self._on_message(body.strip(), wall)

    def feed_all(self, lines: Iterable[str]) -> TrtexecReader:
        for line in lines:
            self.feed(line)
        return self

    def runs(self) -> tuple[TrtexecRun, ...]:
        """Every run read so far, the one in progress last (if it has begun)."""
        current = (self._finish(self._draft),) if self._draft.started() else ()
        return (*self._done, *current)

    # -- state ---------------------------------------------------------------------------------------
    def _close(self) -> None:
        if self._draft.started():
            self._done.append(self._finish(self._draft))
        self._draft = _Draft()

    def _on_banner(self, m: re.Match[str]) -> None:
        kind, version, command = m.group(1), m.group(2), m.group(3)
        if kind == "RUNNING":
            self._close()
            d = self._draft
            d.command = command.strip() if command else ""
            d.version = version
            self._read_command(d, d.command)
            return
        d = self._draft
        if not d.started():
            return
        d.passed = kind == "PASSED"
        if d.command is None and command:
            d.command = command.strip()
            self._read_command(d, d.command)
        self._close()

    @staticmethod
    def _read_command(d: _Draft, command: str) -> None:
        for token in command.split():
            flag = token.lstrip("-")
            if token.startswith("--") and flag in PRECISION_FLAGS and flag not in d.flags:
                d.flags.append(flag)
            for prefix in _CMD_MODEL:
                if token.startswith(prefix) and len(token) > len(prefix) and d.model is None:
                    d.model = token[len(prefix):]
            for prefix in _CMD_ENGINE:
                if token.startswith(prefix) and len(token) > len(prefix):
                    # A loaded engine is what runs; a saved one is what was built.
                    if d.engine is None or prefix == "--loadEngine=":
                        d.engine = token[len(prefix):]

    def _on_message(self, body: str, wall: float | None) -> None:
        d = self._draft
        if body.startswith("=== Model Options ==="):
            if d.saw_options or d.iterations is not None:
                self._close()  # a second run without a banner between
                d = self._draft
            d.saw_options = True
        d.seen = True
        if wall is not None and d.first_wall is None:
            d.first_wall = wall
        if body.startswith("Starting inference"):
            d.inference_wall = wall
            return
        if body.startswith("=== Performance summary ==="):
            d.summary_wall = wall
            return
        m = _TIMING_TRACE.match(body)
        if m is not None:
            d.iterations = _count(m.group(1), "query count")
            d.trace_s = _seconds(m.group(2), m.group(3))
            d.trace_wall = wall
            return
        m = _WARMUP.match(body)
        if m is not None:
            d.warmup_queries = _count(m.group(1), "warm-up query count")
            d.warmup_s = _seconds(m.group(2), m.group(3))
            return
        m = _THROUGHPUT.match(body)
        if m is not None:
            d.throughput = _finite(float(m.group(1)))
            return
        m = _WALLTIME.match(body)
        if m is not None:
            d.walltime_s = _seconds(m.group(1), m.group(2))
            d.walltime_wall = wall
            return
        m = _LEGACY_WALLTIME.match(body)
        if m is not None:
            d.legacy_walltime_s = _seconds(m.group(1), m.group(2))
            d.walltime_wall = wall
            return
        m = _GPU_TOTAL.match(body)
        if m is not None:
            d.gpu_total_s = _seconds(m.group(1), m.group(2))
            return
        m = _GPU_MEAN.match(body)
        if m is not None:
            d.gpu_mean_s = _seconds(m.group(1), m.group(2))
            return
        m = _ENQUEUE_MEAN.match(body)
        if m is not None:
            d.enqueue_mean_s = _seconds(m.group(1), m.group(2))
            return
        if body in ("Host Latency", "GPU Compute", "Enqueue Time"):
            d.legacy_block = body
            return
        m = _LEGACY_MEAN.match(body)
        if m is not None:
            if d.legacy_block == "GPU Compute":
                d.gpu_mean_s = _seconds(m.group(1), m.group(2))
            return
        m = _OPTION.match(body)
        if m is not None:
            self._on_option(d, m.group(1), m.group(2).strip())

    @staticmethod
    def _on_option(d: _Draft, key: str, value: str) -> None:
        if key == "Precision":
            d.precision_line = value.lower() or None
        elif key in ("Model", "Prototxt"):
            if value and d.option_model is None:
                d.option_model = value
        elif key in ("Load engine", "Save engine"):
            if value and (d.option_engine is None or key == "Load engine"):
                d.option_engine = value
        elif key == "Batch":
            d.batch = _count(value, "batch") if value.isascii() and value.isdigit() else None
        elif key == "TensorRT version" and d.version is None:
            d.version = value or None

    # -- result --------------------------------------------------------------------------------------
    @staticmethod
    def _finish(d: _Draft) -> TrtexecRun:
        walltime = d.walltime_s if d.walltime_s is not None else d.legacy_walltime_s
        if walltime is None:
            walltime = d.trace_s
        throughput, source = d.throughput, "Throughput line" if d.throughput is not None else None
        if throughput is None and d.iterations is not None and walltime:
            throughput = _finite(d.iterations / walltime)
            source = None if throughput is None else "queries / walltime"
        phases: tuple[Phase, ...] = ()
        if d.iterations is not None:
            end = d.summary_wall if d.summary_wall is not None else d.walltime_wall
            if end is None:
                end = d.trace_wall
            start = end - walltime if end is not None and walltime is not None else None
            # Warm-up starts at "Starting inference"; that stamp is whole seconds like the summary's,
            # so it can read later than the computed timed start: then the warm-up is taken as its
            # configured length before the timed start (printed "over T ms"), the same frame as the
            # window. A run whose queries outlast the configured warm-up keeps its stamp.
            candidates = [w for w in (
                d.inference_wall,
                start - d.warmup_s if start is not None and d.warmup_s is not None else None,
            ) if w is not None]
            warm_start = min(candidates) if candidates else None
            if warm_start is not None and start is not None:
                warm_start = min(warm_start, start)
            phases = (
                Phase(BUILD, d.first_wall, warm_start),
                Phase(WARM_UP, warm_start, start),
                Phase(TIMED, start, end),
            )
        elif d.inference_wall is not None:
            phases = (Phase(BUILD, d.first_wall, d.inference_wall), Phase(WARM_UP, d.inference_wall, None))
        elif d.first_wall is not None:
            phases = (Phase(BUILD, d.first_wall, None),)
        precision = d.precision_line
        if precision is None and d.flags:
            precision = "+".join(f for f in d.flags if f not in ("noTF32", "stronglyTyped")) or None
        return TrtexecRun(
            phases=phases,
            iterations=d.iterations,
            throughput_per_s=throughput,
            throughput_source=source,
            host_walltime_s=walltime,
            gpu_compute_mean_s=d.gpu_mean_s,
            enqueue_mean_s=d.enqueue_mean_s,
            gpu_compute_total_s=d.gpu_total_s,
            warmup_queries=d.warmup_queries,
            warmup_s=d.warmup_s,
            precision=precision,
            precision_flags=tuple(d.flags),
            model=d.model if d.model is not None else d.option_model,
            engine=d.engine if d.engine is not None else d.option_engine,
            batch=d.batch,
            tensorrt_version=d.version,
            command=d.command or None,
            passed=d.passed,
        )


def parse_trtexec_runs(
    text: str, tz: tzinfo | str | None = None, offset_s: float = 0.0
) -> tuple[TrtexecRun, ...]:
    """Every trtexec invocation in ``text``, in order (none when it holds no trtexec output);
    TrtexecError for a count past MAX_COUNT."""
    return TrtexecReader(tz, offset_s).feed_all(text.splitlines()).runs()


def parse_trtexec(
    text: str, tz: tzinfo | str | None = None, offset_s: float = 0.0, *, where: str = "trtexec log"
) -> TrtexecRun:
    """The one timed run in ``text``. TrtexecError when no run reached its timing summary, or when
    several did (use ``parse_trtexec_runs`` for a sweep), or for a count past MAX_COUNT."""
    reader = TrtexecReader(tz, offset_s)
    try:
        runs = reader.feed_all(text.splitlines()).runs()
    except TrtexecError as exc:
        raise TrtexecError(f"{where}: {exc}") from None
    timed = [r for r in runs if r.iterations is not None]
    if not timed:
        raise TrtexecError(f"{where}: no trtexec timing summary ('Timing trace has N queries') found")
    if len(timed) > 1:
        raise TrtexecError(f"{where}: {len(timed)} timed trtexec runs in one log; expected one")
    return timed[0]


def kept_output(recording: str | Path) -> str | None:
    """The trtexec output that ``jroof-tui run -- trtexec ...`` kept beside this recording
    (``FILE.trtexec.log``), when there is one: ``report``, ``compare`` and the monitor's replay of
    the recording read it without ``--trtexec`` (same machine, same clock: no offset)."""
    path = f"{recording}{KEPT_SUFFIX}"
    return path if os.path.isfile(path) else None


def is_trtexec(argv: Sequence[str]) -> bool:
    """Whether ``run``'s workload is trtexec (its output is then kept as ``FILE.trtexec.log``)."""
    return bool(argv) and os.path.basename(argv[0]) == "trtexec"


def read_trtexec(path: str | Path, tz: tzinfo | str | None = None, offset_s: float = 0.0) -> TrtexecRun:
    """``parse_trtexec`` over a file; errors are one line naming the file."""
    return parse_trtexec(_read(path), tz, offset_s, where=f"trtexec log {path}")


def _read(path: str | Path) -> str:
    try:
        raw = read_small_file(Path(path), MAX_LOG_BYTES)
    except OSError as exc:
        raise TrtexecError(f"cannot read trtexec log {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise TrtexecError(f"trtexec log {path}: not UTF-8 text") from None
    return raw


# ---------------------------------------------------------------------------------------------
# trtexec's run as records of the stream it ran beside


def trtexec_records(run: TrtexecRun, wall_to_mono: float) -> list[Marker | Work]:
    """trtexec's phases as markers and its timed iterations as a work report, on a stream whose
    t_mono = t_wall - ``wall_to_mono`` (a replay adds them to its whole file)."""
    extras = [_trtexec_record(extra, wall_to_mono, run) for extra in _trtexec_extras(run)]
    return [record for record in extras if isinstance(record, (Marker, Work))]


def trtexec_records_among(run: TrtexecRun, wall_to_mono: float,
                          monos: Sequence[float]) -> list[Marker | Work]:
    """``trtexec_records`` for a whole file whose samples lie at the sorted stream times ``monos``
    (a replay), each among them where ``with_trtexec`` puts it (``_before``, compared on the wall
    clock as ``report`` compares): at a sample's time a phase starts before it and the timed window
    ends after it, which the ledger, placing a marker after a sample at its time, reads from a
    time just before that sample's or at it. So the replay's phases hold ``report``'s samples."""
    out: list[Marker | Work] = []
    for extra in _trtexec_extras(run):
        record = _trtexec_record(extra, wall_to_mono, run)
        assert isinstance(record, (Marker, Work)) and record.t_mono is not None
        first_after = bisect_left(range(len(monos)), True,
                                  key=lambda i: _before(extra, monos[i] + wall_to_mono))
        if first_after < len(monos) and record.t_mono >= monos[first_after]:
            record.t_mono = math.nextafter(monos[first_after], -math.inf)
        elif first_after > 0 and record.t_mono < monos[first_after - 1]:
            record.t_mono = monos[first_after - 1]
        out.append(record)
    return out


def _trtexec_extras(run: TrtexecRun) -> list[tuple[float, str, str | None]]:
    extras: list[tuple[float, str, str | None]] = []
    for phase in run.phases:
        if phase.start_wall is not None:
            extras.append((phase.start_wall, "start", phase.name))
    timed = run.timed
    if timed is not None and timed.end_wall is not None:
        if run.unmeasured is None:
            extras.append((timed.end_wall, "work", None))
        extras.append((timed.end_wall, "end", None))
    extras.sort(key=lambda item: item[0])
    return extras


def with_trtexec(records: Iterable[Record], run: TrtexecRun, start_wall: float | None = None
                 ) -> Iterator[Record]:
    """The stream with trtexec's phases as markers (origin ``trtexec``) and its timed iterations as
    a work report at the timed window's end, each placed by wall time among the samples (its
    stream time from the samples' own wall-to-stream offset). ``start_wall``: the first sample's
    wall time where the samples carry none (a plain log placed by ``--log-start``)."""
    extras = _trtexec_extras(run)
    offset: float | None = None
    for record in records:
        if offset is None and isinstance(record, Sample) and record.t_mono is not None:
            first_wall = record.t_wall if record.t_wall is not None else start_wall
            offset = None if first_wall is None else first_wall - record.t_mono
        t_wall = record.t_wall
        if t_wall is None and start_wall is not None and offset is not None and record.t_mono is not None:
            t_wall = record.t_mono + offset
        while extras and offset is not None and t_wall is not None and _before(extras[0], t_wall):
            yield _trtexec_record(extras.pop(0), offset, run)
        yield record
    for extra in extras:
        if offset is not None:
            yield _trtexec_record(extra, offset, run)


def _before(extra: tuple[float, str, str | None], t_wall: float) -> bool:
    """A phase starts before a sample at its start time; the timed window ends after one at its end
    (the window is closed: [summary stamp - walltime, summary stamp])."""
    wall, what, _ = extra
    return wall <= t_wall if what == "start" else wall < t_wall


def _trtexec_record(extra: tuple[float, str, str | None], offset: float, run: TrtexecRun) -> Record:
    wall, what, name = extra
    if what == "work":
        return Work(float(run.iterations or 0), None, None, run.precision, wall, wall - offset, "trtexec")
    kind = "phase_start" if what == "start" else "phase_end"
    return Marker(kind, name, wall, wall - offset, "trtexec")
