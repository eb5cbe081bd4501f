"""``jroof-tui probe``: measure this machine's ceilings, with the monitor's own sources watching the
clocks."""

from __future__ import annotations

import argparse
import json

from jtop_roof.commands.base import STDOUT, Command, fail, warn
from jtop_roof.commands.options import board_flags
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="a few-second run (smaller arrays, short runs)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help="write here (default: $XDG_DATA_HOME/jroof/probe/DEVICE/MODE.json; -: the "
                        "JSON on stdout, saved nowhere, the summary on stderr)")
    parser.add_argument("--backend", choices=("auto", "cupy", "torch", "numpy"), default="auto",
                        help="auto (default): PyTorch on CUDA, else CuPy, else numpy on the CPU")
    parser.add_argument("--json", action="store_true", help="print the JSON result instead of the summary")
    parser.add_argument("--tegrastats-command", metavar="CMD", dest="tegrastats_command",
                        default=argparse.SUPPRESS, help="how to run tegrastats for the clocks, e.g. "
                        "'sudo -n tegrastats' (default: tegrastats when on PATH, else NVML/psutil)")
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help="config file")
    board_flags(parser)


def run(args: argparse.Namespace, config: Config) -> int:
    """Measure this machine's ceilings with the monitor's own sources watching the clocks."""
    from jtop_roof.probe import default_probe_path, run_probe, save_probe, summary_lines
    from jtop_roof.probe.energy import nvml_counter
    from jtop_roof.roofline.devices import load_devices
    from jtop_roof.runtime.session import probe_source_factory

    result = run_probe(args.quick, backend=args.backend, source_factory=probe_source_factory(config),
                       device=config.device, power_mode=config.power_mode,
                       devices=load_devices(config.devices),
                       progress=warn, counter_factory=nvml_counter)
    if args.out == STDOUT:
        for line in summary_lines(result):
            warn(line)
        print(json.dumps(result, indent=2, allow_nan=False))
        return 0
    path = args.out or default_probe_path(result["device"], result["power_mode"])
    try:
        written = save_probe(result, path)
    except OSError as exc:
        return fail(f"cannot write {path}: {exc.strerror or exc}")
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=False))
    else:
        print("\n".join(summary_lines(result)))
    warn(f"probe written to {written}")
    return 0


COMMAND = Command(
    name="probe",
    help="measure this machine's ceilings (bandwidth, FLOP/s per precision)",
    description="Measure achievable memory bandwidth (device-to-device copy and triad, bytes read + "
    "written) and matrix-product FLOP/s per precision, the way the Empirical Roofline Toolkit does, on "
    "the GPU (PyTorch or CuPy) or, without them, on the CPU (numpy), with the clocks and power seen; "
    "saved per device and power mode.",
    epilog="example: jroof-tui probe --quick",
    add_arguments=add_arguments,
    run=run,
)
