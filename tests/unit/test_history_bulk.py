"""History writes a sample's readings into its columns at the next read, for all the rows waiting
at once (a replay seek's backfill): what is stored must be what one write per sample stored."""

import math
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import TESTS

from jtop_roof.analysis.history import History
from jtop_roof.formats.parser import parse_line
from jtop_roof.model.records import Clocked, CpuCore, Event, Gpu, Marker, Memory, Rail, Sample
from jtop_roof.model.registry import SCALAR_KEYS

LINES = TESTS / "data" / "tegrastats_lines.txt"

readings = st.one_of(st.none(), st.floats(min_value=-1e6, max_value=1e6), st.just(math.nan),
                     st.just(math.inf), st.integers(min_value=0, max_value=3000))
cores = st.one_of(st.none(), st.lists(
    st.one_of(st.none(), st.builds(CpuCore, readings, st.one_of(st.none(), st.integers(0, 3000)))),
    max_size=5))
named = st.dictionaries(st.sampled_from(["VDD_IN", "VDD_GPU", "VDD_CPU", "VDD_SOC", "VIN"]),
                        st.floats(min_value=0, max_value=1e5) | st.sampled_from([math.nan, math.inf]),
                        max_size=4)
samples = st.builds(
    Sample,
    t_wall=st.one_of(st.none(), st.floats(min_value=0, max_value=2e9)),
    t_mono=st.one_of(st.none(), st.floats(min_value=0, max_value=50)),
    is_sample=st.booleans() | st.just(True),
    ram=st.one_of(st.none(), st.builds(Memory, st.floats(0, 1e5), st.just(1e5))),
    cpus=cores,
    gpu=st.one_of(st.none(), st.builds(Gpu, readings, st.lists(st.integers(0, 3000), max_size=2).map(tuple))),
    emc=st.one_of(st.none(), st.builds(Clocked, readings, st.one_of(st.none(), st.integers(0, 3000)))),
    temps_c=st.dictionaries(st.sampled_from(["tj", "cpu", "gpu", "soc0", "board"]), readings, max_size=4),
    rails=named.map(lambda mw: {name: Rail(value) for name, value in mw.items()}),
)
#: A stream: samples, with now and then a phase marker or an event between them.
operations = st.lists(st.one_of(
    samples,
    st.builds(Marker, st.sampled_from(["phase_start", "phase_end"]), st.one_of(st.none(), st.just("p")),
              st.none(), st.one_of(st.none(), st.floats(0, 50))),
    st.builds(Event, st.just("gap"), st.just("no data"), st.none(), st.floats(0, 50)),
), max_size=40)


def feed(history: History, stream: list, *, read_each: bool) -> None:
    for item in stream:
        if isinstance(item, Sample):
            history.append(item)
        elif isinstance(item, Marker):
            history.add_marker(item)
        else:
            history.add_event(item)
        if read_each:
            history.series("gpu_load", None, None, buckets=1)  # its readings written now


def stored(history: History) -> dict[str, object]:
    """Everything a history shows: every series' rows in order (NaN as a string), markers, events."""
    keys = [*SCALAR_KEYS, *(f"cpu_{what}:{i}" for i in range(history.cores) for what in ("load", "mhz")),
            *(f"rail:{name}" for name in history.rails), *(f"zone:{name}" for name in history.zones)]
    shown: dict[str, object] = {
        "times": history.times(0, len(history)).tolist(),
        "walls": [history.wall_at(t) for t in history.times(0, len(history)).tolist()],
        "markers": list(history.markers), "events": list(history.events),
        "latest": history.latest, "power_source": history.power_source,
        "names": (history.cores, list(history.rails), list(history.zones)),
        "versions": (history.version, history.log_version), "first": history.first_t_mono,
    }
    for key in keys:
        _, values = history.series(key, None, None, buckets=len(history) + 1)
        shown[key] = [repr(float(v)) for v in values]
        shown[f"has {key}"] = history.has(key)
    return shown


@settings(max_examples=300, deadline=None)
@given(operations, st.integers(min_value=2, max_value=9), st.integers(min_value=1, max_value=40))
def test_readings_written_at_the_next_read_are_those_written_one_sample_at_a_time(stream, rows, batch):
    """Small rings wrap inside a batch; small caps refuse cores and names mid-stream; a sample
    earlier than the last starts the history over; ``batch`` bounds the rows that wait."""
    with mock.patch("jtop_roof.analysis.history.MAX_CORES", 3), \
            mock.patch("jtop_roof.analysis.history.MAX_NAMES", 2), \
            mock.patch("jtop_roof.analysis.history.PENDING_ROWS", batch):
        one_by_one, at_once = History(rows, interval_s=1.0), History(rows, interval_s=1.0)
        feed(one_by_one, stream, read_each=True)
        feed(at_once, stream, read_each=False)
        assert stored(at_once) == stored(one_by_one)


def test_real_lines_are_stored_as_their_readings():
    """Against the samples themselves (not the history's own code): each column holds the
    reading of its sample, as float32, NaN where the line did not have it."""
    parsed = [parse_line(line) for line in LINES.read_text(encoding="utf-8").splitlines()
              if line and not line.startswith("#")]
    lines = [s for s in parsed if s.is_sample]
    assert len(lines) > 10
    history = History(len(lines) + 5, interval_s=1.0)
    for t, sample in enumerate(lines):
        sample.t_mono = float(t)
        history.append(sample)
    assert history.rails and history.zones and history.cores

    def column(key: str) -> list[str]:
        return [repr(float(v)) for v in history.series(key, None, None, buckets=len(lines))[1]]

    def expect(values: list[float | None]) -> list[str]:
        return [repr(float(np.float32(math.nan if v is None else v))) for v in values]

    assert column("gpu_load") == expect([None if s.gpu is None else s.gpu.load_pct for s in lines])
    assert column("ram_used_mb") == expect([None if s.ram is None else s.ram.used_mb for s in lines])
    total = [s.power_total for s in lines]
    assert column("power_mw") == expect([None if p is None else p.mw for p in total])
    rail, zone = history.rails[0], history.zones[-1]
    rails = [s.rails.get(rail) for s in lines]
    assert column(f"rail:{rail}") == expect([None if r is None else r.now_mw for r in rails])
    assert column(f"zone:{zone}") == expect([s.temps_c.get(zone) for s in lines])

    def core(sample: Sample, index: int) -> CpuCore | None:
        cpus = sample.cpus or []
        return cpus[index] if index < len(cpus) else None

    high = history.cores - 1
    last, first = [core(s, high) for s in lines], [core(s, 0) for s in lines]
    assert column(f"cpu_load:{high}") == expect([None if c is None else c.load_pct for c in last])
    assert column("cpu_mhz:0") == expect([None if c is None else c.mhz for c in first])
