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

import pytest
from factories import EXCERPT_POOL, JUNK, SHARED_POOL, Item, recombined, unit_item
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jtop_roof.formats.parser import _parse
from jtop_roof.model.records import Clocked, Engine, Gpu, Rail


def check(items: list[Item], junk: list[str], line: str) -> None:
    sample = _parse(line)
    assert sample.is_sample
    for item in items:
        assert item.read(sample) == item.expected, (item.text, line)
    assert sample.unknown == junk, line
    assert _parse(line, walk=True) == sample  # the one-match fast path agrees with the token walk


needs_shared = pytest.mark.skipif(not SHARED_POOL, reason="../shared/tegrastats is not beside the repository")
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
