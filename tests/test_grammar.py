"""The tegrastats grammar, by property: lines recombined from the tokens of real lines.

A real line is cut into items (``RAM 3/7MB``, ``NVENC off``, ``cpu@47.5C``...) by the small regexes
below, written apart from the parser's, and each item's expected reading is worked out here. Any
recombination of items in any order, with tokens no field accepts between them, must read every
item into its field and keep every other token, in order, in ``unknown``. The items come from the
short excerpts in tests/data/tegrastats_lines.txt (their sources are noted there) and, when it is
beside the repository, from every line of the shared corpus (../shared/tegrastats).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jtop_roof.formats.parser import _parse
from jtop_roof.model.records import Clocked, Engine, Gpu, Rail

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
needs_shared = pytest.mark.skipif(not SHARED_POOL, reason="../shared/tegrastats is not beside the repository")

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


def check(items: list[Item], junk: list[str], line: str) -> None:
    sample = _parse(line)
    assert sample.is_sample
    for item in items:
        assert item.read(sample) == item.expected, (item.text, line)
    assert sample.unknown == junk, line
    assert _parse(line, walk=True) == sample  # the one-match fast path agrees with the token walk


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(recombined(EXCERPT_POOL))
def test_recombined_excerpt_tokens_read_by_the_grammar(case):
    check(*case)


@needs_shared
@SETTINGS
@given(recombined(SHARED_POOL) if SHARED_POOL else st.nothing())
def test_recombined_corpus_tokens_read_by_the_grammar(case):
    check(*case)


@needs_shared
def test_every_kind_of_item_is_in_the_corpus_pool():
    slots = {item.slot[0] for item in SHARED_POOL}
    assert slots >= {"ram", "swap", "iram", "cpus", "emc", "gpu", "engine", "rail", "temp"}
    assert len(SHARED_POOL) > 500


# --- the unit grammar, generated ------------------------------------------------------------------

NUMBER = st.integers(0, 999_999).map(str)
VALUE = st.one_of(
    st.builds(lambda n: f"{n}%", NUMBER),
    st.builds(lambda n: f"@{n}", NUMBER),
    st.builds(lambda n, m: f"{n}%@{m}", NUMBER, NUMBER),
    st.builds(lambda n, ms: f"{n}%@[{','.join(ms)}]", NUMBER, st.lists(NUMBER, min_size=1, max_size=8)),
    st.builds(lambda ms: f"@[{','.join(ms)}]", st.lists(NUMBER, min_size=1, max_size=8)),
    st.just("off"),
    NUMBER,
    st.text(alphabet="0123456789%@[],", min_size=1, max_size=14),  # mostly not the grammar
)
NAME = st.one_of(
    st.sampled_from(["EMC", "GR3D", "NVENC", "NVENC1", "NVJPG", "VIC", "OFA", "PVA0", "APE", "DLA0_CORE"]),
    st.from_regex(r"[A-Z][A-Z0-9]{0,6}(_[A-Z0-9]{1,4})?", fullmatch=True).filter(
        lambda n: not n.startswith(("EMC", "GR3D")) and n not in ("RAM", "SWAP", "IRAM", "CPU", "MTS", "EDP")
    ),
)


@settings(max_examples=500, deadline=None)
@given(name=NAME, suffix=st.sampled_from(["_FREQ", "_LOAD", ""]), value=VALUE, before=st.booleans())
def test_any_unit_token_is_read_wherever_it_appears_or_kept(name, suffix, value, before):
    """``NAME_FREQ``/``NAME_LOAD`` and a reading of the grammar is a unit, before RAM as after the
    rails; anything else is kept verbatim in unknown."""
    token = f"{name}{suffix} {value}"
    rest = "RAM 3000/7000MB CPU [5%@1000,off] cpu@40C VDD_IN 5000mW/5000mW"
    line = f"{token} {rest}" if before else f"{rest} {token}"
    item = unit_item(token, name + suffix, value)
    sample = _parse(line)
    if item is None:
        assert sample.unknown == token.split(), line
    else:
        assert item.read(sample) == item.expected and sample.unknown == [], line
    assert sample.ram.used_mb == 3000 and sample.temps_c == {"cpu": 40.0}
    assert sample.rails == {"VDD_IN": Rail(5000, 5000)}
    assert _parse(line, walk=True) == sample


def test_the_forms_the_issue_names():
    line = "RAM 1/2MB CPU [1%@2] EMC_FREQ @3199 GR3D_FREQ @[611,611] NVENC_LOAD 7% VIC_FREQ 5%@[115,230]"
    sample = _parse(line)
    assert sample.emc == Clocked(None, 3199)
    assert sample.gpu == Gpu(None, (611, 611)) and sample.gpu.mhz == 611
    assert sample.engines == {"NVENC": Engine(7.0, None), "VIC": Engine(5.0, 230)}
    assert sample.unknown == []
    moved = "GR3D_FREQ @611 VDD_IN 1/2 RAM 1/2MB EMC_FREQ 3%@[2133,2133] CPU [1%@2] cpu@3C NVENC_FREQ @716"
    sample = _parse(moved)
    assert sample.gpu == Gpu(None, (611,)) and sample.emc == Clocked(3.0, 2133)
    assert sample.engines == {"NVENC": Engine(None, 716)} and sample.unknown == []


def test_load_and_clock_of_one_engine_printed_apart_are_one_engine():
    sample = _parse("RAM 1/2MB CPU [1%@2] NVENC_LOAD 7% NVENC_FREQ @716 NVDEC_FREQ @1 NVDEC_FREQ @2")
    assert sample.engines == {"NVENC": Engine(7.0, 716), "NVDEC": Engine(None, 1), "NVDEC_2": Engine(None, 2)}
    assert _parse(sample.raw, walk=True) == sample


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_arbitrary_text_never_raises_and_unknown_tokens_come_from_it(text):
    sample = _parse(text)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)  # colour codes are dropped before parsing
    assert all(token in shown for token in sample.unknown)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from([i.text for i in EXCERPT_POOL]), JUNK, st.text(max_size=12)),
                max_size=20))
def test_any_mix_of_real_tokens_and_text_never_raises(tokens):
    line = " ".join(tokens)
    assert _parse(line).raw == _parse(line, walk=True).raw == line.rstrip("\r\n")
