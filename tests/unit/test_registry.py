"""The one registry of series: every column history keeps is named and united by it."""

import pytest

from jtop_roof.analysis.history import History
from jtop_roof.model.records import CpuCore, Rail, Sample
from jtop_roof.model.registry import SCALAR_KEYS, metric


def test_every_history_series_is_in_the_registry_with_a_unit():
    history = History(4)
    history.append(Sample(t_mono=0.0, cpus=[CpuCore(10.0, 1728)], rails={"VDD_IN": Rail(5000.0)},
                          temps_c={"tj": 50.0}))
    keys = set(SCALAR_KEYS) | {"cpu_load:0", "cpu_mhz:0", "rail:VDD_IN", "zone:tj"}
    assert all(history.has(key) or key in SCALAR_KEYS for key in keys)
    assert metric("rail:VDD_IN").unit == "mW" and metric("zone:tj").levels == "temp"
    assert metric("gpu_mhz").legend() == "clock MHz" and metric("cpu_load:3").levels == "load"
    with pytest.raises(KeyError):
        metric("no_such_series")
