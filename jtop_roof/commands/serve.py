"""``jroof-tui serve``: the live board's latest values as Prometheus metrics, without a screen."""

from __future__ import annotations

import argparse

from jtop_roof.commands.base import Command, warn
from jtop_roof.commands.options import FlagError, replay_of, serve_source_options
from jtop_roof.commands.source_flags import refuse_unused, sources_of
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--listen", "--prometheus", metavar="ADDR", dest="listen", nargs="?", const=None,
                        default=None,
                        help="HOST:PORT, [ADDR]:PORT or PORT (default, and with no ADDR: 127.0.0.1:9101, "
                        "loopback only)")
    parser.add_argument("--board", metavar="NAME", default=None,
                        help="a `board` label on every series (printable UTF-8 text)")


def check_board(board: str | None) -> None:
    """``--board``, a label value on every series, refused (FlagError) unless it is printable
    UTF-8 text: bytes that are not UTF-8 cannot be encoded, so every scrape would fail, and a
    control character (a newline, an escape, a bidi override) would reach whoever reads the
    metrics, where Prometheus's text format carries it raw or escaped by one writer and not another."""
    if board is None or board.isprintable():
        return
    try:
        board.encode("utf-8")
    except UnicodeEncodeError:
        try:  # the bytes as typed: 'nano\xff1' (the command line's undecodable bytes come as surrogates)
            typed = board.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a lone surrogate that no byte made
            typed = board.encode("utf-8", "backslashreplace").decode("utf-8")
        raise FlagError(f"--board '{typed}' is not UTF-8 text: name the board in UTF-8") from None
    raise FlagError(f"--board '{board}' holds control or invisible characters: a label value must be "
                    "printable text (letters, digits, spaces, punctuation)")


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.serve import parse_listen, run_serve
    check_board(args.board)
    refuse_unused(args, config, roofless="serve")
    host, port = parse_listen(args.listen or config.prometheus)  # --prometheus=ADDR is the same
    chosen = sources_of(config, replay_of(args))
    if chosen.hint:
        warn(chosen.hint)
    return run_serve(chosen.source, config, host=host, port=port, board=args.board)


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
