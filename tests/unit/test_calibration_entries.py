"""A mode's energy calibration is checked like every device field: one line naming what is wrong."""

from __future__ import annotations

import math

import pytest

from jtop_roof.roofline.calibration import CalibrationError, parse_calibration


def test_a_figure_keeps_its_value_source_and_note() -> None:
    calibration = parse_calibration("m", {"idle_w": {"VDD_IN": {"value": 3.6, "source": "measured",
                                                                 "note": "run X, first 20 s"}}})
    figure = calibration.idle_w["VDD_IN"]
    assert (figure.value, figure.source, figure.note) == (3.6, "measured", "run X, first 20 s")
    assert calibration.pi0_w.value is None and calibration.pi0_w.note


@pytest.mark.parametrize("bad", [
    {"pi0_w": {"value": math.nan, "source": "measured"}},
    {"pi0_w": {"value": -1, "source": "measured"}},
    {"pi0_w": {"value": True, "source": "measured"}},
    {"pi0_w": {"value": 1.0}},
    {"pi0_w": {"value": 1.0, "source": "guessed"}},
    {"pi0_w": {"value": None}},
    {"eps_byte_j": "cheap"},
    {"idle_w": {"VDD_IN": {"value": 1.0, "source": "measured", "colour": "red"}}},
    {"volts": 1},
])
def test_a_bad_figure_is_refused_in_one_line(bad: dict[str, object]) -> None:
    with pytest.raises(CalibrationError) as caught:
        parse_calibration("orin: power_modes[0] (7W)", bad)
    assert "\n" not in str(caught.value) and str(caught.value).startswith("orin: power_modes[0] (7W)")
