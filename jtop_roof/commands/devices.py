"""``jroof-tui devices``: the device database, one device per line (its text is ``roof.cmd_devices``),
or as JSON (``roof.devices_json``)."""

from __future__ import annotations

import argparse
import json

from jtop_roof.commands.base import Command
from jtop_roof.runtime.config import Config

#: What ``devices --format`` takes.
DEVICES_FORMATS = ("table", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help="config file")
    parser.add_argument("--format", choices=DEVICES_FORMATS, default="table",
                        help="table (default: one device per line) or json (every field, each entry's "
                        "ceilings at its top clocks and at each mode's, and the documents behind them)")


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.commands.roof import cmd_devices, devices_json
    from jtop_roof.roofline.devices import load_devices

    db = load_devices(config.devices)
    if args.format == "json":
        print(json.dumps(devices_json(db), indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print("\n".join(cmd_devices(db)))
    return 0


COMMAND = Command(
    name="devices",
    help="list the device database, one device per line",
    description="The devices jroof knows (packaged, plus the config's `devices:`): id, name, memory, "
    "nvpmodel modes.",
    epilog="example: jroof-tui devices | grep orin  |  jroof-tui devices --format json | jq '.devices[].id'",
    add_arguments=add_arguments,
    run=run,
)
