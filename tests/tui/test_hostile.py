"""Hostile files: every field of every record type with the wrong type, non-finite or absurd values,
bad dates, clock jumps, duplicate keys, long lines, bad headers. Through the decoder, `parse`,
headless `record --replay`, `report` and the TUI: no traceback, bounded memory, every run ends."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import jroof
from tui_support import FIXTURE, make_config, wait_until

from jtop_roof.analysis.history import DYNAMIC_BYTES, History
from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.formats import jsonout, parser
from jtop_roof.formats.logfile import MAX_LINE_BYTES, ReadStats, iter_parse_lines, iter_records
from jtop_roof.formats.parser import parse_line
from jtop_roof.model.codec import MAX_CORES, MAX_MONO_S, MAX_NAMED, Tally, record_from_json, sample_from_json
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, Marker, Sample, Work
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp

HEADER = {"type": "header", "schema": 1, "app": "jroof-tui", "version": "0.1.0", "source": "tegrastats",
          "start_wall": 1776562270.0, "start_mono": 0.0, "tz": "UTC", "interval_ms": 100}
GOOD = json.loads(FIXTURE.read_text().splitlines()[1])
BAD_VALUES: list[Any] = ["x", [1, 2], {"a": 1}, float("nan"), float("inf"), float("-inf"), 1e308, -1e308,
                         1e20, -5, True]
BAD_TIMES: list[Any] = [float("nan"), float("inf"), 1e20, -1.0, -62135596800.0, 253402300799.0, "x", [1]]
PLAIN = ("RAM 2000/7607MB (lfb 61x4MB) SWAP 0/3803MB (cached 0MB) CPU [1%@1728,2%@1728] EMC_FREQ 0%@3199 "
         "GR3D_FREQ 0%@[1018] cpu@48.9C VDD_IN 5971mW/5971mW")


def field_paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key and list index of a sample (the first two items of a list), depth first."""
    out: list[tuple] = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj[:2]) if isinstance(obj, list) else ()
    for key, value in items:
        out.append(prefix + (key,))
        out.extend(field_paths(value, prefix + (key,)))
    return out


def hostile_lines() -> list[str]:
    """A recording whose every sample field, in turn, holds each bad value; bad markers and events;
    bad times and dates; a duplicated key; 3,000 cores, rails and zones on one line."""
    lines = [json.dumps(HEADER)]
    mono = 0.0
    for path in field_paths(GOOD):
        if path == ("type",):
            continue
        for bad in BAD_VALUES:
            sample = copy.deepcopy(GOOD)
            node = sample
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = bad
            if path[0] not in ("t", "mono"):
                sample["mono"] = mono = mono + 0.1
            lines.append(json.dumps(sample))
    for bad in BAD_VALUES + BAD_TIMES:
        mono += 0.1
        lines.append(json.dumps({"type": "marker", "kind": "phase_start", "name": bad, "t": bad, "mono": bad,
                                 "origin": bad}))
        lines.append(json.dumps({"type": "marker", "kind": bad, "name": 7, "t": 1.0, "mono": mono}))
        lines.append(json.dumps({"type": "event", "kind": bad, "detail": bad, "t": bad, "mono": bad,
                                 "gap_s": bad}))
        lines.append(json.dumps({"type": "event", "kind": "note", "detail": {"an": ["object"]}, "t": 1.0,
                                 "mono": mono, "gap_s": bad}))
    for bad in BAD_TIMES:
        lines.append(json.dumps({**GOOD, "t": bad, "mono": mono}))
        mono += 0.1
    lines.append(json.dumps({**GOOD, "mono": mono + 1e9}))  # a clock jump of 30 years
    lines.append(json.dumps({**GOOD, "mono": mono}))  # and back
    at = f'"mono":{mono}'
    lines.append('{"type":"sample",' + at + ',"mono":"x","ram_mb":{"used":1,"used":"a","total":2}}')
    lines.append('{"type":"sample","type":"marker","kind":"phase_end",' + at + '}')
    lines.append(json.dumps({"type": "sample", "mono": mono, "cpu": [{"load_pct": 1, "mhz": 100}] * 3000,
                             "rails_mw": {f"R{i}": {"now": i} for i in range(3000)},
                             "temps_c": {f"z{i}": 40 for i in range(3000)},
                             "engines": {f"E{i}": "off" for i in range(3000)}}))
    lines.append("[" * 100_000 + "]" * 100_000)  # nested past the stack
    lines.append(json.dumps({"type": "x" * 100, "mono": mono}))
    lines.append(json.dumps({**GOOD, "mono": mono + 1}))
    return lines


