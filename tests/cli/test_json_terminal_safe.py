"""JSON we print never carries a raw C1 control (U+0080-U+009F: U+009B acts as ESC [) nor a bidi
override or isolate (U+202A-U+202E, U+2066-U+2069): they are written as \\uXXXX, so the JSON stays
valid and reads back to the same strings, but a terminal showing it acts on nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cli_support import jroof
from factories import synthetic_sample
from hypothesis import given
from hypothesis import strategies as st
from paths import REPO
from source_support import WAIT_S

from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.jsonsafe import terminal_safe
from jtop_roof.model.records import Marker

ROOT = REPO
#: Every character a terminal acts on that JSON leaves raw.
UNSAFE = [chr(c) for c in (*range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))]
EVIL = "bench\u009b2J\u202eevil\\\u2066x\u0085"


def printed_raw(text: str) -> list[str]:
    return [c for c in UNSAFE if c in text]


@given(st.text())
def test_escaped_json_reads_back_the_same_and_holds_none_raw(text):
    raw = json.dumps({"name": text, "list": [text, 1.5]}, ensure_ascii=False)
    safe = terminal_safe(raw)
    assert json.loads(safe) == json.loads(raw)
    assert printed_raw(safe) == []


def test_every_unsafe_character_is_escaped_and_others_left_as_they_are():
    raw = json.dumps("".join(UNSAFE) + "é→ä漢\u00a0\u200f", ensure_ascii=False)
    safe = terminal_safe(raw)
    assert printed_raw(safe) == [] and safe.count("\\u") == len(UNSAFE)
    assert safe.endswith('é→ä漢\u00a0\u200f"')
    plain = '{"name":"café"}'
    assert terminal_safe(plain) is plain  # nothing to escape: the text itself, not a copy


def evil_recording(path: Path) -> Path:
    """A recording whose phase is named with the characters (a script's marker can carry them)."""
    samples = [synthetic_sample(i) for i in range(4)]
    start = Marker("phase_start", EVIL, samples[1].t_wall, samples[1].t_mono - 0.1, "script")
    lines = [json_line({"type": "header", "app": "jroof-tui", "schema": 1, "source": "tegrastats",
                        "interval_ms": 500})]
    lines += [json_line(record_to_json(r)) for r in (samples[0], start, *samples[1:])]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_parse_of_a_recording_escapes_them(tmp_path):
    done = jroof("parse", str(evil_recording(tmp_path / "r.jsonl")))
    assert done.returncode == 0, done.stderr
    assert printed_raw(done.stdout) == []
    names = [json.loads(line).get("name") for line in done.stdout.splitlines()]
    assert EVIL in names


def test_parse_of_a_log_from_a_pipe_escapes_a_line_that_is_no_sample(tmp_path):
    """From standard input each line is written as it comes (a block of one)."""
    text = f"garbage {EVIL}\n"
    done = subprocess.run([sys.executable, "-m", "jtop_roof", "parse", "-"], input=text, capture_output=True,
                          text=True, encoding="utf-8", timeout=WAIT_S, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    # The line is printed as it came; then the pipe, which held no sample, is one error line.
    assert done.returncode == 2 and "no tegrastats samples in standard input" in done.stderr
    assert printed_raw(done.stdout) == []
    assert json.loads(done.stdout)["line"] == text.rstrip("\n")


def test_export_jsonl_escapes_them(tmp_path):
    done = jroof("export", str(evil_recording(tmp_path / "r.jsonl")), "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    assert printed_raw(done.stdout) == []
    assert EVIL in [json.loads(line)["phase"] for line in done.stdout.splitlines()]


def test_record_to_standard_output_escapes_them(tmp_path):
    """`record -` of a replayed recording: its marker's name comes out escaped, the same once read."""
    done = jroof("record", "-", "--replay", str(evil_recording(tmp_path / "r.jsonl")), "--speed", "64")
    assert done.returncode == 0, done.stderr
    assert printed_raw(done.stdout) == []
    assert EVIL in [json.loads(line).get("name") for line in done.stdout.splitlines()]
