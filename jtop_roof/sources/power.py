"""Power read at its source: the board's power monitors in sysfs, read beside the main source at
``--power-hz``, so that energy is integrated from a stream finer than tegrastats' interval
(research/power_measurement.md).

Monitors, found under the sysfs root (``--sysfs-root``), all world-readable:

* INA3221 hwmon (JetPack 5 and later): ``sys/class/hwmon/hwmon*/name`` is ``ina3221``; channel N
  is a rail when it has ``inN_label``, ``inN_input`` (mV) and ``currN_input`` (mA): mW = mV·mA/1000.
  The label is the rail's name as tegrastats prints it (``VDD_IN``, ``VDD_CPU_GPU_CV``...), since
  tegrastats reads the same labels. The shunt-sum channels have no such triple; channels labelled
  ``NC`` are wired to nothing (AGX Orin) and are not read.
* INA238-style hwmon (Thor's board input): name ``ina238`` or ``ina237``, ``powerN_input`` in µW.
  Its label (``powerN_label``, else the chip's ``label``) names the rail; unlabelled, or labelled
  "Board Power", it is ``VIN``, as tegrastats prints Thor's board input.
* The older iio driver ``ina3221x`` (JetPack 4): ``sys/bus/i2c/drivers/ina3221x/*/iio:device*/``
  with ``rail_name_N`` and ``in_powerN_input`` (mW).

A repeated name gets ``_2``, ``_3``... as the tegrastats parser gives it. Each value file is opened
once and read again with ``pread`` at offset 0 (sysfs makes the value anew for each read from the
start): one system call per value. A file that is not a regular file (a FIFO, ``/dev/zero`` behind a
symlink) is never opened for reading; a value longer than a number, not an integer, or past the
model's bounds is no reading. Where no monitor is readable, the session keeps tegrastats' rails and
says so once, in the source's hints.

``PoweredSource`` gives the main source's records and, between them, the sampler's
``PowerReading``s, as one stream through the runtime's one pump (into the pipeline and the recording).
"""

from __future__ import annotations

import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from jtop_roof.model.codec import MAX_READING
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import UNCONNECTED_RAILS, Event, PowerReading, Record
from jtop_roof.sources.base import Source
from jtop_roof.sources.sysfs import open_regular_file, read_text, unique_name

#: The default rate, from its measured cost (``benchmarks/overhead.py --part power``): a reading
#: costs 0.3-0.4 ms of CPU from wake-up to recorded and analysed on the 2-core VM the project is
#: built on (a thread's wake-up alone is 0.1 ms there), so 5 Hz adds about 0.16 % of a core to
#: ``record`` and 50 Hz about 1.7 %.
DEFAULT_POWER_HZ = 5.0
MAX_POWER_HZ = 1000.0
#: Bytes read of one value: a sysfs number is a few; more is not one.
VALUE_BYTES = 32
#: Channels looked for per INA3221 (3 rails; the driver numbers its sum channels up to 7).
INA3221_CHANNELS = range(1, 9)
POWER_CHANNELS = range(1, 9)
INA238_NAMES = ("ina238", "ina237")
#: Labels of an INA238 that are tegrastats' ``VIN`` (Thor's board input).
VIN_LABELS = ("", "board power")
#: Monitors looked at, at most (a hostile tree may hold thousands of hwmon nodes).
MAX_NODES = 64
#: How long closing waits for the main source's thread to end.
JOIN_S = 5.0


class PowerMeter(Protocol):
    """Something that reads power now: rails in mW and cumulative counters in mJ (either may be
    empty), or None when nothing could be read this time."""

    @property
    def source(self) -> str: ...

    def read(self) -> tuple[dict[str, float], dict[str, float]] | None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class MeterSet:
    """The meters found, and what could not be read (said once, as hints)."""

    meters: tuple[PowerMeter, ...] = ()
    problems: tuple[str, ...] = ()

    def __add__(self, other: MeterSet) -> MeterSet:
        return MeterSet(self.meters + other.meters, self.problems + other.problems)


