"""``jroof-tui report FILE``: the whole run and every phase of a recording or a tegrastats log.

The file is read by the one reader (``logfile.iter_records``) and fed through the same
``Pipeline`` as the monitor and headless ``record``, so its numbers are theirs. Energy is the
ledger's integral of the finest power stream between each span's own edges (readings interpolated
there, or an energy counter's difference; never tegrastats' running "avg"); gaps are counted, never
bridged. JSON keeps numbers unrounded; md and csv round for reading.

Keys (stable; later issues add to them): top level ``source``, ``whole``, ``phases``; per span
``name``, ``start``, ``end`` (ISO 8601 with the UTC offset in ``--tz``; null without stamps),
``start_s``, ``end_s`` (seconds from the run's first sample), ``duration_s``, ``samples``,
``gaps``, ``energy_j`` {``total``, ``rails``} and ``power_w`` {``mean``, ``peak``, ``rails``
{NAME: {``mean``, ``peak``}}}, ``throttled_s`` (inside a throttle of any unit: the union over
units, never their sum), ``energy_source`` (what measured the energy: "INA3221 hwmon, 50 Hz",
"NVML energy counter", "tegrastats VDD_IN, 1000 ms") and ``power_period_s`` (how often it was
read). ``start``..``end`` are exactly the bounds the energy is integrated over. Nothing here imports Textual.
"""

from __future__ import annotations

import csv
import errno
import io
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import fields, replace
from datetime import tzinfo
from typing import Any

from jtop_roof.analysis.assumptions import energy_rests_on, sourced_items
from jtop_roof.analysis.detectors import cause_source
from jtop_roof.analysis.ledger import SpanStats
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.analysis.verdict import IMPOSSIBLE, Placement, above_every_roof, impossible_note
from jtop_roof.formats.logfile import ReadStats, iter_records, open_text, read_header
from jtop_roof.formats.ncu import Kernel
from jtop_roof.formats.trtexec import TrtexecError, TrtexecRun, kept_output, read_trtexec, with_trtexec
from jtop_roof.formats.trtexec_span import RunPlacement, fitted_timing
from jtop_roof.model.codec import finite_or_null
from jtop_roof.model.event_kinds import EVENT_KINDS
from jtop_roof.model.info import SourceInfo, TimeBasis
from jtop_roof.model.jsonsafe import shown_text
from jtop_roof.model.metrics import FOREIGN_PROCESS_PCT, fmt_si_unit
from jtop_roof.model.records import Event, Record
from jtop_roof.outputs.report_sources import CSV_COLUMNS, assumptions_json, csv_values, markdown_block
from jtop_roof.outputs.report_trtexec import (
    placement_source,
    timed_by_trtexec,
    trtexec_json,
    whole_by_trtexec,
    workload_notes,
)
from jtop_roof.outputs.text import iso_at, md_cell
from jtop_roof.roofline.board import Board
from jtop_roof.roofline.ceilings import ceilings, max_ceilings, max_clocks
from jtop_roof.roofline.devices import rate_word
from jtop_roof.roofline.energy import energy_json
from jtop_roof.roofline.measured import Probe
from jtop_roof.roofline.workload import Workload
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.inputs import place_on_file
from jtop_roof.runtime.runtime import build_pipeline, play_whole


def run_pipeline(records: Callable[[], Iterable[Record]], interval_s: float, info: SourceInfo,
                 config: Config) -> tuple[Pipeline, list[Event]]:
    """Feed a whole stream (``records()``, read again only where the board it shows was inferred
    wrongly from its start: ``runtime.play_whole``) through the runtime's pipeline and pump, as the
    monitor does, to its end; with the events its detectors made."""
    return play_whole(lambda: build_pipeline(config, info, interval_s=interval_s), records)


