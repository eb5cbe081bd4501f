"""What the replay tests share (test modules import this, never one another): a fake clock whose
sleep advances it, stamped tegrastats lines of the demo log, and a replay on that clock."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from jtop_roof.sources.replay import ReplaySource

DEMO_LOG = Path(__file__).resolve().parents[1] / "jtop_roof" / "sources" / "data" / "demo_orinnano_super.log"
#: The demo log's first lines without their stamps, to stamp anew.
BODIES = [line[20:] for line in DEMO_LOG.read_text().splitlines()[:20]]


class FakeTime:
    """clock() and sleep(): sleep advances the clock (nothing waits for real) and then runs
    ``hook`` (if set). A replay that sleeps on past ``limit`` sleeps is waiting for what never
    comes: the test fails instead of hanging."""

    def __init__(self, limit: int | None = None) -> None:
        self.now = 0.0
        self.sleeps = 0
        self.hook = None
        self.limit = limit

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sleeps += 1
        if self.limit is not None and self.sleeps > self.limit:
            raise RuntimeError("the replay idles on: what it waits for never came")
        if self.hook is not None:
            self.hook()


def stamped_lines(seconds: list[int]) -> list[str]:
    out = []
    for i, second in enumerate(seconds):
        stamp = datetime.fromtimestamp(1_700_000_000 + second, timezone.utc).strftime("%m-%d-%Y %H:%M:%S")
        out.append(f"{stamp} {BODIES[i % len(BODIES)]}\n")
    return out


def source(path: Path, fake: FakeTime, **kwargs) -> ReplaySource:
    kwargs.setdefault("tz", "UTC")
    return ReplaySource(path, clock=fake.clock, sleep=fake.sleep, **kwargs)
