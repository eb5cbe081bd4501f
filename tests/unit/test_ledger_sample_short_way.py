"""The ledger's short way for the usual sample is the long way's arithmetic, to the last bit.

``EnergyLedger.add_sample`` takes the usual sample (the samples the only stream, only the run open,
a step measured whole, nothing refused) without spans, steps or streams; anything else goes the
long way, ``EnergyLedger.any_sample``. Both must leave the ledger in the same state, not only give
the same spans now: a power stream or a phase that comes later reads what the samples left (the
stretches' fallback joules, the unread sums, the input rail), so the streams here end with both.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.model.records import PowerReading

#: Rails as an Orin Nano reads them (an input rail), as an AGX Orin does (a sum stands in), and
#: what hostile lines give: none that plans, rails coming and going.
_LAYOUTS = [("VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"), ("VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"),
            ("VDD_IN",), ("NC",), ("VDD_SOC", "VDD_IN")]
_MW = st.one_of(st.sampled_from([0.0, 1.0, 4000.0, 4321.123, 9000.7, 0.1, 2_000_000.0]),
                st.floats(min_value=0.0, max_value=20_000.0))
_HOSTILE = st.sampled_from([math.nan, math.inf, -1.0, -0.0, 2_000_001.0, 5e-324])
#: What breaks a step: none, backwards, at and past the gap rule (the interval is 0.5 s).
_ODD_STEP = st.one_of(st.sampled_from([0.0, -0.5, 1.4999, 1.5, 9.0]),
                      st.floats(min_value=0.001, max_value=2.0))


def _mostly(draw: Any, usual: Any, odd: Any) -> Any:
    """``usual`` nine times in ten (``one_of`` would draw the odd one as often)."""
    return draw(odd) if draw(st.integers(min_value=0, max_value=9)) == 0 else usual


@st.composite
def _sample(draw: Any) -> tuple[Any, ...]:
    names = draw(st.sampled_from(_LAYOUTS))
    rails = {name: _mostly(draw, draw(_MW), _HOSTILE) for name in names}
    total = _mostly(draw, sum(rails.values()), st.one_of(st.none(), _HOSTILE))
    gpu_mhz = draw(st.sampled_from([None, 612.0, math.nan]))
    return ("sample", _mostly(draw, 0.5, _ODD_STEP), rails, total, gpu_mhz)


_OTHER = st.one_of(
    st.tuples(st.just("break"), st.sampled_from(["gap", "source_restart", "seek"])),
    st.tuples(st.just("start"), st.floats(min_value=-2.0, max_value=1.0), st.sampled_from([None, "a"])),
    st.tuples(st.just("end"), st.floats(min_value=-2.0, max_value=1.0)),
    st.tuples(st.just("power"), st.floats(min_value=0.01, max_value=0.6), _MW),
)
_RECORD = st.integers(min_value=0, max_value=2).flatmap(lambda pick: _OTHER if pick == 0 else _sample())
#: Records held a while, as a log's lines are (a sample like the last one is the usual sample),
#: after a steady start that fills the stretches kept.
_STREAM = st.tuples(_sample(), st.integers(min_value=8, max_value=10), st.lists(
    st.tuples(_RECORD, st.integers(min_value=1, max_value=12)), max_size=12)).map(
    lambda start: [(*start[0][:1], 0.5, *start[0][2:])] * start[1]
    + [record for record, times in start[2] for _ in range(times)])
#: The tail every stream ends with: a power stream beside the samples, then a phase.
_TAIL = [("power", 0.1, 4100.0), ("sample", 0.4, {"VDD_IN": 4000.0}, 4000.0, None),
         ("power", 0.2, 3900.0), ("start", 0.0, "tail"), ("sample", 0.5, {"VDD_IN": 5000.0}, 5000.0, None),
         ("power", 0.1, 5100.0), ("sample", 0.5, {"VDD_IN": 5000.0}, 5000.0, None)]


def _play(stream: list[tuple[Any, ...]]) -> EnergyLedger:
    ledger, t = EnergyLedger(0.5), 50.0
    for record in stream:
        kind = record[0]
        if kind == "sample":
            t += record[1]
            ledger.add_sample(t, t + 1e9, record[3], record[2], gpu_mhz=record[4], emc_mhz=2133.0)
        elif kind == "power":
            t += record[1]
            ledger.add_power(PowerReading(t + 1e9, t, rails_mw={"VDD_IN": record[2]}, counters_mj={},
                                          source="INA3221 hwmon", period_s=0.1))
        elif kind == "start":
            ledger.start_phase(record[2], t + record[1])
        elif kind == "end":
            ledger.end_phase(t + record[1])
        else:
            ledger.add_break(record[1], t)
    return ledger


def _state(ledger: EnergyLedger) -> str:
    """Everything the ledger keeps, spans and streams (``repr``: NaN equals NaN)."""
    channels = {key: (channel.last, channel.broken, channel.input_rail, sorted(channel.bad), channel.stretch,
                      list(channel.recent)) for key, channel in ledger._channels.items()}
    return repr((ledger._whole, ledger._open, ledger._finished, channels, ledger._samples_input,
                 ledger._last_mono, ledger._samples_taken, list(ledger._sample_times), ledger._phases_started,
                 ledger.whole, ledger.phases()))


def _long(stream: list[tuple[Any, ...]]) -> EnergyLedger:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EnergyLedger, "add_sample", EnergyLedger.any_sample)
        return _play(stream)


@settings(max_examples=400, deadline=None)
@given(_STREAM)
def test_the_short_way_leaves_the_ledger_as_the_long_way_does(stream):
    short, long = _play(stream), _long(stream)
    assert _state(short) == _state(long)
    short, long = _play([*stream, *_TAIL]), _long([*stream, *_TAIL])  # what comes later reads it
    assert _state(short) == _state(long)


def _steady(rails: dict[str, float], count: int) -> list[tuple[Any, ...]]:
    """``count`` samples 0.5 s apart, each rail wandering about ``rails``."""
    return [("sample", 0.5, {name: mw * (1 + i * 7919 % 13) / 3.3 + i * 0.013 for name, mw in rails.items()},
             None, 612.0) for i in range(count)]


_READ = {"VDD_IN": 4321.123, "VDD_SOC": 1234.567}
_SUMMED = {"VDD_GPU_SOC": 3202.1, "VDD_CPU_CV": 800.3, "VIN_SYS_5V0": 4636.9}
_SCRIPTS = {
    "a phase ends, then samples": [*_steady(_READ, 30), ("start", 0.0, "p"), *_steady(_READ, 2), ("end", 0.0),
                                   *_steady(_READ, 30)],
    "the input read, then a sum, then read again": [*_steady(_READ, 30), *_steady(_SUMMED, 30),
                                                    *_steady(_READ, 30)],
    "a sum, then the input read": [*_steady(_SUMMED, 30), *_steady(_READ, 30)],
    "breaks": [*_steady(_READ, 30), ("break", "gap"), *_steady(_READ, 3), ("break", "source_restart"),
               *_steady(_READ, 30)],
}


@pytest.mark.parametrize("script", list(_SCRIPTS.values()), ids=list(_SCRIPTS))
def test_the_short_way_leaves_the_ledger_as_the_long_way_does_in_these_streams(script):
    """Streams the short way is near the edge of, each with its total (a sum where none is given)."""
    stream = [(*record[:3], sum(record[2].values()), *record[4:]) if record[0] == "sample" else record
              for record in script]
    assert _state(_play(stream)) == _state(_long(stream))
    assert _state(_play([*stream, *_TAIL])) == _state(_long([*stream, *_TAIL]))


@pytest.mark.parametrize("names", [_LAYOUTS[0], _LAYOUTS[1]], ids=["input rail", "a sum"])
def test_the_usual_sample_takes_the_short_way(names):
    """A steady stream: after the first few samples (the stretches kept), every sample goes the
    short way; the trapezoid is the long way's, bit for bit."""
    taken: list[float] = []
    any_sample = EnergyLedger.any_sample

    def counted(self: EnergyLedger, t_mono: float, *args: Any, **kwargs: Any) -> None:
        taken.append(t_mono)
        any_sample(self, t_mono, *args, **kwargs)

    stream = [("sample", 0.5, {name: 1000.0 + 10 * i + n for n, name in enumerate(names)},
               sum(1000.0 + 10 * i + n for n in range(len(names))), 612.0) for i in range(40)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EnergyLedger, "any_sample", counted)
        short = _play(stream)
    assert len(taken) == 8  # the stretches kept (``STRETCHES_KEPT``) fill first
    assert _state(short) == _state(_long(stream))
    assert short.whole.samples == 40 and short.whole.mean_gpu_mhz == 612.0


def test_a_phase_a_power_stream_or_a_break_sends_samples_the_long_way():
    """What the short way cannot hold goes the long way: a sample in a phase, one beside a power
    stream, the step across a break (only that one)."""
    taken: list[float] = []
    any_sample = EnergyLedger.any_sample

    def counted(self: EnergyLedger, t_mono: float, *args: Any, **kwargs: Any) -> None:
        taken.append(t_mono)
        any_sample(self, t_mono, *args, **kwargs)

    steady = [("sample", 0.5, {"VDD_IN": 4000.0}, 4000.0, None)] * 10
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EnergyLedger, "any_sample", counted)
        for extra, long in ((("start", 0.0, "p"), 3), (("break", "gap"), 1), (("power", 0.1, 4000.0), 3)):
            taken.clear()
            _play([*steady, extra, *steady[:3]])
            assert len(taken) == 8 + long, extra
