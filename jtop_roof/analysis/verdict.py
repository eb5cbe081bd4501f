"""The workload on the roof: where a phase sits, from what the workload reported doing.

achieved FLOP/s = the phase's FLOPs ÷ its duration; intensity = FLOPs ÷ DRAM bytes. Never from load
%. The verdict, per phase: ``memory-bound`` when the intensity is below the ridge at the phase's mean
clocks (a copy with 0 FLOPs is memory-bound; its efficiency is bytes/s ÷ the bandwidth roof),
``compute-bound`` otherwise, ``clock-bound`` when a throttle of the unit that bounds it (GPU when
compute-bound, EMC when memory-bound) overlaps the phase, ``unknown`` when the device, the clocks,
or both FLOPs and bytes are missing. The clocks' loads overrule the intensity where they disagree: a
phase whose GPU is busy (``GPU_BUSY_PCT``) while its EMC carries little (``EMC_LOW_PCT``) waits on
the GPU, not on memory, whatever its bytes (an estimate, most often) say: it is not memory-bound.
``verdict_basis`` says, in one line, what the verdict rests on. ``j_per_op``: the phase's energy
charged to work (``SpanStats.work_energy``: the input's, else a dGPU's board power) ÷ its FLOPs
(OPs), the point on the energy roofline (``roofline.energy``). Efficiencies are
against the roof at the phase's mean clocks (``current``) and at the mode's maximum (``max``).

Every rate, intensity and efficiency is finite or None: work reports are bounded (0 ... 1e24) but
their quotients are not (1e24 FLOPs over 1e-300 bytes overflow, the reverse underflows to 0), and an
infinity would break the roofline plot and JSON, which has none.

Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, replace

from jtop_roof.analysis.ledger import SpanStats
from jtop_roof.roofline.board import Board
from jtop_roof.roofline.ceilings import Ceilings, ceilings, max_ceilings
from jtop_roof.roofline.devices import rate_word
from jtop_roof.roofline.workload import Workload

#: The verdicts that name what bounds a phase (``unknown`` names nothing, ``impossible`` is work
#: above every roof it is judged against: see ``above_every_roof``).
BOUND_VERDICTS = ("memory-bound", "compute-bound", "clock-bound")
IMPOSSIBLE = "impossible"
#: A GPU at least this busy (mean load %, tegrastats' GR3D) over a phase is working, not waiting.
GPU_BUSY_PCT = 80.0
#: An EMC below this mean load (% of its bandwidth at its clock) is not what holds a busy GPU back.
EMC_LOW_PCT = 50.0
#: How a workload names its precision -> the device database's key.
PRECISION_KEYS = {
    "fp64": "fp64", "fp32": "fp32", "tf32": "fp32", "fp16": "fp16_tensor", "half": "fp16_tensor",
    "bf16": "bf16_tensor", "int8": "int8_tensor", "fp16_tensor": "fp16_tensor",
    "bf16_tensor": "bf16_tensor", "int8_tensor": "int8_tensor",
}


@dataclass(frozen=True, slots=True)
class Placement:
    """A phase on the roof; fields are None where they cannot be known."""

    verdict: str
    precision: str | None
    achieved_flops_per_s: float | None
    achieved_bytes_per_s: float | None
    intensity_flop_per_byte: float | None
    efficiency_current: float | None
    efficiency_max: float | None
    note: str | None = None
    #: What the ``--workload`` spec gave this placement ("flops", "bytes", "precision"): nothing
    #: when the work reported its own (then the spec was used for nothing here).
    from_workload: tuple[str, ...] = ()
    #: What the verdict rests on, in one line (None where it is unknown).
    verdict_basis: str | None = None
    #: The phase's energy charged to work ÷ its FLOPs (OPs), in J (None: no energy, or no FLOPs).
    j_per_op: float | None = None


def precision_key(name: str | None) -> str | None:
    return None if name is None else PRECISION_KEYS.get(name.strip().lower())


def place(span: SpanStats, board: Board, throttled_units: Collection[str] = frozenset(),
          workload: Workload | None = None) -> Placement:
    """Where ``span`` sits on the roof of ``board`` (see the module docstring). ``throttled_units``:
    the units that throttled during the span (``Pipeline.placement`` asks ``ClockEvents``). ``workload``: the
    spec's FLOPs and bytes per iteration, for iterations reported without them (trtexec); where
    its bytes are a range, the placement uses their geometric middle."""
    duration = span.duration_s
    flops, bytes_ = span.flops, span.bytes
    given: list[str] = []
    if workload is not None and span.iterations:
        if flops is None and workload.flops_per_iter is not None:
            flops = workload.flops_per_iter * span.iterations
            given.append("flops")
        low, high = workload.bytes_per_iter_low, workload.bytes_per_iter_high
        if bytes_ is None and low is not None and high is not None:
            bytes_ = (low * high) ** 0.5 * span.iterations
            given.append("bytes")
    achieved, moved, intensity = _ratio(flops, duration), _ratio(bytes_, duration), _ratio(flops, bytes_)
    # The work's own precision where it names one the database knows (trtexec says "fp32+int8"),
    # else the spec's, else FP32, said so.
    spec = None if workload is None else workload.precision
    precision = precision_key(span.precision) or precision_key(spec)
    if precision is not None and precision_key(span.precision) is None:
        given.append("precision")
    note = None if precision or flops == 0 else "no precision reported: judged against the FP32 roof"
    precision = precision or "fp32"
    per_op = _ratio(span.work_energy()[0], flops)
    unknown = Placement("unknown", precision, achieved, moved, intensity, None, None, note, tuple(given),
                        None, per_op)
    device = board.device
    if device is None:
        return _with_note(unknown, board.problem or "device unknown")
    if flops is None and bytes_ is None:
        return _with_note(unknown, "the workload reported no FLOPs and no bytes")
    now = ceilings(device, span.mean_gpu_mhz, span.mean_emc_mhz, board.mode)
    top = max_ceilings(device, board.mode)
    if now is None:
        return _with_note(unknown, "no GPU/EMC clocks in the phase")
    if precision not in now.peak_flops_per_s:
        return _with_note(unknown, f"{device.id} has no {precision} rate in the device database")
    memory_bound = flops == 0 or (intensity is not None and intensity < now.ridge_flop_per_byte[precision])
    if intensity is None and flops:
        # FLOPs without bytes: the intensity is unknown; only the compute roof can judge it.
        memory_bound = False
    basis = _intensity_basis(now, precision, intensity, flops, memory_bound)
    if memory_bound and achieved and intensity and _gpu_waits_not_memory(span):  # not a copy
        memory_bound = False
        bytes_from = "the workload spec's estimate" if "bytes" in given else "the work's own report"
        basis = (f"loads: the GPU {span.mean_gpu_load_pct:.0f}% busy while the EMC carries "
                 f"{span.mean_emc_load_pct:.0f}% of its bandwidth: the GPU bounds it, not memory, though "
                 f"{basis}, with bytes from {bytes_from}")
    verdict = "memory-bound" if memory_bound else "compute-bound"
    if ("emc" if memory_bound else "gpu") in throttled_units:
        verdict = "clock-bound"
        basis += f"; the {'EMC' if memory_bound else 'GPU'} throttled during it"
    current = _efficiency(now, precision, achieved, moved, intensity, memory_bound)
    at_max = None if top is None else _efficiency(top, precision, achieved, moved, intensity, memory_bound)
    if above_every_roof(current, at_max):
        return Placement(IMPOSSIBLE, precision, achieved, moved, intensity, None, None,
                         impossible_note(current, at_max), tuple(given), None, per_op)
    return Placement(verdict, precision, achieved, moved, intensity, current, at_max, note, tuple(given),
                     basis, per_op)


def _gpu_waits_not_memory(span: SpanStats) -> bool:
    """Whether the phase's loads say the GPU, not memory, holds it: the GPU busy, the EMC not."""
    gpu, emc = span.mean_gpu_load_pct, span.mean_emc_load_pct
    return gpu is not None and emc is not None and gpu >= GPU_BUSY_PCT and emc < EMC_LOW_PCT


