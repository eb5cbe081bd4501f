"""The sample model: the one total-power definition and the JSON forms."""

from jtop_roof.model import records as model
from jtop_roof.model.codec import record_from_json, record_to_json
from jtop_roof.model.records import CpuCore, Engine, Event, Gpu, Marker, Memory, Rail, Sample, total_power


def test_input_rail_wins_over_a_sum():
    rails = {"VDD_GPU": Rail(3561), "VDD_CPU_SOC_MSS": Rail(7910), "VIN": Rail(26686)}
    total = total_power(rails)
    assert (total.mw, total.source) == (26686, "VIN")


def test_sum_skips_unconnected_channels_and_says_it_is_a_sum():
    rails = {"VDD_GPU_SOC": Rail(2340), "VIN_SYS_5V0": Rail(4025), "NC": Rail(7), "NC_2": Rail(9)}
    total = total_power(rails)
    assert (total.mw, total.source) == (2340 + 4025, "sum(VDD_GPU_SOC+VIN_SYS_5V0)")


def test_a_gpus_own_power_is_never_the_machines_total():
    assert total_power({"NVML_GPU": Rail(690_695)}) is None
    assert total_power({"NVML_GPU": Rail(690_695), "NVML_GPU1": Rail(80_000)}) is None
    # a Jetson rail that happens to be called GPU (AGX Xavier) is part of the module sum
    assert total_power({"GPU": Rail(621), "CPU": Rail(465)}).source == "sum(GPU+CPU)"


def test_the_plan_of_a_set_of_rail_names_is_kept_and_gives_the_same_totals():
    rails = {"VDD_GPU_SOC": Rail(2340.5), "NC": Rail(7), "VIN_SYS_5V0": Rail(-0.0)}
    first = total_power(rails)
    assert tuple(rails) in model._power_plans
    assert total_power(rails) == first
    assert total_power({"VIN": Rail(-0.0), "VDD_GPU": Rail(1)}).mw == -0.0  # the input rail as read


def test_plans_for_hostile_rail_names_are_made_but_not_kept():
    rails = {"R" * 2000: Rail(1), "S" * 2000: Rail(2)}
    assert total_power(rails).mw == 3
    assert tuple(rails) not in model._power_plans


def test_records_round_trip_through_their_json_lines():
    sample = Sample(
        t_wall=1.5, t_mono=0.5, raw="RAM ...", ram=Memory(1.0, 2.0, None, 3, 4.0),
        swap=Memory(0.0, 10.0, 1.0), cpus=[CpuCore(5.0, 729), None], gpu=Gpu(None, (0, 0, 0)),
        engines={"VIC": Engine(off=True), "APE": Engine(None, 174)},
        temps_c={"cpu": 52.968, "cv0": None}, temps_max_c={"cpu": 53.1},
        rails={"VDD_GPU_SOC": Rail(5139, 5139, 5140)}, throttle_reasons=["SwPowerCap"],
        unknown=["???"],
    )
    back = record_from_json(record_to_json(sample))
    assert back == sample
    marker = Marker("phase_start", "resnet", 2.0, 1.0, "script")
    event = Event("gap", "no data", 3.0, 2.0, 4.5)
    assert record_from_json(record_to_json(marker)) == marker
    assert record_from_json(record_to_json(event)) == event
    assert record_from_json({"type": "header"}) is None