def strict_json(text: str) -> Any:
    """json.loads that refuses NaN and Infinity (not JSON)."""
    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(hostile_lines()) + "\n")
    return path


# ---------------------------------------------------------------------------------- decoder


@pytest.mark.parametrize("bad", BAD_VALUES)
def test_every_sample_field_with_a_bad_value_decodes_to_typed_values(bad):
    for path in field_paths(GOOD):
        sample_obj = copy.deepcopy(GOOD)
        node = sample_obj
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = bad
        tally = Tally()
        sample = sample_from_json(sample_obj, tally)
        for value in (sample.t_wall, sample.t_mono):
            assert value is None or (type(value) in (int, float) and 0 <= value < 1e11)
        for core in sample.cpus or []:
            assert core is None or core.load_pct is None or abs(core.load_pct) <= 1e9
        for rail in sample.rails.values():
            assert type(rail.now_mw) in (int, float) and abs(rail.now_mw) <= 1e9
        assert all(v is None or type(v) in (int, float) for v in sample.temps_c.values())
        assert sample.ram is None or type(sample.ram.used_mb) in (int, float)
        assert sample.gpu is None or all(type(m) is int for m in sample.gpu.gpc_mhz)
        total = sample.power_total
        assert total is None or abs(total.mw) < 1e12
        derived = path[0] in ("type", "power_total_mw") or path == ("gpu", "mhz")
        # -5 is a load or °C, [1, 2] two GPC clocks, {"a": 1} a zone "a" at 1 °C or a unit with
        # no reading
        valid = bad == -5 or (bad == [1, 2] and path == ("gpu", "gpc_mhz")) or (
            bad == {"a": 1} and path[0] in ("cpu", "engines", "gpu", "emc", "temps_c"))
        if not valid and not derived:  # -5 is a valid load or °C
            assert tally.nulled, path  # a bad value in place of a good one is counted (True too)


def test_decoder_keeps_good_values_and_counts_bad_ones():
    tally = Tally()
    obj = {**GOOD, "t": float("nan"), "ram_mb": {"used": "x", "total": 2}, "gpu": {"load_pct": 1e20,
           "gpc_mhz": [1018, "x", 1.5]}, "cpu": [{"load_pct": 5, "mhz": 1728}] * 3000}
    sample = sample_from_json(obj, tally)
    assert sample.t_wall is None and sample.t_mono == GOOD["mono"]
    assert sample.ram is None
    assert sample.gpu is not None and sample.gpu.load_pct is None and sample.gpu.gpc_mhz == (1018,)
    assert len(sample.cpus) == MAX_CORES and tally.dropped == 3000 - MAX_CORES
    assert tally.nulled == 6  # t, used (and the RAM it belongs to), load_pct, "x", 1.5
    assert sample.rails["VDD_IN"].now_mw == GOOD["rails_mw"]["VDD_IN"]["now"]


def test_markers_and_events_with_bad_fields():
    tally = Tally()
    marker = record_from_json({"type": "marker", "kind": "phase_start", "name": 7, "t": "x", "mono": 1e20,
                               "origin": [1]}, tally)
    assert marker is not None and (marker.name, marker.t_wall, marker.t_mono, marker.origin) == (
        None, None, None, "key")
    assert record_from_json({"type": "marker", "kind": {"a": 1}}, tally) is None
    event = record_from_json({"type": "event", "kind": 3, "detail": {"an": "object"}, "gap_s": "x"}, tally)
    assert event is not None and event.kind == "note" and event.detail == "{'an': 'object'}"
    assert event.gap_s is None and tally.nulled == 8


