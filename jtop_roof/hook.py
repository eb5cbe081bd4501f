"""The reporting hook: a benchmark tells the running monitors what it did, so the roofline point
comes from the work itself (never from GPU load %).

    from jtop_roof import hook

    hook.mark("gemm-bf16")                    # start a phase
    for _ in range(iterations):
        run_gemm(n)
        hook.work(iterations=1, flops=2 * n**3, bytes=3 * n * n * 2, precision="bf16")
    hook.end()                                # end the phase

Each call goes to every ``jroof-tui`` (TUI or headless ``record``) of this user over its per-user
Unix socket (mode 0600; no TCP) and returns how many took it: 0 when none runs, which is not an
error (the benchmark goes on). Values are checked here (ValueError). A call costs a connection per
monitor (about 0.1 ms): for very short iterations, report every N of them with their totals. A
stopped monitor (Ctrl-Z) is skipped. Every report is counted exactly once, under any burst of
callers: a monitor that is busy is sent to again (``control.BUSY_WAIT_S``), and one that runs but
neither took the report nor refused it raises ``DeliveryError`` (an OSError saying how many took
it), never a silent 0; a monitor that does not answer costs at most a second
(``control.REPLY_WAIT_S``), never a hang.
Nothing here imports Textual.
"""

from __future__ import annotations

from jtop_roof.model.records import MAX_WORK_ITERATIONS
from jtop_roof.runtime.control import ControlError, WorkReport, send_marker, send_work
from jtop_roof.runtime.control import DeliveryError as DeliveryError


def work(iterations: float = 1, flops: float | None = None, bytes: float | None = None,
         precision: str | None = None) -> int:
    """Add ``iterations`` (and their FLOPs and DRAM bytes, in total) to the running phase.
    ValueError for a value out of range or not a number (``10**400`` too: no float holds it);
    ``DeliveryError`` when a running monitor did not take it."""
    try:
        count = float(iterations)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"work 'iterations' must be a number from 0 to {MAX_WORK_ITERATIONS:g}, "
                         f"got {type(iterations).__name__}") from None
    try:
        return send_work(WorkReport(count, flops, bytes, precision))
    except ControlError:
        return 0


def mark(name: str | None = None) -> int:
    """Start a phase (``phase N`` when unnamed)."""
    try:
        return send_marker("phase_start", name)
    except ControlError:
        return 0


def end() -> int:
    """End the running phase."""
    try:
        return send_marker("phase_end", None)
    except ControlError:
        return 0
