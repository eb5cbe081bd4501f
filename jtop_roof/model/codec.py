"""The JSON form of records: what ``jroof-tui parse`` prints and what a recording stores, one
object per line (documented in docs/recordings.md), as dicts. A recording is read by the typed decoder
(``model.schema``); the decoder here is its lenient route, for a line a value of which does not fit
the schema's types. Decoding is hostile-input safe: every value is type-
and range-checked, bad ones become None and are counted in a :class:`Tally`; a lone surrogate (JSON's
``"\\ud800"``, which no encoder can write back) becomes U+FFFD in every name and text."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

# The caps and ranges (model.bounds), here too for the modules that import them from here.
from jtop_roof.model.bounds import MAX_CORES as MAX_CORES
from jtop_roof.model.bounds import MAX_COUNTER_MJ as MAX_COUNTER_MJ
from jtop_roof.model.bounds import MAX_DETAIL_CHARS as MAX_DETAIL_CHARS
from jtop_roof.model.bounds import MAX_GPCS as MAX_GPCS
from jtop_roof.model.bounds import MAX_MONO_S as MAX_MONO_S
from jtop_roof.model.bounds import MAX_NAME_CHARS as MAX_NAME_CHARS
from jtop_roof.model.bounds import MAX_NAMED as MAX_NAMED
from jtop_roof.model.bounds import MAX_PID as MAX_PID
from jtop_roof.model.bounds import MAX_PROCESS_ROWS as MAX_PROCESS_ROWS
from jtop_roof.model.bounds import MAX_READING as MAX_READING
from jtop_roof.model.bounds import MAX_REASON_CHARS as MAX_REASON_CHARS
from jtop_roof.model.bounds import MAX_RPM as MAX_RPM
from jtop_roof.model.bounds import MAX_TEXTS as MAX_TEXTS
from jtop_roof.model.bounds import MAX_WALL_S as MAX_WALL_S
from jtop_roof.model.bounds import MAX_WORK_AMOUNT as MAX_WORK_AMOUNT
from jtop_roof.model.bounds import MAX_WORK_ITERATIONS as MAX_WORK_ITERATIONS
from jtop_roof.model.bounds import MIN_PERIOD_S as MIN_PERIOD_S
from jtop_roof.model.records import (
    MARKER_KINDS,
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

# JSON form (jroof-tui parse, recordings)


def _num(value: float | None) -> float | int | None:
    """Integral floats print as ints so that `parse` output reads like the tegrastats line."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def json_line(obj: dict[str, Any]) -> str:
    """One compact JSON line with its newline. NaN and infinities become null: JSON has neither,
    and a reader of ``parse`` output or of a recording must be able to load every line."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(finite_or_null(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text + "\n"


def finite_or_null(value: Any) -> Any:
    """``value`` (a JSON-ready dict, list or scalar) with every NaN and infinity as None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: finite_or_null(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_null(item) for item in value]
    return value


