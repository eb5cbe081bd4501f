"""What several test modules share (test modules import this, never one another): a synthetic
recording for the tests of what reads recordings (export, plot, serve, the monitor), and a model of
the tegrastats grammar (items cut from real lines, recombined) for the parser's and fast JSON's
property tests."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Clocked, CpuCore, Engine, Gpu, Marker, Memory, Rail, Sample

STEP = 0.5
#: Sample index -> GPU clock: a 7W Orin Nano Super (cap 408 MHz) busy from 10 to 29, held at 300
#: MHz from 14 to 21 (a throttle), in phase "bench" from 10 to 29; a second session from 35.
BENCH = range(10, 30)
HELD = range(14, 22)
SECOND_SESSION = 35
COUNT = 40


def recording_header(t_wall: float, t_mono: float) -> dict:
    return {"type": "header", "app": "jroof-tui", "schema": 1, "version": "test", "source": "tegrastats",
            "interval_ms": STEP * 1000, "start_wall": t_wall, "start_mono": t_mono,
            "device": "orin-nano-8gb-super", "power_mode": "7W"}


def synthetic_sample(i: int) -> Sample:
    busy = i in BENCH
    mhz = 300 if i in HELD else (408 if busy else 306)
    wall = 1_000_000.0 + i * STEP + (20.0 if i >= SECOND_SESSION else 0.0)
    mono = 100.0 + i * STEP if i < SECOND_SESSION else 5.0 + i * STEP  # a reboot: mono restarts
    return Sample(
        t_wall=wall, t_mono=mono, raw=f"line {i}",
        ram=Memory(2000.0 + i, 7620.0),
        cpus=[CpuCore(10.0 + i, 960), None if i % 2 else CpuCore(1.0, 729)],
        gpu=Gpu(99.0 if busy else 0.0, (mhz,)),
        emc=Clocked(20.0, 2133),
        engines={"NVENC0": Engine(off=True) if i < 20 else Engine(None, 115), "APE": Engine(None, 200)},
        temps_c={"tj": 50.0 + i / 10, "cv0": None},
        rails={"VDD_IN": Rail(5000.0 + 10 * i), "VDD_CPU_GPU_CV": Rail(1000.0 + i)},
    )


def write_synthetic(path: Path) -> list[Sample]:
    """Write the recording (markers around BENCH, a second header at SECOND_SESSION); returns its
    samples."""
    samples = [synthetic_sample(i) for i in range(COUNT)]
    lines = [json_line(recording_header(samples[0].t_wall, samples[0].t_mono))]
    for i, sample in enumerate(samples):
        if i == BENCH.start:
            lines.append(json_line(record_to_json(Marker("phase_start", "bench, \"1\"", sample.t_wall,
                                                         sample.t_mono - 0.1, "script"))))
        if i == BENCH.stop:
            end = Marker("phase_end", None, sample.t_wall, sample.t_mono - 0.1, "script")
            lines.append(json_line(record_to_json(end)))
        if i == SECOND_SESSION:
            lines.append(json_line(recording_header(sample.t_wall, sample.t_mono)))
        lines.append(json_line(record_to_json(sample)))
    path.write_text("".join(lines))
    return samples


# ---------------------------------------------------------------------------------------------
# the tegrastats grammar, by items of real lines

DATA = Path(__file__).resolve().parent / "data" / "tegrastats_lines.txt"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "tegrastats"

ENGINE_NAMES = ("APE", "VIC", "NVENC", "NVDEC", "NVJPG", "OFA", "NVDLA", "PVA", "MSENC", "AVP", "VDE")
# N% | @N | N%@N | N%@[N,N...] | @[N,N...]
# the bounds of parser._INT
UNIT_VALUE = re.compile(r"(?:(\d{1,12})%)?(?:@(?:(\d{1,12})|\[(\d{1,12}(?:,\d{1,12})*)\]))?")
# Each kind of item, as real lines print it; the groups are what the parser must read.
KINDS = {
    "ram": r"RAM (\d+)/(\d+)MB(?: \(lfb \d+x\d+[kM]B\))?",
    "swap": r"SWAP (\d+)/(\d+)MB(?: \(cached \d+MB\))?",
    "iram": r"IRAM (\d+)/(\d+)kB(?: ?\(lfb \d+kB\))?",
    "cpu": r"CPU \[((?:off|\d+%(?:@\d+)?)(?:,(?:off|\d+%(?:@\d+)?))*)\]",
    "tk1cpu": r"cpu \[((?:\d+%)(?:,\d+%)*)\]@(\d+)",
    "mts": r"MTS fg (\d+)% bg (\d+)%",
    "edp": r"EDP limit (\d+)",
    "unit": r"([A-Z][A-Z0-9_]*) (off|\d+|[\d%@\[\],]+)",
    "rail": r"([A-Za-z][A-Za-z0-9_]*) (\d+)(?:mW)?/\d+(?:mW)?(?:/\d+(?:mW)?)?",
    "temp": r"([A-Za-z][A-Za-z0-9_]*)@(-?\d+(?:\.\d+)?)C(?:/-?\d+(?:\.\d+)?C)?",
}
KIND_RE = {kind: re.compile(pattern) for kind, pattern in KINDS.items()}


def _uncaptured(pattern: str) -> str:
    return re.sub(r"(?<!\\)\((?!\?)", "(?:", pattern)


ITEM = re.compile("|".join(rf"(?P<{kind}>{_uncaptured(p)})(?!\S)" for kind, p in KINDS.items()))
STAMP = re.compile(r"\d\d-\d\d-\d{4} \d\d:\d\d:\d\d ")


@dataclass(frozen=True)
class Item:
    """Text for the line, the one slot it fills (kept unique in a line) and its expected reading."""

    text: str
    slot: tuple[str, ...]
    read: Callable[[Any], Any]
    expected: Any


def unit_reading(value: str) -> tuple[float | None, tuple[int, ...]] | None:
    """(load, clocks) of a unit value of the grammar, or None when it is not one."""
    m = UNIT_VALUE.fullmatch(value)
    if m is None or not value:
        return None
    load, clock, clocks = m.groups()
    gpc = tuple(int(c) for c in clocks.split(",")) if clocks else (int(clock),) if clock else ()
    return (None if load is None else float(load)), gpc


def unit_item(text: str, name: str, value: str) -> Item | None:
    """EMC, GR3D or an engine, as the grammar reads ``NAME VALUE``; None when it is not one."""
    suffix = name[-5:] if name.endswith(("_FREQ", "_LOAD")) else ""
    base = name[: -len(suffix)] if suffix else name
    reading = unit_reading(value)
    if base == "EMC":
        if reading is None:
            return None
        return Item(text, ("emc",), lambda s: s.emc, Clocked(reading[0], max(reading[1], default=None)))
    if base == "GR3D":
        return None if reading is None else Item(text, ("gpu",), lambda s: s.gpu, Gpu(*reading))
    if base == "GR3D2" or (not suffix and not re.fullmatch(rf"(?:{'|'.join(ENGINE_NAMES)})\d?", base)):
        return None  # GR3D2 adds to GR3D's clocks; other names without a suffix are not units
    if value == "off":
        engine = Engine(None, None, True)
    elif re.fullmatch(r"\d{1,12}", value):  # a bare number belongs to the engines printed without a suffix
        if not re.fullmatch(rf"(?:{'|'.join(ENGINE_NAMES)})\d?", base):
            return None
        engine = Engine(float(value), None) if suffix == "_LOAD" else Engine(None, int(value))
    elif reading is not None:
        engine = Engine(reading[0], max(reading[1], default=None))
    else:
        return None
    return Item(text, ("engine", base), lambda s: s.engines.get(base), engine)


def items_of(line: str) -> Iterable[Item]:
    """The items of a real line; tokens that are no item (stamps, words) are skipped."""
    text = STAMP.sub("", line.strip(), count=1)
    pos = 0
    while pos < len(text):
        if text[pos] == " ":
            pos += 1
            continue
        m = ITEM.match(text, pos)
        if m is None:
            pos = text.find(" ", pos) % (len(text) + 1) or len(text)
            continue
        pos = m.end()
        item = item_of(m)
        if item is not None:
            yield item


def item_of(m: re.Match[str]) -> Item | None:
    kind = m.lastgroup or ""
    text = m.group()
    g = KIND_RE[kind].fullmatch(text).groups()
    if kind in ("ram", "swap"):
        return Item(text, (kind,), lambda s, k=kind: (getattr(s, k).used_mb, getattr(s, k).total_mb),
                    (float(g[0]), float(g[1])))
    if kind == "iram":
        return Item(text, (kind,), lambda s: (s.iram.used_kb, s.iram.total_kb), (float(g[0]), float(g[1])))
    if kind == "cpu":
        return Item(text, ("cpus",), lambda s: len(s.cpus), len(g[0].split(",")))
    if kind == "tk1cpu":
        return Item(text, ("cpus",), lambda s: {c.mhz for c in s.cpus if c is not None}, {int(g[1])})
    if kind == "mts":
        return Item(text, ("engine", "MTS"), lambda s: (s.engines["MTS_FG"], s.engines["MTS_BG"]),
                    (Engine(float(g[0])), Engine(float(g[1]))))
    if kind == "edp":
        return Item(text, ("engine", "EDP_LIMIT"), lambda s: s.engines["EDP_LIMIT"], Engine(None, int(g[0])))
    if kind == "unit":
        return unit_item(text, g[0], g[1])
    name = g[0]
    if kind == "rail":
        return Item(text, ("rail", name), lambda s: s.rails[name].now_mw, float(g[1]))
    celsius = float(g[1])  # temp
    expected = None if celsius == -256 else celsius
    return Item(text, ("temp", name.lower()), lambda s: s.temps_c[name.lower()], expected)


def pool_of(lines: Iterable[str], per_kind: int = 400) -> list[Item]:
    """The distinct items of the lines, at most ``per_kind`` of each kind spread over all of them
    (the corpus holds 18,000 distinct rail readings: drawing from all of them only costs time)."""
    unique: dict[str, Item] = {}
    for line in lines:
        if not line.startswith("#"):
            for item in items_of(line):
                unique.setdefault(item.text, item)
    by_kind: dict[str, list[Item]] = {}
    for item in sorted(unique.values(), key=lambda item: item.text):
        by_kind.setdefault(item.slot[0], []).append(item)
    return [item for items in by_kind.values() for item in items[:: len(items) // per_kind + 1]]


def excerpt_lines() -> list[str]:
    return DATA.read_text(encoding="utf-8").splitlines()


def shared_lines() -> list[str]:
    files = sorted((SHARED / "lines").glob("*.txt")) + sorted((SHARED / "logs").glob("*.log"))
    return [line for path in files
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]


EXCERPT_POOL = pool_of(excerpt_lines())
SHARED_POOL = pool_of(shared_lines()) if SHARED.is_dir() else []

# Tokens no field accepts, whatever stands beside them: words, and shapes near the grammar.
JUNK = st.one_of(
    st.from_regex(r"[a-z]{1,8}", fullmatch=True).filter(lambda w: w not in ("off", "cpu")),
    st.sampled_from(["x%@freq", "@@", "%", "[1,2]", "5%%", "@[]", "@[1,]", "--", "(lfb", "GR3D_FREQ",
                     "EMC_FREQ"]),
)


def recombined(pool: list[Item]) -> st.SearchStrategy[tuple[list[Item], list[str], str]]:
    """(items, junk, line): items with distinct slots (one RAM among them, so the line is a sample),
    in any order, with junk tokens between them."""
    rams = [item for item in pool if item.slot == ("ram",)]

    @st.composite
    def build(draw: st.DrawFn) -> tuple[list[Item], list[str], str]:
        chosen = {("ram",): draw(st.sampled_from(rams))}
        for item in draw(st.lists(st.sampled_from(pool), max_size=30)):
            chosen.setdefault(item.slot, item)
        items = draw(st.permutations(list(chosen.values())))
        junk = draw(st.lists(JUNK, max_size=6))
        where = sorted(draw(st.lists(st.integers(0, len(items)), min_size=len(junk), max_size=len(junk))))
        tokens: list[str] = []
        junk_iter = iter(zip(where, junk, strict=True))
        pending = next(junk_iter, None)
        for index in range(len(items) + 1):
            while pending is not None and pending[0] == index:
                tokens.append(pending[1])
                pending = next(junk_iter, None)
            if index < len(items):
                tokens.append(items[index].text)
        # "GR3D_FREQ"/"EMC_FREQ" as junk before a value-like neighbour would be a field: keep apart
        return items, junk, " ".join(tokens)

    return build()


def held_at_306(lines: list[str], start: int, count: int) -> list[str]:
    """Real 7W lines with ``count`` lines from ``start`` made a GPU held at 306 MHz (an OPP of
    the Orin GPU) while saturated: a throttle the log's own lines never show."""
    held = [re.sub(r"GR3D_FREQ \d+%@\[\d+\]", "GR3D_FREQ 99%@[306]", line)
            for line in lines[start:start + count]]
    assert all("GR3D_FREQ 99%@[306]" in line for line in held)
    return lines[:start] + held + lines[start + count:]
