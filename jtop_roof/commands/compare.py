"""``jroof-tui compare ITEM...``: runs or phases side by side, against the first."""

from __future__ import annotations

import argparse
import math
from contextlib import nullcontext

from jtop_roof.commands.base import Command, emit, fail, warn
from jtop_roof.commands.options import (
    OUT_HELP,
    STDIN,
    file_args,
    file_flags,
    input_files,
    readable,
    refuse_out_over_inputs,
)
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", metavar="ITEM", nargs="+")
    parser.add_argument("--format", choices=("md", "json"), default="md", help="md (default) or json")
    parser.add_argument("--min-throughput", type=float, metavar="X", dest="min_throughput", default=None,
                        help="the cheapest item must reach X iterations/s (default: any)")
    parser.add_argument("--out", metavar="PATH", default=None, help=OUT_HELP)
    parser.add_argument("--predict", action="store_true",
                        help="add predicted rows for the board's modes not run, and where several modes "
                        "ran, the prediction's own leave-one-mode-out error (see `predict`)")
    file_flags(parser)


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.compare import compare, load_item_report, split_spec, to_json, to_markdown

    if len(args.items) < 2:
        return fail("compare needs at least two items (FILE, FILE#PHASE or a report JSON)")
    need = args.min_throughput
    if need is not None and not (math.isfinite(need) and need >= 0):
        return fail("--min-throughput must be a number of iterations per second, 0 or more")
    tz, interval_s = file_args(args)
    inputs = [split_spec(spec)[0] for spec in args.items]
    if inputs.count(STDIN) > 1:
        return fail("- is standard input, which can be read once: give it as one item only")
    inputs = input_files(args, *inputs)
    refuse_out_over_inputs(args.out, inputs)
    items, reports = [], []
    with readable(STDIN) if STDIN in inputs else nullcontext(STDIN) as spool:
        for spec, path in zip(args.items, inputs, strict=True):
            if path != STDIN:
                item, report = load_item_report(spec, tz=tz, interval_s=interval_s, config=config, warn=warn,
                                                tz_given=args.tz is not None)
                items.append(item)
                reports.append(report)
                continue
            phase = split_spec(spec)[1]
            suffix = "" if phase is None else f"#{phase}"
            item, report = load_item_report(spool + suffix, tz=tz, interval_s=interval_s, config=config,
                                            warn=warn, label=f"stdin{suffix}", file=STDIN,
                                            tz_given=args.tz is not None)
            items.append(item)
            reports.append(report)
    result = compare(items, args.min_throughput)
    if not args.predict:
        return emit(to_json(result) if args.format == "json" else to_markdown(result), args.out, inputs)
    from jtop_roof.outputs.compare_predict import add_predictions, item_facts, predict_markdown
    from jtop_roof.roofline.devices import load_devices

    runs = [(str(item["label"]), item_facts(item, report)) for item, report in zip(result["items"], reports,
                                                                                      strict=True)]
    result = add_predictions(result, runs, load_devices(config.devices))
    text = to_json(result) if args.format == "json" else to_markdown(result) + predict_markdown(result)
    return emit(text, args.out, inputs)


COMMAND = Command(
    name="compare",
    help="runs side by side: deltas, verdicts and the cheapest power mode",
    description="Compare runs. ITEM: a recording or a tegrastats log (its whole run), FILE#PHASE "
    "(that phase) or a JSON file saved by `report --format json`; an item's figures are its "
    "`timed` phase when it has one. The first item is the baseline of the deltas. One item may be "
    "- : standard input, labelled stdin (a phase of it: `-- -#PHASE`, after the options).",
    epilog="example: jroof-tui compare r50_maxn.json r50_15w.json r50_7w.json --min-throughput 500",
    add_arguments=add_arguments,
    run=run,
)
