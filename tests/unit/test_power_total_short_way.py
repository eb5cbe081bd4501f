"""``total_power`` reads an input rail by its name: the same total, to the object, as the plan's long
way over the rails in their order (``PowerPlan.total``), whatever the rails are."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jtop_roof.model.records import Rail, power_plan, total_power

_NAMES = st.sampled_from(["VDD_IN", "VIN", "POM_5V_IN", "VDD_CPU_GPU_CV", "VDD_SOC", "NC", "NC_2",
                          "NVML_GPU", "RAPL_package-0", "VIN_SYS_5V0"])


@given(st.dictionaries(_NAMES, st.floats(min_value=0.0, max_value=1e6), max_size=6))
def test_the_total_is_the_plans_over_the_rails_in_their_order(given_mw: dict[str, float]) -> None:
    rails = {name: Rail(mw) for name, mw in given_mw.items()}
    plan = power_plan(tuple(rails)) if rails else None
    want = None if plan is None else plan.total(list(rails.values()))
    got = total_power(rails)
    assert got == want
    if got is not None and want is not None and not plan.summed:  # type: ignore[union-attr]
        assert got.mw is rails[plan.source].now_mw  # type: ignore[union-attr]