def build_report(
    open_lines: Callable[[], Iterator[str]], *, source: dict[str, Any], tz: tzinfo,
    interval_s: float | None, stats: ReadStats | None = None, info: SourceInfo | None = None,
    config: Config | None = None, trtexec: TrtexecRun | None = None,
    workload: Workload | None = None, kernels: Sequence[Kernel] = (), probe: Probe | None = None,
    placement: RunPlacement | None = None, tz_given: bool = False,
) -> dict[str, Any]:
    """The report as a JSON-ready dict (``source`` is passed through as the top-level key).
    ``open_lines`` gives the file's lines, read streaming through the pipeline once, after a look
    at its first records for the stream's interval (as the replay's index finds it: a plain log's
    is known from them, a recording's from its first samples' steps). ``trtexec``: a trtexec
    run of the same time span: its phases (``build``, ``warm-up``, ``timed``) become phases and its
    iterations the ``timed`` phase's work, with trtexec's own throughput; ``placement``: where it
    lies on the file (``trtexec_span.placement``: the first sample's wall time for a plain log, and
    how much of the timed window the file covers: below ``MIN_COVERAGE`` the timed phase gives no
    energy per inference). ``workload``: FLOPs and
    bytes per iteration where the work reports give none. Raises ``logfile.RecordingError`` for a
    recording this program must not read. Every number is finite or None: a rate of extreme but
    valid work that overflowed is unknown, and JSON has no Infinity."""
    stats = stats if stats is not None else ReadStats()
    for _ in iter_records(open_lines(), tz=tz, interval_s=interval_s, stats=stats, tz_given=tz_given):
        if stats.interval_final:  # a plain log's first records, a recording's first samples
            break
    log_start = None if placement is None else placement.plain_log_start
    whole_read = ReadStats()  # the full read: what only the whole file tells

    def records() -> Iterable[Record]:
        stream = iter_records(open_lines(), tz=tz, interval_s=interval_s, stats=whole_read, tz_given=tz_given)
        return stream if trtexec is None else with_trtexec(stream, trtexec, log_start)

    timing = _timing(stats.basis, placement)
    pipeline, events = run_pipeline(records, stats.interval_s or interval_s or 1.0,
                                    replace(info or SourceInfo("replay"), timing=timing), config or Config())
    for each in fields(ReadStats):  # the caller's stats are the whole file's
        setattr(stats, each.name, getattr(whole_read, each.name))
    if timing is not None:  # the interval, what gave it, the stamps' form and zone
        source = {**source, **timing.as_json(whole_read.clock_backwards)}
    ledger, board, mode_check = pipeline.ledger, pipeline.board, pipeline.clock_events.mode_check()
    whole, phases = ledger.whole, ledger.phases()
    idle_w = _idle_power_w(phases)
    origin = whole.first_mono
    report: dict[str, Any] = finite_or_null({
        "source": source,
        "device": None if board.device is None else board.device.id,
        "power_mode": board.mode_name,
        "device_note": "; ".join(n for n in (board.problem or board.mode_note, board.device_note) if n)
                       or None,
        "power_mode_note": board.power_mode_note,
        "device_source": board.device_source,
        "power_mode_source": board.power_mode_source,
        "device_candidates": list(board.candidates),
        "throttle_detection": board.throttle_detection,
        "throttle_detection_note": board.throttle_detection_note,
        "power_mode_check": None if mode_check is None else mode_check.detail,
        "events": [event_json(event, origin, tz) for event in events],
        "whole": whole_by_trtexec(span_json(whole, origin, tz, pipeline, idle_w, workload, probe), trtexec),
        "phases": [timed_by_trtexec(span_json(phase, origin, tz, pipeline, idle_w, workload, probe), trtexec,
                                     placement)
                   for phase in phases],
        **({} if trtexec is None else {"trtexec": trtexec_json(trtexec, placement)}),
        **({"ncu": [kernel_json(kernel, board) for kernel in kernels]} if kernels else {}),
        **({} if probe is None else {"probe": probe_json(probe, board)}),
    })
    report["assumptions"] = assumptions_json(sourced_items(pipeline), report.get("trtexec"))
    return report


