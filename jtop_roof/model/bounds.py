"""What a decoded value may be: the caps and ranges a recording's reader holds every record to,
as numbers (for the lenient decoder, ``model.codec``) and as msgspec types (for the typed one,
``model.schema``, and the model's leaf Structs). A value outside them is not a measurement."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

#: What one decoded sample may hold: a hostile line with 3,000 cores or rails must not make
#: thousands of series downstream. Entries past these are dropped (and counted).
MAX_CORES = 256
MAX_NAMED = 64  # rails, zones, engines (each)
MAX_GPCS = 64
MAX_TEXTS = 256  # unknown tokens, throttle reasons
MAX_NAME_CHARS = 64
#: Characters kept of a throttle reason read from a file.
MAX_REASON_CHARS = 200
#: Largest magnitude of a reading (mW, MB, MHz, °C, %): larger is not a measurement, and sums or
#: float32 history columns of it would overflow to infinity.
MAX_READING = 1e9
#: Wall times outside 1970 ... 2999 are not a board's clock, and dates near year 1 or 9999
#: overflow once a zone offset is added.
MAX_WALL_S = 32_503_680_000.0
#: A monotonic clock of more than about 300 years is not one.
MAX_MONO_S = 1e10
#: No fan turns faster (a tachometer reading beyond this is noise or a bad file).
MAX_RPM = 1e6
#: Largest cumulative energy counter (mJ): NVML's is a u64 of mJ, RAPL's wraps near 2^32 µJ or
#: 2^64 µJ; beyond this (about 30 years at 1 MW) it is not a counter.
MAX_COUNTER_MJ = 1e18
#: Shortest sampler period a reading may claim (1 kHz is the fastest ``--power-hz``).
MIN_PERIOD_S = 1e-3
#: Processes one reading may hold (the sampler keeps at most ``sources.processes.MAX_ROWS``).
MAX_PROCESS_ROWS = 64
#: Largest process id Linux gives (``PID_MAX_LIMIT``, 2^22).
MAX_PID = 1 << 22
#: Upper bounds of a work report: iterations, FLOPs and bytes per report.
MAX_WORK_ITERATIONS = 1e15
MAX_WORK_AMOUNT = 1e24
#: Characters kept of an event's detail read from a file (a hostile one may be megabytes).
MAX_DETAIL_CHARS = 1000

# Numbers are kept as written: an int stays an int (as ``json.loads`` gives it) and a float a float,
# so a typed decode gives what the lenient one does; NaN and infinities are out of every range.
# To mypy these are ``int | float``, which is ``float``.
Reading = (Annotated[int, Meta(ge=-10**9, le=10**9)]
           | Annotated[float, Meta(ge=-MAX_READING, le=MAX_READING)])
Amount = Annotated[int, Meta(ge=0, le=10**9)] | Annotated[float, Meta(ge=0.0, le=MAX_READING)]
Percent = Annotated[int, Meta(ge=0, le=100)] | Annotated[float, Meta(ge=0.0, le=100.0)]
Rpm = Annotated[int, Meta(ge=0, le=10**6)] | Annotated[float, Meta(ge=0.0, le=MAX_RPM)]
Whole = Annotated[int, Meta(ge=-10**9, le=10**9)]  # a clock (MHz), a count
Wall = Annotated[int, Meta(ge=0, le=32_503_680_000)] | Annotated[float, Meta(ge=0.0, le=MAX_WALL_S)]
Mono = Annotated[int, Meta(ge=0, le=10**10)] | Annotated[float, Meta(ge=0.0, le=MAX_MONO_S)]
#: A marker's or work report's clock may be before the stream's first sample.
MonoBefore = (Annotated[int, Meta(ge=-10**10, le=10**10)]
              | Annotated[float, Meta(ge=-MAX_MONO_S, le=MAX_MONO_S)])
Period = Annotated[int, Meta(ge=1, le=10**10)] | Annotated[float, Meta(ge=MIN_PERIOD_S, le=MAX_MONO_S)]
Counter = Annotated[int, Meta(ge=0, le=10**18)] | Annotated[float, Meta(ge=0.0, le=MAX_COUNTER_MJ)]
Iterations = (Annotated[int, Meta(ge=0, le=10**15)]
              | Annotated[float, Meta(ge=0.0, le=MAX_WORK_ITERATIONS)])
WorkAmount = Annotated[int, Meta(ge=0, le=2**63 - 1)] | Annotated[float, Meta(ge=0.0, le=MAX_WORK_AMOUNT)]
Name = Annotated[str, Meta(max_length=MAX_NAME_CHARS)]
Reason = Annotated[str, Meta(max_length=MAX_REASON_CHARS)]
Detail = Annotated[str, Meta(max_length=MAX_DETAIL_CHARS)]
Pid = Annotated[int, Meta(ge=1, le=MAX_PID)]
