"""Held-out check of what jroof says it assumed, on inputs made from the real logs in ../shared.

Each case departs from a clean log in one way (no stamps, ISO stamps, a hole, a mode change, a
trtexec run without a build, a timed window cut short) or asks two consumers for one answer
(``serve`` and ``report``). The script makes the inputs in a temporary folder, runs the commands
as a user would and prints one row per case: what came out, and what it says it rests on.
docs/validation.md holds its output. Run from the repository root:

    python docs/assumptions_check.py
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LOGS, TRTEXEC = SHARED / "tegrastats" / "logs", SHARED / "trtexec"
STAMP = re.compile(r"^(\d\d-\d\d-\d{4} \d\d:\d\d:\d\d) ")
BENCH = "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_{}_run3.log"


def lines(name: str) -> list[str]:
    return (LOGS / name).read_text(encoding="utf-8", errors="replace").splitlines()


def when(stamp: str) -> dt.datetime:
    return dt.datetime.strptime(stamp, "%m-%d-%Y %H:%M:%S")


def restamped(src: list[str], form: str, shift: dt.timedelta = dt.timedelta()) -> list[str]:
    return [STAMP.sub(lambda m: (when(m.group(1)) + shift).strftime(form), line) for line in src]


def make_inputs(out: Path) -> None:
    """The cases' inputs, each a real log changed in one way."""
    def write(name: str, rows: list[str]) -> None:
        (out / name).write_text("\n".join(rows) + "\n", encoding="utf-8")

    bench = lines("orinnano8gb-super_jp6_orinnanobench_1.log")  # 100 ms, 72 s
    write("no_stamps.log", [STAMP.sub("", line) for line in bench])
    agx = lines("agxorin_jp6_abdeltegraparser_1.log")[:600]  # 500 ms
    write("tegrastats_stamps.log", agx)
    write("iso_stamps.log", restamped(agx, "%Y-%m-%dT%H:%M:%S+02:00 "))
    lab = lines("orinnano8gb_jp6_orinnanolab_1.log")[:300]  # 1 Hz
    write("no_hole.log", lab)
    write("hole.log", lab[:150] + lab[157:])
    maxn, seven = lines(BENCH.format("maxn")), lines(BENCH.format("7w"))
    m_end, s_start = STAMP.match(maxn[-1]), STAMP.match(seven[0])
    assert m_end is not None and s_start is not None
    shift = when(m_end.group(1)) - when(s_start.group(1)) + dt.timedelta(seconds=1)
    write("mode_change.log", maxn + restamped(seven, "%m-%d-%Y %H:%M:%S ", shift))
    write("partial.log", maxn[:-9])  # trtexec's timed window ends in the last lines
    fifteen = lines(BENCH.format("15w"))
    for i in range(826, 866):  # the GPU held at 408 MHz (15W's cap: 612) while busy, 4 s
        fifteen[i] = re.sub(r"GR3D_FREQ \d+%@\[\d+\]", "GR3D_FREQ 99%@[408]", fifteen[i])
    write("throttle.log", fifteen)