def sample_to_json(sample: Sample) -> dict[str, Any]:
    """The documented JSON object for one sample (keys as in the README)."""
    out: dict[str, Any] = {"t": sample.t_wall}
    if not sample.is_sample:
        out["non_sample"] = True
    if sample.ram is not None:
        out["ram_mb"] = {
            "used": _num(sample.ram.used_mb),
            "total": _num(sample.ram.total_mb),
            "lfb_count": sample.ram.lfb_count,
            "lfb_size_kb": _num(sample.ram.lfb_size_kb),
        }
    else:
        out["ram_mb"] = None
    if sample.swap is not None:
        out["swap_mb"] = {
            "used": _num(sample.swap.used_mb),
            "total": _num(sample.swap.total_mb),
            "cached": _num(sample.swap.cached_mb),
        }
    else:
        out["swap_mb"] = None
    if sample.iram is not None:
        out["iram_kb"] = {
            "used": _num(sample.iram.used_kb),
            "total": _num(sample.iram.total_kb),
            "lfb": _num(sample.iram.lfb_kb),
        }
    out["cpu"] = (
        None
        if sample.cpus is None
        else [None if c is None else {"load_pct": _num(c.load_pct), "mhz": c.mhz} for c in sample.cpus]
    )
    out["gpu"] = (
        None
        if sample.gpu is None
        else {
            "load_pct": _num(sample.gpu.load_pct),
            "mhz": sample.gpu.mhz,
            "gpc_mhz": list(sample.gpu.gpc_mhz),
        }
    )
    out["emc"] = (
        None if sample.emc is None else {"load_pct": _num(sample.emc.load_pct), "mhz": sample.emc.mhz}
    )
    out["engines"] = {
        name: "off" if e.off else {"load_pct": _num(e.load_pct), "mhz": e.mhz}
        for name, e in sample.engines.items()
    }
    out["temps_c"] = {name: _num(v) for name, v in sample.temps_c.items()}
    if sample.temps_max_c:
        out["temps_max_c"] = {name: _num(v) for name, v in sample.temps_max_c.items()}
    rails: dict[str, Any] = {}
    for name, rail in sample.rails.items():
        entry: dict[str, Any] = {"now": _num(rail.now_mw), "avg": _num(rail.avg_mw)}
        if rail.peak_mw is not None:
            entry["peak"] = _num(rail.peak_mw)
        rails[name] = entry
    out["rails_mw"] = rails
    total = sample.power_total
    out["power_total_mw"] = None if total is None else {"value": _num(total.mw), "source": total.source}
    if sample.throttle_reasons is not None:
        out["throttle_reasons"] = list(sample.throttle_reasons)
    if sample.oc_events is not None:
        out["oc_event_cnt"] = dict(sample.oc_events)
    if sample.fans is not None:
        out["fans"] = {name: fan_to_json(fan) for name, fan in sample.fans.items()}
    if sample.io is not None:
        out["io_mb_s"] = io_to_json(sample.io)
    out["unknown"] = list(sample.unknown)
    return out


def fan_to_json(fan: Fan) -> dict[str, Any]:
    return {"speed_pct": _num(fan.speed_pct), "rpm": _num(fan.rpm)}


def io_to_json(io: IoRates) -> dict[str, Any]:
    return {"disk_read": _num(io.disk_read_mb_s), "disk_write": _num(io.disk_write_mb_s),
            "net_rx": _num(io.net_rx_mb_s), "net_tx": _num(io.net_tx_mb_s)}


@dataclass(slots=True)
class Tally:
    """What decoding threw away: values of the wrong type or not finite (``nulled``) and entries
    past the caps above (``dropped``), for readers that say so."""

    nulled: int = 0
    dropped: int = 0


