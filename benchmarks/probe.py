"""The probe's figures for this machine, beside the datasheet roofs at the clocks seen.

    .venv/bin/python benchmarks/probe.py                  # full probe (about 40 s on a GPU)
    .venv/bin/python benchmarks/probe.py --quick --backend numpy --out /tmp/probe.json
    PYTHONPATH=. python3 benchmarks/probe.py --device h200   # on a GPU machine with torch or cupy

Runs ``jtop_roof.probe.run_probe`` (torch on CUDA, else CuPy, else numpy on the CPU) with the
monitor's own source sampling the clocks and power, and prints, per ceiling: the measured figure,
the clocks and power seen, the per-MHz figure, and, where the device is in the database and the
probe ran on its GPU, the datasheet roof at the mean clocks seen during that measurement and at
the device's maximum clocks, with the measured share of each. Speed figures live here, never in
the tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jtop_roof.probe import BACKENDS, run_probe, save_probe, summary_lines  # noqa: E402
from jtop_roof.roofline.ceilings import ceilings, max_clocks  # noqa: E402
from jtop_roof.roofline.devices import find_mode, load_devices  # noqa: E402
from jtop_roof.roofline.measured import ProbeError  # noqa: E402
from jtop_roof.runtime.session import probe_source_factory  # noqa: E402


def _si(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= factor:
            return f"{value / factor:.3f} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _mean(entry: dict[str, Any], key: str) -> float | None:
    stat = (entry.get("clocks") or {}).get(key)
    return None if not stat else float(stat["mean"])


def compare(result: dict[str, Any]) -> list[str]:
    """Measured against the datasheet roof at the clocks seen and at the maximum clocks."""
    db = load_devices()
    device = db.get(result.get("device") or "")
    if device is None or result.get("device_kind") != "gpu":
        return ["(no datasheet comparison: the device is unknown or the probe ran on the CPU)"]
    mode = find_mode(device, result["power_mode"]) if result.get("power_mode") else None
    top_gpu, top_emc = max_clocks(device, mode)
    lines = [f"datasheet comparison for {device.name}{'' if mode is None else ' ' + mode.name} "
             f"(maximum clocks: GPU {top_gpu} MHz, memory {top_emc} MHz)"]
    rows: list[tuple[str, str, float, float | None, float | None, float | None]] = []
    for name, entry in (result.get("bandwidth") or {}).items():
        seen_emc = _mean(entry, "emc_mhz")
        at_seen = ceilings(device, _mean(entry, "gpu_mhz") or top_gpu, seen_emc, mode)
        at_max = ceilings(device, top_gpu, top_emc, mode)
        rows.append((f"bandwidth {name}", "B/s", entry["bytes_per_s"], seen_emc,
                     None if at_seen is None else at_seen.bandwidth_bytes_per_s,
                     None if at_max is None else at_max.bandwidth_bytes_per_s))
    for precision, entry in (result.get("compute") or {}).items():
        seen_gpu = _mean(entry, "gpu_mhz")
        at_seen = ceilings(device, seen_gpu, _mean(entry, "emc_mhz") or top_emc, mode)
        at_max = ceilings(device, top_gpu, top_emc, mode)
        unit = "OP/s" if precision.startswith("int8") else "FLOP/s"
        rows.append((f"compute {precision}", unit, entry["flops_per_s"], seen_gpu,
                     None if at_seen is None else at_seen.peak_flops_per_s.get(precision),
                     None if at_max is None else at_max.peak_flops_per_s.get(precision)))
    for label, unit, measured, clock, roof_seen, roof_max in rows:
        share_seen = "" if not roof_seen else f" = {measured / roof_seen:.0%}"
        share_max = "" if not roof_max else f" = {measured / roof_max:.0%}"
        clock_text = "no clock seen" if clock is None else f"{clock:.0f} MHz"
        lines.append(f"  {label:<22} {_si(measured, unit):>16}   roof at {clock_text}: "
                     f"{_si(roof_seen, unit)}{share_seen};  at max: {_si(roof_max, unit)}{share_max}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few-second run")
    parser.add_argument("--backend", choices=BACKENDS, default="auto")
    parser.add_argument("--device", default=None,
                        help="device-database id (default: as the monitor finds it)")
    parser.add_argument("--power-mode", dest="power_mode", default=None)
    parser.add_argument("--out", default=None, help="also write the JSON here")
    parser.add_argument("--json", action="store_true", help="print the JSON result too")
    args = parser.parse_args(argv)
    try:
        result = run_probe(args.quick, backend=args.backend, source_factory=probe_source_factory(),
                           device=args.device, power_mode=args.power_mode,
                           progress=lambda line: print(f"  .. {line}", file=sys.stderr, flush=True))
    except ProbeError as exc:
        print(f"probe: {exc}", file=sys.stderr)
        return 2
    print("\n".join(summary_lines(result)))
    print(f"took {result['duration_s']:.1f} s; source {result['source']['kind']} "
          f"({result['source']['samples']} samples)")
    print("\n".join(compare(result)))
    if args.out:
        print(f"written to {save_probe(result, args.out)}")
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
