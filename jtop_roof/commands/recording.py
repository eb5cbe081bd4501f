"""What ``record`` and ``run --headless`` share: the runtime they record through, with the
Prometheus metrics listening to its pipeline when ``--prometheus`` asks for them."""

from __future__ import annotations

from jtop_roof.commands.base import warn
from jtop_roof.formats.recorder import Recorder
from jtop_roof.outputs.serve import MetricsServer, ServeError, start_exporter
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.runtime import Runtime, start_runtime
from jtop_roof.sources.base import Source


def headless_runtime(
    source: Source, recorder: Recorder, config: Config
) -> tuple[Runtime, MetricsServer | None]:
    """The source described, its pipeline recording to ``recorder``, and the metrics server (None
    without ``--prometheus``, or when it cannot listen: said once, and recording goes on)."""
    runtime, described = start_runtime(source, config, recorder=recorder)
    for note in described.notes:
        warn(note)
    if config.prometheus is None:
        return runtime, None
    try:
        return runtime, start_exporter(runtime.pipeline, source.kind, config.prometheus)
    except (ServeError, OSError) as exc:
        warn(f"metrics are off: {exc}")
        return runtime, None
