"""Text from files, peers and values: what files, peers and values put on a terminal, in a CSV, a
plot or the stylesheet. Each case failed on main at 5394437 (a traceback, a raw escape sequence, a
formula cell, a flooded or misleading error line).

The command-line cases run ``python -m jtop_roof`` and build their files without importing the
package, so that ``PYTHONPATH=<old tree> pytest tests/tui/test_hostile_text_in.py`` runs them against an
old tree; the rest import what they check inside the test."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import cli_support
import pytest

START_WALL, START_MONO, STEP = 1_700_000_000.0, 50.0, 0.5


def jroof(where: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command line, run in ``where`` (not the checkout: ``-m`` imports from the working folder)."""
    return cli_support.jroof(*args, env=None if env is None else {**os.environ, **env}, cwd=where,
                             errors="backslashreplace")


def _sample(i: int, rail: str, zone: str) -> dict[str, Any]:
    busy = 4 <= i < 12
    return {"type": "sample", "t": START_WALL + i * STEP, "mono": START_MONO + i * STEP,
            "ram_mb": {"used": 3000 + i, "total": 7620}, "cpu": [{"load_pct": 30 + i, "mhz": 1510}],
            "gpu": {"load_pct": 95 if busy else 2, "mhz": 612, "gpc_mhz": [612]},
            "emc": {"load_pct": 11, "mhz": 2133}, "engines": {}, "temps_c": {zone: 47.5 + i / 4},
            "rails_mw": {rail: {"now": 6100 + 40 * i}, "VDD_CPU_GPU_CV": {"now": 1800 + i}}, "unknown": []}


def write_recording(path: Path, *, phase: str = "decode", rail: str = "VDD_IN", zone: str = "tj",
                    last_event: dict[str, Any] | None = None) -> Path:
    """A short recording: 16 samples, ``phase`` from sample 4 to 12; ``json.dumps`` escapes what
    it holds (a lone surrogate becomes ``\\udfff`` in the file, as a hostile writer would put it)."""
    lines: list[dict[str, Any]] = [{
        "type": "header", "app": "jroof-tui", "schema": 1, "version": "test", "source": "tegrastats",
        "interval_ms": STEP * 1000, "start_wall": START_WALL, "start_mono": START_MONO,
        "device": "orin-nano-8gb-super", "power_mode": "7W"}]
    for i in range(16):
        t_wall, t_mono = START_WALL + i * STEP - 0.1, START_MONO + i * STEP - 0.1
        if i == 4:
            lines.append({"type": "marker", "kind": "phase_start", "name": phase, "t": t_wall, "mono": t_mono,
                          "origin": "script"})
        if i == 12:
            lines.append({"type": "marker", "kind": "phase_end", "name": None, "t": t_wall, "mono": t_mono,
                          "origin": "script"})
        lines.append(_sample(i, rail, zone))
    if last_event is not None:
        lines.append({"type": "event", "t": START_WALL + 16 * STEP, "mono": START_MONO + 16 * STEP,
                      "gap_s": None, **last_event})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def assert_one_clean_line(stderr: str) -> str:
    """The error is one line with no control character (escape, bell, C1 CSI) left raw."""
    lines = stderr.strip("\n").split("\n")
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    assert not any(not c.isprintable() for c in lines[0]), ascii(lines[0])
    return lines[0]


# --------------------------------------------------------------------- item 2: text to terminals


def test_a_replayed_source_error_reaches_the_terminal_escaped(tmp_path):
    detail = "sensor hub lost \x1b]2;hijacked title\x07\x1b[2J\x9b5m\nFAKE: jroof-tui: all good"
    recording = write_recording(tmp_path / "field.jsonl",
                                last_event={"kind": "source_error", "detail": detail})
    result = jroof(tmp_path, "record", "--replay", str(recording), "--speed", "64",
                   str(tmp_path / "again.jsonl"))
    assert result.returncode == 1
    said = [line for line in result.stderr.splitlines() if "sensor hub lost" in line]
    assert len(said) == 1, result.stderr
    assert "\\x1b]2;hijacked title\\x07\\x1b[2J\\x9b5m\\nFAKE" in said[0]
    assert not any(c in result.stderr for c in "\x1b\x07\x9b")
    assert not any(line.startswith("FAKE") for line in result.stderr.splitlines())


def test_a_file_name_with_escapes_is_shown_escaped_in_the_error(tmp_path):
    result = jroof(tmp_path, "report", str(tmp_path / "run\x1b[8mhidden\x1b[0m.jsonl"))
    assert result.returncode == 2
    line = assert_one_clean_line(result.stderr)
    assert "run\\x1b[8mhidden\\x1b[0m.jsonl" in line


def test_for_terminal_escapes_controls_and_keeps_printable_text():
    from jtop_roof.model.metrics import for_terminal

    assert for_terminal("é — 5 °C\tok") == "é — 5 °C\\tok"
    assert for_terminal("a\x1b[1mb\x9bc\u202ed\r\ne\ud83f") == "a\\x1b[1mb\\x9bc\\u202ed\\r\\ne\\ud83f"


