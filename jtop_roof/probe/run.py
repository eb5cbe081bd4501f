"""``jroof-tui probe``: the achievable ceilings of this machine, measured the way the Empirical
Roofline Toolkit does (research/roofline.md 1.5), stored per device and power mode.

Bandwidth: a large device-to-device copy and a triad (``a = b + s*c``), counting bytes read +
written (copy 2 x size, triad 3 x size, the STREAM convention: write-allocate traffic on a CPU is
not counted), over arrays far larger than the last-level cache. Compute: matrix products per
precision (FP32; BF16/FP16 on the tensor cores and INT8 where the library has them), FLOPs = 2 N^3
per product. Each measurement warms up, then times ``repeats`` runs of ``calls_per_run`` calls,
the device synchronised around each run, and reports the best run (ERT's "max" stage) with the
spread of all runs.

The backend (``probe.backends``: PyTorch on CUDA, else CuPy, else numpy on the CPU) is said
plainly in the result (``backend``, ``device_kind``, ``note``). While it measures, one of the
monitor's own sources runs in a background thread (``probe.sampler``); each entry keeps the clocks
and the power seen during its timed runs, and the ceiling per MHz of the clock that bounds it
(bandwidth per EMC MHz, FLOP/s per GPU MHz; per CPU MHz for numpy), taken at the clocks seen
during the best run where a sample fell in it, so the roof can follow the clocks.
"""

from __future__ import annotations

import datetime as _dt
import functools
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from jtop_roof.probe.backends import MIB, Backend, Kernel, Unsupported, pick_backend
from jtop_roof.probe.energy import EnergyCounter, Span, entry_terms, idle_terms, read_counter
from jtop_roof.probe.sampler import FIRST_SAMPLE_WAIT_S, SourceSampler, clock_stats, power_stats
from jtop_roof.roofline.measured import BANDWIDTH_KINDS, FORMAT, SCHEMA, ProbeError
from jtop_roof.sources.base import Source

#: The energy counter's (mJ, time) at a span's two edges; None without a counter.
Edges = tuple[tuple[float | None, float], tuple[float | None, float]] | None

#: Compute entries, in the device database's names (``devices.PRECISIONS``), in measuring order.
COMPUTE_ORDER = ("fp32", "bf16_tensor", "fp16_tensor", "int8_tensor", "fp64")


# ---------------------------------------------------------------------------------------------
# sizes


@dataclass(frozen=True, slots=True)
class ProbeSizes:
    """How big and how long. ``bandwidth_bytes``: bytes of each array (None: sized from the
    device's memory); ``matmul_n``: N of the N x N products (None: per device kind)."""

    bandwidth_bytes: int | None = None
    matmul_n: int | None = None
    #: Run before the first measurement, so a cold GPU has reached its clocks (about a second).
    device_warmup_s: float = 2.0
    warmup_s: float = 1.0
    run_s: float = 1.0
    repeats: int = 5
    #: The device left idle before the kernels, for π0 and each rail's idle power.
    idle_s: float = 5.0

    @classmethod
    def defaults(cls, quick: bool, device_kind: str) -> ProbeSizes:
        gpu = device_kind == "gpu"
        if quick:
            return cls(device_warmup_s=1.5 if gpu else 0.2, warmup_s=0.2 if gpu else 0.1,
                       run_s=0.2 if gpu else 0.1, repeats=3, idle_s=2.0 if gpu else 0.3)
        return cls(device_warmup_s=2.0 if gpu else 0.5, warmup_s=1.0 if gpu else 0.3,
                   run_s=1.0 if gpu else 0.5, repeats=5, idle_s=5.0 if gpu else 1.0)

    def merged(self, override: ProbeSizes | Mapping[str, Any] | None) -> ProbeSizes:
        """These sizes with what ``override`` sets (a ProbeSizes' non-default fields, or a mapping)."""
        if override is None:
            return self
        if isinstance(override, ProbeSizes):
            base = ProbeSizes()
            changes = {f.name: getattr(override, f.name) for f in fields(ProbeSizes)
                       if getattr(override, f.name) != getattr(base, f.name)}
        else:
            known = {f.name for f in fields(ProbeSizes)}
            unknown = sorted(set(override) - known)
            if unknown:
                raise ProbeError(f"unknown probe size {unknown[0]!r} (known: {', '.join(sorted(known))})")
            changes = dict(override)
        out = replace(self, **changes)
        if (out.repeats < 1 or out.run_s < 0 or out.warmup_s < 0 or out.device_warmup_s < 0
                or out.idle_s < 0):
            raise ProbeError("probe sizes: repeats must be at least 1 and times not negative")
        if (out.bandwidth_bytes is not None and out.bandwidth_bytes < 1024) or (
                out.matmul_n is not None and out.matmul_n < 16):
            raise ProbeError("probe sizes: bandwidth_bytes must be at least 1024 and matmul_n at least 16")
        return out