def _timing(basis: TimeBasis | None, placement: RunPlacement | None) -> TimeBasis | None:
    """How the file's samples were timed: as the reader found it, but a log without stamps spread
    over trtexec's run (its interval fitted to it) rests on that fit: inferred, and said."""
    return basis if placement is None or placement.interval_source is None else fitted_timing(basis)


def kernel_json(kernel: Kernel, board: Board) -> dict[str, Any]:
    """A kernel Nsight Compute measured, on the roof at the SM clock ncu saw during it (with the
    memory at its maximum: ncu's own DRAM figure is what the kernel moved)."""
    achieved, intensity = kernel.achieved_flops_per_s, kernel.intensity
    out: dict[str, Any] = {
        "name": kernel.name, "duration_s": kernel.duration_s, "flops": kernel.flops,
        "dram_bytes": kernel.dram_bytes, "achieved_flops_per_s": achieved,
        "intensity_flop_per_byte": intensity, "sm_mhz": None if kernel.sm_hz is None else kernel.sm_hz / 1e6,
        "flops_note": kernel.flops_note, "verdict": "unknown", "efficiency_current": None, "roof_note": None,
    }
    device = board.device
    if device is None or kernel.sm_hz is None or achieved is None or intensity is None:
        return out
    top_emc = max_clocks(device, board.mode)[1]
    roof = ceilings(device, kernel.sm_hz / 1e6, top_emc, board.mode)
    precision = "bf16_tensor" if kernel.flops_parts.get("tensor") else "fp32"
    if roof is None or precision not in roof.peak_flops_per_s:
        return out
    bound = "memory-bound" if intensity < roof.ridge_flop_per_byte[precision] else "compute-bound"
    attainable = min(roof.peak_flops_per_s[precision], roof.bandwidth_bytes_per_s * intensity)
    efficiency = achieved / attainable
    if above_every_roof(efficiency):
        out.update({"verdict": IMPOSSIBLE, "precision": precision, "roof_note": impossible_note(efficiency)})
        return out
    out.update({"verdict": bound, "precision": precision, "efficiency_current": efficiency})
    return out


def probe_json(probe: Probe, board: Board) -> dict[str, Any]:
    """The measured ceilings beside the datasheet's at the mode's maximum clocks (labelled)."""
    top = None if board.device is None else max_ceilings(board.device, board.mode)
    measured = {"bandwidth_bytes_per_s": {name: c.value for name, c in probe.bandwidth.items()},
                "peak_flops_per_s": {name: c.value for name, c in probe.compute.items()},
                "gpu_mhz": {name: None if c.gpu_mhz is None else c.gpu_mhz.mean
                            for name, c in probe.compute.items()}}
    datasheet = None if top is None else {
        "gpu_mhz": top.gpu_mhz, "emc_mhz": top.emc_mhz, "bandwidth_bytes_per_s": top.bandwidth_bytes_per_s,
        "peak_flops_per_s": dict(top.peak_flops_per_s)}
    return {"label": probe.summary(), "backend": probe.backend, "device_kind": probe.device_kind,
            "measured": measured, "datasheet": datasheet}


