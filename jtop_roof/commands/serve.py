"""``jroof-tui serve``: the live board's latest values as Prometheus metrics, without a screen."""

from __future__ import annotations

import argparse

from jtop_roof.commands.base import Command, warn
from jtop_roof.commands.options import (
    check_trtexec,
    refuse_roof_only,
    refuse_unplaced,
    refuse_unread_meters,
    serve_source_options,
)
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--listen", "--prometheus", metavar="ADDR", dest="listen", nargs="?", const=None,
                        default=None,
                        help="HOST:PORT, [ADDR]:PORT or PORT (default, and with no ADDR: 127.0.0.1:9101, "
                        "loopback only)")
    parser.add_argument("--board", metavar="NAME", default=None, help="a `board` label on every series")


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.serve import parse_listen, run_serve
    from jtop_roof.runtime.session import make_source, resolve_source_kind

    refuse_roof_only(args, "serve")
    refuse_unplaced(config, getattr(args, "replay", None))
    refuse_unread_meters(args, config)
    host, port = parse_listen(args.listen or config.prometheus)  # --prometheus=ADDR is the same
    kind, hint = resolve_source_kind(config, getattr(args, "replay", None))
    source = make_source(config, kind, getattr(args, "replay", None))
    check_trtexec([source], config)
    if hint:
        warn(hint)
    return run_serve(source, config, host=host, port=port, board=args.board)


COMMAND = Command(
    name="serve",
    help="Prometheus /metrics of the live board (headless)",
    description="Monitor headless and serve the latest values as Prometheus metrics on GET /metrics, "
    "on loopback unless --listen names another address; until SIGINT/SIGTERM.",
    epilog="example: jroof-tui serve --listen 127.0.0.1:9101 --board nano1",
    add_arguments=add_arguments,
    run=run,
    shared_options=serve_source_options,
)
