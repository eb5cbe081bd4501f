"""The detectors every pipeline runs, in order: one line each.

A new detector is a module under ``analysis/`` holding its class, its settings dataclass and its
``DetectorSpec``, and one line here; the config reads its settings (``detectors:``) and
``runtime.build_pipeline`` makes it fresh for each pipeline through this list. ``register`` adds
one at run time (a plugin's, a test's). Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jtop_roof.analysis import detectors, mode_changes
from jtop_roof.analysis.detector_spec import Bounds, DetectorConfig, DetectorSpec
from jtop_roof.analysis.pipeline import Detector

DETECTORS: list[DetectorSpec[Any]] = [
    detectors.DETECTOR,
    mode_changes.DETECTOR,
]


def make_detectors(config: DetectorConfig) -> list[Detector]:
    """A fresh detector of each spec, from its own settings in ``config``."""
    return [spec.make(config.settings(spec)) for spec in DETECTORS]


def detector_named(name: str) -> DetectorSpec[Any] | None:
    return next((spec for spec in DETECTORS if spec.name == name), None)


def setting_owner(setting: str) -> tuple[DetectorSpec[Any], Bounds] | None:
    """The detector declaring a setting of this name, and its bounds (a flat ``detectors:`` key)."""
    for spec in DETECTORS:
        bounds = spec.bounds().get(setting)
        if bounds is not None:
            return spec, bounds
    return None


def register(spec: DetectorSpec[Any]) -> Callable[[], None]:
    """Run ``spec``'s detector in every pipeline made from now on; returns what takes it out."""
    if detector_named(spec.name) is not None:
        raise ValueError(f"detector {spec.name!r} is declared already")
    DETECTORS.append(spec)
    return lambda: DETECTORS.remove(spec)
