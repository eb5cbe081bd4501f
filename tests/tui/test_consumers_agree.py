"""One answer in every consumer: ``report``, the monitor's view and ``serve``'s ``/metrics`` read
the same queries of the same pipeline, so on the same plain log (nothing names its board) they
give the same board, mode, throttled seconds and energy, and say what each rests on."""

from __future__ import annotations

import re
from datetime import timezone
from pathlib import Path

import pytest
from paths import REPO
from test_serve import Served, one, parse, wait_for_samples
from tui_support import make_config, wait_until

from jtop_roof.outputs.report import report_file
from jtop_roof.runtime.config import Config
from jtop_roof.sources.replay import ReplaySource

ROOT = REPO
MAXN = ROOT.parent / "shared" / "tegrastats" / "logs" / \
    "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_maxn_run3.log"
needs_shared = pytest.mark.skipif(not MAXN.is_file(), reason="shared/ reference logs not beside the repo")


def held_log(tmp_path: Path) -> Path:
    """The real MAXN_SUPER run with its GPU held at 612 MHz while busy for 30 of its lines (about
    3 s): a throttle against the inferred mode's 1020 MHz cap. Only numbers change, not the format."""
    lines = MAXN.read_text().splitlines()
    for i in range(300, 330):
        lines[i] = re.sub(r"GR3D_FREQ \d+%@\[\d+\]", "GR3D_FREQ 99%@[612]", lines[i])
    path = tmp_path / "held.log"
    path.write_text("\n".join(lines) + "\n")
    return path


@needs_shared
async def test_report_the_monitor_and_metrics_agree_on_a_plain_log(tmp_path):
    from jtop_roof.tui.app import JroofApp
    from jtop_roof.tui.view import build_view

    path = held_log(tmp_path)
    report = report_file(str(path), tz=timezone.utc, interval_s=None, config=Config())
    throttled, energy = report["whole"]["throttled_s"], report["whole"]["energy_j"]["total"]
    assert (report["device"], report["power_mode"]) == ("orin-nano-8gb-super", "MAXN_SUPER")
    assert throttled > 2.0 and energy > 0  # the held GPU is a throttle; not a vacuous equality

    app = JroofApp(ReplaySource(path, tz="UTC", speed=64), make_config(), user_themes=tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.stream.ended is not None and not app.pipeline.still_reading,
                         "the end of the file", rounds=1000)
        view = build_view(app.pipeline, thresholds=app.config.thresholds, tz=app._tz, window_s=app.window_s,
                          wall_axis=app.replay, notes=[], precision=app.precision)
        header = app.query_one("#header").plain
    assert view.board is not None and view.board.device is not None and view.whole is not None
    assert (view.board.device.id, view.board.mode_name) == (report["device"], report["power_mode"])
    assert view.throttled_s == pytest.approx(throttled)
    assert view.whole.energy_j == pytest.approx(energy)
    assert "orin-nano-8gb-super inferred" in header and "MAXN_SUPER inferred" in header

    served = Served(ReplaySource(path, tz="UTC", speed=64))
    try:
        metrics = parse(wait_for_samples(served.url, report["whole"]["samples"]))
    finally:
        served.stop()
    (info,) = metrics["jroof_info"]
    assert (dict(info)["device"], dict(info)["power_mode"]) == (report["device"], report["power_mode"])
    assert one(metrics, "jroof_throttled_seconds_total") == pytest.approx(throttled)
    assert one(metrics, "jroof_throttle_seconds_total", unit="gpu") == pytest.approx(throttled)
    assert one(metrics, "jroof_input_energy_joules_total") == pytest.approx(energy)
    said = {dict(labels)["what"]: dict(labels) for labels in metrics["jroof_assumption_info"]}
    assert said["device"]["source"] == report["device_source"] == "inferred"
    assert said["power_mode"]["source"] == report["power_mode_source"] == "inferred"
    assert said["throttle_detection"]["value"] == report["throttle_detection"]
    assert said["throttle_detection"]["note"] == report["throttle_detection_note"]