def _intensity_basis(roof: Ceilings, precision: str, intensity: float | None, flops: float | None,
                     memory_bound: bool) -> str:
    """The intensity against the ridge at the phase's clocks, in words."""
    word = rate_word(precision)
    clocks = f"at the phase's clocks (GPU {roof.gpu_mhz:.0f} MHz, EMC {roof.emc_mhz:.0f} MHz)"
    if flops == 0:
        return "a copy (0 FLOPs): judged by its bytes/s"
    if intensity is None:
        return f"FLOPs without bytes: judged on the compute roof {clocks}"
    where = "below" if memory_bound else "at or above"
    return (f"intensity {intensity:.3g} {word}/byte {where} the ridge "
            f"{roof.ridge_flop_per_byte[precision]:.3g} {clocks}")


def above_every_roof(*efficiencies: float | None) -> bool:
    """Whether work was done faster than every roof known for it allows (each efficiency over 1):
    no clock reading can make that true, so its figures or the ceilings are wrong."""
    known = [e for e in efficiencies if e is not None]
    return bool(known) and min(known) > 1.0


def impossible_note(*efficiencies: float | None) -> str:
    """Why a placement's verdict is ``impossible``, and by how much (its efficiencies are null)."""
    over = min(e for e in efficiencies if e is not None)
    return (f"above the roof: {over:.3g}× the highest rate the roof allows; the work's figures (FLOPs, "
            "bytes, iterations, precision) or the ceilings (device, power mode) are wrong")


def _with_note(placement: Placement, note: str) -> Placement:
    return replace(placement, efficiency_current=None, efficiency_max=None, note=note)


def _efficiency(roof: Ceilings, precision: str, achieved: float | None, moved: float | None,
                intensity: float | None, memory_bound: bool) -> float | None:
    """Achieved ÷ attainable at the phase's intensity (bytes/s ÷ bandwidth for a pure copy, or for
    FLOPs so few beside the bytes that the intensity underflowed to 0)."""
    if memory_bound and not (achieved and intensity):
        return _ratio(moved, roof.bandwidth_bytes_per_s)
    if achieved is None:
        return None
    peak = roof.peak_flops_per_s[precision]
    attainable = peak if intensity is None else min(peak, roof.bandwidth_bytes_per_s * intensity)
    return _ratio(achieved, attainable)


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator ÷ denominator`` where both are known, the denominator is positive and the
    quotient finite; else None (see the module docstring)."""
    if numerator is None or denominator is None or not denominator > 0:
        return None
    quotient = numerator / denominator
    return quotient if math.isfinite(quotient) else None