def report_file(
    path: str, *, tz: tzinfo, interval_s: float | None, config: Config, stats: ReadStats | None = None,
    trtexec: TrtexecRun | None = None, workload: Workload | None = None, kernels: Sequence[Kernel] = (),
    probe: Probe | None = None, placement: RunPlacement | None = None, tz_given: bool = False,
) -> dict[str, Any]:
    """The report of a recording or a plain tegrastats log file (``jroof-tui report``, and each
    item of ``compare``): its header describes the board, the config gives the device database,
    ``--device``/``--power-mode`` and fresh detectors; without ``trtexec``, the trtexec output
    ``run`` kept beside the file is read and placed (``source.trtexec`` names it;
    ``source.trtexec_unread`` says why it could not be used). ``placement``: where ``trtexec`` lies
    on the file (``commands.options.placed_trtexec``; placed here when not given). A plain log
    fitted to trtexec's run is read at the fitted interval. ``source`` says how the run was placed
    (``log_start``, ``log_start_source``, ``trtexec_note``). Raises OSError (a missing or
    non-regular file included) and ``logfile.RecordingError``."""
    if not os.path.isfile(path):
        raise OSError(errno.ENOENT if not os.path.exists(path) else errno.EINVAL,
                      "No such file or directory" if not os.path.exists(path) else "not a regular file")
    header = read_header(path)

    def lines() -> Iterator[str]:
        with open_text(path) as stream:
            yield from stream

    source: dict[str, Any] = {"file": path, "format": "tegrastats log" if header is None else "recording"}
    if header is not None:
        source.update({key: header.get(key) for key in ("model", "host") if header.get(key)})
    kept = kept_output(path) if trtexec is None else None
    if kept is not None:
        try:
            trtexec = read_trtexec(kept, tz)
            placement = place_on_file(trtexec, kept, path, tz=tz, interval_s=interval_s, log_start=None)
            source["trtexec"] = kept
        except TrtexecError as exc:  # e.g. trtexec stopped before its summary: the run still counts
            trtexec = None
            source["trtexec_unread"] = str(exc)
    if trtexec is not None and placement is None:  # a run given without its placement
        placement = place_on_file(trtexec, "trtexec log", path, tz=tz, interval_s=interval_s, log_start=None)
    if trtexec is not None and placement is not None:
        source.update(placement_source(placement, tz))
        if placement.interval_s is not None:
            interval_s = placement.interval_s
    return build_report(lines, source=source, tz=tz, interval_s=interval_s, stats=stats,
                        info=SourceInfo.from_mapping(header or {}, source="replay"),
                        config=config, trtexec=trtexec, workload=workload,
                        kernels=kernels, probe=probe, placement=placement, tz_given=tz_given)


def event_json(event: Event, origin: float | None, tz: tzinfo) -> dict[str, Any]:
    """A detector's event: ``kind``, ``unit``, ``reason``, ``start``/``end`` (ISO, null without
    stamps), ``start_s``/``end_s`` from the run's start, ``duration_s``."""
    start, end = event.start_mono, event.t_mono
    return {
        "kind": event.kind,
        "unit": event.unit,
        "reason": event.detail,
        "cause_source": cause_source(event),
        "start": iso_at(event.start_wall, tz),
        "end": iso_at(event.t_wall, tz),
        "start_s": None if start is None or origin is None else start - origin,
        "end_s": None if end is None or origin is None else end - origin,
        "duration_s": None if start is None or end is None else end - start,
    }


def span_json(
    span: SpanStats, origin: float | None, tz: tzinfo, pipeline: Pipeline, idle_w: float | None = None,
    workload: Workload | None = None, probe: Probe | None = None,
) -> dict[str, Any]:
    """One span's row; its throttled time and roof placement are the pipeline's queries (``probe``:
    its measured energy terms give its mode's energy line)."""
    def offset(t: float | None) -> float | None:
        return None if t is None or origin is None else t - origin

    total_source, total_note = energy_rests_on(span.energy_total_source, span.energy_note or "",
                                               pipeline.info.timing)
    rails: dict[str, dict[str, float | None]] = {
        name: {"mean": _w(span.rail_mean_mw(name)), "peak": _w(span.rail_peak_mw.get(name))}
        for name in sorted(set(span.rails_j) | set(span.rail_peak_mw))
    }
    return {
        "name": span.name,
        "start": iso_at(span.first_wall, tz),
        "end": iso_at(span.last_wall, tz),
        "start_s": offset(span.first_mono),
        "end_s": offset(span.last_mono),
        "duration_s": span.duration_s,
        "observed_s": span.observed_s,
        "samples": span.samples,
        "gaps": span.gaps,
        "energy_source": span.energy_source,
        "energy_total_source": total_source,
        "energy_note": total_note or None,
        "power_period_s": span.power_period_s,
        "open": span.is_open,
        "energy_j": {"total": span.energy_j, "rails": dict(sorted(span.rails_j.items()))},
        "power_w": {"mean": _w(span.mean_mw), "peak": _w(span.peak_mw), "rails": rails},
        "ceilings": _ceilings(span, pipeline.board),
        "loads": {"gpu_pct": span.mean_gpu_load_pct, "emc_pct": span.mean_emc_load_pct},
        "throttled_s": pipeline.throttled_s(span),
        "workload": _workload(span, idle_w),
        "roofline": None if span.iterations is None else _roofline(pipeline.placement(span, workload),
                                                                   pipeline.board, probe),
        "processes": [process.as_json() for process in span.processes],
    }


