"""Project-wide guards: Python 3.10 compatibility (ruff with target py310) and the data layer
never importing Textual (a small board running `jroof-tui record` must not pay for the UI)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_LAYER = [
    "jtop_roof.model",
    "jtop_roof.parser",
    "jtop_roof.timeline",
    "jtop_roof.logfile",
    "jtop_roof.config",
    "jtop_roof.session",
    "jtop_roof.recorder",
    "jtop_roof.history",
    "jtop_roof.ledger",
    "jtop_roof.pipeline",
    "jtop_roof.info",
    "jtop_roof.thermal",
    "jtop_roof.registry",
    "jtop_roof.headless",
    "jtop_roof.report",
    "jtop_roof.terminal",
    "jtop_roof.devices",
    "jtop_roof.roofline",
    "jtop_roof.roof_cli",
    "jtop_roof.sources.fileindex",
    "jtop_roof.probe",
    "jtop_roof.detectors",
    "jtop_roof.verdict",
    "jtop_roof.hook",
    "jtop_roof.board",
    "jtop_roof.trtexec",
    "jtop_roof.workload",
    "jtop_roof.ncu",
    "jtop_roof.sources.ssh",
    "jtop_roof.metrics",
    "jtop_roof.themes",
    "jtop_roof.control",
    "jtop_roof.sources.tegrastats",
    "jtop_roof.sources.host",
    "jtop_roof.sources.replay",
    "jtop_roof.sources.demo",
    "jtop_roof.cli",
]


def test_ruff_py310_target_passes():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it is in the test extras)")
    result = subprocess.run(
        [ruff, "check", "--target-version", "py310", "jtop_roof", "tests", "benchmarks"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_data_layer_does_not_import_textual():
    code = (
        "import importlib, sys\n"
        f"for name in {DATA_LAYER!r}:\n"
        "    importlib.import_module(name)\n"
        "ui = ('textual', 'textual_plotext', 'plotext')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ui)\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
