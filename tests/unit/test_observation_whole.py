"""What a stream shows of its board as a whole (top clocks, saturated units) is what every one of
its samples shows, however they fall into parts by online cores (``BoardObserver``).

The observer keeps top clocks and saturation per part only and gives the whole as the parts
together; a blip of other online cores, taken back into the part it interrupted, and a part still
pending at the end must count, as a naive pass over the samples counts them.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jtop_roof.model.records import Clocked, CpuCore, Gpu, Sample
from jtop_roof.roofline.inference import MIN_SATURATED_SAMPLES, SATURATED_PCT, BoardObserver

_MHZ = st.one_of(st.none(), st.sampled_from([0, 306, 729, 1300, 2201]))
_LOAD = st.one_of(st.none(), st.sampled_from([0.0, 50.0, SATURATED_PCT, 100.0]))
_SAMPLE = st.tuples(st.integers(min_value=0, max_value=4), _MHZ, _LOAD, _MHZ, _LOAD, _MHZ, _LOAD)


def _sample(t: float, online: int, cpu_mhz: int | None, cpu_load: float | None, gpu_mhz: int | None,
            gpu_load: float | None, emc_mhz: int | None, emc_load: float | None) -> Sample:
    cores: list[CpuCore | None] = [CpuCore(cpu_load, cpu_mhz) if i < online else None for i in range(4)]
    return Sample(t_mono=t, cpus=cores,
                  gpu=None if gpu_mhz is None else Gpu(gpu_load, (gpu_mhz,)),
                  emc=None if emc_mhz is None else Clocked(emc_load, emc_mhz))


def _naive(samples: list[Sample]) -> tuple[dict[str, float], frozenset[str]]:
    top: dict[str, float] = {}
    busy: dict[str, int] = {}
    for sample in samples:
        units: list[tuple[str, float, float]] = []
        live = [core for core in sample.cpus or [] if core is not None]
        if sample.cpus:
            units.append(("cpu", max([0, *(c.mhz for c in live if c.mhz is not None)]),
                          max([0.0, *(c.load_pct for c in live if c.load_pct is not None)])))
        for unit, clocked in (("gpu", sample.gpu), ("emc", sample.emc)):
            if clocked is not None:
                units.append((unit, clocked.mhz or 0, clocked.load_pct or 0.0))
        for unit, mhz, load in units:
            if mhz > top.get(unit, 0.0):
                top[unit] = float(mhz)
            busy[unit] = busy.get(unit, 0) + (load >= SATURATED_PCT)
    return top, frozenset(unit for unit, n in busy.items() if n >= MIN_SATURATED_SAMPLES)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SAMPLE, max_size=30))
def test_the_whole_is_every_sample_whatever_the_parts(stream):
    samples = [_sample(float(i), *each) for i, each in enumerate(stream)]
    observer = BoardObserver()
    for sample in samples:
        observer.add(sample)
    seen = observer.observation()
    top, saturated = _naive(samples)
    assert dict(seen.max_mhz) == top
    assert seen.saturated == saturated
    assert seen.samples == len(samples)