def _idle_power_w(phases: list[SpanStats]) -> float | None:
    """Mean power over the phases named ``idle*`` (their energy ÷ their time), or None."""
    idle = [p for p in phases if p.name.lower().startswith("idle") and p.duration_s > 0]
    joules = [p.work_energy()[0] for p in idle]
    if not idle or any(j is None for j in joules):
        return None
    return sum(j or 0.0 for j in joules) / sum(p.duration_s for p in idle)


def _workload(span: SpanStats, idle_w: float | None) -> dict[str, Any] | None:
    """Throughput and energy per iteration where the workload reported its iterations."""
    if not span.iterations:
        return None
    joules, measured = span.work_energy()
    per_iter = None if joules is None else joules / span.iterations
    above_idle = None
    if joules is not None and idle_w is not None:
        above_idle = (joules - idle_w * span.duration_s) / span.iterations
    return {
        "iterations": span.iterations,
        "throughput_per_s": span.iterations / span.duration_s if span.duration_s > 0 else None,
        "j_per_iter": per_iter,
        "j_per_iter_above_idle": above_idle,
        "j_per_iter_note": None if joules is not None  # the span's own reason where it has one
        else span.energy_note or "no rail measures this span's input energy",
        "energy_measures": measured,
    }


def _roofline(placement: Placement, board: Board, probe: Probe | None) -> dict[str, Any]:
    return {
        "verdict": placement.verdict,
        "verdict_basis": placement.verdict_basis,
        "precision": placement.precision,
        "achieved_flops_per_s": placement.achieved_flops_per_s,
        "achieved_bytes_per_s": placement.achieved_bytes_per_s,
        "intensity_flop_per_byte": placement.intensity_flop_per_byte,
        "efficiency_current": placement.efficiency_current,
        "efficiency_max": placement.efficiency_max,
        "note": placement.note,
        "from_workload": list(placement.from_workload),
        "j_per_op": placement.j_per_op,
        **energy_json(board.device, board.mode, placement.precision, placement.intensity_flop_per_byte,
                      probe),
    }


def _basis_line(name: str, roof: dict[str, Any]) -> str:
    """What a phase's verdict rests on, and the mode its energy roofline finds cheapest (md)."""
    cheapest = roof.get("energy_cheapest_mode")
    cheap = f"; cheapest mode at its intensity (energy roofline): {md_cell(cheapest)}" if cheapest else ""
    return f"- {md_cell(name)}: {roof['verdict']}, {md_cell(roof['verdict_basis'])}{cheap}"


def _ceilings(span: SpanStats, board: Board) -> dict[str, Any] | None:
    """The roof at the span's mean clocks (null without a known device or without clocks)."""
    if board.device is None:
        return None
    roof = ceilings(board.device, span.mean_gpu_mhz, span.mean_emc_mhz, board.mode)
    if roof is None:
        return None
    return {
        "gpu_mhz": roof.gpu_mhz,
        "emc_mhz": roof.emc_mhz,
        "sms": roof.sms,
        "bandwidth_bytes_per_s": roof.bandwidth_bytes_per_s,
        "peak_flops_per_s": dict(roof.peak_flops_per_s),
        "ridge_flop_per_byte": dict(roof.ridge_flop_per_byte),
    }


def _w(mw: float | None) -> float | None:
    return None if mw is None else mw / 1000.0


# ------------------------------------------------------------------------------------ renderers