# ---------------------------------------------------------------------- item 7: lone surrogates


@pytest.fixture
def surrogate_recording(tmp_path: Path) -> Path:
    return write_recording(tmp_path / "odd.jsonl", phase="pre\udbfffill", rail="VDD_\udfffSOC",
                           zone="soc\ud834", last_event={"kind": "note", "detail": "fan \udc00 noise"})


@pytest.mark.parametrize(
    "command",
    [
        ["parse", "{file}"],
        ["report", "{file}", "--format", "json", "--out", "{out}.json"],
        ["report", "{file}", "--format", "csv"],
        ["report", "{file}"],
        ["export", "{file}", "--out", "{out}.csv"],
        ["export", "{file}", "--format", "jsonl", "--out", "{out}.jsonl"],
    ],
)
def test_lone_surrogates_in_names_are_replaced_on_input(surrogate_recording, tmp_path, command):
    out = tmp_path / "result"
    args = [part.format(file=surrogate_recording, out=out) for part in command]
    result = jroof(tmp_path, *args)
    assert result.returncode == 0, result.stderr
    written = next(iter(tmp_path.glob("result.*")), None)
    text = result.stdout if written is None else written.read_text(encoding="utf-8")
    assert "\ufffd" in text or "\\ufffd" in text


def test_lone_surrogates_do_not_stop_a_plot(surrogate_recording, tmp_path):
    pytest.importorskip("matplotlib")
    result = jroof(tmp_path, "plot", str(surrogate_recording), "--out", str(tmp_path / "odd.png"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "odd.png").stat().st_size > 0


def test_the_decoder_replaces_surrogates_in_every_text():
    from jtop_roof.model.codec import record_from_json
    from jtop_roof.model.records import Event, Marker, Sample

    at = {"t": 1.0, "mono": 1.0}
    marker = record_from_json({"type": "marker", "kind": "phase_start", "name": "a\udabcb",
                               "origin": "scr\udc01", **at})
    event = record_from_json({"type": "event", "kind": "no\ud800te", "detail": "x\udfffy", **at})
    sample = record_from_json({"type": "sample", "raw": "r\ud8ff", "unknown": ["u\udc00"],
                               "rails_mw": {"R\udd00": {"now": 1}}, "throttle_reasons": ["t\ud900"], **at})
    assert isinstance(marker, Marker) and marker.name == "a\ufffdb" and marker.origin == "scr\ufffd"
    assert isinstance(event, Event) and (event.kind, event.detail) == ("no\ufffdte", "x\ufffdy")
    assert isinstance(sample, Sample) and list(sample.rails) == ["R\ufffd"]
    assert (sample.raw, sample.unknown, sample.throttle_reasons) == ("r\ufffd", ["u\ufffd"], ["t\ufffd"])


# ------------------------------------------------------------------------------ item 9: crashes


@pytest.mark.parametrize(
    ("phase", "file_name", "title"),
    [
        (r"tile $\ell_{2$ norm", "plain.jsonl", None),
        ("prefill", "run$\\undefinedmacro$.jsonl", None),
        ("prefill", "plain.jsonl", r"energy $x^{$ per token"),
    ],
)
def test_mathtext_in_a_phase_file_name_or_title_is_drawn_as_typed(tmp_path, phase, file_name, title):
    pytest.importorskip("matplotlib")
    recording = write_recording(tmp_path / file_name, phase=phase)
    result = jroof(tmp_path, "plot", str(recording), "--out", str(tmp_path / "figure.svg"),
                   *(() if title is None else ("--title", title)))
    assert result.returncode == 0, result.stderr
    figure = (tmp_path / "figure.svg").read_text()
    assert (title or "").split(" ")[0] in figure


def test_a_non_utf8_stdout_gets_the_report_without_a_traceback(tmp_path):
    recording = write_recording(tmp_path / "naïve.jsonl", phase="décodage")
    for args in (["report", str(recording)], ["parse", str(recording)], ["report", str(recording), "--format",
                                                                        "csv"]):
        result = jroof(tmp_path, *args, env={"PYTHONIOENCODING": "ascii"})
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr and "d?codage" in result.stdout


BORDER_AUTO = "name: dim-borders\nprimary: '#5f87af'\nvariables:\n  pane-border: auto 40%\n"


@pytest.mark.parametrize(
    ("variables", "refused"),
    [
        ({"pane-border": "auto 40%"}, "pane-border"),  # ours, drawn as a border
        ({"block-cursor-background": "auto 30%"}, "block-cursor-background"),  # Textual's, a background
        ({"border-blurred": "initial"}, "border-blurred"),  # Textual's, a border
        ({"level-warn": "auto 70%", "link-background": "initial"}, None),  # each where it is taken
    ],
)
def test_theme_variables_are_checked_where_the_stylesheet_uses_them(variables, refused):
    import jtop_roof.tui.app  # noqa: F401  (the monitor's widgets: their stylesheets are the check)
    from jtop_roof.tui.themes import ThemeError, parse_theme, to_textual_theme

    spec = parse_theme({"name": "odd", "primary": "#5f87af", "variables": variables}, "odd.yaml", "odd")
    if refused is None:
        assert to_textual_theme(spec).name == "odd"
        return
    with pytest.raises(ThemeError, match=f"variable '{refused}' is '"):
        to_textual_theme(spec)


async def test_a_theme_the_stylesheet_refuses_falls_back_at_start_and_on_the_theme_key(tmp_path):
    from tui_support import make_config, paused_replay

    from jtop_roof.tui.app import JroofApp

    themes = tmp_path / "themes"
    themes.mkdir()
    (themes / "dim-borders.yaml").write_text(BORDER_AUTO)
    app = JroofApp(paused_replay(), make_config(theme="dim-borders"), user_themes=themes)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.theme == "jroof-dark"
        assert any("dim-borders.yaml" in str(n.message) and "pane-border" in str(n.message)
                   for n in app._notifications)
        for _ in range(5):
            await pilot.press("t")
            await pilot.pause()
        assert app.is_running and app.theme != "dim-borders"


# ------------------------------------------------------------------------------ item 14: cosmetic


@pytest.mark.parametrize("phase", ["+SUM(4,5)*cmd|' /C notepad'!A1", "@IMPORTXML(x)", "-2+3", "\tlead",
                                   "=1/0"])
def test_csv_text_cells_never_start_a_formula(tmp_path, phase):
    recording = write_recording(tmp_path / "sheet.jsonl", phase=phase)
    exported = jroof(tmp_path, "export", str(recording))
    reported = jroof(tmp_path, "report", str(recording), "--format", "csv")
    assert exported.returncode == reported.returncode == 0, exported.stderr + reported.stderr
    export_rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert {row["phase"] for row in export_rows} == {"", "'" + phase}
    report_names = [row["name"] for row in csv.DictReader(io.StringIO(reported.stdout))]
    assert "'" + phase in report_names and phase not in report_names


def test_csv_numbers_are_left_as_numbers():
    from jtop_roof.outputs.report import spreadsheet_text

    assert spreadsheet_text("VDD_IN") == "VDD_IN" and spreadsheet_text("") == ""
    # A carriage return still gets its quote, and is then written as its escape (it would
    # overwrite the line on a terminal): tests/cli/test_hostile_text_out.py.
    assert spreadsheet_text("\rx") == "'\\rx" and spreadsheet_text("a=b") == "a=b"


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_bad_ssh_host_is_blamed_on_the_flag_typed(tmp_path, where):
    flag = ["--ssh", "two words"]
    args = [*flag, "record", str(tmp_path / "r.jsonl")] if where == "before" else ["record", *flag,
                                                                                    str(tmp_path / "r.jsonl")]
    result = jroof(tmp_path, *args)
    assert result.returncode == 2
    line = assert_one_clean_line(result.stderr)
    assert line.endswith("(from --ssh)") and "--ssh-hosts" not in line


@pytest.mark.parametrize(
    "args",
    [
        ["report", "{file}", "--tz", "Mars/" + "Olympus" * 600],
        ["export", "{file}", "--format", "parquet" * 700],
        ["report", "{dir}/" + "deep" * 1200 + ".jsonl"],
        ["--config", "{dir}/" + "settings" * 600 + ".yaml", "devices"],
    ],
)
def test_error_lines_cut_long_values(tmp_path, args):
    recording = write_recording(tmp_path / "short.jsonl")
    result = jroof(tmp_path, *[part.format(file=recording, dir=tmp_path) for part in args])
    assert result.returncode == 2
    line = assert_one_clean_line(result.stderr)
    assert len(line) <= 1000 and "…" in line


def test_a_lone_surrogate_in_a_header_reaches_no_output(tmp_path):
    path = write_recording(tmp_path / "board.jsonl")
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["model"] = "Orin \udc81 bench"
    header["host"] = "\ud9ffrig"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    done = jroof(tmp_path, "report", str(path), "--format", "json", "--out", str(tmp_path / "r.json"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert written["source"]["model"] == "Orin \ufffd bench"


def test_serve_says_a_replayed_source_error_safely(tmp_path, capsys):
    from tui_support import ScriptedSource

    from jtop_roof.model.records import Event
    from jtop_roof.outputs.serve import run_serve
    from jtop_roof.runtime.config import Config

    hostile = Event("source_error", "board gone \x1b]0;owned\x07 \x9b2J", 1.0, 1.0)
    source = ScriptedSource([hostile])
    source.records = lambda: iter([hostile])  # it ends after the error, as a dead source does
    assert run_serve(source, Config(), port=0, install_signal_handlers=False) == 1
    err = capsys.readouterr().err
    assert "\\x1b]0;owned\\x07" in err and "\x1b" not in err and "\x9b" not in err
