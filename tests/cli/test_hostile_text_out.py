"""What a terminal acts on (ESC, BEL, CR, C1 controls, bidi marks and overrides, zero-width and
other format characters, lone surrogates) never reaches it raw from a name in a file: CSV on
stdout (``report --format csv``, ``export``) and ``/metrics`` label values write each as its escape
(``\\x1b``), ``plot`` draws them so and says a glyph its font lacks in one safe line, and a file
name or ``--title`` that is no UTF-8 is drawn, not a traceback.

The command-line cases run ``python -m jtop_roof`` in a temporary folder and build their files
without the package, so that ``PYTHONPATH=<another tree>`` runs them against that tree."""

from __future__ import annotations

import json
import os
import subprocess
import unicodedata
from pathlib import Path

import cli_support
import pytest

START = 1_700_000_000.0
#: One of each kind: ESC with a colour and a title sequence, BEL, CR, DEL, C1 CSI, NEL, LRM,
#: RLO, an isolate, a zero-width space, a tag character, a line separator.
HOSTILE = "\x1b[31m\x1b]0;pwned\x07\r\x7f\x9b2J\x85\u200e\u202e\u2066\u200b\U000e0041\u2028"
HIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def hidden(text: str) -> list[str]:
    """The characters a terminal acts on (a CSV's or an exposition's own line feeds aside)."""
    return [c for c in text if c not in "\n" and unicodedata.category(c) in HIDDEN]


def jroof(where: Path, *args: str | bytes) -> subprocess.CompletedProcess[str]:
    return cli_support.jroof(*args, cwd=where, errors="surrogateescape")


def recording(path: Path, name: str) -> Path:
    """16 samples with a phase, a rail, a zone and an engine named ``name``."""
    lines: list[dict] = [{"type": "header", "app": "jroof-tui", "schema": 1, "version": "t",
                          "source": "tegrastats", "interval_ms": 500, "start_wall": START,
                          "start_mono": 50.0, "device": "orin-nano-8gb-super", "power_mode": "7W"}]
    for i in range(16):
        t, mono = START + i * 0.5, 50.0 + i * 0.5
        if i in (4, 12):
            lines.append({"type": "marker", "kind": "phase_start" if i == 4 else "phase_end",
                          "name": "ph" + name if i == 4 else None, "t": t - 0.1, "mono": mono - 0.1,
                          "origin": "script"})
        lines.append({"type": "sample", "t": t, "mono": mono, "ram_mb": {"used": 3000, "total": 7620},
                      "cpu": [{"load_pct": 30, "mhz": 1510}], "gpu": {"load_pct": 50, "mhz": 612,
                                                                      "gpc_mhz": [612]},
                      "emc": {"load_pct": 11, "mhz": 2133}, "engines": {}, "temps_c": {"tj" + name: 47.5},
                      "rails_mw": {"VDD" + name: {"now": 6100}, "VDD_CPU_GPU_CV": {"now": 1800}},
                      "unknown": []})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("args", [["report", "{file}", "--format", "csv"], ["export", "{file}"],
                                  ["export", "{file}", "--table", "power"]],
                         ids=["report-csv", "export-csv", "export-power-csv"])
def test_csv_on_stdout_writes_what_a_terminal_acts_on_as_escapes(tmp_path, args):
    file = recording(tmp_path / "r.jsonl", HOSTILE)
    done = jroof(tmp_path, *[a.replace("{file}", str(file)) for a in args])
    assert done.returncode == 0, done.stderr
    assert hidden(done.stdout) == [], ascii(done.stdout[:400])
    if args[0] == "report":
        assert "ph\\x1b[31m\\x1b]0;pwned\\x07\\r\\x7f\\x9b2J\\x85\\u200e\\u202e" in done.stdout


def test_spreadsheet_text_keeps_the_formula_quote_and_plain_names():
    from jtop_roof.outputs.report import spreadsheet_text

    assert spreadsheet_text("=cmd\x1b") == "'=cmd\\x1b"
    assert spreadsheet_text("décodé 漢字 \u00a0x\ty") == "décodé 漢字 \u00a0x\ty"
    assert spreadsheet_text("a\udcffb") == "a\\udcffb"


def test_metrics_label_values_write_what_a_terminal_acts_on_as_escapes():
    from jtop_roof.outputs.serve import Snapshot, render

    info = {"device": "orin", "model": "Jetson" + HOSTILE, "power_mode": "7W" + HOSTILE, "source": "demo",
            "version": "t"}
    text = render(Snapshot(info=info, phase="bench" + HOSTILE), board="rack" + HOSTILE)
    assert hidden(text) == [], ascii(text)
    assert 'model="Jetson\\\\x1b[31m' in text  # the escape's backslash, escaped by the exposition


@pytest.fixture
def plotted(tmp_path):
    pytest.importorskip("matplotlib")
    return recording(tmp_path / "r.jsonl", HOSTILE + "\u0378")


def test_plot_says_glyphs_its_font_lacks_in_one_safe_line(tmp_path, plotted):
    done = jroof(tmp_path, "plot", str(plotted), "--out", "r.png")
    assert done.returncode == 0, done.stderr
    assert hidden(done.stderr) == [] and "Warning" not in done.stderr, ascii(done.stderr)
    assert len(done.stderr.strip("\n").split("\n")) <= 2  # the glyph line, and "wrote r.png"
    assert (tmp_path / "r.png").stat().st_size > 0


@pytest.mark.parametrize("how", ["file name", "title"])
def test_plot_of_a_name_that_is_no_utf8_is_drawn(tmp_path, plotted, how):
    name = os.fsdecode(b"run\xff\xfe.jsonl")
    if how == "file name":
        os.rename(plotted, tmp_path / name)
        args = [name]
    else:
        args = [str(plotted), "--title", os.fsdecode(b"bench \xff\x1b[2J")]
    done = jroof(tmp_path, "plot", *args, "--out", "r.png")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert (tmp_path / "r.png").stat().st_size > 0