def test_header_with_bad_clocks_and_thousands_of_hints_is_typed_safely():
    info = SourceInfo.from_mapping({**HEADER, "max_clocks": {"gpu_mhz": float("nan"), "emc_mhz": 1e308,
                                    "cpu_mhz": "x"}, "hints": ["h"] * 5000, "interval_ms": float("inf")})
    assert info.max_clocks == {} and len(info.hints) == 21 and info.interval_ms is None


# ------------------------------------------------------------------------------ the commands


def test_parse_of_a_hostile_recording_prints_json_and_says_what_it_dropped(hostile):
    result = jroof("parse", str(hostile))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    notes = result.stderr.strip().splitlines()
    assert len(notes) == 1 and "nulled" in notes[0] and "dropped" in notes[0] and "skipped" in notes[0]
    rows = [strict_json(line) for line in result.stdout.splitlines()]
    samples = [row for row in rows if "cpu" in row]
    assert max(len(row["cpu"] or ()) for row in samples) == MAX_CORES
    assert max(len(row["rails_mw"]) for row in samples) == MAX_NAMED
    assert all(row["t"] is None or 0 <= row["t"] < 1e11 for row in rows)


def test_parse_of_a_plain_log_with_bad_dates_and_a_long_line(tmp_path):
    path = tmp_path / "bad.log"
    stamps = ["01-01-0001 00:00:00", "12-31-9999 23:59:59", "13-45-2024 25:61:61", "01-01-2024 00:00:00",
              "01-01-2024 00:00:01"]
    body = [f"{stamp} {PLAIN}" for stamp in stamps]
    path.write_text("\n".join(body[:3] + ["RAM " + "9" * (3 * MAX_LINE_BYTES)] + body[3:]) + "\n")
    for tz in ("UTC", "+14:00", "-12:00"):
        result = jroof("parse", str(path), f"--tz={tz}")
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert "skipped 1 lines longer than 1 MiB" in result.stderr
        rows = [strict_json(line) for line in result.stdout.splitlines()]
        assert len(rows) == 5 and all(row["ram_mb"]["used"] == 2000 for row in rows)
        assert [row["t"] for row in rows][:3] == [None, None, None]
        assert rows[4]["t"] - rows[3]["t"] == 1.0