def _num(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _watts(power: dict[str, Any]) -> str:
    """`` (mean / peak)`` W of a rail, or the one of them known (a one-sample span has no mean)."""
    mean, peak = power.get("mean"), power.get("peak")
    if mean is not None and peak is not None:
        return f" ({mean:.2f} / {peak:.2f})"
    if peak is not None:
        return f" (peak {peak:.2f})"
    return "" if mean is None else f" (mean {mean:.2f})"


def _energy(joules: float | None) -> str:
    """Energy with its unit, in mJ below a joule (``16.6 mJ``, ``1.157 J``)."""
    if joules is None:
        return ""
    return f"{joules * 1e3:.3g} mJ" if abs(joules) < 1 else f"{joules:.4g} J"


def _spans(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [report["whole"], *report["phases"]]


def to_markdown(report: dict[str, Any]) -> str:
    source = report["source"]
    out = [f"# jroof report: {md_cell(str(source.get('file', '')))}", ""]
    if source.get("model"):
        out += [f"Board: {md_cell(str(source['model']))}", ""]
    device = report["device"] or "unknown"
    if report.get("device_source") == "inferred":
        device += " (inferred)"
    elif report.get("device_candidates"):
        device += " (inferred candidates: " + ", ".join(report["device_candidates"]) + ")"
    mode = report["power_mode"] or "unknown"
    if report.get("power_mode_source") == "inferred":
        mode += " (inferred)"
    out += [f"Device: {md_cell(device)} · power mode: {md_cell(mode)}"
            + (f" ({md_cell(report['device_note'])})" if report["device_note"] else ""), ""]
    out += [f"Throttle detection: {report['throttle_detection']} "
            f"({md_cell(report['throttle_detection_note'])})", ""]
    if report.get("power_mode_note"):
        out += [f"Power mode note: {md_cell(report['power_mode_note'])}", ""]
    out += markdown_block(report)
    if report.get("power_mode_check"):
        out += [f"Power mode check: {md_cell(report['power_mode_check'])}", ""]
    out += [
        "| span | start | duration s | observed s | samples | gaps | throttled s | energy J | mean W "
        "| peak W |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for span in _spans(report):
        start = span["start"] or (f"+{span['start_s']:.1f} s" if span["start_s"] is not None else "")
        name = md_cell(span["name"]) + (" (open)" if span["open"] else "")
        out.append(
            f"| {name} | {start} | {span['duration_s']:.1f} | {_num(span['observed_s'], 1) or '—'} "
            f"| {span['samples']} | {span['gaps']} "
            f"| {span['throttled_s']:.1f} "
            f"| {_num(span['energy_j']['total'], 1) or '—'} | {_num(span['power_w']['mean'], 2) or '—'} "
            f"| {_num(span['power_w']['peak'], 2) or '—'} |"
        )
    if report["whole"]["energy_j"]["total"] is None:
        out += ["", "No rail measures the total input power here: energy per rail only (—: none)."]
    out += _energy_sources(_spans(report))
    out += _other_processes(_spans(report))
    rails = sorted({name for span in _spans(report) for name in span["energy_j"]["rails"]})
    if rails:
        out += ["", "Energy per rail (J; mean W / peak W):", "",
                "| span | " + " | ".join(md_cell(r) for r in rails) + " |",
                "|---|" + "---:|" * len(rails)]
        for span in _spans(report):
            cells = []
            for rail in rails:
                joules = span["energy_j"]["rails"].get(rail)
                power = span["power_w"]["rails"].get(rail, {})
                cells.append("" if joules is None else f"{_num(joules, 1)}{_watts(power)}")
            out.append(f"| {md_cell(span['name'])} | " + " | ".join(cells) + " |")
    worked = [span for span in report["phases"] if span["workload"] is not None]
    if worked:
        out += ["", "Workload (from the work it reported):", "",
                "| phase | iterations | per s | energy per iteration | above idle | verdict | achieved | "
                "intensity | of roof now | at max clocks |",
                "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
        for span in worked:
            work, roof = span["workload"], span["roofline"] or {}
            achieved = roof.get("achieved_flops_per_s")
            intensity = roof.get("intensity_flop_per_byte")
            rate = rate_word(roof.get("precision")) + "/s"
            out.append(
                f"| {md_cell(span['name'])} | {work['iterations']:g} | {_num(work['throughput_per_s'], 1)} "
                f"| {_energy(work['j_per_iter'])} | {_energy(work['j_per_iter_above_idle'])} "
                f"| {roof.get('verdict', 'unknown')} "
                f"| {'' if achieved is None else fmt_si_unit(achieved, rate)} "
                f"| {_num(intensity, 1)} | {_pct(roof.get('efficiency_current'))} "
                f"| {_pct(roof.get('efficiency_max'))} |")
        above = [span for span in worked if (span["roofline"] or {}).get("verdict") == IMPOSSIBLE]
        out += [""] * bool(above) + [f"- {md_cell(span['name'])}: {IMPOSSIBLE}, "
                                     f"{md_cell(span['roofline']['note'])}" for span in above]
        based = [(span["name"], span["roofline"]) for span in worked
                 if (span["roofline"] or {}).get("verdict_basis")]
        out += [""] * bool(based) + [_basis_line(name, roof) for name, roof in based]
    out += workload_notes(report)
    if report.get("ncu"):
        out += ["", "Kernels (Nsight Compute's own FLOPs, DRAM bytes and duration):", "",
                "| kernel | precision | duration ms | achieved | intensity | SM MHz | verdict | of roof |",
                "|---|---|---:|---:|---:|---:|---|---:|"]
        for kernel in report["ncu"]:
            achieved = kernel.get("achieved_flops_per_s")
            out.append(
                f"| {md_cell(kernel['name'])} | {kernel.get('precision') or ''} "
                f"| {_num(kernel['duration_s'] * 1000, 3)} "
                f"| {'' if achieved is None else fmt_si_unit(achieved, 'FLOP/s')} "
                f"| {_num(kernel.get('intensity_flop_per_byte'), 1)} | {_num(kernel.get('sm_mhz'), 0)} "
                f"| {kernel.get('verdict', 'unknown')} | {_pct(kernel.get('efficiency_current'))} |")
        out += [f"- {md_cell(kernel['name'])}: {md_cell(kernel[key])}" for kernel in report["ncu"]
                for key in ("flops_note", "roof_note") if kernel.get(key)]
    probe = report.get("probe")
    if probe:
        measured, sheet = probe["measured"], probe.get("datasheet") or {}
        out += ["", f"Measured roof: {md_cell(probe['label'])}", ""]
        for name, rate in measured.get("bandwidth_bytes_per_s", {}).items():
            ref = sheet.get("bandwidth_bytes_per_s")
            of = f" ({rate / ref:.0%} of the datasheet roof's {fmt_si_unit(ref, 'B/s')})" if ref else ""
            out.append(f"- bandwidth {name}: {fmt_si_unit(rate, 'B/s')}{of}")
        for name, rate in measured.get("peak_flops_per_s", {}).items():
            unit = "OP/s" if name.startswith("int8") else "FLOP/s"
            ref = (sheet.get("peak_flops_per_s") or {}).get(name)
            mhz = (measured.get("gpu_mhz") or {}).get(name)
            at = f" at {mhz:.0f} MHz" if mhz else ""
            at_max = f" at {sheet['gpu_mhz']:.0f} MHz" if sheet.get("gpu_mhz") else ""
            of = (f" ({rate / ref:.0%} of the datasheet roof's {fmt_si_unit(ref, unit)}{at_max})"
                  if ref else "")
            out.append(f"- {name}: {fmt_si_unit(rate, unit)}{at}{of}")
    if report["events"]:
        legend = "; ".join(f"{kind.name}: {kind.meaning}" for kind in EVENT_KINDS if kind.held)
        out += ["", f"Clock events ({legend}):", ""]
        for event in report["events"]:
            where = event["start"] or (f"+{event['start_s']:.1f} s" if event["start_s"] is not None else "")
            cause = f" (cause {event['cause_source']})" if event.get("cause_source") else ""
            out.append(f"- {where}, {event['duration_s'] or 0:.1f} s: {event['kind']} {event['unit']}: "
                       f"{md_cell(event['reason'])}{cause}")
    out += ["", "Energy: integrated between each span's own edges (readings interpolated there, or an "
            "energy counter's difference); gaps are counted, never bridged."]
    return "\n".join(out) + "\n"


def _energy_sources(spans: list[dict[str, Any]]) -> list[str]:
    """The line naming what measured each span's energy (once where one stream measured them all)."""
    named = [(span["name"], span["energy_source"]) for span in spans if span.get("energy_source")]
    if not named:
        return []
    if len({source for _, source in named}) == 1:
        return ["", f"Energy measured by {md_cell(named[0][1])}."]
    said = "; ".join(f"{md_cell(name)}: {md_cell(source)}" for name, source in named)
    return ["", f"Energy measured by: {said}."]


def _other_processes(spans: list[dict[str, Any]]) -> list[str]:
    """One line: the processes not the benchmark's above the threshold, per span (none where the
    recording has no process readings)."""
    if not any(span.get("processes") for span in spans):
        return []
    busy = [(span["name"], ", ".join(f"{md_cell(p['name'])} (pid {p['pid']}) {p['cpu_percent_mean']:.0f}%"
                                     for p in span["processes"] if not p["benchmark"]
                                     and (p["cpu_percent_mean"] or 0.0) >= FOREIGN_PROCESS_PCT))
            for span in spans]
    said = "; ".join(f"{md_cell(name)}: {found}" for name, found in busy if found) or "none"
    return ["", f"Other processes above {FOREIGN_PROCESS_PCT:g}% of a core: {said}."]


def _pct(fraction: float | None) -> str:
    return "" if fraction is None else f"{fraction:.0%}"


#: What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(text: str) -> str:
    """A text cell of a CSV (a phase or rail name from a file), quoted with ``'`` where it would
    start a formula (a spreadsheet opening the export must not run ``=HYPERLINK(...)``), and what
    a terminal acts on written as its escape (``model.jsonsafe.shown_text``): the CSV goes to
    stdout, a raw ESC or bidi override must not drive the terminal it is shown on."""
    return shown_text("'" + text if text.startswith(FORMULA_STARTS) else text)


def to_csv(report: dict[str, Any]) -> str:
    rails = sorted({name for span in _spans(report) for name in span["energy_j"]["rails"]})
    fields = ["name", "start", "end", "start_s", "end_s", "duration_s", "observed_s", "samples", "gaps",
              "open", "throttled_s", "energy_j", "energy_total_source", "power_mean_w", "power_peak_w"]
    for rail in rails:
        fields += [f"energy_j_{rail}", f"power_mean_w_{rail}", f"power_peak_w_{rail}"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*map(shown_text, fields), *CSV_COLUMNS])
    sources = [spreadsheet_text(value) if isinstance(value, str) else value for value in csv_values(report)]
    for span in _spans(report):
        row: list[Any] = [spreadsheet_text(span["name"]), span["start"] or "", span["end"] or "",
                          _num(span["start_s"], 3), _num(span["end_s"], 3), _num(span["duration_s"], 3),
                          _num(span["observed_s"], 3), span["samples"], span["gaps"], int(span["open"]),
                          _num(span["throttled_s"], 3), _num(span["energy_j"]["total"], 3),
                          spreadsheet_text(span["energy_total_source"] or ""),
                          _num(span["power_w"]["mean"], 3), _num(span["power_w"]["peak"], 3)]
        for rail in rails:
            power = span["power_w"]["rails"].get(rail, {})
            row += [_num(span["energy_j"]["rails"].get(rail), 3), _num(power.get("mean"), 3),
                    _num(power.get("peak"), 3)]
        writer.writerow([*row, *sources])
    return buffer.getvalue()
