"""``jroof-tui devices``: the device database, one device per line (its text is ``roof.cmd_devices``)."""

from __future__ import annotations

import argparse

from jtop_roof.commands.base import Command
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help="config file")


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.commands.roof import cmd_devices
    from jtop_roof.roofline.devices import load_devices

    print("\n".join(cmd_devices(load_devices(config.devices))))
    return 0


COMMAND = Command(
    name="devices",
    help="list the device database, one device per line",
    description="The devices jroof knows (packaged, plus the config's `devices:`): id, name, memory, "
    "nvpmodel modes.",
    epilog="example: jroof-tui devices | grep orin",
    add_arguments=add_arguments,
    run=run,
)