def read_value(fd: int) -> int | None:
    """The integer a value file holds now, or None (unreadable, too long, not an integer)."""
    try:
        data = os.pread(fd, VALUE_BYTES, 0)
    except OSError:
        return None
    if len(data) >= VALUE_BYTES:
        return None
    try:
        return int(data)
    except ValueError:
        return None


@dataclass
class Channel:
    """One rail of a monitor: its value files (opened) and the factor that makes their product mW."""

    rail: str
    fds: tuple[int, ...]
    to_mw: float

    def read_mw(self) -> float | None:
        product = 1.0
        for fd in self.fds:
            value = read_value(fd)
            if value is None:
                return None
            product *= value
        mw = product * self.to_mw
        return mw if -MAX_READING <= mw <= MAX_READING else None


@dataclass
class FileMeter:
    """A monitor's rails, read from their value files."""

    source: str
    channels: list[Channel] = field(default_factory=list)

    def read(self) -> tuple[dict[str, float], dict[str, float]] | None:
        """Every rail, or no reading at all: one rail missing (a value file read empty while its
        driver rewrote it, an I2C error) would change what the total is made of for that reading,
        and its energy would be lost without a gap; a reading skipped is a longer step instead
        (a gap when too long)."""
        rails = {}
        for channel in self.channels:
            mw = channel.read_mw()
            if mw is None:
                return None
            rails[channel.rail] = mw
        return (rails, {}) if rails else None

    def close(self) -> None:
        for channel in self.channels:
            for fd in channel.fds:
                os.close(fd)
        self.channels = []


def _open_all(paths: Sequence[Path]) -> tuple[int, ...] | None:
    """Descriptors of every path, each a regular file that gives a value now; None otherwise."""
    fds: list[int] = []
    for path in paths:
        fd = open_regular_file(path)
        if fd is None or read_value(fd) is None:
            if fd is not None:
                os.close(fd)
            for opened in fds:
                os.close(opened)
            return None
        fds.append(fd)
    return tuple(fds)


def _trailing_number(path: Path) -> int:
    match = re.search(r"(\d+)$", path.name)
    return int(match.group(1)) if match else -1


def _nodes(base: Path, pattern: str) -> list[Path]:
    try:
        return sorted(base.glob(pattern), key=lambda p: (_trailing_number(p), p.name))[:MAX_NODES]
    except OSError:
        return []