# ---------------------------------------------------------------------------------------------
# timing


def _timed_runs(kernel: Kernel, backend: Backend, sizes: ProbeSizes, perf: Callable[[], float],
                counter: EnergyCounter | None = None) -> tuple[int, list[tuple[float, float]], Edges]:
    """Warm up for ``warmup_s`` (at least two calls), size a run to ``run_s``, time ``repeats`` runs.
    Returns the calls per run, each run's (start, end) on ``perf``'s clock and the energy counter's
    (mJ, time) read just before the first run and just after the last (None without a counter)."""
    durations = []
    start = perf()
    while True:
        backend.sync()
        t0 = perf()
        kernel.fn()
        backend.sync()
        durations.append(perf() - t0)
        if len(durations) >= 2 and perf() - start >= sizes.warmup_s:
            break
    per_call = max(statistics.median(durations[len(durations) // 2:]), 1e-9)
    calls = max(1, min(1_000_000, round(sizes.run_s / per_call)))
    runs = []
    backend.sync()
    before = read_counter(counter, perf)
    for _ in range(sizes.repeats):
        backend.sync()
        t0 = perf()
        for _ in range(calls):
            kernel.fn()
        backend.sync()
        runs.append((t0, perf()))
    after = read_counter(counter, perf)
    return calls, runs, None if before is None or after is None else (before, after)


def _entry(kind: str, kernel: Kernel, calls: int, runs: list[tuple[float, float]],
           sampler: SourceSampler | None, per_mhz_clock: str | None) -> dict[str, Any]:
    """One JSON entry; ``kind`` is "bandwidth" or "compute"; ``per_mhz_clock`` the clock key that
    bounds this ceiling on this device (None: no clock does)."""
    work = kernel.work * calls
    durations = [max(t1 - t0, 1e-12) for t0, t1 in runs]
    rates = [work / d for d in durations]
    best = min(range(len(runs)), key=lambda i: durations[i])
    samples = [] if sampler is None else sampler.between(runs[0][0], runs[-1][1])
    best_samples = [] if sampler is None else sampler.between(*runs[best])
    unit, per = ("bytes_per_s", "bytes") if kind == "bandwidth" else ("flops_per_s", "flops")
    entry: dict[str, Any] = {
        unit: rates[best],
        "size": kernel.size,
        f"{per}_per_call": kernel.work,
        "calls_per_run": calls,
        "seconds": durations[best],
        "repeats": len(runs),
        "spread": {"min": min(rates), "median": statistics.median(rates), "max": max(rates)},
        "samples": len(samples),
        "clocks": clock_stats(samples),
        "power_w": power_stats(samples),
    }
    # The device clock's key is always there (null without a clock, or on a CPU); a CPU's products
    # get their figure per CPU MHz besides.
    entry[f"{unit}_per_{'emc' if kind == 'bandwidth' else 'gpu'}_mhz"] = None
    clock_key = per_mhz_clock or ("emc_mhz" if kind == "bandwidth" else "gpu_mhz")
    name = f"{unit}_per_{clock_key.removesuffix('_mhz')}_mhz"
    basis = None
    mhz = None
    if per_mhz_clock is not None:
        for over, group in (("best run", best_samples), ("measurement", samples)):
            stat = clock_stats(group)[per_mhz_clock]
            if stat is not None and stat["mean"] > 0:
                mhz, basis = stat["mean"], over
                break
    entry[name] = None if mhz is None else rates[best] / mhz
    entry["per_mhz_clock"] = None if mhz is None else {"key": per_mhz_clock, "mhz": mhz, "over": basis}
    return entry


# ---------------------------------------------------------------------------------------------
# the probe


def _sourced_device(header: Mapping[str, Any], device: str | None, power_mode: str | None,
                    devices: Mapping[str, Any] | None) -> tuple[str | None, str | None, str | None]:
    """(device id, power mode name, why unknown) as the monitor would resolve them."""
    from jtop_roof.model.info import SourceInfo
    from jtop_roof.roofline.board import resolve_board
    from jtop_roof.roofline.devices import load_devices

    db = devices if devices is not None else load_devices()
    info = SourceInfo.from_mapping(header)
    board = resolve_board(info, db, device_id=device, power_mode=power_mode)
    if device is not None and board.device is None:
        raise ProbeError(board.problem or f"unknown device {device!r}")
    # A mode the database does not know keeps the name it was given by.
    mode = board.mode_name or power_mode or info.power_mode
    return (None if board.device is None else board.device.id), mode, board.problem or board.mode_note


def run_probe(
    quick: bool,
    backend: str = "auto",
    sizes: ProbeSizes | Mapping[str, Any] | None = None,
    *,
    source_factory: Callable[[], Source],
    device: str | None = None,
    power_mode: str | None = None,
    devices: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    counter_factory: Callable[[], EnergyCounter | None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    perf: Callable[[], float] = time.monotonic,
    now: Callable[[], _dt.datetime] | None = None,
) -> dict[str, Any]:
    """Measure this machine's ceilings; returns the JSON-ready result (see the module docstring).

    ``source_factory``: makes the source sampled during the measurements (the command passes
    ``runtime.session.probe_source_factory``: this machine's, as the monitor picks it); ``sizes``:
    overrides of :class:`ProbeSizes` (tests use tiny ones). ``device``/``power_mode``: the database
    id and mode name (``--device``, ``--power-mode``), else what the source says, as the monitor
    resolves them. ``progress`` gets a line per step. ``counter_factory``: opens an energy counter of
    the device (``probe.energy.nvml_counter``; None: the sampled power alone). ``perf`` must be
    ``time.monotonic``'s clock (sample times are matched on it)."""
    say = progress or (lambda _line: None)
    chosen = pick_backend(backend)
    plan = ProbeSizes.defaults(quick, chosen.device_kind).merged(sizes)
    sampler = SourceSampler(source_factory(), mono=perf)
    started = perf()
    stamp = (now or (lambda: _dt.datetime.now().astimezone()))()
    sampler.start()
    result: dict[str, Any] = {}
    counter = None
    try:
        if counter_factory is not None and chosen.device_kind == "gpu":
            counter = counter_factory()
        if not sampler.wait_described(30.0):
            chosen.notes.append("the source did not describe itself within 30 s")
        # The first measurement is short: it starts once the source has sampled the board, so that
        # its clocks are seen (a source that never samples costs this wait once).
        sampler.wait_first_sample(FIRST_SAMPLE_WAIT_S)
        source_kind = sampler.source.kind or "unknown"
        device_id, mode, device_note = _sourced_device(sampler.info_header, device, power_mode, devices)
        # On a CPU, the EMC clock bounds bandwidth only where the CPU shares the SoC's memory.
        unified = source_kind == "tegrastats"
        bw_clock = ("emc_mhz" if unified else None) if chosen.device_kind == "cpu" else "emc_mhz"
        fl_clock = "cpu_mhz" if chosen.device_kind == "cpu" else "gpu_mhz"
        bandwidth: dict[str, Any] = {}
        compute: dict[str, Any] = {}
        skipped: dict[str, str] = {}
        array_bytes = plan.bandwidth_bytes or chosen.default_bandwidth_bytes(quick)
        matmul_n = plan.matmul_n or chosen.default_matmul_n(quick)
        precisions = [p for p in COMPUTE_ORDER if p in chosen.precisions()]
        say(f"probe: {chosen.name} on {chosen.device_name or chosen.device_kind}; source {source_kind}")
        say(f"idle: {plan.idle_s:g} s with the {chosen.device_kind} idle, for its idle power")
        idle = _idle(chosen, sampler, counter, plan.idle_s, perf, sleep)
        if plan.device_warmup_s > 0:
            say(f"warming the {chosen.device_kind} up for {plan.device_warmup_s:g} s")
            _device_warmup(chosen, precisions, matmul_n, plan.device_warmup_s, perf)
        for kind in BANDWIDTH_KINDS:
            kernel = _make(functools.partial(chosen.bandwidth, kind, array_bytes), kind, skipped)
            if kernel is None:  # said with the results, not announced as measured
                continue
            say(f"bandwidth: {kind}, arrays of {array_bytes / MIB:.0f} MiB")
            try:
                calls, runs, edges = _timed_runs(kernel, chosen, plan, perf, counter)
            finally:
                kernel.release()
            bandwidth[kind] = _entry("bandwidth", kernel, calls, runs, sampler, bw_clock)
            bandwidth[kind].update(_energy("bandwidth", bandwidth[kind], runs, edges, sampler, idle,
                                           counter, chosen.device_kind))
        for precision in precisions:
            kernel = _make(functools.partial(chosen.matmul, precision, matmul_n), precision, skipped)
            if kernel is None:
                continue
            say(f"compute: {precision}, N = {matmul_n}")
            try:
                calls, runs, edges = _timed_runs(kernel, chosen, plan, perf, counter)
            except Exception as exc:  # e.g. torch._int_mm refusing a shape on this GPU
                skipped[precision] = _one_line(exc)
                continue
            finally:
                kernel.release()
            compute[precision] = _entry("compute", kernel, calls, runs, sampler, fl_clock)
            compute[precision].update(_energy("compute", compute[precision], runs, edges, sampler, idle,
                                              counter, chosen.device_kind))
        result = {
            "format": FORMAT,
            "schema": SCHEMA,
            "device": device_id,
            "power_mode": mode,
            "backend": chosen.name,
            "device_kind": chosen.device_kind,
            "device_name": chosen.device_name,
            "library": chosen.library,
            "quick": bool(quick),
            "measured_at": stamp.isoformat(timespec="seconds"),
            "duration_s": None,
            "source": {"kind": source_kind, "interval_ms": getattr(sampler.source, "interval_ms", None),
                       "samples": sampler.count(), "error": sampler.error},
            "device_note": device_note,
            "note": _note(chosen, source_kind, bw_clock, sampler),
            "idle": idle,
            "bandwidth": bandwidth,
            "compute": compute,
            "skipped": skipped,
        }
    finally:
        sampler.stop()
        chosen.close()
        if counter is not None:
            counter.close()
    result["duration_s"] = perf() - started
    return result


def _idle(backend: Backend, sampler: SourceSampler, counter: EnergyCounter | None, seconds: float,
          perf: Callable[[], float], sleep: Callable[[float], None]) -> dict[str, Any]:
    """The result's ``idle`` block: ``seconds`` with nothing queued on the device (``probe.energy``)."""
    backend.sync()
    before = read_counter(counter, perf)
    t0 = perf()
    sleep(seconds)
    t1 = perf()
    after = read_counter(counter, perf)
    edges = None if before is None or after is None else (before, after)
    return idle_terms(_span(t0, t1, sampler, edges), counter, backend.device_kind)


def _span(t0: float, t1: float, sampler: SourceSampler, edges: Edges) -> Span:
    if edges is None:
        return Span(t1 - t0, sampler.between(t0, t1))
    (before, tb), (after, ta) = edges
    return Span(t1 - t0, sampler.between(t0, t1), (before, after), ta - tb)


def _energy(kind: str, entry: dict[str, Any], runs: list[tuple[float, float]],
            edges: Edges, sampler: SourceSampler, idle: dict[str, Any],
            counter: EnergyCounter | None, device_kind: str) -> dict[str, Any]:
    """An entry's energy over all its timed runs and its ε (``probe.energy.entry_terms``)."""
    t0, t1 = runs[0][0], runs[-1][1]
    per = entry["bytes_per_call" if kind == "bandwidth" else "flops_per_call"]
    work = per * entry["calls_per_run"] * len(runs)
    span = _span(t0, t1, sampler, edges)
    return entry_terms(kind, span, work, idle, counter, device_kind, entry["clocks"])


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:200]}"


def _make(build: Callable[[], Kernel], name: str, skipped: dict[str, str]) -> Kernel | None:
    try:
        return build()
    except Unsupported as exc:
        skipped[name] = str(exc)
    except MemoryError:
        skipped[name] = "out of memory"
    except Exception as exc:  # a CUDA out-of-memory or a library refusing the dtype
        skipped[name] = _one_line(exc)
    return None


def _device_warmup(backend: Backend, precisions: list[str], n: int, seconds: float,
                   perf: Callable[[], float]) -> None:
    """Matrix products for ``seconds``, so that a cold GPU is at its clocks before the first timing."""
    for precision in ("bf16_tensor", "fp16_tensor", "fp32"):
        if precision not in precisions:
            continue
        try:
            kernel = backend.matmul(precision, n)
        except Exception:
            continue
        try:
            end = perf() + seconds
            while perf() < end:
                kernel.fn()
                backend.sync()
        finally:
            kernel.release()
        return


def _note(backend: Backend, source_kind: str, bw_clock: str | None, sampler: SourceSampler) -> str:
    parts = []
    if backend.device_kind == "gpu":
        parts.append(f"measured on the GPU ({backend.device_name}) with {backend.library}")
    else:
        parts.append(f"measured on the CPU ({backend.device_name or 'unknown'}) with {backend.library}: "
                     "these are the CPU's ceilings, not the GPU's; copy and triad use one thread, "
                     "matrix products numpy's BLAS threads")
        if bw_clock is None:
            parts.append("no bandwidth per MHz: the memory clock this source reports is not the CPU's")
    parts.extend(backend.notes)
    if sampler.error:
        parts.append(f"source {source_kind}: {sampler.error}")
    if sampler.count() == 0:
        parts.append(f"the {source_kind} source gave no samples: no clocks or power")
    return "; ".join(parts)
