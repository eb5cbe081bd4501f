"""The demo: a real tegrastats recording of a Jetson Orin Nano 8GB Super, replayed in a loop.

The log ships inside the package (``data/demo_orinnano_super.log``, MIT, notice in
``data/LICENSE.demo``). It was taken with ``sudo tegrastats --interval 100`` during a TensorRT
benchmark, so it shows real GPU bursts, EMC at 3199 MHz and the board's power rails; anyone without
a Jetson can see every pane work on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from importlib import resources
from importlib.abc import Traversable

from jtop_roof.model.info import SourceInfo
from jtop_roof.sources.replay import ReplaySource

DEMO_LOG = "demo_orinnano_super.log"
DEMO_LICENSE = "LICENSE.demo"


def demo_log_resource() -> Traversable:
    """The packaged demo log (read it with ``read_bytes`` or ``resources.as_file``)."""
    return resources.files("jtop_roof.sources") / "data" / DEMO_LOG


class DemoSource(ReplaySource):
    """Replays the packaged Orin Nano Super recording in a loop at its recorded pace."""

    kind = "demo"

    def __init__(
        self,
        speed: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self._files = ExitStack()
        # A real path when installed normally; as_file extracts it from a zip install.
        path = self._files.enter_context(resources.as_file(demo_log_resource()))
        # Paced by its stamps: `--interval 100` came out as about 9 lines a second.
        super().__init__(path, speed=speed, loop=True, clock=clock, sleep=sleep)

    def stop(self) -> None:
        super().stop()
        self._files.close()

    def describe(self) -> SourceInfo:
        """What the recording is, with the board's limits as known for it (research/jetson_specs.md:
        ``jetson_clocks`` on an Orin Nano Super pins CPU 1728, GPU 1020, EMC 3199 MHz)."""
        out = dict(super().describe().header)
        out.update(
            {
                "model": "Jetson Orin Nano 8GB Super (demo recording)",
                "jetpack": "6.2",
                "power_mode": "MAXN_SUPER",
                "power_mode_id": 2,
                "max_clocks": {"gpu_mhz": 1020, "emc_mhz": 3199, "cpu_mhz": 1728},
                "demo": {
                    "what": "a real tegrastats recording (sudo tegrastats --interval 100) of a "
                    "TensorRT VLM benchmark, replayed in a loop",
                    "origin": "github.com/hokwangchoi/jetson-orin-nano-benchmarks",
                    "licence": "MIT (jtop_roof/data/LICENSE.demo)",
                },
                "hints": [
                    "Demo: a real Jetson Orin Nano 8GB Super recording (JetPack 6.2) replayed in a "
                    "loop, not this machine. Power mode and maximum clocks come from the recording's "
                    "README and the Orin Nano Super's published clocks."
                ],
            }
        )
        return SourceInfo.from_mapping(out)
