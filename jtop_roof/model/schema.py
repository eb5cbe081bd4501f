"""Every record kind of a recording, declared once as msgspec Structs, and the typed decoder that
reads a recording's lines straight into the model's objects.

A line is a JSON object whose ``type`` names its kind (``header``, ``sample``, ``power``,
``processes``, ``marker``, ``work``, ``event``); every record has ``t`` (wall clock, unix s) and
``mono`` (the stream's monotonic clock, s). The keys are those of schema 1 (docs/recordings.md's
"Recordings"): a recording written by any jroof reads the same.

The leaf parts of a sample (``CpuCore``, ``Memory``, ``Gpu``, ``Rail``...) are themselves Structs
(``model.records``), so msgspec builds them in C and a sample line costs one ``Sample`` made in
Python. The ranges and caps (``model.bounds``) are the types' own: a line whose values all fit is
decoded in one pass. A line that does not fit (a value of the wrong type, out of range, NaN-like,
past a cap, a lone surrogate) is read again by the lenient decoder (``model.codec``), which keeps
what it can, nulls or drops the rest and counts it in the ``Tally``: hostile input costs time only
where it is.

What the types cannot say is the small post-check here: an engine printed ``off`` is the string
``"off"``; an empty name or origin takes its default, as the lenient decoder does.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from jtop_roof.model.bounds import (
    MAX_CORES,
    MAX_NAMED,
    MAX_PROCESS_ROWS,
    MAX_TEXTS,
    Counter,
    Detail,
    Iterations,
    Mono,
    MonoBefore,
    Name,
    Percent,
    Period,
    Reading,
    Reason,
    Wall,
    Whole,
    WorkAmount,
)
from jtop_roof.model.codec import Tally, record_from_json
from jtop_roof.model.records import (
    Clocked,
    CpuCore,
    Engine,
    Event,
    Fan,
    Gpu,
    IoRates,
    Iram,
    Marker,
    Memory,
    PowerReading,
    ProcessReading,
    ProcessRow,
    Rail,
    Record,
    Sample,
    Work,
)

_TAG = "type"


class HeaderLine(Struct, tag="header", tag_field=_TAG, kw_only=True):
    """A session's first line. Its other keys (``source``, ``file``, ``interval_ms``, ``board``...)
    are the source's own and are read as a mapping (``formats.logfile.parse_header_line``)."""

    schema: int
    app: str
    version: str | None = None
    start_wall: float | None = None
    start_mono: float | None = None


class SampleLine(Struct, tag="sample", tag_field=_TAG, gc=False):
    """A sample (``codec.sample_to_json``). ``gpu.mhz`` and ``power_total_mw`` are derived when
    written and not read back; ``ram_mb`` holds ``lfb_count``/``lfb_size_kb``, ``swap_mb``
    ``cached``."""

    t: Wall | None = None
    mono: Mono | None = None
    raw: str | None = None
    non_sample: bool = False
    ram_mb: Memory | None = None
    swap_mb: Memory | None = None
    iram_kb: Iram | None = None
    cpu: Annotated[list[CpuCore | None], Meta(max_length=MAX_CORES)] | None = None
    gpu: Gpu | None = None
    emc: Clocked | None = None
    engines: Annotated[dict[Name, Literal["off"] | Engine], Meta(max_length=MAX_NAMED)] = {}
    temps_c: Annotated[dict[Name, Reading | None], Meta(max_length=MAX_NAMED)] = {}
    temps_max_c: Annotated[dict[Name, Reading], Meta(max_length=MAX_NAMED)] = {}
    rails_mw: Annotated[dict[Name, Rail], Meta(max_length=MAX_NAMED)] = {}
    throttle_reasons: Annotated[list[Reason], Meta(max_length=MAX_TEXTS)] | None = None
    oc_event_cnt: Annotated[dict[Name, Whole], Meta(max_length=MAX_NAMED)] | None = None
    fans: Annotated[dict[Name, Fan], Meta(max_length=MAX_NAMED)] | None = None
    io_mb_s: IoRates | None = None
    unknown: Annotated[list[str], Meta(max_length=MAX_TEXTS)] | None = None


class PowerLine(Struct, tag="power", tag_field=_TAG, gc=False):
    """A power reading between samples; empty maps are left out when written."""

    period_s: Period
    t: Wall | None = None
    mono: Mono | None = None
    rails_mw: Annotated[dict[Name, Reading], Meta(max_length=MAX_NAMED)] = {}
    counters_mj: Annotated[dict[Name, Counter], Meta(max_length=MAX_NAMED)] = {}
    source: Name | None = None


class ProcessesLine(Struct, tag="processes", tag_field=_TAG, gc=False):
    """A process reading; a row leaves out ``gpu_mem_mb`` where unknown and ``benchmark`` when false."""

    period_s: Period
    t: Wall | None = None
    mono: Mono | None = None
    source: Name | None = None
    floor_pct: Percent | None = 1.0
    priming: bool = False
    processes: Annotated[list[ProcessRow], Meta(max_length=MAX_PROCESS_ROWS)] = []


class MarkerLine(Struct, tag="marker", tag_field=_TAG, gc=False):
    """A phase boundary; its clocks may be before the stream's first sample."""

    kind: Literal["phase_start", "phase_end"] = "phase_start"
    name: Name | None = None
    t: Wall | None = None
    mono: MonoBefore | None = None
    origin: Name | None = "key"


