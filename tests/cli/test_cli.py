"""The command line as a user meets it: one-line errors with exit code 2, and `parse` output."""

import json
import os
import subprocess
import sys

import pytest
from cli_support import jroof
from factories import COUNT, write_synthetic
from paths import REPO, TESTS

DATA = TESTS / "data"
ROOT = REPO


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--theme", "nope", "--source", "demo"), "unknown theme 'nope'"),
        (("--replay", "/nonexistent.log"), "No such file"),
        (("--replay", "/"), "Is a directory"),
        (("parse", "/nonexistent.log"), "cannot read /nonexistent.log"),
        (("parse", "-", "--tz", "Nowhere/Bad"), "Nowhere/Bad"),
        (("parse", "-", "--interval", "0"), "--interval"),
        (("record", "out.jsonl", "--source", "demo", "--duration", "nan"), "--duration"),
        (("record", "out.jsonl", "--source", "demo", "--duration", "-1"), "--duration"),
        (("--speed", "1000", "record", "out.jsonl"), "--speed"),
        (("--bogus",), "unrecognized arguments"),
        (("mark", "name", "--end"), "--end alone"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(tmp_path, args, needle):
    result = jroof(*args, input="", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_parse_reads_stdin_and_reports_lines_that_are_not_samples():
    log = (DATA / "logfile" / "tx2_jp4_date_header.log").read_text()
    result = jroof("parse", "-", input=log)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    lines = [line for line in log.splitlines() if line.strip() and not line.startswith("#")]
    assert len(rows) == len(lines)
    assert rows[0]["non_sample"] is True and rows[0]["line"] == lines[0]
    assert rows[1]["t"] is None and len(rows[1]["cpu"]) == 6 and rows[1]["unknown"] == []


def test_parse_of_binary_input_prints_its_lines_then_says_it_held_no_sample():
    result = subprocess.run([sys.executable, "-m", "jtop_roof", "parse", "-"], input=bytes(range(256)) * 4,
                            capture_output=True, timeout=60)
    assert result.returncode == 2 and b"Traceback" not in result.stderr
    assert result.stderr.startswith(b"jroof-tui: error: no tegrastats samples in standard input: ")
    assert result.stderr.count(b"\n") == 1
    assert all(json.loads(line)["non_sample"] for line in result.stdout.splitlines())


def test_every_command_has_an_example_in_its_help():
    from jtop_roof.commands.main import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]  # noqa: SLF001 (argparse keeps them here)
    assert set(sub.choices) >= {"record", "run", "parse", "report", "compare", "export", "plot", "serve",
                                "devices", "roof", "probe", "mark"}
    for name, command in [("jroof-tui", parser), *sub.choices.items()]:
        assert (command.epilog or "").startswith("example"), name
        assert "jroof-tui" in command.epilog, name


def test_each_command_is_one_module_in_the_table():
    """A command is a module exposing COMMAND and one line in the table; the names are unique."""
    import importlib

    from jtop_roof.commands.main import COMMANDS

    names = [command.name for command in COMMANDS]
    assert len(set(names)) == len(names)
    for name in names:
        assert importlib.import_module(f"jtop_roof.commands.{name}").COMMAND.name == name


@pytest.mark.parametrize("args", [("parse", "-"), ("mark", "warmup")])
def test_parse_and_mark_start_light(tmp_path, args):
    """Called per line of a pipe or between the steps of a benchmark: they run without the session,
    the report, YAML or numpy."""
    code = ("import sys\n"
            "from jtop_roof.commands.main import main\n"
            f"status = main({list(args)!r})\n"
            "heavy = {'jtop_roof.runtime.session', 'jtop_roof.outputs.report', 'yaml', 'numpy', 'textual'}\n"
            "print(status, sorted(heavy.intersection(m.split('.')[0] for m in sys.modules) | "
            "heavy.intersection(sys.modules)))\n")
    # parse is given one tegrastats line (empty input is an error since it holds no sample).
    log = (DATA / "logfile" / "agxorin_jp6_500ms.log").read_text()
    line = log.splitlines()[-1] + "\n" if args[0] == "parse" else ""
    result = subprocess.run([sys.executable, "-c", code], input=line, capture_output=True, text=True,
                            timeout=60, env={**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    status = 0 if args[0] == "parse" else 1  # no monitor took the marker
    assert result.stdout.splitlines()[-1] == f"{status} []", result.stdout + result.stderr


def test_every_one_line_error_is_a_user_error():
    """main catches UserError once: each layer's one-line error must be one."""
    from jtop_roof.formats.logfile import RecordingError
    from jtop_roof.formats.ncu import NcuError
    from jtop_roof.formats.trtexec import TrtexecError
    from jtop_roof.formats.userfiles import YamlError
    from jtop_roof.model.errors import UserError
    from jtop_roof.outputs.compare import CompareError
    from jtop_roof.outputs.export import ExportError
    from jtop_roof.outputs.plot import PlotError
    from jtop_roof.outputs.serve import ServeError
    from jtop_roof.roofline.devices import DeviceError
    from jtop_roof.roofline.measured import ProbeError
    from jtop_roof.roofline.workload import WorkloadError
    from jtop_roof.runtime.config import ConfigError
    from jtop_roof.runtime.control import ControlError
    from jtop_roof.runtime.session import SessionError
    from jtop_roof.tui.themes import ThemeError

    for error in (RecordingError, NcuError, TrtexecError, YamlError, CompareError, ExportError, PlotError,
                  ServeError, DeviceError, ProbeError, WorkloadError, ConfigError, ControlError,
                  SessionError, ThemeError):
        assert issubclass(error, UserError), error
    assert issubclass(ControlError, OSError)  # the listener still takes it as one


def test_parse_into_a_reader_that_leaves_early_is_quiet(tmp_path):
    """`jroof-tui parse big.log | head -1`: the reader closes the pipe; no error, no traceback."""
    line = next(x for x in (DATA / "fake_tegrastats_orinnano_super.txt").read_text().splitlines()
                if not x.startswith("#"))
    log = tmp_path / "big.log"
    log.write_text((line + "\n") * 20000)
    proc = subprocess.Popen([sys.executable, "-m", "jtop_roof", "parse", str(log)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait(60) == 0
    assert json.loads(first)["gpu"] is not None
    assert proc.stderr.read() == b""


def test_report_and_export_read_standard_input(tmp_path):
    """`-` is standard input: spooled to a private temporary file (read twice), gone after."""
    recording = tmp_path / "bench.jsonl"
    write_synthetic(recording)
    env = dict(os.environ, TMPDIR=str(tmp_path / "spool"))
    (tmp_path / "spool").mkdir()
    from_file = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(recording), "--format",
                                "json"], capture_output=True, text=True, timeout=60, env=env)
    with open(recording, "rb") as stdin:
        piped = subprocess.run([sys.executable, "-m", "jtop_roof", "report", "-", "--format", "json"],
                               stdin=stdin, capture_output=True, text=True, timeout=60, env=env)
    assert piped.returncode == 0, piped.stderr
    report, reference = json.loads(piped.stdout), json.loads(from_file.stdout)
    assert report["source"]["file"] == "-"
    assert report["whole"] == reference["whole"] and report["phases"] == reference["phases"]
    with open(recording, "rb") as stdin:
        rows = subprocess.run([sys.executable, "-m", "jtop_roof", "export", "-"], stdin=stdin,
                              capture_output=True, text=True, timeout=60, env=env)
    assert rows.returncode == 0 and len(rows.stdout.splitlines()) == 1 + COUNT, rows.stderr
    assert not any((tmp_path / "spool").iterdir())  # the spool is gone


@pytest.mark.parametrize("command", [["record", "{out}", "--duration", "1"], ["serve", "--listen", "0"],
                                     ["run", "--headless", "--record", "{out}", "--", "true"]])
@pytest.mark.parametrize("flag", [["--workload", "examples/resnet50_int8.yaml"],
                                  ["--probe", "tests/data/h200_probe.json"]])
def test_commands_that_draw_no_roof_refuse_its_inputs(tmp_path, command, flag):
    """--workload and --probe feed the roof; a command that keeps none says so instead of
    dropping them (and starts nothing)."""
    out = tmp_path / "kept.jsonl"
    args = [a.format(out=out) for a in command]
    at = args.index("--") if "--" in args else len(args)
    given = [str(ROOT / f) if f.endswith((".yaml", ".json")) else f for f in flag]
    argv = [sys.executable, "-m", "jtop_roof", *args[:at], "--source", "demo", *given, *args[at:]]
    done = subprocess.run(argv,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), XDG_RUNTIME_DIR=str(tmp_path)))
    assert done.returncode == 2 and "keeps no roof" in done.stderr, done.stderr
    assert not out.exists()
