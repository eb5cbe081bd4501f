"""Settings read below the configuration, with their defaults: colour levels, when a clock counts
as held down, and the bounds of a replay's speed. The configuration (``runtime.config``) fills
them from the user's file and flags."""

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


@dataclass(frozen=True)
class DetectorSettings:
    """When a clock counts as held down (``detectors.ThrottleDetector``); these are the defaults."""

    busy_pct: float = 50.0
    below_cap_ratio: float = 0.95
    min_duration_s: float = 2.0
    min_samples: int = 2
    close_after_s: float = 1.0
    thermal_margin_c: float = 5.0
    power_budget_ratio: float = 0.95
