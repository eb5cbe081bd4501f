"""The one lifecycle (``Runtime.run``) and ``run``'s one command-phase rule: the order of a
consumer's hooks, a failing source said once, a source that ends leaving ``serve`` going until it is
stopped, the signals given back, and the phase's start and end as both the monitor and
``run --headless`` take them."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, Marker, Record, Sample
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.lifecycle import CommandPhase, Consumer, Outcome
from jtop_roof.runtime.runtime import build_pipeline, start_runtime
from jtop_roof.sources.base import Source


class Listed(Source):
    """Yields its items (an Exception item is raised), then ends, or waits for ``stop``."""

    kind = "test"

    def __init__(self, items: list[Record | Exception], *, then_wait: bool = False) -> None:
        self.items, self.then_wait = items, then_wait
        self.stopped = threading.Event()

    def records(self) -> Iterator[Record]:
        for item in self.items:
            if isinstance(item, Exception):
                raise item
            yield item
        if self.then_wait:
            self.stopped.wait(10.0)

    def stop(self) -> None:
        self.stopped.set()


class Told(Consumer):
    """Keeps each hook's call, in order."""

    def __init__(self, pipeline, *, status: int | None = None) -> None:
        super().__init__(pipeline)
        self.calls: list[str] = []
        self.outcome: Outcome | None = None
        self.status = status

    def started(self) -> None:
        self.calls.append("started")

    def deliver(self, record: Record) -> None:
        super().deliver(record)
        self.calls.append("deliver")

    def source_failed(self, error: str) -> None:
        self.calls.append(f"source_failed {error}")

    def ending(self, stopped_at) -> None:
        self.calls.append("ending")

    def ended(self, outcome: Outcome) -> int:
        self.calls.append("ended")
        self.outcome = outcome
        return super().ended(outcome) if self.status is None else self.status

    def close(self) -> bool:
        self.calls.append("close")
        return True


def run(items: list[Record | Exception], **options) -> tuple[int, Told]:
    source = Listed(items, then_wait=options.pop("then_wait", False))
    runtime, _ = start_runtime(source, Config())
    told = Told(runtime.pipeline)
    return runtime.run(told, signals=(), **options), told


def test_the_hooks_come_in_order_and_a_source_that_ends_is_no_failure():
    status, told = run([Sample(t_mono=0.0), Sample(t_mono=1.0)])
    assert status == 0
    assert told.calls == ["started", "deliver", "deliver", "ending", "ended", "close"]
    assert told.outcome is not None and told.outcome.failed is None


def test_a_source_that_raises_is_said_once_before_the_end_and_fails_the_run():
    status, told = run([Sample(t_mono=0.0), RuntimeError("tegrastats died")])
    assert status == 1
    assert told.calls == ["started", "deliver", "source_failed RuntimeError: tegrastats died", "ending",
                          "ended", "close"]
    assert told.outcome is not None and told.outcome.failed == "source failed: RuntimeError: tegrastats died"


def test_a_stream_that_ends_on_a_source_error_fails_unless_it_was_asked_to_stop():
    error = Event("source_error", "cannot run tegrastats", None, 1.0)
    status, told = run([Sample(t_mono=0.0), error])
    assert status == 1 and told.outcome is not None and told.outcome.failed == "cannot run tegrastats"
    stop = threading.Event()
    stop.set()
    status, told = run([Sample(t_mono=0.0), error], stop=stop)
    assert status == 0 and told.outcome is not None and told.outcome.asked_to_stop


def test_a_lingering_run_outlives_its_source_until_it_is_stopped():
    stop = threading.Event()
    result: list[tuple[int, Told]] = []
    thread = threading.Thread(target=lambda: result.append(run([Sample(t_mono=0.0)], stop=stop, linger=True)))
    thread.start()
    thread.join(1.0)
    assert thread.is_alive() and not result  # the source ended; serving goes on
    stop.set()
    thread.join(10.0)
    assert result and result[0][0] == 0 and result[0][1].calls[-2:] == ["ended", "close"]


def test_a_lingering_run_ends_at_once_when_its_source_fails():
    status, _ = run([RuntimeError("gone")], linger=True)
    assert status == 1


def test_a_consumer_that_cannot_close_fails_the_run():
    source = Listed([Sample(t_mono=0.0)])
    runtime, _ = start_runtime(source, Config())

    class Unclosed(Consumer):
        def close(self) -> bool:
            return False

    assert runtime.run(Unclosed(runtime.pipeline), signals=()) == 1


def test_the_stop_signals_are_given_back():
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    source = Listed([Sample(t_mono=0.0)])
    runtime, _ = start_runtime(source, Config())
    seen: list[object] = []

    class Looking(Consumer):
        def started(self) -> None:
            seen.append(signal.getsignal(signal.SIGTERM))

    assert runtime.run(Looking(runtime.pipeline), signals=(signal.SIGINT, signal.SIGTERM)) == 0
    assert seen and seen[0] is not before[signal.SIGTERM]  # taken while it ran
    assert {signum: signal.getsignal(signum) for signum in before} == before


# ---------------------------------------------------------------------------- the command's phase


def pipeline(*, replayed: bool):
    return build_pipeline(Config(), SourceInfo("replay" if replayed else "test"), replayed=replayed)


def test_a_live_stream_starts_the_commands_phase_at_once_a_replay_at_its_first_sample():
    live, replay = CommandPhase("sleep 2"), CommandPhase("sleep 2")
    assert live.starts_now(pipeline(replayed=False))
    assert not live.starts_at(Sample(t_mono=0.0), pipeline(replayed=False))  # started already
    replayed = pipeline(replayed=True)
    assert not replay.starts_now(replayed)
    assert not replay.starts_at(Sample(t_mono=0.0, is_sample=False), replayed)  # not a sample
    assert replay.starts_at(Sample(t_mono=1.0), replayed)
    assert not replay.starts_at(Sample(t_mono=2.0), replayed)  # once


def test_the_commands_own_first_phase_takes_the_place_of_the_run_phase():
    phase, replayed = CommandPhase("python3 bench.py"), pipeline(replayed=True)
    replayed.ingest(Sample(t_mono=0.0, is_sample=False))
    replayed.ingest(Marker("phase_start", "warmup", None, 0.0, "script"))
    assert not phase.starts_at(Sample(t_mono=1.0), replayed)


def test_the_commands_end_ends_its_phase_only_while_it_is_the_one_open():
    phase = CommandPhase("sleep 2")
    assert phase.ends("sleep 2")
    assert not phase.ends("warmup") and not phase.ends(None)


def test_runs_workload_starts_only_once_the_stop_signals_are_ours(tmp_path) -> None:
    """A SIGTERM that comes as ``run --headless`` starts its workload must reach the lifecycle (the
    recording closes, the workload is ended), never the default handler (jroof killed alone)."""
    from jtop_roof.formats.recorder import Recorder
    from jtop_roof.runtime.headless import run_headless

    seen: list[object] = []
    stop = threading.Event()

    def start_workload() -> None:
        seen.append(signal.getsignal(signal.SIGTERM))
        stop.set()

    source = Listed([Sample(t_wall=1.0, t_mono=1.0)], then_wait=True)
    status = run_headless(source, Recorder(tmp_path / "run.jsonl", {"source": "test"}), None,
                          stop_event=stop, on_listening=start_workload)
    assert status == 0 and len(seen) == 1
    assert seen[0] not in (signal.SIG_DFL, signal.SIG_IGN, None), seen
    assert signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, signal.SIG_IGN)  # given back after