class _Finder:
    """Channels of the board's monitors under one root, named uniquely across them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seen: set[str] = set()
        self.unreadable: list[str] = []

    def channel(self, label: str | None, paths: Sequence[Path], to_mw: float) -> Channel | None:
        if label is None or not label.isprintable() or label in UNCONNECTED_RAILS:
            return None
        label = label[:64]
        fds = _open_all(paths)
        if fds is None:
            self.unreadable.append(f"{label} ({paths[0].parent})")
            return None
        return Channel(unique_name(label, self.seen), fds, to_mw)

    def hwmon(self) -> list[FileMeter]:
        ina3221, ina238 = FileMeter("INA3221 hwmon"), FileMeter("INA238 hwmon")
        for node in _nodes(self.root / "sys/class/hwmon", "hwmon*"):
            name = read_text(node / "name", 64)
            if name == "ina3221":
                for n in INA3221_CHANNELS:
                    label = read_text(node / f"in{n}_label", 64)
                    if label is not None and (node / f"curr{n}_input").exists():
                        found = self.channel(label, (node / f"in{n}_input", node / f"curr{n}_input"), 1e-3)
                        if found is not None:
                            ina3221.channels.append(found)
            elif name in INA238_NAMES:
                chip_label = read_text(node / "label", 64)
                for n in POWER_CHANNELS:
                    path = node / f"power{n}_input"
                    if not path.exists():
                        continue
                    label = read_text(node / f"power{n}_label", 64) or chip_label or ""
                    rail = "VIN" if label.lower() in VIN_LABELS else label
                    found = self.channel(rail, (path,), 1e-3)
                    if found is not None:
                        ina238.channels.append(found)
        return [meter for meter in (ina3221, ina238) if meter.channels]

    def iio(self) -> list[FileMeter]:
        meter = FileMeter("ina3221x iio")
        for device in _nodes(self.root / "sys/bus/i2c/drivers/ina3221x", "*/iio:device*"):
            for label_path in sorted(device.glob("rail_name_*"), key=_trailing_number)[:MAX_NODES]:
                n = _trailing_number(label_path)
                found = self.channel(read_text(label_path, 64), (device / f"in_power{n}_input",), 1.0)
                if found is not None:
                    meter.channels.append(found)
        return [meter] if meter.channels else []


def board_meters(root: str | Path) -> MeterSet:
    """The board's power monitors under ``root`` (INA3221 and INA238 hwmon, else the iio driver);
    what was found but could not be read is a problem."""
    finder = _Finder(Path(root))
    meters = finder.hwmon() or finder.iio()
    unreadable = ", ".join(finder.unreadable[:4])
    return MeterSet(tuple(meters), (f"power monitor rails not readable: {unreadable}",) if unreadable else ())


def power_hint(found: MeterSet, hz: float, root: str, fallback: str) -> str:
    """One sentence on where power is read, or why it is not (then ``fallback`` says from what)."""
    problems = "; ".join(found.problems)
    if not found.meters:
        why = f" ({problems})" if problems else ""
        return f"No readable power monitor under {root}{why}: {fallback}."
    names = ", ".join(meter.source for meter in found.meters)
    said = f"Power read at the source at {hz:g} Hz: {names}."
    return f"{said} {problems}." if problems else said


class PowerSampler:
    """Every meter read each period, on a schedule that does not drift: ``due_in`` says how long
    until the next read, ``take`` reads (a ``PowerReading`` per meter that gave one, stamped at
    the middle of its read) and moves the schedule on. The thread that delivers the readings reads
    them: one wake-up per read, and no hand-over between threads (measured: on this machine a
    thread's wake-up costs as much CPU as the read itself)."""

    def __init__(self, meters: Sequence[PowerMeter], hz: float, *, clock: Callable[[], float] = time.time,
                 mono: Callable[[], float] = time.monotonic) -> None:
        self._meters = list(meters)
        self.period_s = 1.0 / hz
        self._clock, self._mono = clock, mono
        self._due = mono()

    def due_in(self) -> float:
        """Seconds until the next read (0 or less: due now)."""
        return self._due - self._mono()

    def take(self) -> list[PowerReading]:
        """Read now; the next read is one period after this one was due, or one period from now
        when it is late by more than a period (a slow read, a stalled machine: no burst to catch up)."""
        readings = self.read_once()
        now = self._mono()
        self._due += self.period_s
        if self._due < now:
            self._due = now + self.period_s
        return readings

    def read_once(self) -> list[PowerReading]:
        """One reading of every meter that gave one."""
        readings = []
        for meter in self._meters:
            before = self._mono()
            found = meter.read()
            after = self._mono()
            if found is not None:
                wall = self._clock() - (after - before) / 2
                readings.append(PowerReading(wall, (before + after) / 2, found[0], found[1], meter.source,
                                             self.period_s))
        return readings


class SideSampler(Protocol):
    """What reads beside the main source on a schedule of its own: seconds until its next read,
    and the read (which moves the schedule on)."""

    def due_in(self) -> float: ...

    def take(self) -> Sequence[Record]: ...


#: Records of the main source waiting for the pump, at most. A pump that stalls (a reader of
#: ``record -`` that stopped, a disk that hangs) makes the source's later records dropped and
#: counted, said in a ``note`` event where the stream goes on: memory stays bounded, and the
#: records kept keep their own times (a source held back instead would stamp late what it read).
MAX_WAITING = 1024


@dataclass(frozen=True)
class _Failure:
    """The main source raised: raised again in the pump's thread."""

    error: BaseException


class PoweredSource(Source):
    """A source with the power sampler beside it: its records, and between them the sampler's
    readings, read when due by the thread that takes the records (the runtime's pump). The source
    runs in a thread of its own; ``records()`` ends with it. A ``source_error`` ends a source
    (tegrastats that cannot start): no reading is taken after it, so the stream still ends on it."""

    def __init__(self, inner: Source, find: Callable[[], MeterSet], hz: float, *, root: str, fallback: str,
                 clock: Callable[[], float] = time.time, mono: Callable[[], float] = time.monotonic,
                 beside: Sequence[SideSampler] = ()) -> None:
        """``find``: the meters, looked for once, when first needed; ``fallback``: what gives power
        where none is found (said in the hint); ``beside``: other samplers read the same way (the
        processes, ``sources.processes``)."""
        self.inner = inner
        self._beside = list(beside)
        self.kind = inner.kind
        self.hz = hz
        self._find = find
        self._root, self._fallback = root, fallback
        self._clock, self._mono = clock, mono
        self._found: MeterSet | None = None
        self._lock = threading.Lock()
        # None: the main source ended, or stop() was called
        self._queue: queue.SimpleQueue[Record | _Failure | None] = queue.SimpleQueue()
        self._room = threading.Semaphore(MAX_WAITING)  # a record's place in the queue
        self._dropped = 0  # the inner thread's count of records dropped since the last note
        self._stopped = threading.Event()

    def found(self) -> MeterSet:
        with self._lock:
            if self._found is None:
                self._found = self._find()
            return self._found

    def describe(self) -> SourceInfo:
        info = self.inner.describe()
        found = self.found()
        hints = (*info.hints, power_hint(found, self.hz, self._root, self._fallback))
        header = {**info.header, "hints": list(hints)}
        if found.meters:
            header["power_sampler"] = {"hz": self.hz, "sources": [meter.source for meter in found.meters]}
        return replace(info, hints=hints, header=header)

    def stop(self) -> None:
        self._stopped.set()
        self.inner.stop()
        self._queue.put(None)  # wakes records() at once

    def records(self) -> Iterator[Record]:
        found = self.found()
        samplers = list(self._beside)
        if found.meters:
            samplers.append(PowerSampler(found.meters, self.hz, clock=self._clock, mono=self._mono))
        if not samplers:
            try:
                yield from self.inner.records()
            finally:
                _close(found)
            return
        inner = threading.Thread(target=self._run_inner, name="jroof-source", daemon=True)
        inner.start()
        ending = False
        try:
            while not self._stopped.is_set():
                sampler = min(samplers, key=lambda one: one.due_in())
                wait = sampler.due_in()
                if wait <= 0 and not ending:
                    yield from sampler.take()
                    continue
                try:
                    item = self._queue.get(timeout=None if ending else wait)
                except queue.Empty:
                    continue
                if item is None:
                    return
                if isinstance(item, _Failure):
                    raise item.error
                self._room.release()
                ending = ending or (isinstance(item, Event) and item.kind == "source_error")
                yield item
        finally:
            self.inner.stop()
            inner.join(JOIN_S)
            _close(found)

    def _run_inner(self) -> None:
        try:
            for record in self.inner.records():
                self._wait_in_line(record)
                if self._stopped.is_set():
                    break
        except Exception as exc:  # noqa: BLE001 - raised again in the pump's thread
            self._queue.put(_Failure(exc))
        if self._dropped:  # the last word, beyond the bound: one line more
            self._queue.put(self._drop_note())
        self._queue.put(None)

    def _drop_note(self) -> Event:
        note = Event("note", f"{self._dropped} records of the source dropped: the recording fell behind "
                     f"({MAX_WAITING} waited; its output or disk stalled)", self._clock(), self._mono())
        self._dropped = 0
        return note

    def _wait_in_line(self, record: Record) -> None:
        """Queue ``record`` for the pump, after a note of what was dropped; drop it (counted) when
        ``MAX_WAITING`` records wait already."""
        if self._dropped and self._room.acquire(blocking=False):
            self._queue.put(self._drop_note())
        if self._room.acquire(blocking=False):
            self._queue.put(record)
        else:
            self._dropped += 1


def _close(found: MeterSet) -> None:
    for meter in found.meters:
        meter.close()