def jroof(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jtop_roof", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def report(path: str, *extra: str, cwd: Path) -> dict[str, Any]:
    done = jroof("report", path, "--format", "json", "--tz", "UTC", *extra, cwd=cwd)
    if done.returncode != 0:
        return {"error": done.stderr.strip()}
    return dict(json.loads(done.stdout))


def said(rep: dict[str, Any], what: str) -> str:
    for item in rep.get("assumptions", []):
        if item["what"] == what:
            return f"{item['value']} ({item['source']})"
    return "not said"


def scraped(path: str, cwd: Path) -> dict[str, float]:
    """``serve``'s /metrics once the replay has played (64x)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "jtop_roof", "serve", "--replay", path, "--tz", "UTC",
                             "--speed", "64", "--listen", f"127.0.0.1:{port}"], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(15)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            text = answer.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith(("jroof_throttled_seconds_total", "jroof_energy_joules_total ")):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def main() -> None:
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} is missing: the check reads the real logs there")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        make_inputs(tmp)
        rows = []
        rep = report("no_stamps.log", cwd=tmp)
        rows.append(("no stamps (100 ms capture, 72 s)", f"{rep['whole']['duration_s']:.0f} s",
                     f"{said(rep, 'interval')}; energy {rep['whole']['energy_total_source']}"))
        rep = report("no_stamps.log", "--interval", "100", cwd=tmp)
        rows.append(("  the same, --interval 100", f"{rep['whole']['duration_s']:.0f} s",
                     said(rep, "interval")))
        plain, iso = report("tegrastats_stamps.log", cwd=tmp), report("iso_stamps.log", cwd=tmp)
        rows.append(("ISO 8601 stamps, +02:00 (tegrastats' own stamps)",
                     f"{iso['whole']['duration_s']:.0f} s, {iso['whole']['energy_j']['total']:.0f} J "
                     f"({plain['whole']['duration_s']:.0f} s, {plain['whole']['energy_j']['total']:.0f} J)",
                     f"{said(iso, 'interval')}; {said(iso, 'stamps')}"))
        clean, hole = report("no_hole.log", cwd=tmp), report("hole.log", cwd=tmp)
        rows.append(("7 s hole in a 1 Hz log (the log whole)",
                     f"gaps {hole['whole']['gaps']}, observed {hole['whole']['observed_s']:.0f} s, "
                     f"{hole['whole']['energy_j']['total']:.0f} J (gaps {clean['whole']['gaps']}, "
                     f"{clean['whole']['observed_s']:.0f} s, {clean['whole']['energy_j']['total']:.0f} J)",
                     said(hole, "interval")))
        rep = report("mode_change.log", cwd=tmp)
        kinds = [e["kind"] for e in rep["events"]]
        rows.append(("MAXN_SUPER then 7W in one log",
                     f"{kinds.count('mode_change')} mode_change, "
                     f"{rep['whole']['throttled_s']:.1f} s throttled",
                     f"mode {rep['power_mode']} ({rep['power_mode_source']}); "
                     f"{said(rep, 'throttle_detection')}"))
        pair = "nano_jp4.6_csc2231_1.log"
        rep = report(str(LOGS / pair), "--trtexec", str(TRTEXEC / pair), cwd=tmp)
        timed = next(p for p in rep["phases"] if p["name"] == "timed")
        rows.append(("--loadEngine run, log without stamps",
                     f"timed {timed['duration_s']:.1f} s, {timed['samples']} samples, "
                     f"{timed['workload']['iterations']:g} iterations, "
                     f"{timed['workload']['j_per_iter']:.2f} J each",
                     f"{said(rep, 'interval')}; log start {rep['source'].get('log_start_source')}; "
                     f"coverage {said(rep, 'trtexec_coverage')}"))
        rep = report("partial.log", "--trtexec", str(TRTEXEC / BENCH.format("maxn")), cwd=tmp)
        timed = next(p for p in rep["phases"] if p["name"] == "timed")
        rows.append(("trtexec's timed window cut short",
                     f"coverage {rep['trtexec']['coverage']:.1%}, "
                     f"J/inference {timed['workload']['j_per_iter']}",
                     said(rep, "trtexec_coverage")))
        rep, metrics = report("throttle.log", cwd=tmp), scraped("throttle.log", tmp)
        rows.append(("serve = report (GPU held 4 s)",
                     f"report {rep['whole']['throttled_s']:.2f} s; /metrics "
                     f"{metrics.get('jroof_throttled_seconds_total', float('nan')):.2f} s",
                     f"{said(rep, 'device')}, {said(rep, 'power_mode')}"))
    print("| case | what came out (the clean input's) | what it says it rests on |")
    print("|---|---|---|")
    for case, figures, sources in rows:
        print(f"| {case} | {figures} | {sources} |")


if __name__ == "__main__":
    main()
