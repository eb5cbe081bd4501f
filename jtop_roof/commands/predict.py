"""``jroof-tui predict REPORT.json``: throughput and energy per iteration in the board's other power
modes, from one run's report (``analysis.prediction``; output ``outputs.predict``)."""

from __future__ import annotations

import argparse

from jtop_roof.commands.base import Command, emit, fail
from jtop_roof.commands.options import OUT_HELP, refuse_out_over_inputs
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("report", metavar="REPORT.json")
    parser.add_argument("--mode", action="append", metavar="NAME", dest="modes", default=None,
                        help="a power mode to predict (repeatable; default: every other mode of the board)")
    parser.add_argument("--format", choices=("md", "json"), default="md", help="md (default) or json")
    parser.add_argument("--out", metavar="PATH", default=None, help=OUT_HELP)
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help="config file")


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.analysis.prediction import predict
    from jtop_roof.analysis.prediction_input import run_facts
    from jtop_roof.model.errors import UserError
    from jtop_roof.outputs.compare import is_report_json, load_report_json
    from jtop_roof.outputs.predict import predictions_json, to_json, to_markdown
    from jtop_roof.roofline.devices import load_devices

    path = args.report
    try:
        refuse_out_over_inputs(args.out, [path])
        if not is_report_json(path):
            return fail(f"{path}: not a report JSON (save one with `report --format json`)")
        facts = run_facts(load_report_json(path), path)
        result = predict(facts, load_devices(config.devices), args.modes)
    except OSError as exc:
        return fail(f"cannot read {path}: {exc.strerror or exc}")
    except UserError as exc:
        return fail(str(exc))
    data = predictions_json(result, facts)
    return emit(to_json(data) if args.format == "json" else to_markdown(data), args.out, [path])


COMMAND = Command(
    name="predict",
    help="predict throughput and energy per iteration in the board's other power modes, from one run",
    description="Predict the other power modes from one run. REPORT.json: a report saved with "
    "`report --format json` of a run with a workload (--trtexec, a hook or --workload). The run's "
    "time is split into compute, memory and host parts, each scaled by the target mode's caps; power "
    "is the target's idle (the device database's calibration) plus the run's dynamic power scaled per "
    "rail. Each figure has a range over what the model does not know; a mode it can't predict says why.",
    epilog="example: jroof-tui predict r50_maxn.json --mode 7W --mode 15W --format json",
    add_arguments=add_arguments,
    run=run,
)
