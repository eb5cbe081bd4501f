"""What a detector declares beside its class: its name and its own settings, each with its bounds.

A detector's module holds its settings dataclass (frozen, every field a ``bounded`` default) and
one ``DetectorSpec``; ``analysis.detector_registry`` lists the specs; the configuration reads each
detector's settings through them (``detectors:`` in the config file, ``runtime.config``) and
``runtime.build_pipeline`` makes each detector from its own settings, so no detector shares
another's. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # light: the configuration reads it before any pipeline is built
    from jtop_roof.analysis.pipeline import Detector

S = TypeVar("S")
T = TypeVar("T", int, float)


def bounded(default: T, low: T, high: T) -> T:
    """A setting's field: its default, and the least and most the config may give it."""
    return field(default=default, metadata={"bounds": (low, high)})


@dataclass(frozen=True, slots=True)
class Bounds:
    """What the config may give one setting: ``integer`` where the field is an ``int``."""

    low: float
    high: float
    integer: bool


@dataclass(frozen=True, slots=True)
class DetectorSpec(Generic[S]):
    """One detector: ``name`` (its key under ``detectors:``), its ``settings`` dataclass, and
    ``make``, which builds a fresh detector from them."""

    name: str
    settings: type[S]
    make: Callable[[S], Detector]

    def bounds(self) -> dict[str, Bounds]:
        """Each setting's bounds, by name (``bounded``'s metadata; a field without it: any number)."""
        out = {}
        for each in fields(self.settings):  # type: ignore[arg-type]
            low, high = each.metadata.get("bounds", (float("-inf"), float("inf")))
            out[each.name] = Bounds(low, high, integer=each.type in ("int", int))
        return out


@dataclass(frozen=True)
class DetectorConfig:
    """Every detector's settings, as the config gave them (a detector not named: its defaults)."""

    given: tuple[Any, ...] = ()

    @classmethod
    def of(cls, *settings: Any) -> DetectorConfig:
        """The settings objects given (one per detector, each its own dataclass); one that is all
        defaults is left out, so equal configs compare equal."""
        return cls(tuple(each for each in settings if each != type(each)()))

    def settings(self, spec: DetectorSpec[S]) -> S:
        """``spec``'s settings: as given, else its defaults."""
        for each in self.given:
            if isinstance(each, spec.settings):
                return each
        return spec.settings()
