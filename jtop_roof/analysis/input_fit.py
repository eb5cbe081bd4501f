"""Inputs for the roof that do not fit the board they would be used with.

A ``--workload`` whose precision the device has no rate for, a ``--probe`` measured on another
device, or an ``--ncu`` export profiled on another GPU would be placed against no roof or the
wrong one: each question here says why in words, or None (it fits, or nothing can tell). The
board is its device, else the devices the inference could not tell apart (all of them must
misfit), else unknown (empty). ``report`` refuses such an input in one line with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jtop_roof.analysis.verdict import precision_key
from jtop_roof.formats.ncu import Kernel
from jtop_roof.roofline.devices import Device, match_devices
from jtop_roof.roofline.measured import Probe
from jtop_roof.roofline.workload import Workload


def workload_misfit(workload: Workload, board: Sequence[Device]) -> str | None:
    """Why the spec's precision has no roof on the board, or None."""
    key = precision_key(workload.precision)
    if not board or key is None or any(key in device.flop_per_clk_per_sm for device in board):
        return None
    return (f"its precision {workload.precision} has no rate for {_ids(board)} in the device database "
            "(`jroof-tui devices`), so no roof can place it")


def probe_misfit(probe: Probe, board: Sequence[Device]) -> str | None:
    """Why the probe's ceilings are not the board's (measured on another device), or None."""
    if not board or probe.device is None or probe.device in {device.id for device in board}:
        return None
    measured_on = probe.device + (f" ({probe.device_name})" if probe.device_name else "")
    return f"it was measured on {measured_on}, not on {_ids(board)}: its ceilings are another board's"


#: How far above a device's maximum GPU clock a kernel's measured SM clock may read (boost
#: reporting, rounding) before it cannot have run there.
SM_CLOCK_SLACK = 1.05


def kernels_misfit(kernels: Sequence[Kernel], board: Sequence[Device], devices: Mapping[str, Device]
                   ) -> str | None:
    """Why the kernels were profiled on another GPU, or None: their ``Device`` column names one the
    device database knows and none of the board's, or ncu measured an SM clock above every board
    device's maximum (exports often name the device by its index only)."""
    ids = {device.id for device in board}
    tops = [device.max_gpu_mhz for device in board]
    for kernel in kernels:
        named = () if kernel.device is None or not ids else match_devices(devices, kernel.device)
        if named and not ids & {each.id for each in named}:
            return (f"its kernels ran on {kernel.device} ({_ids(named)}), not on {_ids(board)}: they "
                    "are another GPU's")
        sm_mhz = None if kernel.sm_hz is None else kernel.sm_hz / 1e6
        if sm_mhz is not None and tops and all(top is not None and sm_mhz > top * SM_CLOCK_SLACK
                                               for top in tops):
            return (f"ncu measured {kernel.name} at an SM clock of {sm_mhz:.0f} MHz, above "
                    f"{_ids(board)}'s maximum of {max(t or 0.0 for t in tops):.0f} MHz: another GPU's "
                    "kernels")
    return None


def _ids(devices: Sequence[Device]) -> str:
    return " or ".join(device.id for device in devices)
