"""The replay worker sleeps until the next record is due: one wait per record of a
file that is not followed, not one every POLL_S; a followed file is still polled every POLL_S."""

from __future__ import annotations

from pathlib import Path

from replay_support import FakeTime, source, stamped_lines

from jtop_roof.model.records import Sample
from jtop_roof.sources.replay import POLL_S


def waits_between_samples(tmp_path: Path, seconds: list[int], **kwargs: object) -> tuple[int, list[float]]:
    log = tmp_path / "log.txt"
    log.write_text("".join(stamped_lines(seconds)))
    fake = FakeTime()
    waits: list[float] = []
    plain_sleep = fake.sleep

    def sleep(timeout: float) -> None:
        waits.append(timeout)
        plain_sleep(timeout)

    fake.sleep = sleep  # type: ignore[method-assign]
    src = source(log, fake, **kwargs)
    samples = 0
    for record in src.records():
        samples += isinstance(record, Sample)
        if samples == len(seconds):
            break
    return samples, waits


def test_a_replay_at_1x_waits_once_per_record(tmp_path):
    samples, waits = waits_between_samples(tmp_path, [0, 1, 2, 3])
    assert samples == 4
    assert len(waits) == 3  # 1 s to each record after the first
    assert all(w > POLL_S for w in waits)


def test_a_slow_replay_still_waits_once_per_record(tmp_path):
    samples, waits = waits_between_samples(tmp_path, [0, 1, 2], speed=0.1)  # 10 s between records
    assert samples == 3 and len(waits) == 2


def test_a_followed_file_is_still_polled(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("".join(stamped_lines([0, 1])))
    fake = FakeTime()
    waits: list[float] = []
    plain_sleep = fake.sleep

    def sleep(timeout: float) -> None:
        waits.append(timeout)
        plain_sleep(timeout)
        if len(waits) == 8:
            src.stop()

    fake.sleep = sleep  # type: ignore[method-assign]
    src = source(log, fake, follow=True)
    list(src.records())
    assert waits and all(w <= POLL_S for w in waits)
