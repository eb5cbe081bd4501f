"""Project-wide guards: Python 3.10 compatibility (ruff with target py310) and the data layer
never importing Textual (a small board running `jroof-tui record` must not pay for the UI)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_LAYER = [
    "jtop_roof.model.records",
    "jtop_roof.formats.parser",
    "jtop_roof.model.timeline",
    "jtop_roof.formats.logfile",
    "jtop_roof.runtime.config",
    "jtop_roof.runtime.session",
    "jtop_roof.formats.recorder",
    "jtop_roof.analysis.history",
    "jtop_roof.analysis.ledger",
    "jtop_roof.analysis.pipeline",
    "jtop_roof.model.info",
    "jtop_roof.model.thermal",
    "jtop_roof.model.registry",
    "jtop_roof.runtime.headless",
    "jtop_roof.outputs.report",
    "jtop_roof.tui.terminal",
    "jtop_roof.roofline.devices",
    "jtop_roof.roofline.ceilings",
    "jtop_roof.commands.roof",
    "jtop_roof.sources.fileindex",
    "jtop_roof.probe.probe",
    "jtop_roof.analysis.detectors",
    "jtop_roof.analysis.verdict",
    "jtop_roof.hook",
    "jtop_roof.roofline.board",
    "jtop_roof.formats.trtexec",
    "jtop_roof.roofline.workload",
    "jtop_roof.formats.ncu",
    "jtop_roof.sources.ssh",
    "jtop_roof.model.metrics",
    "jtop_roof.tui.themes",
    "jtop_roof.runtime.control",
    "jtop_roof.sources.tegrastats",
    "jtop_roof.sources.host",
    "jtop_roof.sources.replay",
    "jtop_roof.sources.demo",
    "jtop_roof.commands.cli",
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