class WorkLine(Struct, tag="work", tag_field=_TAG, gc=False):
    """Work a workload reported doing; its clocks may be before the stream's first sample."""

    iterations: Iterations
    flops: WorkAmount | None = None
    bytes: WorkAmount | None = None
    precision: Name | None = None
    t: Wall | None = None
    mono: MonoBefore | None = None
    origin: Name | None = "script"


class EventLine(Struct, tag="event", tag_field=_TAG, gc=False):
    """Something about the stream (a gap, a restart, a note); a detector's event adds ``unit``,
    ``start_t`` and ``start_mono``."""

    kind: Name | None = "note"
    detail: Detail = ""
    t: Wall | None = None
    mono: Mono | None = None
    gap_s: Mono | None = None
    unit: Name | None = None
    start_t: Wall | None = None
    start_mono: Mono | None = None


Line = HeaderLine | SampleLine | PowerLine | ProcessesLine | MarkerLine | WorkLine | EventLine
LINE_TYPES: tuple[type[Struct], ...] = (HeaderLine, SampleLine, PowerLine, ProcessesLine, MarkerLine,
                                        WorkLine, EventLine)

_decoder = msgspec.json.Decoder(Line)
_OFF = Engine(off=True)
_STRICT_ERRORS = (msgspec.ValidationError, msgspec.DecodeError)


def decode_line(text: str | bytes) -> Line:
    """The typed line; raises ``msgspec.ValidationError`` or ``msgspec.DecodeError`` for a line
    that does not fit the schema (``decode_record`` reads those leniently)."""
    return _decoder.decode(text)


def decode_record(text: str | bytes, tally: Tally | None = None) -> Record | None:
    """One stripped, non-empty recording line -> its record; None for a header, a line of an
    unknown type or one that is not a JSON object. The typed route takes a line whose values all
    fit; any other goes to the lenient decoder, which nulls or drops and counts what does not fit
    in ``tally``. Never raises."""
    try:
        line = _decoder.decode(text)
    except _STRICT_ERRORS:
        return _lenient(text, tally)
    record = _record(line)
    return _lenient(text, tally) if record is _LENIENT else record


_LENIENT: Any = object()  # the post-check's word for a line the typed route leaves to the lenient one


def _lenient(text: str | bytes, tally: Tally | None) -> Record | None:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: [[[[...]]]] nested past the stack
        return None
    return record_from_json(obj, tally) if isinstance(obj, dict) else None


def _record(line: Line) -> Record | None:
    kind = type(line)
    if kind is SampleLine:
        return sample_of(line)  # type: ignore[arg-type]
    if kind is PowerLine:
        return _power(line)  # type: ignore[arg-type]
    if kind is ProcessesLine:
        return _processes(line)  # type: ignore[arg-type]
    if kind is MarkerLine:
        assert isinstance(line, MarkerLine)
        return Marker(line.kind, line.name, line.t, line.mono, line.origin or "key")
    if kind is WorkLine:
        assert isinstance(line, WorkLine)
        return Work(line.iterations, line.flops, line.bytes, line.precision, line.t, line.mono,
                    line.origin or "script")
    if kind is EventLine:
        assert isinstance(line, EventLine)
        return Event(line.kind or "note", line.detail, line.t, line.mono, line.gap_s, line.unit,
                     line.start_t, line.start_mono)
    return None  # a header


def sample_of(line: SampleLine) -> Sample:
    """The Sample of a typed sample line: its parts are the decoded Structs themselves (its maps and
    lists too: the line is the decoder's own, made for this Sample alone). Positional: the fields of
    ``Sample`` in their order (``test_schema_sample_of`` holds it to them by name)."""
    engines: dict[str, Any] = line.engines
    if "off" in engines.values():  # an engine printed ``off``: the Engine that says so, in place
        for name, engine in engines.items():
            if engine.__class__ is str:
                engines[name] = _OFF
    return Sample(line.t, line.mono, line.raw, not line.non_sample, line.ram_mb, line.swap_mb, line.iram_kb,
                  line.cpu, line.gpu, line.emc, engines, line.temps_c, line.temps_max_c, line.rails_mw,
                  line.throttle_reasons, line.oc_event_cnt, None, line.unknown or [], line.fans, line.io_mb_s)


def _power(line: PowerLine) -> PowerReading:
    return PowerReading(line.t, line.mono, line.rails_mw, line.counters_mj, line.source or "unknown",
                        line.period_s)


def _processes(line: ProcessesLine) -> ProcessReading:
    rows = line.processes
    if any(not row.name for row in rows):  # an empty name reads "?" (the lenient route says so)
        return _LENIENT  # type: ignore[no-any-return]
    floor = line.floor_pct
    return ProcessReading(line.t, line.mono, rows, line.source or "unknown", line.period_s,
                          line.priming, 1.0 if floor is None else floor)


__all__ = [
    "LINE_TYPES",
    "EventLine",
    "HeaderLine",
    "Line",
    "MarkerLine",
    "PowerLine",
    "ProcessesLine",
    "SampleLine",
    "WorkLine",
    "decode_line",
    "decode_record",
    "sample_of",
]