def test_record_of_a_hostile_replay_ends_and_writes_only_json(hostile, tmp_path):
    out = tmp_path / "out.jsonl"
    result = jroof("record", str(out), "--replay", str(hostile), "--speed", "64", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    rows = [strict_json(line) for line in out.read_text().splitlines()]
    assert sum(row["type"] == "sample" for row in rows) > 500
    report = jroof("report", str(hostile), "--format", "json")
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    strict_json(report.stdout)


def test_reader_and_replay_index_agree_on_a_hostile_recording(hostile):
    stats = ReadStats()
    read = [r for r in iter_records(hostile.read_text().splitlines(keepends=True), stats=stats)]
    assert stats.tally.nulled > 500 and stats.tally.dropped > 3 * 2900
    source = ReplaySource(hostile, tz="UTC")
    played = list(source.index.scan())
    # Only a marker or work may come before the stream's first sample (a negative mono).
    assert all(r.t_mono is None or (-MAX_MONO_S if isinstance(r, (Marker, Work)) else 0) <= r.t_mono < 1e11
               for r in played + read)
    assert [r.t_mono for r in played if isinstance(r, (Marker, Work))] == pytest.approx(
        [r.t_mono for r in read if isinstance(r, (Marker, Work))], abs=1e-6)
    # The one line the two take apart: "mono" given twice, the index takes the first, JSON the last.
    samples = [r for r in read if isinstance(r, Sample)]
    assert len([r for r in played if isinstance(r, Sample)]) == len(samples) + 1


async def test_tui_replays_a_hostile_recording_to_its_end(hostile, tmp_path):
    source = ReplaySource(hostile, tz="UTC", hold_at_end=True, speed=64)
    app = JroofApp(source, make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.request_seek_to("end")
        await wait_until(pilot, lambda: any(e.detail == "end of replay" for e in app.history.events),
                         "the end of the file", rounds=1500)
        app.redraw_now()
        await pilot.pause()
        await pilot.press("f")  # one pane full screen, then every pane at 80x24
        await pilot.pause()
        app.redraw_now()
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        app.redraw_now()
        await pilot.pause()
    assert app.return_code in (0, None)
    assert app.history.memory_bytes() <= History.for_duration(86400, 0.1).memory_bytes() + DYNAMIC_BYTES


# ------------------------------------------------------------------------------------ memory


def test_one_line_of_3000_cores_rails_and_zones_keeps_history_bounded():
    cores = ",".join(["1%@1728"] * 3000)
    rails = " ".join(f"R{i} {i}mW/{i}mW" for i in range(3000))
    zones = " ".join(f"z{i}@40C" for i in range(3000))
    line = f"RAM 2000/7607MB CPU [{cores}] {zones} {rails}"
    sample = parse_line(line)
    assert len(sample.cpus) == 3000 and len(sample.rails) == 3000 and len(sample.temps_c) == 3000
    history = History.for_duration(86400, 1.0)
    empty = history.memory_bytes()
    for i in range(3):
        sample.t_mono = float(i)
        history.append(sample)
    grown = history.memory_bytes() - empty
    assert grown <= DYNAMIC_BYTES
    assert history.cores <= MAX_CORES and len(history.rails) <= MAX_NAMED and len(history.zones) <= MAX_NAMED
    # each family has its own share: 3,000 cores do not starve the rails and zones of a 24 h history
    assert min(history.cores, len(history.rails), len(history.zones)) >= 32
    notes = [e.detail for e in history.events if e.kind == "note"]
    assert len(notes) == 3 and all("not kept in history" in n for n in notes)  # once per family
    assert len(line) > 21_000


def test_parse_keeps_no_long_text_in_its_caches():
    """A log whose every line names a new zone, rail and engine run thousands of characters long is
    read and printed, and none of those texts stays behind in the parser's or the printer's caches
    (they are bounded in entries; without this, in size too: 16,384 entries of 100 kB each)."""
    long = "z" * 5000
    lines = [
        f"RAM 1/2MB CPU [1%@2] GR3D_FREQ 0%@[{','.join(['611'] * 900)}] "
        + " ".join(["APE 174"] * 600) + f" {long}{i}@40C {long.upper()}{i} 1/1"
        for i in range(20)
    ]
    printed = list(iter_parse_lines(lines, tz="UTC", interval_s=1.0, stats=ReadStats()))
    assert len(printed) == 20 and f'"{long}19":40' in printed[-1]
    kept_keys = [key for cache in (parser._temp_pairs, parser._temp_values, parser._rail_readings,
                                   parser._engine_runs, parser._fields, parser._cpu_cores) for key in cache]
    assert all(long not in key and len(key) < 4000 for key in kept_keys)  # the engine run: 4,200
    kept_texts = [text for cache in (jsonout._gpu_cache, jsonout._temps, jsonout._rails, jsonout._engines)
                  for text in cache.text.values()]
    kept_texts += [*jsonout._names.values(), *jsonout._engine_sets.values(), *jsonout._source_tail.values()]
    kept_texts += [text for cache in (jsonout._field_text, jsonout._engine_text, jsonout._temp_text,
                                      jsonout._rail_text) for text in cache.values()]
    assert max(map(len, kept_texts)) <= jsonout.ENGINE_SET_CHARS
    assert all(long not in text for text in kept_texts)


def test_ledger_keeps_a_bounded_number_of_rails():
    ledger = EnergyLedger(1.0)
    for i in range(200):
        ledger.add_sample(float(i), None, 5000.0, {f"R{i}_{k}": 1.0 for k in range(MAX_NAMED)})
    assert len(ledger.whole.rails_j) == MAX_NAMED


# -------------------------------------------------------------------------- files that never end


def test_dev_zero_is_refused_everywhere(tmp_path):
    for args in (("parse", "/dev/zero"), ("report", "/dev/zero"), ("--replay", "/dev/zero", "record",
                                                                  str(tmp_path / "o.jsonl"))):
        result = jroof(*args, timeout=30)
        assert result.returncode == 2, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "not a regular file" in result.stderr
    with open("/dev/zero", "rb") as zero:
        result = subprocess.run([sys.executable, "-m", "jtop_roof", "parse", "-"], stdin=zero,
                                capture_output=True, timeout=30)
    assert result.returncode == 2 and b"not a regular file or a pipe" in result.stderr


def test_fifo_whose_writer_leaves_without_a_line_says_nothing_came(tmp_path):
    """``parse FIFO`` waits for a writer (tests/cli/test_fifo_inputs.py); one that comes and goes
    without a line is an input where nothing came; where a regular file is needed, a FIFO is
    refused without waiting."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    parse = subprocess.Popen([sys.executable, "-m", "jtop_roof", "parse", str(fifo)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(os.open(fifo, os.O_WRONLY))  # blocks until parse opened it for reading
    stdout, stderr = parse.communicate(timeout=30)
    assert parse.returncode == 2 and stdout == "", stderr
    assert stderr == f"jroof-tui: error: no tegrastats samples in {fifo}: nothing came\n"
    for args in (("report", str(fifo)), ("--replay", str(fifo), "record", str(tmp_path / "o.jsonl"))):
        result = jroof(*args, timeout=30)
        assert result.returncode == 2 and "not a regular file" in result.stderr, (args, result.stderr)


def test_an_endless_line_from_a_pipe_is_read_past_in_bounded_memory():
    """A writer that sends 64 MiB without a newline, then one sample: the reader skips the long
    line in bounded pieces (its memory stays far below the line) and reads the sample."""
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sys\n"
        "for _ in range(64): sys.stdout.buffer.write(bytes(1 << 20))\n"
        f"sys.stdout.buffer.write(b'\\n' + {PLAIN.encode()!r} + b'\\n')\n")], stdout=subprocess.PIPE)
    reader = subprocess.run([sys.executable, "-c", (
        "import re, sys, json\n"
        "from jtop_roof.formats.logfile import LineReader\n"
        "reader = LineReader(sys.stdin.buffer)\n"
        "lines = list(reader)\n"
        "peak = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "print(json.dumps([reader.long_lines, len(lines), int(peak)]))\n")],
        stdin=writer.stdout, capture_output=True, timeout=60)
    writer.wait(timeout=60)
    long_lines, count, rss_kb = json.loads(reader.stdout)
    assert long_lines == 1 and count == 2 and rss_kb < 60 * 1024


def test_replay_index_skips_a_long_line_with_a_note(tmp_path):
    path = tmp_path / "long.jsonl"
    lines = FIXTURE.read_text().splitlines()
    path.write_text("\n".join(lines[:5] + ['{"type":"sample","raw":"' + "x" * (6 * MAX_LINE_BYTES) + '"}']
                              + lines[5:10]) + "\n")
    source = ReplaySource(path, tz="UTC")
    records = list(source.index.scan())
    assert source.index.long_lines == 1
    notes = [r.detail for r in records if isinstance(r, Event)]
    assert any("longer than 1 MiB" in n for n in notes)
    assert sum(isinstance(r, Sample) for r in records) == 8


# ------------------------------------------------------------------ recording into the replay


@pytest.mark.parametrize("follow", [(), ("--follow",)])
def test_recording_into_the_file_being_replayed_is_refused(tmp_path, follow):
    replayed = tmp_path / "run.jsonl"
    replayed.write_text(FIXTURE.read_text())
    before = replayed.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(replayed)
    hard = tmp_path / "hard.jsonl"
    os.link(replayed, hard)
    for replay, record in ((replayed, replayed), (link, replayed), (replayed, hard)):
        for args in (("--replay", str(replay), *follow, "record", str(record), "--duration", "5"),
                     ("--replay", str(replay), *follow, "--record", str(record))):
            result = jroof(*args, timeout=30, stdin=subprocess.DEVNULL)
            assert result.returncode == 2, (args, result.stderr)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and "being replayed" in lines[0], (args, result.stderr)
    assert replayed.read_bytes() == before
