"""Settings read below the configuration, with their defaults: colour levels and the bounds of a
replay's speed. The configuration (``runtime.config``) fills them from the user's file and flags;
each detector's settings live with the detector (``analysis.detector_spec``)."""

from __future__ import annotations

from dataclasses import dataclass

#: Replay speeds (the speed keys step between them; the config's ``speed`` is bounded by them).
MIN_SPEED, MAX_SPEED = 0.25, 64.0


@dataclass(frozen=True)
class Thresholds:
    """Colour levels where the board gives no trip point (sysfs or recording header)."""

    temp_warn_c: float = 70.0
    temp_crit_c: float = 85.0
    load_warn_pct: float = 80.0
    load_crit_pct: float = 95.0

