"""trtexec's part of ``report``: its timed phase's figures, the whole run's work, how its run was
placed on the file (``source``) and its own figures with the log's coverage of its timed window
(the top-level ``trtexec``). The placement itself is ``formats.trtexec_span``'s: read here, never
recomputed."""

from __future__ import annotations

from datetime import tzinfo
from typing import Any

from jtop_roof.formats.trtexec import TrtexecRun
from jtop_roof.formats.trtexec_span import RunPlacement
from jtop_roof.model.info import MEASURED
from jtop_roof.outputs.text import iso_at, md_cell


def timed_by_trtexec(span: dict[str, Any], run: TrtexecRun | None,
                      placement: RunPlacement | None) -> dict[str, Any]:
    """The ``timed`` phase's throughput is trtexec's own (its Throughput line, else N ÷ walltime);
    its energy per inference is withheld (null, and ``j_per_iter_note`` says why) where the log
    covers less than ``MIN_COVERAGE`` of the timed window (the energy of part of the window over
    all its queries would read low), where that coverage rests on an assumed interval, or where a
    plain log fitted to trtexec's run fails its check; where it is given from a fitted log,
    ``j_per_iter_note`` says it rests on the fit (``RunPlacement.per_inference_note``)."""
    workload = span.get("workload")
    if run is None or span["name"] != "timed" or workload is None:
        return span
    if run.throughput_per_s:
        workload["throughput_per_s"] = run.throughput_per_s
        workload["throughput_source"] = f"trtexec ({run.throughput_source})"
    if placement is not None and not placement.per_inference_usable:
        workload["j_per_iter"] = workload["j_per_iter_above_idle"] = None
    if placement is not None and placement.per_inference_note is not None:
        workload["j_per_iter_note"] = placement.per_inference_note
    return span


#: Why the whole run of a trtexec log gives no energy per inference.
WHOLE_OF_TRTEXEC = ("iterations counted only in `timed` (trtexec's timed queries; its build and "
                    "warm-up queries are not counted): see that phase")


def whole_by_trtexec(span: dict[str, Any], run: TrtexecRun | None) -> dict[str, Any]:
    """The whole run of a trtexec log: its work is trtexec's timed count, which lies in the
    ``timed`` phase only, so the whole run's energy (build and warm-up included) over it, or its
    length over it, is no per-inference figure: null, with the note saying where to look."""
    workload = span.get("workload")
    if run is None or workload is None:
        return span
    workload["throughput_per_s"] = workload["j_per_iter"] = workload["j_per_iter_above_idle"] = None
    workload["j_per_iter_note"] = WHOLE_OF_TRTEXEC
    span["roofline"] = None
    return span


def placement_source(placement: RunPlacement, tz: tzinfo) -> dict[str, Any]:
    """How trtexec's run was placed on the file, for ``source``: a plain log's ``log_start`` (ISO)
    and ``log_start_source`` (``given``: ``--log-start``; ``inferred``: fitted to trtexec's run),
    and ``trtexec_note`` (overlap, fitting, coverage), each only where it applies."""
    out: dict[str, Any] = {}
    if placement.log_start_source != MEASURED:
        out["log_start"] = iso_at(placement.log_start, tz)
        out["log_start_source"] = placement.log_start_source
    if placement.note is not None:
        out["trtexec_note"] = placement.note
    return out


def trtexec_json(run: TrtexecRun, placement: RunPlacement | None) -> dict[str, Any]:
    """trtexec's own figures, and how much of its timed window the file covers: ``coverage`` (0 to
    1, null where unknown), ``coverage_source`` and ``coverage_note``; ``unmeasured`` (why the timed
    window measured nothing per query, or null); ``interval_s``/``interval_source`` (``inferred``)
    where a plain log's interval was fitted to the run, else null; ``gpu_compute_mean_s`` and
    ``enqueue_mean_s``: trtexec's mean GPU time and host enqueue time of one query (null where not
    printed), which tell a GPU-bound run from a launch-bound one."""
    return {"iterations": run.iterations, "throughput_per_s": run.throughput_per_s,
            "throughput_source": run.throughput_source, "host_walltime_s": run.host_walltime_s,
            "precision": run.precision, "model": run.model or run.engine,
            "gpu_compute_mean_s": run.gpu_compute_mean_s, "enqueue_mean_s": run.enqueue_mean_s,
            "unmeasured": run.unmeasured,
            "coverage": None if placement is None else placement.coverage,
            "coverage_source": None if placement is None else placement.coverage_source,
            "coverage_note": ("not placed on the log: coverage unknown" if placement is None
                              else placement.coverage_note),
            "interval_s": None if placement is None else placement.interval_s,
            "interval_source": None if placement is None else placement.interval_source}



def workload_notes(report: dict[str, Any]) -> list[str]:
    """trtexec's coverage of its timed window, and why a span gives no energy per iteration."""
    out = []
    trtexec = report.get("trtexec")
    note = None if trtexec is None else trtexec.get("coverage_note")
    # said once: the block of what the figures rest on holds the coverage where it was built
    shown = any(item.get("what") == "trtexec_coverage" for item in report.get("assumptions") or [])
    if trtexec is not None and not shown:
        coverage = trtexec.get("coverage")
        said = "unknown" if coverage is None else f"{coverage:.1%} ({trtexec.get('coverage_source')})"
        out.append(f"- trtexec's timed window covered by the log: {said}"
                   + (f"; {md_cell(note)}" if note else ""))
    for span in [report["whole"], *report["phases"]]:
        work = span.get("workload") or {}
        if work.get("j_per_iter") is None and work.get("j_per_iter_note"):
            why = ("see trtexec coverage above" if note and work["j_per_iter_note"] == note
                   else md_cell(work["j_per_iter_note"]))
            out.append(f"- {md_cell(span['name'])}: no energy per iteration: {why}")
        elif work.get("j_per_iter_note"):
            note = md_cell(work["j_per_iter_note"])
            out.append(f"- {md_cell(span['name'])}: its energy per iteration {note}")
    return ["", *out] if out else []