class _Check:
    """Type and range checks of one JSON object; each bad value is None and counted."""

    __slots__ = ("tally",)

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def bad(self, value: Any) -> None:
        if value is not None:
            self.tally.nulled += 1

    def num(self, value: Any, low: float = -MAX_READING, high: float = MAX_READING) -> float | None:
        if type(value) is int or type(value) is float:  # not bool, not a subclass
            if low <= value <= high:  # False for NaN
                return value
        self.bad(value)
        return None

    def int_(self, value: Any) -> int | None:
        if type(value) is int and -MAX_READING <= value <= MAX_READING:
            return value
        if type(value) is float and value.is_integer() and -MAX_READING <= value <= MAX_READING:
            return int(value)
        self.bad(value)
        return None

    def text(self, value: Any, limit: int | None = None) -> str | None:
        if isinstance(value, str):
            return encodable(value if limit is None else value[:limit])
        self.bad(value)
        return None

    def mapping(self, value: Any) -> dict[str, Any] | None:
        if isinstance(value, dict):
            return value
        self.bad(value)
        return None

    def items(self, value: Any, cap: int) -> list[tuple[str, Any]]:
        """Entries of a name -> value object, names cut to MAX_NAME_CHARS, at most ``cap``."""
        found = self.mapping(value)
        if not found:
            return []
        if len(found) > cap:
            self.tally.dropped += len(found) - cap
        kept = itertools.islice(found.items(), cap)
        return [(encodable(name[:MAX_NAME_CHARS]), item) for name, item in kept]

    def seq(self, value: Any, cap: int) -> list[Any]:
        if not isinstance(value, list):
            self.bad(value)
            return []
        if len(value) > cap:
            self.tally.dropped += len(value) - cap
            return value[:cap]
        return value

    def memory(self, value: Any, *, lfb: bool) -> Memory | None:
        """RAM (with tegrastats' largest free block) or swap (with cached); None without used/total."""
        found = self.mapping(value)
        amounts = None if found is None else self._used_total(found)
        if found is None or amounts is None:
            return None
        used, total = amounts
        if lfb:
            return Memory(used, total, None, self.int_(found.get("lfb_count")),
                          self.num(found.get("lfb_size_kb"), 0))
        return Memory(used, total, self.num(found.get("cached"), 0))

    def iram(self, value: Any) -> Iram | None:
        found = self.mapping(value)
        amounts = None if found is None else self._used_total(found)
        if found is None or amounts is None:
            return None
        return Iram(*amounts, self.num(found.get("lfb"), 0))

    def _used_total(self, found: dict[str, Any]) -> tuple[float, float] | None:
        """A memory's used and total, both needed (the whole value is counted bad without them)."""
        used, total = self.num(found.get("used"), 0), self.num(found.get("total"), 0)
        if used is None or total is None:
            self.bad(found)
            return None
        return used, total

    def cpu(self, value: Any) -> CpuCore | None:
        found = self.mapping(value)
        if found is None:
            return None
        return CpuCore(self.num(found.get("load_pct")), self.int_(found.get("mhz")))

    def engine(self, value: Any) -> Engine | None:
        if value == "off":
            return Engine(off=True)
        found = self.mapping(value)
        return None if found is None else Engine(self.num(found.get("load_pct")), self.int_(found.get("mhz")))

    def rail(self, value: Any) -> Rail | None:
        found = self.mapping(value)
        if found is None:
            return None
        now = self.num(found.get("now"))
        if now is None:
            self.bad(found)
            return None
        return Rail(now, self.num(found.get("avg")), self.num(found.get("peak")))

    def fan(self, value: Any) -> Fan | None:
        found = self.mapping(value)
        if found is None:
            return None
        return Fan(self.num(found.get("speed_pct"), 0, 100), self.num(found.get("rpm"), 0, MAX_RPM))

    def io(self, value: Any) -> IoRates | None:
        found = self.mapping(value)
        if found is None:
            return None
        keys = ("disk_read", "disk_write", "net_rx", "net_tx")
        return IoRates(*(self.num(found.get(key), 0) for key in keys))

    def times(self, obj: dict[str, Any], *, before_stream: bool = False) -> tuple[float | None, float | None]:
        """(t_wall, t_mono); ``before_stream``: a mono below 0 is kept (a marker or work placed before
        a replayed stream's first sample, e.g. trtexec's build starting before the log's first line)."""
        low = -MAX_MONO_S if before_stream else 0
        return self.num(obj.get("t"), 0, MAX_WALL_S), self.num(obj.get("mono"), low, MAX_MONO_S)


