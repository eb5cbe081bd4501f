"""The source thread's records go to the event loop in batches (tui.streams.Batcher): readings
between samples wait for the next sample, or go alone once the oldest has waited a second."""

from __future__ import annotations

from jtop_roof.model.records import Marker, PowerReading, ProcessReading, Record, Sample
from jtop_roof.tui.streams import READINGS_WAIT_S, Batcher


def _reading(t: float) -> PowerReading:
    return PowerReading(None, t, {"VDD_IN": 5000.0}, {}, "INA3221 hwmon", 0.2)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _batcher() -> tuple[Batcher, list[tuple[Record, ...]], _Clock]:
    posted: list[tuple[Record, ...]] = []
    clock = _Clock()
    return Batcher(posted.append, hold_readings=True, clock=clock), posted, clock


def test_readings_wait_for_the_next_sample_and_go_with_it_in_order():
    batcher, posted, clock = _batcher()
    readings = [_reading(0.2 * k) for k in range(4)]
    processes = ProcessReading(None, 0.7, [], "/proc", 5.0)
    for reading in readings[:2]:
        batcher.add(reading)
        clock.now += 0.2
    batcher.add(processes)
    batcher.add(readings[2])
    assert posted == []
    sample = Sample(t_mono=1.0)
    batcher.add(sample)
    assert posted == [(readings[0], readings[1], processes, readings[2], sample)]
    batcher.add(readings[3])
    assert len(posted) == 1


def test_a_sample_marker_or_event_alone_goes_at_once():
    batcher, posted, _ = _batcher()
    sample, marker = Sample(t_mono=1.0), Marker("phase_start", "a", None, 1.5)
    batcher.add(sample)
    batcher.add(marker)
    assert posted == [(sample,), (marker,)]


def test_readings_go_alone_once_the_oldest_has_waited_the_limit():
    """A main source that stalls: power still reaches the screen, once a second."""
    batcher, posted, clock = _batcher()
    first, second = _reading(0.0), _reading(0.2)
    batcher.add(first)
    clock.now += READINGS_WAIT_S - 0.01
    batcher.add(second)
    assert posted == []
    clock.now += 0.01
    third = _reading(0.4)
    batcher.add(third)
    assert posted == [(first, second, third)]


def test_flush_posts_what_is_gathered_and_nothing_when_empty():
    batcher, posted, _ = _batcher()
    batcher.flush()
    assert posted == []
    reading = _reading(0.0)
    batcher.add(reading)
    batcher.flush()
    batcher.flush()
    assert posted == [(reading,)]


def test_a_seeks_records_go_as_one_message_while_more_follow():
    """A replay's seek hands out its event and backfill at once (``ReplayControls.backfilling``):
    the pump posts them in one message, with the last, not 1,200."""
    posted: list[tuple[Record, ...]] = []
    following = [True]
    batcher = Batcher(posted.append, hold_readings=False, clock=_Clock(), more_follow=lambda: following[0])
    backfill = [Sample(t_mono=float(t)) for t in range(5)]
    for sample in backfill[:-1]:
        batcher.add(sample)
    assert posted == []
    following[0] = False
    batcher.add(backfill[-1])
    assert posted == [tuple(backfill)]


def test_a_replay_holds_no_reading_back():
    """Paused, or at a file's end, nothing would come to take a held reading on: a seek whose last
    backfilled record is a power reading is posted whole, and a reading alone goes at once."""
    posted: list[tuple[Record, ...]] = []
    following = [True]
    batcher = Batcher(posted.append, hold_readings=False, clock=_Clock(), more_follow=lambda: following[0])
    seek = [Sample(t_mono=0.0), _reading(0.2)]
    batcher.add(seek[0])
    following[0] = False
    batcher.add(seek[1])
    assert posted == [tuple(seek)]
    reading = _reading(0.4)
    batcher.add(reading)
    assert posted[-1] == (reading,)
