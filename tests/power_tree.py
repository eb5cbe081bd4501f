"""Fake power-monitor trees under a sysfs root, for ``--sysfs-root`` (importable by any test).

The layouts are the drivers' (research/power_measurement.md): INA3221 hwmon (JetPack 5+), an
INA238 hwmon (Thor's board input, µW), the iio ``ina3221x`` (JetPack 4), and RAPL's powercap.
Values are written in place, in fixed width, on the same inode: the sampler keeps each value file
open and reads it again from offset 0 (as sysfs allows), so a file replaced by a new one (a rename)
would never be seen to change. ``FakeIna3221.set`` may be called from a writer thread while a
recording runs; a reader sees each file's old or new value (the two files of a rail are written
one after the other: keep the voltage fixed and change the current for an exact schedule).

    board = FakeIna3221(tmp_path, {"VDD_IN": (5000, 1000), "VDD_CPU_GPU_CV": (5000, 200)})
    board.set("VDD_IN", 5000, 1500)          # VDD_IN now reads 7500 mW
    # jroof-tui record r.jsonl --source tegrastats --sysfs-root tmp_path --power-hz 50
"""

from __future__ import annotations

import os
from pathlib import Path

#: Width of every value written (digits padded with spaces, then a newline): in-place rewrites.
VALUE_WIDTH = 12


def write_value(path: Path, value: int | str) -> None:
    """Write ``value`` into ``path`` in place (same inode), creating it when absent."""
    text = f"{value}".rjust(VALUE_WIDTH) + "\n" if isinstance(value, int) else str(value)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, text.encode(), 0)
        if not isinstance(value, int):
            os.ftruncate(fd, len(text.encode()))
    finally:
        os.close(fd)


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


class FakeIna3221:
    """An INA3221 hwmon node: channel N (from 1) per rail, ``inN_label``, ``inN_input`` (mV) and
    ``currN_input`` (mA), plus the driver's shunt-sum channel (``in7_label`` without a current)."""

    def __init__(self, root: Path, rails: dict[str, tuple[int, int]], *, hwmon: str = "hwmon3",
                 first_channel: int = 1) -> None:
        self.node = root / "sys/class/hwmon" / hwmon
        self.node.mkdir(parents=True, exist_ok=True)
        write_text(self.node / "name", "ina3221\n")
        write_text(self.node / "in7_label", "sum of shunt voltages\n")
        write_value(self.node / "in7_input", 40)
        self.channels: dict[str, int] = {}
        for offset, (rail, (mv, ma)) in enumerate(rails.items()):
            channel = first_channel + offset
            self.channels[rail] = channel
            write_text(self.node / f"in{channel}_label", rail + "\n")
            self.set(rail, mv, ma)

    def set(self, rail: str, mv: int, ma: int) -> None:
        """The rail now reads ``mv`` and ``ma`` (``mv * ma / 1000`` mW)."""
        channel = self.channels[rail]
        write_value(self.node / f"in{channel}_input", mv)
        write_value(self.node / f"curr{channel}_input", ma)

    def path(self, rail: str, kind: str = "curr") -> Path:
        """A rail's value file: ``kind`` is ``in`` (mV) or ``curr`` (mA)."""
        return self.node / f"{kind}{self.channels[rail]}_input"


def fake_ina238(root: Path, uw: int, *, hwmon: str = "hwmon5", label: str | None = None) -> Path:
    """An INA238 hwmon node with ``power1_input`` in µW (and ``power1_label`` when given)."""
    node = root / "sys/class/hwmon" / hwmon
    node.mkdir(parents=True, exist_ok=True)
    write_text(node / "name", "ina238\n")
    write_value(node / "power1_input", uw)
    if label is not None:
        write_text(node / "power1_label", label + "\n")
    return node


def fake_ina3221x(root: Path, rails: dict[str, int], *, device: str = "6-0040") -> Path:
    """JetPack 4's iio device: ``rail_name_N`` and ``in_powerN_input`` (mW), N from 0."""
    node = root / "sys/bus/i2c/drivers/ina3221x" / device / "iio:device0"
    node.mkdir(parents=True, exist_ok=True)
    for n, (rail, mw) in enumerate(rails.items()):
        write_text(node / f"rail_name_{n}", rail + "\n")
        write_value(node / f"in_power{n}_input", mw)
    return node


def fake_rapl(root: Path, zones: dict[str, tuple[int, int]]) -> dict[str, Path]:
    """Top-level powercap zones ``intel-rapl:N`` named as given, each (energy_uj, range_uj), with
    a sub-domain under the first (which the meter must not count again). Returns each energy file."""
    files: dict[str, Path] = {}
    base = root / "sys/class/powercap"
    for n, (name, (energy_uj, range_uj)) in enumerate(zones.items()):
        zone = base / f"intel-rapl:{n}"
        zone.mkdir(parents=True, exist_ok=True)
        write_text(zone / "name", name + "\n")
        write_value(zone / "max_energy_range_uj", range_uj)
        write_value(zone / "energy_uj", energy_uj)
        files[name] = zone / "energy_uj"
    sub = base / "intel-rapl:0:0"
    sub.mkdir(parents=True, exist_ok=True)
    write_text(sub / "name", "core\n")
    write_value(sub / "max_energy_range_uj", 262143328850)
    write_value(sub / "energy_uj", 1000)
    return files
