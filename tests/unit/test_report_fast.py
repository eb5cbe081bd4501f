"""``report``'s fast route gives the numbers of the sample route.

The fast route: a pipeline that shows nothing keeps a ``TimesOnlyHistory`` (no display
columns, no numpy) and the throttle detector asks each unit's cap once per board. The sample route
is the one every pipeline took before: a full ``History`` and the caps asked for every sample. Both
must give the same report JSON (floats to 1e-9 relative), on the real logs beside the repo when
present and on the test data otherwise, with and without a device and power mode (so that the
roofline and the detectors have something to do).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from paths import REPO

from jtop_roof.analysis import detectors, pipeline
from jtop_roof.analysis.history import History
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.analysis.timesonly import TimesOnlyHistory
from jtop_roof.model.records import Marker, Sample
from jtop_roof.model.timeline import parse_tz
from jtop_roof.outputs.report import report_file
from jtop_roof.runtime.config import Config

ROOT = REPO
SHARED_LOGS = ROOT.parent / "shared" / "tegrastats" / "logs"
DATA = ROOT / "tests" / "data"


def _files() -> list[tuple[Path, str | None, str | None]]:
    """(file, --device, --power-mode): the real logs when present, else the test data."""
    if SHARED_LOGS.is_dir() and any(SHARED_LOGS.glob("*.log")):
        out: list[tuple[Path, str | None, str | None]] = []
        for path in sorted(SHARED_LOGS.glob("*.log")):
            out.append((path, None, None))
            if path.name.startswith("orinnano8gb-super"):
                mode = {"maxn": "MAXN_SUPER", "15w": "15W", "7w": "7W"}.get(path.stem.split("_")[-2], "25W")
                out.append((path, "orin-nano-8gb-super", mode))
            elif path.name.startswith("tx2"):
                out.append((path, "tx2", "MAXN"))
        # and the recordings whose throttle the detectors find (no real log here has one)
        return [*out, (DATA / "h200_phases.jsonl", None, None),
                (DATA / "h200_host_recording.jsonl", None, None)]
    return [(DATA / "fake_tegrastats_orinnano_super.txt", None, None),
            (DATA / "fake_tegrastats_orinnano_super.txt", "orin-nano-8gb-super", "7W"),
            (DATA / "tegrastats_lines.txt", None, None),
            (DATA / "h200_phases.jsonl", None, None),
            (DATA / "h200_host_recording.jsonl", None, None),
            *((path, None, None) for path in sorted((DATA / "logfile").glob("*.log")))]


def _report(path: Path, device: str | None, mode: str | None) -> dict[str, Any]:
    config = Config(device=device, power_mode=mode)
    report = report_file(str(path), tz=parse_tz("UTC"), interval_s=None, config=config)
    return json.loads(json.dumps(report))  # as the command writes it


def _sample_route(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pipeline with a full History, and the detectors' caps asked for every sample."""
    monkeypatch.setattr(pipeline, "history_for",
                        lambda history_s, interval_s: History.for_duration(max(history_s, 60.0), interval_s))
    def every_time(self: detectors.ThrottleDetector, context: Any, t_mono: Any) -> tuple[float | None, ...]:
        mode = context.board.mode_at(t_mono)
        return tuple(detectors._cap(unit, context, mode) for unit in detectors.UNITS)

    monkeypatch.setattr(detectors.ThrottleDetector, "_unit_caps", every_time)


def _same(fast: Any, slow: Any, where: str = "") -> None:
    if isinstance(fast, float) and isinstance(slow, float):
        assert math.isclose(fast, slow, rel_tol=1e-9, abs_tol=0.0) or fast == slow, where
    elif isinstance(fast, dict) and isinstance(slow, dict):
        assert list(fast) == list(slow), where
        for key in fast:
            _same(fast[key], slow[key], f"{where}.{key}")
    elif isinstance(fast, list) and isinstance(slow, list):
        assert len(fast) == len(slow), where
        for i, (a, b) in enumerate(zip(fast, slow, strict=True)):
            _same(a, b, f"{where}[{i}]")
    else:
        assert fast == slow, where


@pytest.mark.parametrize("path,device,mode", _files(), ids=lambda v: getattr(v, "name", str(v)))
def test_fast_route_reports_what_the_sample_route_reports(path, device, mode, monkeypatch):
    fast = _report(path, device, mode)
    with monkeypatch.context() as patch:
        _sample_route(patch)
        slow = _report(path, device, mode)
    _same(fast, slow)
    assert fast == slow  # in fact exactly: the same arithmetic in the same order


def test_a_pipeline_that_shows_nothing_keeps_no_display_columns():
    assert isinstance(Pipeline(history_s=0.0, interval_s=1.0).history, TimesOnlyHistory)
    assert isinstance(Pipeline(history_s=60.0, interval_s=1.0).history, History)


def _sample(t_mono: float | None, t_wall: float | None = None) -> Sample:
    sample = Sample(raw="")
    sample.t_mono, sample.t_wall = t_mono, t_wall
    return sample


def test_times_only_history_answers_as_history_does():
    full, light = History.for_duration(0.0, 0.5), TimesOnlyHistory(0.5)
    steps: list[Any] = [
        _sample(None), _sample(None, 100.0), Marker("phase_start", "a", None, None, "key"),
        _sample(3.0, float("nan")), Marker("phase_end", None, None, 3.0, "key"), _sample(4.0, 104.0),
        Marker("phase_start", None, None, 4.0, "key"), _sample(1.0, 101.0), _sample(2.0),
        Marker("phase_start", "b", None, 2.0, "key"), _sample(None),
    ]
    for step in steps:
        for history in (full, light):
            if isinstance(step, Marker):
                history.add_marker(step)
            else:
                history.append(step)
        assert (light.last_t_mono, light.last_t_wall, light.current_phase, light.first_t_mono,
                len(light), light.latest) == \
               (full.last_t_mono, full.last_t_wall, full.current_phase, full.first_t_mono,
                len(full), full.latest)