def encodable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD: JSON's ``\\ud800`` escape decodes to
    one, and writing it (UTF-8 output, a plot's font) would raise UnicodeEncodeError."""
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def encodable_tree(value: Any) -> Any:
    """``value`` (parsed JSON) with every string made ``encodable``, keys included: a header, a
    report or a probe file whose ``\\ud800`` would otherwise reach an output."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable(str(k)): encodable_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable_tree(item) for item in value]
    return value


def sample_from_json(obj: dict[str, Any], tally: Tally | None = None) -> Sample:
    """Inverse of ``sample_to_json`` (``power_total_mw`` is derived, so it is not read back).

    Any field may be hostile: a value of the wrong type, not finite or out of range becomes None
    (a part that needs it, such as RAM without ``used``, is left out), entries past the caps are
    dropped; both are counted in ``tally``. Never raises for a dict."""
    check = _Check(tally if tally is not None else Tally())
    t_wall, t_mono = check.times(obj)
    ram, swap, iram = obj.get("ram_mb"), obj.get("swap_mb"), obj.get("iram_kb")
    cpus = obj.get("cpu")
    gpu = check.mapping(obj.get("gpu"))
    emc = check.mapping(obj.get("emc"))
    engines: dict[str, Engine] = {}
    for name, value in check.items(obj.get("engines"), MAX_NAMED):
        engine = check.engine(value)
        if engine is not None:
            engines[name] = engine
    rails: dict[str, Rail] = {}
    for name, value in check.items(obj.get("rails_mw"), MAX_NAMED):
        rail = check.rail(value)
        if rail is not None:
            rails[name] = rail
    reasons = obj.get("throttle_reasons")
    fans_raw, io_raw = obj.get("fans"), obj.get("io_mb_s")
    oc_raw = obj.get("oc_event_cnt")
    oc_events = None if oc_raw is None else {
        name: count for name, v in check.items(oc_raw, MAX_NAMED) if (count := check.int_(v)) is not None}
    return Sample(
        t_wall=t_wall,
        t_mono=t_mono,
        raw=check.text(obj.get("raw")),
        is_sample=obj.get("non_sample") is not True,
        ram=None if ram is None else check.memory(ram, lfb=True),
        swap=None if swap is None else check.memory(swap, lfb=False),
        iram=None if iram is None else check.iram(iram),
        cpus=None if cpus is None
        else [None if c is None else check.cpu(c) for c in check.seq(cpus, MAX_CORES)],
        gpu=None if gpu is None else Gpu(
            check.num(gpu.get("load_pct")),
            tuple(m for m in (check.int_(v) for v in check.seq(gpu.get("gpc_mhz") or [], MAX_GPCS))
                  if m is not None),
        ),
        emc=None if emc is None else Clocked(check.num(emc.get("load_pct")), check.int_(emc.get("mhz"))),
        engines=engines,
        temps_c={name: check.num(v) for name, v in check.items(obj.get("temps_c"), MAX_NAMED)},
        temps_max_c={name: n for name, v in check.items(obj.get("temps_max_c"), MAX_NAMED)
                     if (n := check.num(v)) is not None},
        rails=rails,
        throttle_reasons=None if reasons is None
        else [t for t in (check.text(r, MAX_REASON_CHARS) for r in check.seq(reasons, MAX_TEXTS))
              if t is not None],
        oc_events=oc_events,
        fans=None if fans_raw is None else {
            name: fan for name, v in check.items(fans_raw, MAX_NAMED) if (fan := check.fan(v)) is not None},
        io=None if io_raw is None else check.io(io_raw),
        unknown=[t for t in (check.text(u) for u in check.seq(obj.get("unknown") or [], MAX_TEXTS))
                 if t is not None],
    )


def record_to_json(record: Record) -> dict[str, Any]:
    """One recording line (without the trailing newline) for a sample, marker or event."""
    if isinstance(record, Sample):
        obj: dict[str, Any] = {"type": "sample", "t": record.t_wall, "mono": record.t_mono}
        if record.raw is not None:
            obj["raw"] = record.raw
        body = sample_to_json(record)
        del body["t"]
        obj.update(body)
        return obj
    if isinstance(record, Work):
        return {
            "type": "work",
            "iterations": record.iterations,
            "flops": record.flops,
            "bytes": record.bytes,
            "precision": record.precision,
            "t": record.t_wall,
            "mono": record.t_mono,
            "origin": record.origin,
        }
    if isinstance(record, PowerReading):
        return power_reading_to_json(record)
    if isinstance(record, ProcessReading):
        return process_reading_to_json(record)
    if isinstance(record, Marker):
        return {
            "type": "marker",
            "kind": record.kind,
            "name": record.name,
            "t": record.t_wall,
            "mono": record.t_mono,
            "origin": record.origin,
        }
    obj = {
        "type": "event",
        "kind": record.kind,
        "detail": record.detail,
        "t": record.t_wall,
        "mono": record.t_mono,
        "gap_s": record.gap_s,
    }
    if record.unit is not None:  # a detector's event: additive keys within schema 1
        obj.update({"unit": record.unit, "start_t": record.start_wall, "start_mono": record.start_mono})
    return obj


def power_reading_to_json(reading: PowerReading) -> dict[str, Any]:
    """A power reading's line: empty maps are left out."""
    obj: dict[str, Any] = {"type": "power", "t": reading.t_wall, "mono": reading.t_mono}
    if reading.rails_mw:
        obj["rails_mw"] = {name: _num(mw) for name, mw in reading.rails_mw.items()}
    if reading.counters_mj:
        obj["counters_mj"] = {name: _num(mj) for name, mj in reading.counters_mj.items()}
    obj["source"] = reading.source
    obj["period_s"] = reading.period_s
    return obj




def power_reading_from_json(obj: dict[str, Any], tally: Tally | None = None) -> PowerReading | None:
    """Inverse of ``power_reading_to_json``; None (counted) without a positive finite period, since
    a reading's span is its period. Bad entries are dropped and counted as a sample's are."""
    check = _Check(tally if tally is not None else Tally())
    t_wall, t_mono = check.times(obj)
    period_s = check.num(obj.get("period_s"), MIN_PERIOD_S, MAX_MONO_S)
    if period_s is None:
        if obj.get("period_s") is None:
            check.bad(obj)  # a missing period: the line as a whole is bad
        return None
    rails = {name: mw for name, v in check.items(obj.get("rails_mw"), MAX_NAMED)
             if (mw := check.num(v)) is not None}
    counters = {name: mj for name, v in check.items(obj.get("counters_mj"), MAX_NAMED)
                if (mj := check.num(v, 0, MAX_COUNTER_MJ)) is not None}
    source = check.text(obj.get("source"), MAX_NAME_CHARS) or "unknown"
    return PowerReading(t_wall, t_mono, rails, counters, source, period_s)


def process_reading_to_json(reading: ProcessReading) -> dict[str, Any]:
    """A process reading's line; a row leaves out GPU memory where unknown and ``benchmark`` when
    false."""
    rows = []
    for row in reading.processes:
        entry: dict[str, Any] = {"pid": row.pid, "name": row.name, "cpu_pct": _num(row.cpu_pct),
                                 "rss_mb": _num(row.rss_mb)}
        if row.gpu_mem_mb is not None:
            entry["gpu_mem_mb"] = _num(row.gpu_mem_mb)
        if row.benchmark:
            entry["benchmark"] = True
        rows.append(entry)
    obj: dict[str, Any] = {"type": "processes", "t": reading.t_wall, "mono": reading.t_mono,
                           "source": reading.source, "period_s": reading.period_s,
                           "floor_pct": reading.floor_pct}
    if reading.priming:
        obj["priming"] = True
    obj["processes"] = rows
    return obj




def process_reading_from_json(obj: dict[str, Any], tally: Tally | None = None) -> ProcessReading | None:
    """Inverse of ``process_reading_to_json``; None (counted) without a positive finite period. A row
    without a valid pid is dropped and counted; its other bad values are None, counted."""
    check = _Check(tally if tally is not None else Tally())
    t_wall, t_mono = check.times(obj)
    period_s = check.num(obj.get("period_s"), MIN_PERIOD_S, MAX_MONO_S)
    if period_s is None:
        if obj.get("period_s") is None:
            check.bad(obj)
        return None
    rows = []
    for value in check.seq(obj.get("processes"), MAX_PROCESS_ROWS):
        found = check.mapping(value)
        pid = None if found is None else found.get("pid")
        if found is None or type(pid) is not int or not 0 < pid <= MAX_PID:
            check.bad(pid if found is not None else None)
            continue
        rows.append(ProcessRow(pid, check.text(found.get("name"), MAX_NAME_CHARS) or "?",
                               check.num(found.get("cpu_pct"), 0), check.num(found.get("rss_mb"), 0),
                               check.num(found.get("gpu_mem_mb"), 0), found.get("benchmark") is True))
    floor = check.num(obj.get("floor_pct", 1.0), 0, 100)
    return ProcessReading(t_wall, t_mono, rows, check.text(obj.get("source"), MAX_NAME_CHARS) or "unknown",
                          period_s, obj.get("priming") is True, 1.0 if floor is None else floor)


def record_from_json(obj: dict[str, Any], tally: Tally | None = None) -> Record | None:
    """Inverse of ``record_to_json``; ``None`` for the header or an unknown line type. Values of the
    wrong type or range are None (a marker of an unknown kind is no marker: None), counted in
    ``tally``; never raises for a dict."""
    kind = obj.get("type")
    if kind == "sample":
        return sample_from_json(obj, tally)
    if kind == "power":
        return power_reading_from_json(obj, tally)
    if kind == "processes":
        return process_reading_from_json(obj, tally)
    if kind not in ("marker", "event", "work"):
        return None
    check = _Check(tally if tally is not None else Tally())
    t_wall, t_mono = check.times(obj, before_stream=kind != "event")
    if kind == "work":
        iterations = check.num(obj.get("iterations"), 0, MAX_WORK_ITERATIONS)
        if iterations is None:
            return None
        return Work(iterations, check.num(obj.get("flops"), 0, MAX_WORK_AMOUNT),
                    check.num(obj.get("bytes"), 0, MAX_WORK_AMOUNT),
                    check.text(obj.get("precision"), MAX_NAME_CHARS), t_wall, t_mono,
                    check.text(obj.get("origin", "script"), MAX_NAME_CHARS) or "script")
    if kind == "marker":
        marker_kind = obj.get("kind", "phase_start")
        if marker_kind not in MARKER_KINDS:
            check.bad(marker_kind)
            return None
        return Marker(marker_kind, check.text(obj.get("name"), MAX_NAME_CHARS), t_wall, t_mono,
                      check.text(obj.get("origin", "key"), MAX_NAME_CHARS) or "key")
    detail = obj.get("detail", "")
    if not isinstance(detail, str):
        check.bad(detail)
        detail = str(detail)
    return Event(check.text(obj.get("kind", "note"), MAX_NAME_CHARS) or "note",
                 encodable(detail[:MAX_DETAIL_CHARS]), t_wall, t_mono,
                 check.num(obj.get("gap_s"), 0, MAX_MONO_S),
                 check.text(obj.get("unit"), MAX_NAME_CHARS), check.num(obj.get("start_t"), 0, MAX_WALL_S),
                 check.num(obj.get("start_mono"), 0, MAX_MONO_S))


def cap_sample(sample: Sample, tally: Tally) -> None:
    """Hold a parsed sample (a plain log's line) to the caps a decoded one keeps, in place, counting
    what is dropped in ``tally``: a hostile line's 3,000 cores must not reach the output either."""
    cpus, gpu, unknown = sample.cpus, sample.gpu, sample.unknown
    if cpus is not None and len(cpus) > MAX_CORES:
        tally.dropped += len(cpus) - MAX_CORES
        del cpus[MAX_CORES:]
    for named in (sample.engines, sample.temps_c, sample.temps_max_c, sample.rails):
        if len(named) > MAX_NAMED:
            tally.dropped += len(named) - MAX_NAMED
            for name in list(itertools.islice(named, MAX_NAMED, None)):
                del named[name]
    if gpu is not None and len(gpu.gpc_mhz) > MAX_GPCS:
        tally.dropped += len(gpu.gpc_mhz) - MAX_GPCS
        sample.gpu = Gpu(gpu.load_pct, gpu.gpc_mhz[:MAX_GPCS])
    if len(unknown) > MAX_TEXTS:
        tally.dropped += len(unknown) - MAX_TEXTS
        del unknown[MAX_TEXTS:]
