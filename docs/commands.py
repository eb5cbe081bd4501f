"""Run each jroof-tui subcommand once on files shipped in this repository and write what it prints
into README.md, between the `<!-- commands:begin -->` and `<!-- commands:end -->` lines.

    .venv/bin/python docs/commands.py

Every command runs as `python -m jtop_roof ...` from the repository root, with its output files in a
temporary directory; the README shows the command as a user would type it (`r.csv`, not the
temporary path) and its real stdout and stderr, cut to the first lines.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BEGIN = "<!-- commands:begin -->"
END = "<!-- commands:end -->"
BEFORE = "## The screen and its keys"
HEADING = "## Each command once, with its output"
INTRO = ("Regenerate with `.venv/bin/python docs/commands.py`; every output below is real, from files in "
         "this repo.")

WIDTH = 110            # a shown line, its 4-space indent included
KEEP = 12              # lines of output shown unless a command says otherwise
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RECORDING = "tests/data/h200_phases.jsonl"
PORT_SHOWN = 9101
# What the serve example shows from /metrics: the families that say what the GPU did.
METRICS = ("jroof_info", "jroof_samples_total", "jroof_gpu_load_ratio", "jroof_gpu_clock_hertz",
           "jroof_emc_clock_hertz", 'jroof_memory_used_bytes{kind="ram"}', "jroof_rail_power_watts",
           "jroof_temperature_celsius", "jroof_energy_joules_total",
           'jroof_throttle_active{reason="power",unit="gpu"}', 'jroof_throttle_seconds_total{unit="gpu"}',
           'jroof_mode_cap_seconds_total{unit="gpu"}')


@dataclass
class Shown:
    """One command of the section: what it does, and the lines of its block (commands and output)."""

    what: str
    lines: list[str] = field(default_factory=list)


def environment(home: Path) -> dict[str, str]:
    """The user's environment without their config, colours or buffering, so the output is the same
    on every machine (and in the order a terminal shows it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("JROOF_CONFIG", "FORCE_COLOR")}
    env.update(PYTHONUNBUFFERED="1", NO_COLOR="1", TERM="dumb", COLUMNS="120",
               XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"))
    return env


def clean(text: str, tmp: Path) -> list[str]:
    """Output as the user would read it: no escapes, no temporary directory."""
    text = ANSI.sub("", text)
    for d in {str(tmp), os.path.realpath(tmp)}:
        text = text.replace(d + os.sep, "").replace(d, ".")
    return text.rstrip("\n").splitlines() if text.strip() else []


def cut(lines: list[str], keep: int = KEEP) -> list[str]:
    """The first `keep` lines, each cut to the width, and how many more there were."""
    out = [line if len(line) + 4 <= WIDTH else line[: WIDTH - 5] + "…" for line in lines[:keep]]
    if len(lines) > keep:
        out.append(f"… ({len(lines) - keep} more lines)")
    return out


def run(args: list[str], tmp: Path, env: dict[str, str], timeout: float = 120) -> tuple[int, list[str]]:
    """Run `jroof-tui ARGS` from the repository root; stdout and stderr together, as a terminal shows."""
    proc = subprocess.run([sys.executable, "-m", "jtop_roof", *args], cwd=ROOT, env=env, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, clean(proc.stdout, tmp)


def typed(args: list[str]) -> str:
    return "$ jroof-tui " + " ".join(shlex.quote(a) for a in args)


def example(what: str, args: list[str], tmp: Path, env: dict[str, str], keep: int = KEEP,
            outputs: tuple[str, ...] = ()) -> Shown:
    """One command: ARGS name output files by their short names; they are written under `tmp`."""
    real = [str(tmp / a) if a in outputs else a for a in args]
    rc, lines = run(real, tmp, env)
    if rc != 0:
        raise SystemExit(f"jroof-tui {' '.join(args)} failed ({rc}):\n" + "\n".join(lines))
    return Shown(what, [typed(args), *cut(lines, keep)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.read().decode()
    except OSError:
        return None


def samples(text: str | None) -> float:
    m = re.search(r"^jroof_samples_total (\S+)$", text or "", re.M)
    return float(m.group(1)) if m else 0.0


def serve_example(tmp: Path, env: dict[str, str]) -> Shown:
    """serve replays the recording; /metrics is read once the replay has ended (every sample in, so
    the figures are the same on every run), then serve gets SIGTERM."""
    port = free_port()
    args = ["serve", "--replay", RECORDING, "--speed", "64", "--listen"]
    url = f"http://127.0.0.1:{port}/metrics"
    proc = subprocess.Popen([sys.executable, "-m", "jtop_roof", *args, f"127.0.0.1:{port}"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        text, last, deadline = None, -1.0, time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.5)
            if proc.poll() is not None:
                break
            text = scrape(url)
            now = samples(text)
            if now > 0 and now == last:
                break
            last = now
        else:
            raise SystemExit("serve: /metrics never settled")
        if not text or samples(text) == 0:
            raise SystemExit(f"serve: no samples on {url} (exit {proc.poll()})")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    said = [line.replace(str(port), str(PORT_SHOWN)) for line in clean(out, tmp)]
    metrics = [line for line in text.splitlines() if line and not line.startswith("#")]
    shown = [line for line in metrics if line.split(" ")[0] in METRICS or line.split("{")[0] in METRICS]
    lines = [typed([*args, f"127.0.0.1:{PORT_SHOWN}"]), *cut(said),
             f"$ curl -s http://127.0.0.1:{PORT_SHOWN}/metrics | grep -v '^#'     # from another terminal",
             *cut(shown, len(shown))]
    if len(metrics) > len(shown):
        lines.append(f"… ({len(metrics) - len(shown)} more lines)")
    return Shown("`serve`: the latest values as Prometheus metrics, here from a replay of the H200 "
                 "recording at 64× (read once the replay is over; stopped with SIGTERM, as Ctrl-C):", lines)


def examples(tmp: Path) -> list[Shown]:
    env = environment(tmp)
    shown: list[Shown] = []

    def scratch(name: str) -> Path:
        d = tmp / name
        d.mkdir()
        return d

    d = scratch("parse")
    shown.append(example("`parse`: a tegrastats log as JSON Lines, one object per input line (its `#` "
                         "comment lines come through as `non_sample` objects):",
                         ["parse", "tests/data/fake_tegrastats_orinnano_super.txt", "--tz", "UTC"],
                         d, env, keep=5))

    d = scratch("record")
    rec = example("`record`: monitor without a screen, here the demo source for three seconds (it says "
                  "where it recorded; the file has a record per line):",
                  ["record", "r.jsonl", "--source", "demo", "--duration", "3"], d, env, outputs=("r.jsonl",))
    count = len((d / "r.jsonl").read_text().splitlines())
    rec.lines += ["$ wc -l r.jsonl", f"{count} r.jsonl"]
    shown.append(rec)

    d = scratch("report")
    report = ["report", RECORDING, "--tz", "UTC"]
    shown.append(example("`report`: duration, energy and power per phase of a recording (here an NVIDIA "
                         "H200 running a copy and a bf16 GEMM), with the roofline verdict per phase:",
                         report, d, env, keep=40))
    extra = ["report", RECORDING, "--ncu", "tests/data/h200_ncu_gemm_bf16.csv",
             "--probe", "tests/data/h200_probe.json", "--tz", "UTC"]
    rc, lines = run(extra, d, env)
    added = [line for line in lines if line not in set(run(report, d, env)[1])]
    if rc == 0 and added:
        start = lines.index(added[0])
        end = next((i for i, line in enumerate(lines) if line.startswith("Clock events")), len(lines))
        shown.append(Shown("`report` with Nsight Compute's figures and the probe's measured ceilings "
                           "(what they add to the report above):",
                           [typed(extra), "… (the report above, then:)", *cut(lines[start:end], 40)]))

    d = scratch("compare")
    shown.append(example("`compare`: runs or phases side by side, the first as the baseline (here two "
                         "phases of the same recording):",
                         ["compare", f"{RECORDING}#copy", f"{RECORDING}#gemm-bf16"], d, env, keep=22))

    d = scratch("export")
    exp = example("`export`: one flat row per sample, with the phase and throttle events as columns "
                  "(it says where it wrote them):",
                  ["export", RECORDING, "--out", "r.csv"], d, env, outputs=("r.csv",))
    exp.lines += ["$ head -3 r.csv", *cut((d / "r.csv").read_text().splitlines()[:3])]
    shown.append(exp)

    d = scratch("plot")
    shown.append(example("`plot`: a figure of clocks, loads, power and temperatures over time, with the "
                         "phases (matplotlib, `pip install '.[plot]'`):",
                         ["plot", RECORDING, "--out", "r.svg"], d, env, outputs=("r.svg",)))

    shown.append(serve_example(scratch("serve"), env))

    d = scratch("devices")
    shown.append(example("`devices`: the device database, one line per board or GPU:", ["devices"], d, env))

    d = scratch("roof")
    shown.append(example("`roof`: a device's ceilings at a power mode's clocks:",
                         ["roof", "--device", "orin-nano-8gb-super", "--power-mode", "7W"], d, env))

    d = scratch("probe")
    shown.append(example("`probe`: measure this machine's ceilings; this run is numpy on the CPU of the "
                         "machine that wrote this README (no GPU backend), so its figures are that CPU's:",
                         ["probe", "--quick", "--backend", "numpy", "--out", "probe.json"], d, env,
                         keep=22, outputs=("probe.json",)))

    d = scratch("mark")
    args = ["mark", "warmup"]
    rc, lines = run(args, d, env)
    shown.append(Shown(f"`mark`: a phase boundary for the running monitor; with none running, it says so "
                       f"and exits with status {rc}:",
                       [typed(args) + "; echo \"exit status $?\"", *cut(lines), f"exit status {rc}"]))

    d = scratch("run")
    shown.append(example("`run`: record (or monitor) while a workload runs, and stop when it exits:",
                         ["run", "--headless", "--record", "r.jsonl", "--source", "demo", "--", "sleep", "2"],
                         d, env, outputs=("r.jsonl",)))
    return shown


def section(shown: list[Shown]) -> str:
    parts = [BEGIN, HEADING, "", textwrap.fill(INTRO, 100, break_on_hyphens=False), ""]
    for s in shown:
        what = textwrap.fill(s.what, 100, break_on_hyphens=False, break_long_words=False)
        parts += [what, "", *("    " + line if line else "" for line in s.lines), ""]
    parts.append(END)
    return "\n".join(parts)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="jroof-commands-") as tmp:
        text = section(examples(Path(tmp)))
    readme = README.read_text()
    if BEGIN in readme and END in readme:
        head, rest = readme.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        new = head + text + tail
    elif BEFORE in readme:
        head, tail = readme.split(BEFORE, 1)
        new = head + text + "\n\n" + BEFORE + tail
    else:
        raise SystemExit(f"README.md has neither the markers nor {BEFORE!r}")
    README.write_text(new)
    print(f"README.md: {len(text.splitlines())} lines between the markers", file=sys.stderr)


if __name__ == "__main__":
    main()
