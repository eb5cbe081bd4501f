"""Every marker and work report sent to a running monitor is counted exactly once, or its sender is
told: under a burst of processes or threads, and while the monitor's pump is stalled."""

from __future__ import annotations

import os
import socket
import threading

import pytest
from source_support import WAIT_S

from jtop_roof import hook
from jtop_roof.runtime import control
from jtop_roof.runtime.control import DeliveryError, MarkerListener, WorkReport, send_marker, send_work

BURST = 150


def _work_in_child(gate: int, results: int, iterations: int) -> None:
    """A forked benchmark process: wait for the gate to open with the others, report, say what
    the hook returned (its count, or the error it raised), and leave."""
    try:
        os.read(gate, 1)  # every child wakes when the gate's write end closes
        try:
            outcome = str(hook.work(iterations=iterations, flops=1.0e9 * iterations))
        except DeliveryError as exc:
            outcome = f"DeliveryError {exc}"
        os.write(results, f"{iterations} {outcome}\n".encode())
    finally:
        os._exit(0)


def _burst_of_processes(count: int) -> list[tuple[int, str]]:
    """``count`` forked processes call ``hook.work`` at once; what each sent and got back."""
    gate_r, gate_w = os.pipe()
    results_r, results_w = os.pipe()
    children = []
    for index in range(count):
        pid = os.fork()
        if pid == 0:
            os.close(gate_w)
            os.close(results_r)
            _work_in_child(gate_r, results_w, index + 1)
        children.append(pid)
    os.close(gate_r)
    os.close(results_w)
    os.close(gate_w)  # the gate opens for all of them at once
    data = b""
    with os.fdopen(results_r, "rb") as results:
        data = results.read()  # until every child has left
    for pid in children:
        os.waitpid(pid, 0)
    lines = [line.split(" ", 1) for line in data.decode().splitlines()]
    return [(int(sent), outcome) for sent, outcome in lines]


def test_a_burst_of_processes_reporting_work_is_counted_exactly(runtime_dir):
    recorded: list[WorkReport] = []
    marks: list[str | None] = []
    listener = MarkerListener(lambda kind, name: marks.append(name), on_work=recorded.append)
    listener.start()
    try:
        outcomes = _burst_of_processes(BURST)
        # The listener outlived the burst: a later marker is still taken.
        assert send_marker("phase_start", "after the burst") == 1
    finally:
        listener.close()
    assert len(outcomes) == BURST
    assert [outcome for _, outcome in outcomes] == ["1"] * BURST  # each took, none lost nor refused
    assert sum(report.iterations for report in recorded) == sum(sent for sent, _ in outcomes)
    assert sorted(report.iterations for report in recorded) == [float(n) for n in range(1, BURST + 1)]
    assert marks == ["after the burst"]


def test_a_burst_of_threads_reporting_work_is_counted_exactly(runtime_dir):
    recorded: list[WorkReport] = []
    listener = MarkerListener(lambda kind, name: None, on_work=recorded.append)
    listener.start()
    start = threading.Barrier(BURST)
    returned: list[int] = []

    def report(iterations: int) -> None:
        start.wait()
        returned.append(hook.work(iterations=iterations))

    threads = [threading.Thread(target=report, args=(n + 1,)) for n in range(BURST)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        listener.close()
    assert returned == [1] * BURST
    assert sum(report.iterations for report in recorded) == BURST * (BURST + 1) / 2


def test_a_monitor_that_stays_busy_is_an_error_not_zero(runtime_dir, monkeypatch):
    """A monitor that answers ``busy`` took nothing: it is sent to again, and when it stays busy
    the sender is told (the report is not in that recording), never handed a quiet 0."""
    monkeypatch.setattr("jtop_roof.runtime.delivery.BUSY_WAIT_S", 0.0)
    busy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    busy.bind(str(control.control_dir() / f"{os.getpid()}.sock"))
    busy.listen(8)
    answered = threading.Event()

    def answer_busy() -> None:
        conn, _ = busy.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"busy: too many connections; nothing was taken, send again\n")
        answered.set()

    server = threading.Thread(target=answer_busy, daemon=True)
    server.start()
    try:
        with pytest.raises(DeliveryError) as raised:
            send_work(WorkReport(3.0))
    finally:
        busy.close()
    assert answered.wait(WAIT_S)
    assert (raised.value.taken, raised.value.busy, raised.value.unanswered) == (0, 1, 0)
    assert "not taken" in str(raised.value)


def test_a_stalled_pump_still_takes_the_marker_and_says_so(runtime_dir):
    """The monitor's callback blocks (its pump holds the pipeline, a reader of ``record -``
    stopped): the marker is taken, queued in order, and the sender is told it was taken."""
    pump_free = threading.Event()
    recorded: list[str | None] = []

    def on_marker(kind: str, name: str | None) -> None:
        pump_free.wait(WAIT_S)
        recorded.append(name)

    listener = MarkerListener(on_marker)
    listener.start()
    try:
        assert send_marker("phase_start", "during the stall") == 1
        assert send_marker("phase_end", None) == 1
        assert recorded == []  # not yet: the pump is still stalled
        pump_free.set()
    finally:
        listener.close()  # hands over what was taken before it ends
    assert recorded == ["during the stall", None]


def test_mark_says_it_was_taken_while_the_pump_is_stalled(runtime_dir):
    """``jroof-tui mark`` is told the truth: taken (exit 0), not "no monitor took it"."""
    import subprocess
    import sys

    pump_free = threading.Event()
    recorded: list[str | None] = []
    listener = MarkerListener(lambda kind, name: (pump_free.wait(WAIT_S), recorded.append(name)))
    listener.start()
    try:
        result = subprocess.run([sys.executable, "-m", "jtop_roof", "mark", "stalled"], capture_output=True,
                                text=True, timeout=60, env=dict(os.environ))
        pump_free.set()
    finally:
        listener.close()
    assert result.returncode == 0, result.stderr
    assert "no running jroof-tui" not in result.stderr
    assert recorded == ["stalled"]
